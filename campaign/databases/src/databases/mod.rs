//! The databases one lancet process creates on a DBMS, and the promise
//! that it drops only those.
//!
//! - Names carry a token drawn from the operating system's randomness for
//!   each process ([`RunToken`]), so no other process can predict or share
//!   them; a name that is taken anyway is never replaced: another is drawn.
//! - Every database created is remembered in memory and, for a server, in
//!   a ledger file in the run directory ([`Ledger`]), so that `lancet
//!   cleanup` can drop what a killed run left.
//! - A drop goes through the provider, which checks that the database is
//!   still the one created (its oid on PostgreSQL) and owned by the role.
//!   A drop that fails (sessions of other roles still connected, a hung
//!   backend) is retried later with back-off; what is still there at the
//!   end is named in the summary.
//!
//! [`Scratch`] is a database in use; dropping the value drops the database.

mod drops;

pub use crate::ledger::{Ledger, LedgerLine, LEDGER_FILE};
pub use drops::Leftover;
use drops::PendingDrop;
use lancet_core::fault::Fault;
use lancet_core::{Connection, DatabaseError, DatabaseId, OwnedDatabase, Provider, Session};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The environment variable that forces a run token, for tests that need
/// a name collision on purpose. Never set it otherwise.
pub const TOKEN_VAR: &str = "LANCET_TEST_RUN_TOKEN";

/// A per-process token from the OS's randomness: 12 lowercase hex digits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunToken(String);

impl RunToken {
    /// A fresh token (or the one forced by [`TOKEN_VAR`], if valid).
    pub fn new() -> RunToken {
        if let Ok(forced) = std::env::var(TOKEN_VAR) {
            if forced.len() == 12 && forced.bytes().all(|b| b.is_ascii_hexdigit()) {
                return RunToken(forced.to_ascii_lowercase());
            }
        }
        RunToken::random()
    }

