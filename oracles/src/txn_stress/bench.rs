//! A database of a campaign with the stress oracle's sessions on it:
//! [`MAX_SESSIONS`] connections and an observer that makes the table and
//! reads the rows after a round, opened once and used by every round on
//! the database (the campaign's, a finding's reruns and reduction, `lancet
//! replay`'s).

use super::planted::StressFault;
use super::round::{Round, MAX_SESSIONS, TIME_LIMIT_MS};
use super::run::{run_round, RoundRun, RoundSpec};
use lancet_core::txn::Transactions;
use lancet_core::{Connection, OwnedDatabase, SessionsDatabase};
use std::time::Duration;

/// A database with its sessions: the rounds run on it.
pub(crate) struct StressBench<'a> {
    /// First, so that they close before the database is released.
    sessions: Vec<Box<dyn Connection>>,
    observer: Option<Box<dyn Connection>>,
    /// The shape the table was last made in.
    made: Option<(bool, Option<String>)>,
    tx: &'a dyn Transactions,
    database: OwnedDatabase,
}

impl Drop for StressBench<'_> {
    fn drop(&mut self) {
        self.sessions.clear();
        drop(self.observer.take());
        self.tx.release(&self.database);
    }
}

/// Opens the sessions (the statement logs name them 1 to
/// [`MAX_SESSIONS`]) and the observer (0) on `db`'s database, each with
/// the DBMS's session setup.
pub(crate) fn open_bench<'a>(
    tx: &'a dyn Transactions,
    db: &mut dyn SessionsDatabase,
) -> anyhow::Result<StressBench<'a>> {
    let database = db.database().clone();
    let mut open = |session: usize| -> anyhow::Result<Box<dyn Connection>> {
        let mut conn = db.logged(session, tx.open_session(&database)?)?;
        for sql in tx.session_setup() {
            conn.execute(&sql)
                .map_err(|e| anyhow::anyhow!("session setup `{sql}` failed: {e}"))?;
        }
        Ok(conn)
    };
    let sessions = (1..=MAX_SESSIONS)
        .map(&mut open)
        .collect::<anyhow::Result<Vec<_>>>()?;
    let observer = open(0)?;
    Ok(StressBench {
        sessions,
        observer: Some(observer),
        made: None,
        tx,
        database,
    })
}

impl StressBench<'_> {
    /// Runs `round` on a fresh table of the bench's database.
    pub(crate) fn run(
        &mut self,
        round: &Round,
        fault: Option<StressFault>,
    ) -> anyhow::Result<RoundRun> {
        let spec = RoundSpec {
            tx: self.tx,
            round,
            fault,
            time_limit: Duration::from_millis(TIME_LIMIT_MS),
        };
        let observer = self
            .observer
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("the observer session is closed"))?;
        run_round(&spec, &mut **observer, &mut self.sessions, &mut self.made)
    }
}
