//! A database of a campaign with the transaction oracle's sessions on it,
//! on which the driver runs schedules: the campaign's, a finding's
//! confirmation and reduction, and `lancet replay`'s. The database is the
//! runner's ([`SessionsDatabase`]); the sessions are this oracle's.

use super::driver::{Run, ScheduleRun, Timing};
use super::planted::TxnFault;
use super::record::TxnFinding;
use super::schedule::{Schedule, MAX_SESSIONS};
use super::sessions::Sessions;
use super::settings::Knobs;
use lancet_core::txn::{KnobScope, LevelRules, Settings, Transactions};
use lancet_core::{Connection, OwnedDatabase, SessionsDatabase};

/// A database with its sessions: the schedules run on it.
pub(crate) struct Bench<'a> {
    /// First, so that the sessions close before the database is released.
    sessions: Sessions,
    /// A session of its own that makes the table and reads the final
    /// rows.
    observer: Option<Box<dyn Connection>>,
    tx: &'a dyn Transactions,
    database: OwnedDatabase,
    /// The database's knobs, in force on every session.
    settings: Settings,
    database_sql: Vec<String>,
}

impl Drop for Bench<'_> {
    fn drop(&mut self) {
        self.sessions.close();
        drop(self.observer.take());
        self.tx.release(&self.database);
    }
}

/// What a schedule's run needs besides the bench: the level rules the
/// provider models under each setting, the planted fault and the
/// driver's timing.
pub(crate) struct Rules<'a> {
    pub(crate) tx: &'a dyn Transactions,
    pub(crate) knobs: &'a Knobs,
    /// `--txn-strict` (see `driver::Run::strict`).
    pub(crate) strict: bool,
    pub(crate) fault: Option<TxnFault>,
    pub(crate) timing: Timing,
}

impl Rules<'_> {
    /// The rules of each session of `schedule`, by its settings, level
    /// and mode. A schedule drawn here is at the levels and settings of
    /// the run; a recorded one is checked against them before it runs.
    pub(crate) fn of(&self, schedule: &Schedule) -> anyhow::Result<Vec<&LevelRules>> {
        let rules = self.knobs.rules_under(&schedule.settings).ok_or_else(|| {
            anyhow::anyhow!(
                "this DBMS has no such transaction settings: {}",
                lancet_core::txn::settings_label(&schedule.settings)
            )
        })?;
        (0..schedule.sessions)
            .map(|s| {
                let (level, mode) = schedule.level_of(s);
                rules
                    .iter()
                    .find(|r| r.level == level && r.mode.as_deref() == mode)
                    .ok_or_else(|| {
                        anyhow::anyhow!("this DBMS does not model {}", schedule.label_of(s))
                    })
            })
            .collect()
    }

    /// The signature of a run of `schedule`, naming the settings that
    /// change the rules.
    pub(crate) fn signature(&self, run: &ScheduleRun, schedule: &Schedule) -> String {
        let settings = Knobs::signature_part(&schedule.settings, self.knobs.knobs());
        TxnFinding::signature_of(run, schedule, &settings)
    }

    /// The statements a session sends before its BEGIN: the schedule's
    /// session settings.
    pub(crate) fn before_begin(&self, schedule: &Schedule) -> Vec<String> {
        self.knobs
            .sql(self.tx, &schedule.settings, KnobScope::Session)
    }
}

/// Opens the sessions (1 to [`MAX_SESSIONS`], then the observer, which
/// the statement logs name session 0) on `db`'s database, with the
/// database's knobs of `settings` in force on each.
pub(crate) fn open_bench<'a>(
    tx: &'a dyn Transactions,
    knobs: &Knobs,
    settings: &Settings,
    db: &mut dyn SessionsDatabase,
) -> anyhow::Result<Bench<'a>> {
    let database = db.database().clone();
    let settings = knobs.database_part(settings);
    let database_sql = knobs.sql(tx, &settings, KnobScope::Database);
    let mut opened = 0;
    let mut open = || -> anyhow::Result<Box<dyn Connection>> {
        let conn = tx.open_session(&database)?;
        opened += 1;
        let session = if opened > MAX_SESSIONS { 0 } else { opened };
        let mut conn = db.logged(session, conn)?;
        for sql in &database_sql {
            conn.execute(sql)
                .map_err(|e| anyhow::anyhow!("database setting `{sql}` failed: {e}"))?;
        }
        Ok(conn)
    };
    let sessions = Sessions::open(tx, MAX_SESSIONS, &mut open)?;
    let mut observer = open()?;
    for sql in tx.session_setup() {
        observer
            .execute(&sql)
            .map_err(|e| anyhow::anyhow!("session setup `{sql}` failed: {e}"))?;
    }
    Ok(Bench {
        sessions,
        observer: Some(observer),
        tx,
        database,
        settings,
        database_sql,
    })
}

impl Bench<'_> {
    /// The database's settings (its knobs' values), which every schedule
    /// run on it records.
    pub(crate) fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Runs `schedule` on a fresh table of the bench's database.
    pub(crate) fn run(
        &mut self,
        rules: &Rules<'_>,
        schedule: &Schedule,
    ) -> anyhow::Result<ScheduleRun> {
        let run = Run {
            tx: rules.tx,
            rules: rules.of(schedule)?,
            schedule,
            timing: rules.timing,
            fault: rules.fault,
            before_begin: rules.before_begin(schedule),
            strict: rules.strict,
        };
        let database = self.database.clone();
        let tx = rules.tx;
        let database_sql = &self.database_sql;
        let mut open = || -> anyhow::Result<Box<dyn Connection>> {
            let mut conn = tx.open_session(&database)?;
            for sql in database_sql.iter().cloned().chain(tx.session_setup()) {
                conn.execute(&sql).map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            Ok(conn)
        };
        let observer = self
            .observer
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("the observer session is closed"))?;
        run.execute(&mut **observer, &self.sessions, &mut open)
    }
}
