//! Oracles whose checks are not queries on the one session a campaign
//! populates: they open sessions of their own on each database the runner
//! creates (the transaction oracle runs schedules between two to four
//! sessions). Query oracles ([`crate::Oracle`]) and these are the two
//! kinds of check the runner drives, through one campaign: its threads,
//! shards, databases, stop conditions, counters, findings directory,
//! index, flood control and summary.
//!
//! The split of work: the runner creates and drops the databases and
//! files findings ([`SessionsDatabase`]); the oracle draws its cases, runs
//! them on its sessions, judges them, confirms a finding, shrinks it, and
//! runs a recorded one again for `lancet replay`, `lancet reduce` and
//! `--known`. A finding's record is the oracle's own serde type, handed
//! over as JSON text: the findings crate reads it back by its `oracle`
//! field.

use crate::connection::Connection;
use crate::fault::Fault;
use crate::provider::{OwnedDatabase, Provider};
use crate::rng::Rng;
use std::sync::Arc;
use std::time::Duration;

/// An oracle that opens sessions of its own on a campaign's databases.
pub trait SessionsOracle: Send + Sync {
    /// The `--oracle` name.
    fn name(&self) -> &'static str;
    /// One line for `--help`.
    fn description(&self) -> &'static str;
    /// Every planted fault this oracle is known to catch (`--inject-fault`
    /// names them; `selftest` proves each is caught).
    fn faults(&self) -> Vec<Fault>;
    /// Checks per database unless the run says otherwise
    /// (`--checks-per-database`).
    fn checks_per_database(&self) -> u64;
    /// What lancet's findings keep of a finding of this oracle, read from
    /// its record (JSON text): the index, the store, known bugs and the
    /// commands take every sessions finding through this.
    fn facts(&self, record: &str) -> anyhow::Result<SessionsFacts>;
    /// A finding's record as the files a maintainer reads, written under
    /// the id `id`.
    fn files(&self, record: &str, id: &str) -> anyhow::Result<FindingFiles>;
    /// The file id of a run's `n`-th finding of this oracle with
    /// `signature` (`txn-0003-lost-update-read-committed`).
    fn file_id(&self, n: u64, signature: &str) -> String;
    /// Readies a run on `provider`: a clear error when the DBMS lacks what
    /// this oracle needs, or `run` asks for what it cannot do (a setting it
    /// does not know, a fault of another oracle).
    fn prepare(
        &self,
        provider: Arc<dyn Provider>,
        run: &SessionsRun,
    ) -> anyhow::Result<Box<dyn PreparedSessions>>;
}

/// What lancet's findings keep of a sessions oracle's finding.
#[derive(Clone, Debug)]
pub struct SessionsFacts {
    /// The oracle that made it (its `--oracle` name), which replays it.
    pub oracle: String,
    /// The DBMS it was found on (its `--dbms` name).
    pub dbms: String,
    /// What groups its findings: the same for the same misbehaviour.
    pub signature: String,
    /// The planted fault it was found under, if any.
    pub fault: Option<String>,
    /// The findings' kind by name: `logic`, `unexpected-error`, `crash`
    /// or `hang`.
    pub kind: &'static str,
    /// The relation it broke, in words.
    pub relation: String,
    /// Its size, in the oracle's own unit (a schedule's statements and
    /// rows): what reduction makes smaller.
    pub size: usize,
    /// Equal for findings of one bug, and the bug in words.
    pub bug_key: String,
    pub bug_text: String,
    /// Where its case came from: seed, thread and database.
    pub origin: (u64, u32, u64),
}

/// A sessions oracle's finding as files: `ID.json` (the record, as the
/// oracle writes it), `ID.sql` (the case as one script, the reproducer
/// the index, store and report show) and the files of the directory
/// `ID/` (by name: a script per session, a table of the steps).
#[derive(Clone, Debug)]
pub struct FindingFiles {
    pub record: String,
    pub script: String,
    pub directory: Vec<(String, String)>,
}

/// What a run asks of a sessions oracle.
#[derive(Clone, Debug, Default)]
pub struct SessionsRun {
    /// The planted fault (`--inject-fault`), if any.
    pub fault: Option<Fault>,
    /// The oracle's own settings from the command line, each `name=value`
    /// or a bare `name` (the transaction oracles' `--txn-levels` as
    /// `levels=read-committed`, `--txn-strict` as `strict`): what they
    /// mean is the oracle's ([`SessionsRun::values`], [`SessionsRun::flag`]).
    pub settings: Vec<String>,
    /// How long the reduction of one finding may take; `None`: findings
    /// are kept as found.
    pub reduce: Option<Duration>,
}

