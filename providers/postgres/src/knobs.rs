//! PostgreSQL's planner knobs, read from the server: settings that change
//! plans, never results.
//!
//! At start-up the provider reads `pg_settings` ([`PlannerSettings::read`]).
//! Every boolean of the documented category *Planner Method Configuration*
//! (the `enable_*` switches) is a knob, so PostgreSQL 16's
//! `enable_presorted_aggregate`, 17's `enable_group_by_reordering`, 18's
//! `enable_distinct_reordering` and `enable_self_join_elimination` and the
//! next release's switches are turned without a code change. Settings with
//! values are knobs only where lancet knows values that change plans and
//! never rows ([`VALUED`]); the others of the *Query Tuning* categories are
//! left alone for a stated reason ([`LEFT_ALONE`]), and one lancet has never
//! seen is reported once and not used.

use lancet_core::{Knob, KnobSetting};

/// The `enable_*` switches lancet has met (PostgreSQL 15 to 18). A switch
/// of the server's that is not here is used all the same, and named once
/// as new to lancet.
pub const KNOWN_SWITCHES: &[&str] = &[
    "enable_async_append",
    "enable_bitmapscan",
    "enable_distinct_reordering",
    "enable_gathermerge",
    "enable_group_by_reordering",
    "enable_hashagg",
    "enable_hashjoin",
    "enable_incremental_sort",
    "enable_indexonlyscan",
    "enable_indexscan",
    "enable_material",
    "enable_memoize",
    "enable_mergejoin",
    "enable_nestloop",
    "enable_parallel_append",
    "enable_parallel_hash",
    "enable_partition_pruning",
    "enable_partitionwise_aggregate",
    "enable_partitionwise_join",
    "enable_presorted_aggregate",
    "enable_self_join_elimination",
    "enable_seqscan",
    "enable_sort",
    "enable_tidscan",
];

/// Planner settings with values: each value changes plans (join order
/// search, the costs that pick scans and joins), never rows.
/// `force_parallel_mode = on` (`debug_parallel_query` since 16) is left
/// out: a parallel worker started for every query made the knob oracle 45%
/// slower (462 -> 255 checks/s).
pub const VALUED: &[(&str, &str, &[&str])] = &[
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
        "seq_page_cost",
        "the cost of a sequential page read, which weighs scans",
        &["100"],
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
        "effective_cache_size",
        "the cache the planner assumes, which weighs index scans",
        &["8kB"],
    ),
    (
        "constraint_exclusion",
        "whether CHECK constraints exclude tables and partitions",
        &["on", "off"],
    ),
    (
        "work_mem",
        "the memory of a sort or hash before it spills",
        &["64kB"],
    ),
];

/// Planner settings lancet knows and does not turn, and why.
pub const LEFT_ALONE: &[(&str, &str)] = &[
    ("geqo", "the genetic optimizer plans only FROM lists past geqo_threshold, which a configuration lowers instead"),
    ("geqo_effort", "genetic optimizer tuning (geqo_threshold = 2 reaches it)"),
    ("geqo_generations", "genetic optimizer tuning (geqo_threshold = 2 reaches it)"),
    ("geqo_pool_size", "genetic optimizer tuning (geqo_threshold = 2 reaches it)"),
    ("geqo_seed", "genetic optimizer tuning (geqo_threshold = 2 reaches it)"),
    ("geqo_selection_bias", "genetic optimizer tuning (geqo_threshold = 2 reaches it)"),
    ("jit", "lancet turns JIT off in every database: it compiled tiny queries for 25-125 ms"),
    ("jit_above_cost", "JIT is off"),
    ("jit_inline_above_cost", "JIT is off"),
    ("jit_optimize_above_cost", "JIT is off"),
    ("cursor_tuple_fraction", "plans of cursors only"),
    ("cpu_index_tuple_cost", "changed no plan of 480 generated queries at 0 or 10 (PostgreSQL 15 and 18): index scans over tables of a few rows"),
    ("plan_cache_mode", "plans of prepared statements only"),
    ("default_statistics_target", "takes effect at the next ANALYZE, not in the query"),
    ("recursive_worktable_factor", "recursive CTEs only, which lancet does not generate"),
    ("min_parallel_index_scan_size", "parallel plans over tiny tables start workers for every query (force_parallel_mode made knobs 45% slower)"),
    ("min_parallel_table_scan_size", "parallel plans over tiny tables start workers for every query"),
    ("parallel_setup_cost", "parallel plans over tiny tables start workers for every query"),
    ("parallel_tuple_cost", "parallel plans over tiny tables start workers for every query"),
];

/// PostgreSQL 15's knobs, for a provider that has not read a server's
/// settings (unit tests, tools reading old findings).
pub fn knobs() -> Vec<Knob> {
    PlannerSettings::from_rows(
        KNOWN_SWITCHES
            .iter()
            .filter(|n| !PG16_AND_LATER.contains(n))
            .map(|n| {
                let default = if n.starts_with("enable_partitionwise") {
                    "off"
                } else {
                    "on"
                };
                SettingRow::switch(n, default)
            })
            .chain(VALUED.iter().map(|(n, _, _)| SettingRow::valued(n)))
            .collect(),
    )
    .knobs
}

/// Switches added after PostgreSQL 15.
const PG16_AND_LATER: &[&str] = &[
    "enable_presorted_aggregate",
    "enable_group_by_reordering",
    "enable_distinct_reordering",
    "enable_self_join_elimination",
];

