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

/// PostgreSQL 15's planner settings with values: each value changes plans
/// (join order search, the costs that pick scans and joins), never rows.
/// `force_parallel_mode = on` is left out: a parallel worker started for
/// every query made the knob oracle 45% slower (462 -> 255 checks/s).
pub const PLANNER_SETTINGS: &[(&str, &str, &[&str])] = &[
    (
        "join_collapse_limit",
        "explicit JOINs are reordered up to this many items",
        &["1", "2"],
    ),
    (
        "from_collapse_limit",
        "subqueries are pulled up into FROM lists up to this many items",
        &["1"],
    ),
    (
        "geqo_threshold",
        "the genetic optimizer plans FROM lists of this many items",
        &["2"],
    ),
    (
        "random_page_cost",
        "the cost of a random page read, which weighs index scans",
        &["0.01", "1000"],
    ),
    (
        "cpu_tuple_cost",
        "the cost of a row, which weighs scans against joins",
        &["0", "10"],
    ),
    (
        "cpu_operator_cost",
        "the cost of an operator, which weighs filters and hashing",
        &["0", "10"],
    ),
    (
        "work_mem",
        "the memory of a sort or hash before it spills",
        &["64kB"],
    ),
];

pub fn knobs() -> Vec<Knob> {
    let switches = PLANNER_SWITCHES
        .iter()
        .map(|(name, what)| Knob::switch(name, &format!("the planner may use {what}")));
    let settings = PLANNER_SETTINGS
        .iter()
        .map(|(name, what, values)| Knob::valued(name, what, values));
    switches.chain(settings).collect()
}

/// A change as a setting and the value it gives: `name` turns a switch
/// off, `name=value` sets it to `value`. `None` for a name that is not a
/// plain setting name, or a value that is not a plain word or number:
/// those are left out rather than spliced into SQL.
pub fn setting_of(change: &str) -> Option<(&str, &str)> {
    let (name, value) = lancet_core::knobs::split_change(change);
    let value = value.unwrap_or("off");
    let plain_value = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    (is_setting_name(name) && plain_value).then_some((name, value))
}

/// The statements that change the configuration from `from` to `to`:
/// `RESET` for each setting going back to its default, `SET` for each
/// knob of `to` (a reproducer runs the same lines in psql).
pub fn commands(from: &KnobSetting, to: &KnobSetting) -> Vec<String> {
    let settings = |k: &KnobSetting| -> Vec<(String, String)> {
        k.changes
            .iter()
            .filter_map(|knob| setting_of(knob))
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    };
    let (old, new) = (settings(from), settings(to));
    let reset = old
        .iter()
        .filter(|(name, _)| !new.iter().any(|(n, _)| n == name))
        .map(|(name, _)| format!("RESET {name};"));
    let set = new
        .iter()
        .filter(|s| !old.contains(s))
        .map(|(name, value)| format!("SET {name} = '{value}';"));
    reset.chain(set).collect()
}

/// Whether `name` can be a PostgreSQL setting: letters, digits, `_` and
/// the `.` of an extension's prefix.
pub fn is_setting_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_move_between_settings() {
        let a = KnobSetting::with(&["enable_hashjoin", "enable_sort"]);
        let b = KnobSetting::with(&["enable_sort", "citus.enable_router_execution"]);
        assert_eq!(
            commands(&a, &b),
            vec![
                "RESET enable_hashjoin;".to_string(),
                "SET citus.enable_router_execution = 'off';".to_string()
            ]
        );
        let values = KnobSetting::with(&["citus.local_table_join_policy=prefer-local"]);
        assert_eq!(
            commands(&KnobSetting::default(), &values),
            vec!["SET citus.local_table_join_policy = 'prefer-local';".to_string()]
        );
        assert_eq!(
            commands(&values, &KnobSetting::default()),
            vec!["RESET citus.local_table_join_policy;".to_string()]
        );
        assert!(setting_of("a=b; DROP").is_none());
        assert_eq!(commands(&b, &b), Vec::<String>::new());
        let odd = KnobSetting::with(&["x; DROP TABLE t"]);
        assert!(commands(&KnobSetting::default(), &odd).is_empty());
    }
}
