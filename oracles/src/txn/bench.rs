//! A database of a campaign with the transaction oracle's sessions on it,
//! on which the driver runs schedules: the campaign's, a finding's
//! confirmation and reduction, and `lancet replay`'s. The database is the
//! runner's ([`SessionsDatabase`]); the sessions are this oracle's.

use super::driver::{Run, ScheduleRun, Timing};
use super::planted::TxnFault;
use super::schedule::{Schedule, MAX_SESSIONS};
use super::sessions::Sessions;
use lancet_core::txn::{LevelRules, Transactions};
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
}

impl Drop for Bench<'_> {
    fn drop(&mut self) {
        self.sessions.close();
        drop(self.observer.take());
        self.tx.release(&self.database);
    }
}

/// What a schedule's run needs besides the bench: the level rules the
/// provider models, the planted fault and the driver's timing.
pub(crate) struct Rules<'a> {
    pub(crate) tx: &'a dyn Transactions,
    pub(crate) rules: &'a [LevelRules],
    pub(crate) fault: Option<TxnFault>,
    pub(crate) timing: Timing,
}

impl Rules<'_> {
    /// The rules of each session of `schedule`, by its level and mode.
    /// A schedule drawn here is at the levels of `rules`; a recorded one
    /// is checked against them before it runs ([`Rules::check`]).
    pub(crate) fn of(&self, schedule: &Schedule) -> anyhow::Result<Vec<&LevelRules>> {
        (0..schedule.sessions)
            .map(|s| {
                let (level, mode) = schedule.level_of(s);
                self.rules
                    .iter()
                    .find(|r| r.level == level && r.mode.as_deref() == mode)
                    .ok_or_else(|| {
                        anyhow::anyhow!("this DBMS does not model {}", schedule.label_of(s))
                    })
            })
            .collect()
    }
}

/// Opens the sessions (1 to [`MAX_SESSIONS`], then the observer, which
/// the statement logs name session 0) on `db`'s database.
pub(crate) fn open_bench<'a>(
    tx: &'a dyn Transactions,
    db: &mut dyn SessionsDatabase,
) -> anyhow::Result<Bench<'a>> {
    let database = db.database().clone();
    let mut opened = 0;
    let mut open = || -> anyhow::Result<Box<dyn Connection>> {
        let conn = tx.open_session(&database)?;
        opened += 1;
        let session = if opened > MAX_SESSIONS { 0 } else { opened };
        db.logged(session, conn)
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
    })
}

impl Bench<'_> {
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
        };
        let database = self.database.clone();
        let tx = rules.tx;
        let mut open = || -> anyhow::Result<Box<dyn Connection>> {
            let mut conn = tx.open_session(&database)?;
            for sql in tx.session_setup() {
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
