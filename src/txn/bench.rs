//! A database of a transaction campaign with its sessions, on which the
//! driver runs schedules: the campaign's, a finding's confirmation and
//! reduction, and `lancet replay`'s.

use super::shared::Shared;
use super::statement_log::LoggedConnection;
use crate::databases::{Purpose, Scratch};
use lancet_core::txn::Transactions;
use lancet_core::Connection;
use lancet_oracles::txn::{Run, Schedule, ScheduleRun, Sessions, MAX_SESSIONS};

/// A database with its sessions: the schedules run on it.
pub(super) struct Bench<'a> {
    /// First, so that the sessions close before the database is dropped.
    sessions: Sessions,
    /// A session of its own that makes the table and reads the final
    /// rows.
    observer: Option<Box<dyn Connection>>,
    tx: &'a dyn Transactions,
    scratch: Scratch<'a>,
}

impl Drop for Bench<'_> {
    fn drop(&mut self) {
        self.sessions.close();
        drop(self.observer.take());
        self.tx.release(self.scratch.owned());
    }
}

pub(super) fn open_bench<'a>(
    shared: &Shared<'a>,
    purpose: Purpose,
    thread: u32,
    index: u64,
) -> anyhow::Result<Bench<'a>> {
    let scratch = shared.databases.create(purpose, thread, index)?;
    let owned = scratch.owned().clone();
    let tx = shared.tx;
    // `--log-statements`: the campaign's own databases log each session.
    let log_dir = shared
        .options
        .log_dir
        .as_deref()
        .filter(|_| purpose == Purpose::Worker);
    // Sessions 1 to MAX_SESSIONS, then the observer, logged as session 0.
    let mut opened = 0;
    let mut open = || -> anyhow::Result<Box<dyn Connection>> {
        let conn = tx.open_session(&owned)?;
        opened += 1;
        let session = if opened > MAX_SESSIONS { 0 } else { opened };
        match log_dir {
            Some(dir) => LoggedConnection::wrap(conn, dir, (thread, index, session)),
            None => Ok(conn),
        }
    };
    let sessions = Sessions::open(tx, MAX_SESSIONS, &mut open)?;
    let mut observer = open()?;
    for sql in tx.session_setup() {
        observer
            .execute(&sql)
            .map_err(|e| anyhow::anyhow!("session setup `{sql}` failed: {e}"))?;
    }
    Ok(Bench {
        scratch,
        sessions,
        observer: Some(observer),
        tx,
    })
}

impl Bench<'_> {
    pub(super) fn run(
        &mut self,
        shared: &Shared<'_>,
        schedule: &Schedule,
    ) -> anyhow::Result<ScheduleRun> {
        let rules = shared.rules_for(schedule);
        let run = Run {
            tx: shared.tx,
            rules,
            schedule,
            timing: shared.options.timing,
            fault: shared.fault,
        };
        let owned = self.scratch.owned().clone();
        let tx = shared.tx;
        let mut open = || -> anyhow::Result<Box<dyn Connection>> {
            let mut conn = tx.open_session(&owned)?;
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
