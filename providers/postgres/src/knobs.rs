//! PostgreSQL's planner switches: settings that change plans, never results.

use lancet_core::{Knob, KnobSetting};

/// The `enable_*` settings of PostgreSQL 15 that choose plan shapes.
pub const PLANNER_SWITCHES: &[(&str, &str)] = &[
    ("enable_async_append", "asynchronous append plans"),
    ("enable_bitmapscan", "bitmap heap scans"),
    ("enable_gathermerge", "gather merge plans"),
    ("enable_hashagg", "hashed aggregation"),
    ("enable_hashjoin", "hash joins"),
    ("enable_incremental_sort", "incremental sorts"),
    ("enable_indexonlyscan", "index-only scans"),
    ("enable_indexscan", "index scans"),
    ("enable_material", "materialization"),
    ("enable_memoize", "memoize nodes"),
    ("enable_mergejoin", "merge joins"),
    ("enable_nestloop", "nested-loop joins"),
    ("enable_parallel_append", "parallel append plans"),
    ("enable_parallel_hash", "parallel hash plans"),
    ("enable_partition_pruning", "partition pruning"),
    ("enable_partitionwise_join", "partitionwise joins"),
    (
        "enable_partitionwise_aggregate",
        "partitionwise aggregation",
    ),
    ("enable_seqscan", "sequential scans"),
    ("enable_sort", "explicit sorts"),
    ("enable_tidscan", "TID scans"),
];

pub fn knobs() -> Vec<Knob> {
    PLANNER_SWITCHES
        .iter()
        .map(|(name, what)| Knob {
            name: name.to_string(),
            description: format!("the planner may use {what}"),
        })
        .collect()
}

/// The statements that apply `setting`: `SET enable_hashjoin = off;` per
/// switch turned off (a reproducer runs the same lines in psql).
pub fn commands(setting: &KnobSetting) -> Vec<String> {
    setting
        .off
        .iter()
        .filter(|name| PLANNER_SWITCHES.iter().any(|(n, _)| n == name))
        .map(|name| format!("SET {name} = off;"))
        .collect()
}
