//! lancet's campaign: the runner ([`runner`]) drives one DBMS's provider
//! and one kind of oracle on many threads: query oracles in a weighted
//! rotation on the session each database's population opened (in worker
//! processes for engines that run inside lancet), or an oracle that opens
//! sessions of its own (`lancet_core::SessionsOracle`). Every kind goes
//! through the same loop: databases from lancet-databases, findings filed
//! at once through lancet-findings (confirmed, indexed, flood control),
//! reduced on reducer threads with lancet-reduce, counters, the status
//! line and throughput samples, and every end of a run a summary
//! ([`summary`]), also as a JUnit report ([`junit`]).
//!
//! Depends on lancet-core, lancet-oracles, lancet-engine (the catalog a
//! worker process makes its provider from), lancet-fleet (run files,
//! shards), lancet-databases, lancet-findings and lancet-reduce. May not
//! touch: the registry or any provider (no DBMS by name), the command
//! line, or an oracle's insides beyond core's traits.

pub mod junit;
pub mod runner;
pub mod summary;

// The paths the runner's modules name below the crate root: the crates
// this one stands on, as the binary's library re-exports them.
use lancet_databases::databases;
use lancet_findings::{dedup, finding_record, findings, replay, reproducer, signature, VERSION};
use lancet_fleet::{run_files, shard};
use lancet_reduce as reduce;
