//! The stress oracle's planted fault: the first session's transactions
//! that commit lose their last write, which is never sent and taken as
//! done (a transfer half-applied, an increment dropped), as a DBMS would
//! that lost a committed write. The invariants must catch it
//! (`selftest`). A planted fault like every other oracle's
//! ([`PlantedFault`]): found by name, set with `--inject-fault`, named in
//! records; the round's sessions recognise it ([`StressFault::of`]).

use super::round::Txn;
use lancet_core::fault::{Fault, FaultedQuery, FaultedResult, PlantedFault};
use std::sync::Arc;

/// A planted fault the stress oracle's sessions apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StressFault {
    /// The last write of each of session 1's committing transactions is
    /// never sent.
    DroppedWrite,
}

impl StressFault {
    /// Every fault of the stress oracle, in the order `selftest` plants
    /// them.
    pub const ALL: [StressFault; 1] = [StressFault::DroppedWrite];

    /// The stress fault `fault` is, if it is one.
    pub fn of(fault: &Fault) -> Option<StressFault> {
        fault.as_any()?.downcast_ref::<StressFault>().copied()
    }

    /// The statement of `txn` (its place) whose write session `session`
    /// does not send, if any.
    pub fn dropped_write(self, session: usize, txn: &Txn) -> Option<usize> {
        match self {
            StressFault::DroppedWrite if session == 0 && txn.commit => {
                txn.stmts.iter().rposition(|s| s.delta().is_some())
            }
            StressFault::DroppedWrite => None,
        }
    }
}

impl PlantedFault for StressFault {
    fn name(&self) -> &'static str {
        match self {
            StressFault::DroppedWrite => "txn-stress-dropped-write",
        }
    }
    /// Query rows are not where it acts: the round's sessions apply it.
    fn perturb(&self, _query: &FaultedQuery<'_>, _result: &mut FaultedResult<'_>) {}
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// The stress oracle's planted faults, as `lancet_oracles::faults` lists
/// them.
pub fn faults() -> Vec<Fault> {
    StressFault::ALL
        .into_iter()
        .map(|f| Arc::new(f) as Fault)
        .collect()
}
