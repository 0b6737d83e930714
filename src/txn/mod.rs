//! The transaction oracle's campaign: sessions driven step by step on
//! one database ([`driver`]), findings written as a script per session
//! ([`finding`]), and the loop that runs, confirms and reduces schedules
//! ([`campaign`]). What a schedule is and what its level allows is the
//! oracle's (`lancet_oracles::txn`); what a DBMS's levels are is its
//! provider's ([`lancet_core::txn::Transactions`]).

pub mod campaign;
pub mod driver;
pub mod finding;
mod planted;
mod record;
pub mod sessions;
mod tables;

pub use campaign::{run, TxnOptions};
pub use driver::Timing;
pub use finding::TxnFinding;
