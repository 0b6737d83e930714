//! The transaction oracle's campaign: threads, each with a database of
//! its own ([`bench`]) and the driver's sessions on it, run schedules
//! ([`campaign`]); findings are confirmed, written as a script per
//! session (`lancet_findings::txn_finding`) and reduced ([`record`]); a finding's schedule
//! runs again for `lancet replay` and `lancet reduce` ([`rerun`]). What a schedule is,
//! what its level allows and how the driver runs it on sessions is the
//! oracle's (`lancet_oracles::txn`); what a DBMS's levels are is its
//! provider's ([`lancet_core::txn::Transactions`]).

mod bench;
pub mod campaign;
pub mod options;
mod record;
pub mod rerun;
mod shared;
mod statement_log;

pub use campaign::run;
pub use lancet_findings::txn_finding::{TxnFinding, TxnFindingFile};
pub use lancet_oracles::txn::Timing;
pub use options::TxnOptions;