    /// A token that ignores [`TOKEN_VAR`]: what a collision falls back to.
    pub fn random() -> RunToken {
        let bits: u64 = rand::random::<u64>() & 0xffff_ffff_ffff;
        RunToken(format!("{bits:012x}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for RunToken {
    fn default() -> Self {
        RunToken::new()
    }
}

impl std::fmt::Display for RunToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a database is for; a letter in its name, so that a listing of a
/// server shows which databases are a run's workers and which scratch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// A worker's generated database.
    Worker,
    /// Replaying a disagreement on a fresh database before reporting it.
    Confirm,
    /// A reduction candidate.
    Reduce,
    /// `lancet replay`.
    Replay,
}

impl Purpose {
    fn letter(self) -> char {
        match self {
            Purpose::Worker => 'w',
            Purpose::Confirm => 'c',
            Purpose::Reduce => 'x',
            Purpose::Replay => 'p',
        }
    }
}

/// The databases of one process on one provider.
pub struct Databases {
    provider: Arc<dyn Provider>,
    token: Mutex<RunToken>,
    ledger: Option<Ledger>,
    next: AtomicU64,
    /// Created and not dropped: in use, or waiting for a retried drop.
    live: Mutex<Vec<OwnedDatabase>>,
    pending: Mutex<Vec<PendingDrop>>,
    /// Drops taken off `pending` and not yet done: the end of a run waits
    /// for them, or a process that exits mid-drop leaves a database on
    /// some nodes of a cluster.
    dropping: Mutex<Vec<String>>,
    /// Databases a reduction candidate used, kept to be emptied and used
    /// again ([`Databases::create_reusable`]) rather than dropped.
    spare: Mutex<Vec<OwnedDatabase>>,
    /// Databases whose drop the provider refused as not ours (never retried).
    refused: Mutex<Vec<Leftover>>,
    /// Whether drops are left to a dropper thread ([`Databases::dropper`])
    /// instead of being made by whoever finishes with a database: a drop
    /// can wait seconds for other sessions to leave, and a worker should
    /// be generating queries meanwhile.
    background: AtomicBool,
    /// The planted fault every session applies (`selftest`, and
    /// the replay of a finding made with one).
    fault: Mutex<Option<Fault>>,
    /// What every connection is wrapped in first (a child process's
    /// flight recorder), if anything.
    wrapper: Mutex<Option<ConnectionWrapper>>,
}

/// Wraps a connection in another that sees every statement first.
pub type ConnectionWrapper = Arc<dyn Fn(Box<dyn Connection>) -> Box<dyn Connection> + Send + Sync>;

/// How many fresh names to try when names are taken.
const NAME_ATTEMPTS: u32 = 8;

impl Databases {
    /// `ledger`: where to record a server's databases (a run directory's
    /// ledger); `None` for commands that keep them in memory only.
    pub fn new(provider: Arc<dyn Provider>, token: RunToken, ledger: Option<Ledger>) -> Databases {
        Databases {
            provider,
            token: Mutex::new(token),
            ledger,
            next: AtomicU64::new(0),
            live: Mutex::new(Vec::new()),
            pending: Mutex::new(Vec::new()),
            dropping: Mutex::new(Vec::new()),
            spare: Mutex::new(Vec::new()),
            refused: Mutex::new(Vec::new()),
            background: AtomicBool::new(false),
            fault: Mutex::new(None),
            wrapper: Mutex::new(None),
        }
    }

    /// Wraps every connection made from now on in `wrapper` (outside the
    /// planted fault, so that it sees what lancet sends).
    pub fn set_wrapper(&self, wrapper: Option<ConnectionWrapper>) {
        *self.wrapper.lock().unwrap_or_else(|e| e.into_inner()) = wrapper;
    }

    /// Plants `fault` in every session made from now on, so that fuzzing, confirmation, replay and reduction see
    /// the same DBMS (`selftest` plants one fault per oracle in turn).
    pub fn set_fault(&self, fault: Option<Fault>) {
        *self.fault.lock().unwrap_or_else(|e| e.into_inner()) = fault;
    }

    pub fn fault(&self) -> Option<Fault> {
        self.fault.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn provider(&self) -> &dyn Provider {
        &*self.provider
    }

    /// The provider, shared (an oracle prepared for it keeps it).
    pub fn shared_provider(&self) -> Arc<dyn Provider> {
        self.provider.clone()
    }

    pub fn token(&self) -> String {
        self.token
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .to_string()
    }

    /// A number for a scratch database (confirmation, reduction, replay).
    pub fn next_index(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Creates a database for `purpose` as (thread, index). A taken name is
    /// left alone and another token drawn. Errors are the provider's (the
    /// caller decides whether they are worth waiting out).
    pub fn create(&self, purpose: Purpose, thread: u32, index: u64) -> anyhow::Result<Scratch<'_>> {
        let (mut foreign, mut ours) = (0, 0);
        loop {
            // A name taken by one of our own (an unusable database not yet
            // dropped) gets a suffix; one taken by someone else, a new token.
            let suffix = if ours == 0 {
                String::new()
            } else {
                ours.to_string()
            };
            let id = DatabaseId {
                run: format!("{}{}{suffix}", self.token(), purpose.letter()),
                thread,
                index,
            };
            // The intent goes to the ledger first: a kill between CREATE
            // and the `created` line must not leave a database no ledger
            // knows.
            let intent = OwnedDatabase {
                name: id.name(),
                identity: None,
            };
            self.record("creating", &intent);
            match self.provider.create_database(&id) {
                Ok(created) => {
                    self.adopt(&created.owned);
                    return Ok(self.scratch(created.conn, created.owned, false));
                }
                Err(e) => {
                    if !matches!(
                        e.downcast_ref::<DatabaseError>(),
                        Some(DatabaseError::CreatedUnusable(_))
                    ) {
                        self.record("not-created", &intent);
                    }
                    if let Some(DatabaseError::CreatedUnusable(owned)) = e.downcast_ref() {
                        // Ours, though unusable: remembered and dropped.
                        self.adopt(owned);
                        self.release(owned.clone());
                        return Err(e);
                    }
                    if !is_name_taken(&e) || foreign + ours + 1 >= NAME_ATTEMPTS {
                        return Err(e);
                    }
                    let name = id.name();
                    let mine = self
                        .live
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .iter()
                        .any(|d| d.name == name);
                    if mine {
                        ours += 1;
                    } else {
                        foreign += 1;
                        log::warn!("{e:#}; drawing another name");
                        // Everyone in this process moves to the new token:
                        // the old one is known to someone else.
                        *self.token.lock().unwrap_or_else(|e| e.into_inner()) = RunToken::random();
                    }
                }
            }
        }
    }

    /// Like [`Databases::create`], but the database may be one an earlier
    /// reusable scratch used, emptied by the provider, and it is kept for
    /// the next one when done. For reduction candidates only: whatever a
    /// provider's reset does not undo could change a result, so a
    /// reduction's final replay uses [`Databases::create`].
    pub fn create_reusable(
        &self,
        purpose: Purpose,
        thread: u32,
        index: u64,
    ) -> anyhow::Result<Scratch<'_>> {
        let spare = self.spare.lock().unwrap_or_else(|e| e.into_inner()).pop();
        if let Some(owned) = spare {
            match self.provider.reset_database(&owned) {
                Ok(Some(conn)) => {
                    return Ok(self.scratch(conn, owned, true));
                }
                Ok(None) => self.release(owned),
                Err(e) => {
                    log::debug!("{e:#}; making a new database instead");
                    self.release(owned);
                }
            }
        }
        let mut scratch = self.create(purpose, thread, index)?;
        scratch.reusable = true;
        Ok(scratch)
    }

    /// A scratch on `conn`, through the planted fault if there is one.
    fn scratch(
        &self,
        conn: Box<dyn Connection>,
        owned: OwnedDatabase,
        reusable: bool,
    ) -> Scratch<'_> {
        let wrapper = self
            .wrapper
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let conn = match wrapper {
            Some(wrap) => wrap(conn),
            None => conn,
        };
        let provider = &*self.provider;
        Scratch {
            session: Some(
                Session::new(conn, provider.dialect(), provider.expected_errors())
                    .with_fault(self.fault()),
            ),
            owned,
            databases: self,
            reusable,
        }
    }

    /// Takes back a reusable scratch's database: kept as a spare (two at
    /// most), or dropped.
    fn give_back(&self, db: OwnedDatabase) {
        const SPARES: usize = 2;
        let mut spare = self.spare.lock().unwrap_or_else(|e| e.into_inner());
        if spare.len() < SPARES {
            spare.push(db);
        } else {
            drop(spare);
            self.release(db);
        }
    }

    /// Drops the spares (at the end, or when the last user goes).
    fn release_spares(&self) {
        let spares = std::mem::take(&mut *self.spare.lock().unwrap_or_else(|e| e.into_inner()));
        for db in spares {
            self.release(db);
        }
    }

    /// Remembers a database this process created (in memory and ledger).
    fn adopt(&self, db: &OwnedDatabase) {
        self.record("created", db);
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(db.clone());
    }

    fn record(&self, event: &str, db: &OwnedDatabase) {
        let (Some(ledger), Some(server)) = (&self.ledger, self.provider.server()) else {
            return;
        };
        let line = LedgerLine {
            event: event.into(),
            server,
            database: db.clone(),
        };
        if let Err(e) = ledger.append(&line) {
            // The database is still remembered in memory and dropped at the
            // end; only `lancet cleanup` after a kill would miss it.
            log::warn!("{e:#}");
        }
    }

    fn forget(&self, db: &OwnedDatabase) {
        self.live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|d| d != db);
    }
}

