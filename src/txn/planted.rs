//! The planted faults of the transaction oracle, applied by the driver
//! to the first session: each makes the DBMS look as if it broke a rule
//! the model checks, so that `selftest` proves the check.

use super::driver::{Driving, Run};
use super::sessions::{run_now, Reply};
use lancet_core::txn::IsolationLevel;
use lancet_core::Connection;
use lancet_oracles::txn::{Action, TxnFault};

/// The planted fault's state for one schedule.
pub(super) struct Planted {
    pub(super) fault: TxnFault,
    /// StaleSnapshot: a transaction begun before the schedule; NoLock: an
    /// autocommit connection.
    pub(super) side: Option<Box<dyn Connection>>,
    /// LostWrite: the step never sent.
    pub(super) dropped_step: Option<usize>,
}

impl Run<'_> {
    pub(super) fn plant(
        &self,
        fault: TxnFault,
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
                for sql in self.tx.begin(IsolationLevel::RepeatableRead, None) {
                    side.execute(&sql).map_err(|e| anyhow::anyhow!("{e}"))?;
                }
                side.query(&format!("SELECT k, v FROM {}", self.schedule.table))
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                planted.side = Some(side);
            }
            TxnFault::NoLock => planted.side = Some(open()?),
            TxnFault::LostWrite => {
                let steps: Vec<(usize, &lancet_oracles::txn::Step)> =
                    self.schedule.session_steps(0).collect();
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
}

impl Driving<'_, '_> {
    /// The planted fault's answer for a step of session 0, if it takes it.
    pub(super) fn planted_reply(
        &mut self,
        step: usize,
        sql: &str,
        is_query: bool,
    ) -> Option<Reply> {
        let st = self.run.schedule.steps[step];
        let planted = self.planted.as_mut()?;
        if st.session != 0 {
            return None;
        }
        let Action::Stmt(op) = st.action else {
            return None;
        };
        match planted.fault {
            TxnFault::LostWrite if planted.dropped_step == Some(step) => Some(Ok(None)),
            TxnFault::StaleSnapshot if op.is_read() => planted
                .side
                .as_mut()
                .map(|c| run_now(&mut **c, sql, is_query)),
            TxnFault::NoLock if op.locks_rows() => planted
                .side
                .as_mut()
                .map(|c| run_now(&mut **c, sql, is_query)),
            _ => None,
        }
    }
}