impl SessionsRun {
    /// The values of setting `name`, in order (`levels=rc` twice: both).
    pub fn values(&self, name: &str) -> Vec<String> {
        self.settings
            .iter()
            .filter_map(|s| s.split_once('='))
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v.to_string())
            .collect()
    }

    /// Whether the bare setting `name` is given.
    pub fn flag(&self, name: &str) -> bool {
        self.settings.iter().any(|s| s == name)
    }
}

/// A sessions oracle ready for a run on one DBMS: shared by the run's
/// threads, each with a database of its own.
pub trait PreparedSessions: Send + Sync {
    /// Runs up to `checks` checks on `db`, drawing every case from `rng`
    /// (the database's), until the run stops. A finding is confirmed,
    /// filed through `db` at once and reduced before the next check.
    /// Errors are failures of the database (sessions that cannot open).
    fn run_database(
        &self,
        db: &mut dyn SessionsDatabase,
        rng: &mut Rng,
        checks: u64,
    ) -> anyhow::Result<()>;
    /// Runs a finding's case again on `db` (`lancet replay`, `--known`):
    /// what it shows now. `record` is the finding's JSON record.
    fn replay(&self, record: &str, db: &mut dyn SessionsDatabase) -> anyhow::Result<ShownAgain>;
    /// Shrinks a finding's case on `db` (`lancet reduce`) within `budget`.
    fn reduce(
        &self,
        record: &str,
        db: &mut dyn SessionsDatabase,
        budget: Duration,
    ) -> anyhow::Result<Reduction>;
}

/// What a finding's case showed when it ran again.
#[derive(Clone, Debug)]
pub struct ShownAgain {
    /// Whether it showed the finding's signature (a timing-dependent case
    /// is given a second try first).
    pub same: bool,
    /// What it showed, in words, for `lancet replay`.
    pub said: String,
}

/// What `lancet reduce` made of a sessions finding.
#[derive(Clone, Debug)]
pub enum Reduction {
    /// A smaller case that still shows the signature: its JSON record,
    /// and what was dropped, in words.
    Smaller { record: String, said: String },
    /// No smaller case shows it: it is reduced already.
    Already(String),
    /// The case no longer shows its signature: what it shows now.
    NotShown(String),
}

/// What the runner gives a sessions oracle for one database.
pub trait SessionsDatabase {
    /// The DBMS.
    fn provider(&self) -> &dyn Provider;
    /// The database, created and owned by this run, to open sessions on.
    fn database(&self) -> &OwnedDatabase;
    /// Session `session`'s connection as the run wants it: writing each
    /// statement to the database's statement log for that session when
    /// the run keeps logs (`--log-statements`), else as it is.
    fn logged(
        &mut self,
        session: usize,
        connection: Box<dyn Connection>,
    ) -> anyhow::Result<Box<dyn Connection>>;
    /// Whether the run is stopping (interrupt, time-out, check limit):
    /// no further check begins.
    fn should_stop(&self) -> bool;
    /// Whether the run was interrupted: a reduction under way stops too
    /// (a time-out or check limit lets it finish).
    fn interrupted(&self) -> bool;
    /// A check ran: how many statements, in what time, and whether it read
    /// rows.
    fn count_check(&mut self, statements: u64, took: Duration, nonempty: bool);
    /// Adds to the oracle's own counts under `label`, which the run's
    /// summary prints (the transaction oracle's: per isolation level,
    /// schedules, commits, conflicts), named numbers in the order they
    /// print.
    fn tally(&mut self, label: String, counts: &[(&'static str, u64)]);
    /// Flood control: whether a finding of `signature` is to be filed
    /// (confirmed, written, reduced). `false`: past the run's limit, it
    /// was counted and no more is done. A `true` is released by
    /// [`SessionsDatabase::release`].
    fn reserve(&mut self, signature: &str) -> bool;
    /// Ends what [`SessionsDatabase::reserve`] began.
    fn release(&mut self, signature: &str);
    /// Writes a confirmed finding (its JSON record) to the findings
    /// directory at once, and indexes it. Returns its id, which the
    /// reduced finding's record is filed under with
    /// [`SessionsDatabase::file_reduced`].
    fn file(&mut self, record: &str) -> anyhow::Result<String>;
    /// Writes the reduced form of finding `id` beside it, and indexes it.
    fn file_reduced(&mut self, id: &str, record: &str) -> anyhow::Result<()>;
    /// Says something once (a statement log that cannot be written).
    fn warn(&mut self, what: String);
    /// Where the database's cases come from: seed, thread and database
    /// index (a finding records them, so `--thread/--database` regenerates
    /// it).
    fn origin(&self) -> (u64, u32, u64);
    /// lancet's version, as findings record it.
    fn lancet_version(&self) -> &'static str;
}
