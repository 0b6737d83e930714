//! The lancet binary's library: the campaign. It owns the runner that
//! drives providers and oracles on many threads (and worker processes),
//! the databases it creates and their ledger, findings on disk and their
//! deduplication, replay and reduction, run summaries and JUnit reports,
//! and the provider registry (`registry`, the one place that lists the
//! DBMSs). `main.rs` and `commands/` are a thin command line over it.
//!
//! It depends on every other lancet crate and none depends on it. What
//! spans many runs (run files, shards, the findings store, the report) is
//! lancet-fleet's, re-exported here under its old paths; the fleet reads
//! this crate's findings only through `fleet_findings`. May not touch: SQL
//! of a DBMS by name outside `registry` (tests/seams.rs checks), or the
//! oracles' and providers' insides beyond their public traits.

pub mod bug;
pub mod campaign;
pub mod cleanup;
pub mod databases;
pub mod dedup;
pub mod finding_record;
pub mod findings;
pub mod fleet_findings;
pub mod judge;
pub mod junit;
pub mod known;
pub mod ledger;
pub mod leftovers;
pub mod localize;
pub mod reduce;
pub mod registry;
pub mod replay;
pub mod reproducer;
pub mod runner;
pub mod script;
pub mod sessions_replay;
pub mod signature;
pub mod stored_rows;
pub mod summary;
pub mod txn;
pub mod wrong_side;

// The fleet's modules keep their paths in this crate (`lancet::store`, ...),
// so the command line and the campaign name them as before.
pub use lancet_fleet::utc::utc_time;
pub use lancet_fleet::{report, run_files, shard, store};

/// lancet's version, as findings record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A run's id: UTC time, the seed and the process's random token, e.g.
/// `20261122-071502-s42-3fa9c1d2e4b7`: readable, and unique even for two
/// runs with one seed started in the same second. A shard of a campaign
/// says which (`-s42-shard2of4-...`).
pub fn run_id(seed: u64, shard: shard::Shard, token: &databases::RunToken) -> String {
    let (y, m, d, h, mi, sec) = lancet_fleet::utc::utc_fields(run_files::unix_now());
    let part = if shard.is_part() {
        format!("shard{}of{}-", shard.index, shard.count)
    } else {
        String::new()
    };
    format!("{y:04}{m:02}{d:02}-{h:02}{mi:02}{sec:02}-s{seed}-{part}{token}")
}
