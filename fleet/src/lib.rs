//! lancet across runs: what a run directory says about its run
//! ([`run_files`]: `run.json` and `samples.jsonl`), how a campaign is split
//! into shards ([`shard`]), the findings store that gathers many runs'
//! directories into one database ([`store`]), and the campaign report
//! drawn from a store ([`report`]).
//!
//! Dependencies point one way: the `lancet` crate (the campaign: runner,
//! findings, deduplication, reduction, the command line) depends on this
//! crate, never the reverse. So nothing here reads a finding record or a
//! findings index itself: what the store keeps of them the campaign hands
//! over through [`store::push::RunFindings`]. Nothing here generates,
//! runs or judges SQL, and nothing names a DBMS but the store's own
//! PostgreSQL server.

pub mod report;
pub mod run_files;
pub mod shard;
pub mod store;
pub mod utc;