/// A database this process created, with a session on it (through the
/// planted fault, if the run has one), dropped when this value is: the
/// one guard fuzzing, confirmation, replay and reduction all use, so that
/// no path can forget the drop.
pub struct Scratch<'a> {
    session: Option<Session<'a>>,
    owned: OwnedDatabase,
    databases: &'a Databases,
    /// Kept as a spare when done rather than dropped.
    reusable: bool,
}

impl<'a> Scratch<'a> {
    pub fn session(&mut self) -> &mut Session<'a> {
        self.session
            .as_mut()
            .expect("a scratch database has its session until it is dropped")
    }

    /// The connection itself, for text run outside any oracle (reducing a
    /// foreign reproducer as SQL).
    pub fn conn(&mut self) -> &mut dyn Connection {
        self.session().connection()
    }

    pub fn name(&self) -> &str {
        &self.owned.name
    }

    /// The database as the provider knows it, to open more sessions on it
    /// (the transaction oracle).
    pub fn owned(&self) -> &OwnedDatabase {
        &self.owned
    }
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        // The connection closes before the drop, which waits for it.
        drop(self.session.take());
        if self.reusable {
            self.databases.give_back(self.owned.clone());
        } else {
            self.databases.release(self.owned.clone());
        }
    }
}

fn is_name_taken(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<DatabaseError>(),
            Some(DatabaseError::NameTaken(_))
        )
    })
}

