//! The transaction oracle: several sessions run transactions on one table
//! in an order lancet drives, and lancet's model of the isolation level
//! (the DBMS's documented rules, [`lancet_core::txn::LevelRules`]) says
//! what each read may return, which writes must wait or fail, and what
//! the committed rows must be; under SERIALIZABLE some serial order of
//! the committed transactions must explain them. Definitions:
//! `docs/oracles.md`, section *Transactions*.
//!
//! This module holds what no DBMS owns: schedules (with the forms a
//! DBMS may offer beyond plain statements: moves to new keys, upserts,
//! IGNORE, a UNIQUE index on `v`, [`forms`]), the model, the checks, how
//! a schedule shrinks, the driver that runs a schedule on a
//! database's sessions (a thread per session, lock waits, the waits after
//! a transaction ends), the planted faults it applies and a finding's
//! record, and how a finding is confirmed, filed and reduced ([`Txn`], a
//! [`lancet_core::SessionsOracle`]). What a DBMS does differently is its
//! provider's ([`lancet_core::txn::Transactions`]); the campaign
//! (threads, databases, the findings directory) is the runner's, the same
//! for every oracle.

pub mod anomaly;
mod bench;
pub mod clauses;
pub mod conditions;
pub mod driver;
mod files;
mod filing;
pub mod forms;
mod judge;
pub mod model;
mod oracle;
pub mod planted;
pub mod record;
pub mod schedule;
pub mod serial;
pub mod sessions;
pub(crate) mod settings;
pub mod shrink;
mod tables;

pub use anomaly::{Anomaly, AnomalyKind};
pub use driver::{Run, ScheduleRun, Timing, TraceLine};
pub(crate) use files::kind_of;
pub use forms::{Forms, Spellings};
pub use model::{Model, Outcome, Status, Wait};
pub(crate) use oracle::{levels_for, planted};
pub use oracle::{parse_levels, Txn};
pub use planted::{faults, TxnFault};
pub use record::{ScheduleOrigin, TxnFinding};
pub use schedule::{Action, Op, Pred, Schedule, SessionLevel, Step, MAX_SESSIONS};
pub use sessions::Sessions;

/// The `--oracle` name of the transaction oracle.
pub const NAME: &str = "txn";

#[cfg(test)]
pub(crate) mod tests;
