//! lancet's findings, from a check's disagreement to a bug in the index:
//! the record ([`findings`], and [`finding_record`] for either kind of
//! oracle, which also writes the record a sessions oracle hands the
//! runner; such a record with the facts its oracle reads from it and the
//! files it lays out is [`sessions_record`]), its reproducer on disk ([`reproducer`], scripts read
//! back by [`script`]), replay ([`replay`]; a sessions oracle's finding
//! run again or reduced by its oracle, [`sessions_replay`]) and the
//! judgment of what a replay shows ([`judge`]), the knobs that hide a
//! finding ([`localize`]), the rows a setup stored ([`stored_rows`]) and
//! which side of a relation is wrong ([`wrong_side`]); signatures
//! ([`signature`]), bug cores ([`bug`]), the findings index with flood
//! control ([`dedup`]), known bugs of a CI gate ([`known`]), what the
//! findings store keeps of a run ([`fleet_findings`]) and what killed
//! runs left ([`leftovers`]).
//!
//! Depends on lancet-core, lancet-oracles (an oracle and a planted fault
//! by name: a sessions record's oracle reads and lays it out), lancet-engine (the
//! [`lancet_engine::Catalog`] of DBMS descriptions, handed down by the
//! commands: a record names its DBMS, and its SQL is read with that
//! DBMS's parser), lancet-fleet and lancet-databases. May not touch: the
//! registry or any provider (no DBMS by name, no global list of them), the
//! runner's threads, summaries, reduction (lancet-reduce is above this
//! crate).

pub mod bug;
pub mod dedup;
pub mod finding_record;
pub mod findings;
pub mod fleet_findings;
pub mod judge;
pub mod known;
pub mod leftovers;
pub mod localize;
pub mod replay;
pub mod reproducer;
pub mod script;
pub mod sessions_record;
pub mod sessions_replay;
pub mod signature;
pub mod stored_rows;
pub mod wrong_side;

/// lancet's version (the workspace's), as findings record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What unit tests read findings with: SQLite's description alone.
#[cfg(test)]
mod fixture {
    pub const CATALOG: lancet_engine::Catalog =
        lancet_engine::Catalog::new(&[&lancet_sqlite::description::SQLITE]);
}
