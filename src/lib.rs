//! The lancet binary's library: the command line's campaign files
//! (`campaign`) and the provider registry (`registry`, the one place that
//! lists the DBMSs, and its list as a value, `registry::CATALOG`, which
//! the commands hand down). `main.rs` and `commands/` are a thin command
//! line over the crates below.
//!
//! It depends on every other lancet crate and none depends on it. The
//! campaign is in crates of its own under `campaign/`: the databases a
//! run owns (lancet-databases), findings (lancet-findings), reduction
//! (lancet-reduce) and the runner with its summaries (lancet-campaign);
//! what spans many runs (run files, shards, the findings store, the
//! report) is lancet-fleet's. Their modules are re-exported here under
//! their old paths. May not touch: SQL of a DBMS by name outside
//! `registry` (tests/seams.rs checks), or the oracles' and providers'
//! insides beyond their public traits.

pub mod campaign;
pub mod registry;

// The campaign's modules keep their paths in this crate (`lancet::runner`, ...).
pub use lancet_campaign::{junit, runner, summary};

// The databases' modules keep their paths in this crate (`lancet::databases`, ...).
pub use lancet_databases::{cleanup, databases, ledger};

// The findings' modules keep their paths in this crate (`lancet::findings`, ...).
pub use lancet_findings::{
    bug, dedup, finding_record, findings, fleet_findings, judge, known, leftovers, localize,
    replay, reproducer, script, sessions_record, sessions_replay, signature, stored_rows,
    wrong_side,
};

// Reduction keeps its path in this crate (`lancet::reduce`).
pub use lancet_reduce as reduce;

// The fleet's modules keep their paths in this crate (`lancet::store`, ...),
// so the command line and the campaign name them as before.
pub use lancet_fleet::utc::utc_time;
pub use lancet_fleet::{report, run_files, shard, store};

/// lancet's version, as findings record it.
pub use lancet_findings::VERSION;

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
