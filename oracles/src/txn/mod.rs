//! The transaction oracle: several sessions run transactions on one table
//! in an order lancet drives, and lancet's model of the isolation level
//! (the DBMS's documented rules, [`lancet_core::txn::LevelRules`]) says
//! what each read may return, which writes must wait or fail, and what
//! the committed rows must be; under SERIALIZABLE some serial order of
//! the committed transactions must explain them. Definitions:
//! `docs/oracles.md`, section *Transactions*.
//!
//! This crate holds what is pure: schedules, the model, the checks and
//! how a schedule shrinks. The runner drives the sessions (threads,
//! waiting for locks) and keeps findings.

pub mod anomaly;
mod judge;
pub mod model;
pub mod schedule;
pub mod serial;
pub mod shrink;

pub use anomaly::{Anomaly, AnomalyKind};
pub use model::{Model, Outcome, Status, Wait};
pub use schedule::{Action, Op, Pred, Schedule, SessionLevel, Step, MAX_SESSIONS};

/// The `--oracle` name of the transaction oracle.
pub const NAME: &str = "txn";

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
    pub const ALL: [TxnFault; 3] = [
        TxnFault::StaleSnapshot,
        TxnFault::LostWrite,
        TxnFault::NoLock,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TxnFault::StaleSnapshot => "txn-stale-snapshot",
            TxnFault::LostWrite => "txn-lost-write",
            TxnFault::NoLock => "txn-no-lock",
        }
    }

    pub fn by_name(name: &str) -> Option<TxnFault> {
        TxnFault::ALL.into_iter().find(|f| f.name() == name)
    }
}

#[cfg(test)]
mod tests;