/// Whether the provider refused a drop as not this run's (never retried).
pub fn is_not_ours(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        matches!(
            c.downcast_ref::<DatabaseError>(),
            Some(DatabaseError::NotOurs { .. })
        )
    })
}

impl Drop for Databases {
    /// Commands that never call [`Databases::finish`] (`reduce`, `replay`)
    /// still drop their spares.
    fn drop(&mut self) {
        let spares = std::mem::take(&mut *self.spare.lock().unwrap_or_else(|e| e.into_inner()));
        for db in spares {
            self.drop_or_queue(db, 0);
        }
    }
}

/// Whether an error says the DBMS is unreachable or full for now (crashed,
/// restarting, out of connection slots): worth waiting for.
pub fn dbms_is_away(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<lancet_core::DbError>()
            .is_some_and(|d| d.kind == lancet_core::FailureKind::ConnectionLost)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn tokens_are_twelve_hex_digits_and_differ() {
        let a = RunToken::random();
        let b = RunToken::random();
        assert_eq!(a.as_str().len(), 12);
        assert!(a.as_str().bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        // The longest name stays within PostgreSQL's 63 bytes.
        let id = DatabaseId {
            run: format!("{a}w"),
            thread: 1023,
            index: u64::MAX,
        };
        assert!(id.name().len() <= 63, "{}", id.name());
    }

    #[test]
    fn the_ledger_lists_what_was_created_and_not_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let ledger = Ledger::create(dir.path()).unwrap();
        assert!(Ledger::is_live(ledger.path()));
        let db = |n: &str| OwnedDatabase {
            name: n.into(),
            identity: Some("1".into()),
        };
        for (event, name) in [
            ("creating", "a"),
            ("created", "a"),
            ("creating", "b"),
            ("created", "b"),
            ("dropped", "a"),
            ("creating", "c"),
            ("not-created", "c"),
            ("creating", "d"),
        ] {
            ledger
                .append(&LedgerLine {
                    event: event.into(),
                    server: "u@h:1".into(),
                    database: db(name),
                })
                .unwrap();
        }
        let path = ledger.path().to_path_buf();
        let open = Ledger::read_open(&path).unwrap();
        // b was created; d was about to be (a kill before its `created`).
        let names: Vec<&str> = open.iter().map(|l| l.database.name.as_str()).collect();
        assert_eq!(names, ["b", "d"]);
        drop(ledger);
        assert!(!Ledger::is_live(&path));
        // A line cut short by a kill is ignored.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"event\":\"crea")
            .unwrap();
        assert_eq!(Ledger::read_open(&path).unwrap().len(), 2);
    }
}