/// One row of `pg_settings` in a *Query Tuning* category.
#[derive(Clone, Debug)]
pub struct SettingRow {
    pub name: String,
    pub vartype: String,
    pub boot_val: String,
    pub category: String,
    pub short_desc: String,
}

const METHOD_CATEGORY: &str = "Query Tuning / Planner Method Configuration";

impl SettingRow {
    fn switch(name: &str, default: &str) -> SettingRow {
        SettingRow {
            name: name.into(),
            vartype: "bool".into(),
            boot_val: default.into(),
            category: METHOD_CATEGORY.into(),
            short_desc: String::new(),
        }
    }

    fn valued(name: &str) -> SettingRow {
        SettingRow {
            name: name.into(),
            vartype: "real".into(),
            boot_val: String::new(),
            category: "Query Tuning / Planner Cost Constants".into(),
            short_desc: String::new(),
        }
    }
}

/// The planner knobs of one server and what lancet said of its settings.
#[derive(Clone, Debug, Default)]
pub struct PlannerSettings {
    pub knobs: Vec<Knob>,
    /// The switches that are on by default (a database's set-up turns
    /// some off for all its queries).
    pub switches: Vec<String>,
    /// Switches of this server that lancet had not met: used, and named
    /// once at start-up.
    pub new_switches: Vec<String>,
    /// Planner settings lancet does not know: not used, named once.
    pub unknown: Vec<String>,
}

/// Reads the settings of the *Query Tuning* categories that a session may
/// change, in name order.
pub const SETTINGS_QUERY: &str = "SELECT name, vartype, boot_val, category, short_desc \
     FROM pg_settings WHERE category LIKE 'Query Tuning%' AND context = 'user' ORDER BY name";

impl PlannerSettings {
    /// The knobs of a server whose `pg_settings` rows ([`SETTINGS_QUERY`])
    /// are `rows`.
    pub fn from_rows(rows: Vec<SettingRow>) -> PlannerSettings {
        let mut out = PlannerSettings::default();
        for row in rows {
            let name = row.name.as_str();
            let what = if row.short_desc.is_empty() {
                None
            } else {
                Some(row.short_desc.trim_end_matches('.').to_string())
            };
            if LEFT_ALONE.iter().any(|(n, _)| *n == name) {
                continue;
            }
            if row.category == METHOD_CATEGORY && row.vartype == "bool" {
                let what = what.unwrap_or_else(|| format!("the planner setting {name}"));
                if row.boot_val == "on" {
                    out.knobs.push(Knob::switch(name, &what));
                    out.switches.push(name.to_string());
                } else {
                    out.knobs.push(Knob::valued(name, &what, &["on"]));
                }
                if !KNOWN_SWITCHES.contains(&name) {
                    out.new_switches.push(name.to_string());
                }
            } else if let Some((_, what, values)) = VALUED.iter().find(|(n, _, _)| *n == name) {
                out.knobs.push(Knob::valued(name, what, values));
            } else {
                out.unknown.push(name.to_string());
            }
        }
        out
    }

    /// One line for the user about settings lancet had not met, if any.
    pub fn report(&self) -> Option<String> {
        let mut parts = Vec::new();
        if !self.new_switches.is_empty() {
            parts.push(format!(
                "planner switches new to lancet, turned as knobs: {}",
                self.new_switches.join(", ")
            ));
        }
        if !self.unknown.is_empty() {
            parts.push(format!(
                "planner settings lancet does not know, left at their defaults: {}",
                self.unknown.join(", ")
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
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

    fn row(name: &str, vartype: &str, boot: &str, category: &str) -> SettingRow {
        SettingRow {
            name: name.into(),
            vartype: vartype.into(),
            boot_val: boot.into(),
            category: format!("Query Tuning / {category}"),
            short_desc: format!("Enables {name}."),
        }
    }

    #[test]
    fn every_method_switch_is_a_knob_and_unknown_settings_are_named() {
        let s = PlannerSettings::from_rows(vec![
            row(
                "enable_hashjoin",
                "bool",
                "on",
                "Planner Method Configuration",
            ),
            row(
                "enable_partitionwise_join",
                "bool",
                "off",
                "Planner Method Configuration",
            ),
            row(
                "enable_future_trick",
                "bool",
                "on",
                "Planner Method Configuration",
            ),
            row("jit", "bool", "on", "Other Planner Options"),
            row("random_page_cost", "real", "4", "Planner Cost Constants"),
            row("mystery_cost", "real", "1", "Planner Cost Constants"),
        ]);
        let names: Vec<&str> = s.knobs.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "enable_hashjoin",
                "enable_partitionwise_join",
                "enable_future_trick",
                "random_page_cost"
            ]
        );
        // Off by default: a configuration turns it on.
        assert_eq!(s.knobs[1].changes(), ["enable_partitionwise_join=on"]);
        assert_eq!(s.switches, ["enable_hashjoin", "enable_future_trick"]);
        assert_eq!(s.new_switches, ["enable_future_trick"]);
        assert_eq!(s.unknown, ["mystery_cost"]);
        let report = s.report().unwrap();
        assert!(report.contains("enable_future_trick") && report.contains("mystery_cost"));
        assert_eq!(s.knobs[0].description, "Enables enable_hashjoin");
    }

    #[test]
    fn the_fallback_list_is_postgresql_15s() {
        let k = knobs();
        assert!(k.iter().any(|k| k.name == "enable_memoize"));
        assert!(!k.iter().any(|k| k.name == "enable_self_join_elimination"));
        assert!(k.iter().any(|k| k.name == "join_collapse_limit"));
    }

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
