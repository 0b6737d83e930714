//! The planted faults of the transaction oracle, applied by the driver
//! to the first session: each makes the DBMS look as if it broke a rule
//! the model checks, so that `selftest` proves the check. They are
//! planted faults like every other oracle's ([`PlantedFault`]): found by
//! name (`lancet_oracles::fault`), set with `--inject-fault`, named in
//! records. They change no query's rows; the driver recognises its own
//! ([`TxnFault::of`]) and acts on the session's statements.

use super::schedule::{Action, Schedule, Step};
use super::sessions::{run_now, Reply};
use lancet_core::fault::{Fault, FaultedQuery, FaultedResult, PlantedFault};
use lancet_core::txn::{IsolationLevel, Transactions};
use lancet_core::Connection;
use std::sync::Arc;

/// A planted fault the driver applies to one session (the first), to
/// prove the checks catch what they claim to (`selftest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnFault {
    /// The session's reads see the rows as they were before the schedule.
    StaleSnapshot,
    /// The session's last write before its COMMIT is never sent.
    LostWrite,
    /// The session's writes and locking reads run outside its
    /// transaction, on a connection of their own: they take no lock that
    /// others would wait for, and writes are committed at once.
    NoLock,
}

impl TxnFault {
    /// Every fault of the transaction oracle, in the order `selftest`
    /// plants them.
    pub const ALL: [TxnFault; 3] = [
        TxnFault::StaleSnapshot,
        TxnFault::LostWrite,
        TxnFault::NoLock,
    ];

    /// The transaction fault `fault` is, if it is one.
    pub fn of(fault: &Fault) -> Option<TxnFault> {
        fault.as_any()?.downcast_ref::<TxnFault>().copied()
    }
}

impl PlantedFault for TxnFault {
    fn name(&self) -> &'static str {
        match self {
            TxnFault::StaleSnapshot => "txn-stale-snapshot",
            TxnFault::LostWrite => "txn-lost-write",
            TxnFault::NoLock => "txn-no-lock",
        }
    }
    /// Query rows are not where it acts: the driver applies it.
    fn perturb(&self, _query: &FaultedQuery<'_>, _result: &mut FaultedResult<'_>) {}
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// The transaction oracle's planted faults, as `lancet_oracles::faults`
/// lists them.
pub fn faults() -> Vec<Fault> {
    TxnFault::ALL
        .into_iter()
        .map(|f| Arc::new(f) as Fault)
        .collect()
}

/// The planted fault's state for one schedule.
pub(crate) struct Planted {
    fault: TxnFault,
    /// StaleSnapshot: a transaction begun before the schedule; NoLock: an
    /// autocommit connection.
    side: Option<Box<dyn Connection>>,
    /// LostWrite: the step never sent.
    dropped_step: Option<usize>,
}

/// The side connection's transaction ends before the next schedule's
/// setup: a connection to an engine in a worker process closes when the
/// worker reads its close, which may come after that setup, and an open
/// SQLite read holds a lock that a rollback journal's writers wait for
/// (selftest's setup failed with SQLITE_BUSY once journal modes were
/// drawn). A ROLLBACK outside a transaction fails harmlessly.
impl Drop for Planted {
    fn drop(&mut self) {
        if let Some(side) = self.side.as_mut() {
            let _ = side.execute("ROLLBACK");
        }
    }
}

impl Planted {
    /// Readies `fault` for a run of `schedule`, opening what it needs
    /// beside the sessions with `open`.
    pub(crate) fn plant(
        fault: TxnFault,
        tx: &dyn Transactions,
        schedule: &Schedule,
        open: &mut dyn FnMut() -> anyhow::Result<Box<dyn Connection>>,
    ) -> anyhow::Result<Planted> {
        let mut planted = Planted {
            fault,
            side: None,
            dropped_step: None,
        };
        match fault {
            TxnFault::StaleSnapshot => {
                let mut side = open()?;
                for sql in tx.begin(IsolationLevel::RepeatableRead, None) {
                    side.execute(&sql).map_err(|e| anyhow::anyhow!("{e}"))?;
                }
                side.query(&format!("SELECT k, v FROM {}", schedule.table))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                planted.side = Some(side);
            }
            TxnFault::NoLock => planted.side = Some(open()?),
            TxnFault::LostWrite => {
                let steps: Vec<(usize, &Step)> = schedule.session_steps(0).collect();
                if steps
                    .last()
                    .is_some_and(|(_, s)| s.action == Action::Commit)
                {
                    planted.dropped_step = steps
                        .iter()
                        .rev()
                        .find(|(_, s)| matches!(s.action, Action::Stmt(op) if op.changes_rows()))
                        .map(|(i, _)| *i);
                }
            }
        }
        Ok(planted)
    }

    /// The planted fault's answer for `step` of `schedule` (sent as
    /// `sql`), if it takes it: only steps of session 0.
    pub(crate) fn reply(
        &mut self,
        schedule: &Schedule,
        step: usize,
        sql: &str,
        is_query: bool,
    ) -> Option<Reply> {
        let st = schedule.steps[step];
        if st.session != 0 {
            return None;
        }
        let Action::Stmt(op) = st.action else {
            return None;
        };
        match self.fault {
            TxnFault::LostWrite if self.dropped_step == Some(step) => Some(Ok(None)),
            TxnFault::StaleSnapshot if op.is_read() => {
                self.side.as_mut().map(|c| run_now(&mut **c, sql, is_query))
            }
            TxnFault::NoLock if op.locks_rows() => {
                self.side.as_mut().map(|c| run_now(&mut **c, sql, is_query))
            }
            _ => None,
        }
    }
}
