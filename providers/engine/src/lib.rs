//! Owns what stands between a provider crate and the lancet binary: the one value a
//! provider exports to describe its DBMS ([`DbmsDescription`]), which the
//! binary keeps in a list (`src/registry.rs`), and the worker processes
//! any engine that runs inside lancet gets for crash isolation
//! ([`isolation`]), and the list of descriptions as a value ([`Catalog`]:
//! describe a name, a record's dialect and its parser, make a provider and
//! a worker process's settings) that the campaign's crates are handed.
//! Nothing here names a DBMS.
//!
//! Depends on lancet-core only. May not touch: oracles, findings, the
//! runner's scheduling; a provider crate depends on this one, never the
//! reverse.

pub mod catalog;
pub mod description;
pub mod isolation;

pub use catalog::Catalog;
pub use description::{
    BuildVersion, DbmsDescription, InProcessEngine, OpenOptions, ServerAccess, Workers,
};
