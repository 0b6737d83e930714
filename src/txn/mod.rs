//! A transaction finding on disk ([`finding`]): the record the
//! transaction oracle hands over, written as its files and read back.
//! How a schedule runs, is judged, confirmed and reduced is the oracle's
//! (`lancet_oracles::txn`); the campaign that drives it is the runner's,
//! as for every oracle.

pub mod finding;

pub use finding::{TxnFinding, TxnFindingFile};
