//! The stress oracle: many short transactions over few rows, run by 2 to
//! 8 sessions at once (each on a thread of its own, in no order lancet
//! drives), and at the end an invariant that any level the DBMS models
//! keeps: a bank's total never changes, and every row (an account, a
//! counter) ends at its start plus the changes of the transactions that
//! committed. It is for the rare races that one driven schedule at a time
//! (the transaction oracle, [`crate::txn`]) cannot hit. Definitions:
//! `docs/oracles.md`, section *txn-stress*.
//!
//! What a round is ([`round`]), how its sessions run it ([`run`]), the
//! invariants ([`invariant`]), the planted fault ([`planted`]) and a
//! finding's record ([`record`]) are this module's; the DBMS is seen
//! through [`lancet_core::txn::Transactions`] alone, and the campaign
//! (threads, databases, findings) is the runner's, as for every sessions
//! oracle ([`TxnStress`]).

mod bench;
mod files;
mod filing;
pub mod invariant;
mod oracle;
pub mod planted;
pub mod record;
pub mod round;
pub mod run;

pub use invariant::{judge, Invariant, Violation};
pub use oracle::TxnStress;
pub use planted::{faults, StressFault};
pub use record::StressFinding;
pub use round::{Round, Stmt, Txn, Workload};

/// The `--oracle` name of the stress oracle.
pub const NAME: &str = "txn-stress";

#[cfg(test)]
mod tests;
