//! Citus's optimizer knobs: the switches and settings that change how it
//! plans or executes a query but never its result, which `knobs` and
//! `perf` turn, and those left alone; read from the server at connect.

use super::*;

/// Switches that change how Citus plans or executes a query, never its
/// result, on by default (a configuration turns them off).
const SWITCHES: &[(&str, &str)] = &[
    ("citus.enable_router_execution", "router execution"),
    (
        "citus.enable_fast_path_router_planner",
        "the fast-path router planner",
    ),
    ("citus.enable_local_execution", "local execution of shards"),
    (
        "citus.enable_binary_protocol",
        "the binary protocol to workers",
    ),
    (
        "citus.enable_recurring_outer_join_pushdown",
        "pushdown of outer joins with recurring tuples",
    ),
    (
        "citus.enable_local_fast_path_query_optimization",
        "the local fast-path optimization",
    ),
    (
        "citus.enable_repartitioned_insert_select",
        "repartitioned INSERT ... SELECT",
    ),
];

/// Citus settings a configuration gives another value than the default
/// (switches off by default among them), each a change of plan or
/// execution, never of result.
const SETTINGS: &[(&str, &str, &[&str])] = &[
    (
        "citus.enable_single_hash_repartition_joins",
        "single-hash repartition joins",
        &["on"],
    ),
    (
        "citus.enable_non_colocated_router_query_pushdown",
        "router pushdown of non-co-located tables",
        &["on"],
    ),
    (
        "citus.force_max_query_parallelization",
        "one connection per shard",
        &["on"],
    ),
    (
        "citus.local_table_join_policy",
        "which side of a join between local and distributed tables moves",
        &["prefer-local", "prefer-distributed"],
    ),
    (
        "citus.max_adaptive_executor_pool_size",
        "connections per worker",
        &["1"],
    ),
    (
        "citus.values_materialization_threshold",
        "VALUES lists materialized before pushdown",
        &["0"],
    ),
    (
        "citus.multi_shard_modify_mode",
        "multi-shard modifications one shard at a time",
        &["sequential"],
    ),
    (
        "citus.executor_slow_start_interval",
        "how long the executor waits before opening another connection",
        &["0"],
    ),
    (
        "citus.task_assignment_policy",
        "how tasks are assigned to placements",
        &["round-robin"],
    ),
];

/// The visible `citus.*` settings lancet knows and does not turn, because
/// they are not about planning or executing a query's read: cluster and
/// shard administration, background jobs, DDL and role propagation,
/// logging and statistics, connection limits, and settings that change
/// errors or results (`enable_repartition_joins`, which the sessions turn
/// on; `count_distinct_error_rate`; `limit_clause_row_fetch_count`;
/// `coordinator_aggregation_strategy`; `enable_outer_joins_with_pseudoconstant_quals_pre_pg17`,
/// Citus 14, a no-op on PostgreSQL 17 and later). One not here and not a
/// knob is named once at start-up, as new to lancet.
const LEFT_ALONE: &[&str] = &[
    "citus.all_modifications_commutative",
    "citus.background_task_queue_interval",
    "citus.cluster_name",
    "citus.coordinator_aggregation_strategy",
    "citus.count_distinct_error_rate",
    "citus.cpu_priority",
    "citus.cpu_priority_for_logical_replication_senders",
    "citus.defer_drop_after_shard_move",
    "citus.defer_drop_after_shard_split",
    "citus.defer_shard_delete_interval",
    "citus.desired_percent_disk_available_after_move",
    "citus.distributed_deadlock_detection_factor",
    "citus.enable_change_data_capture",
    "citus.enable_create_database_propagation",
    "citus.enable_create_role_propagation",
    "citus.enable_deadlock_prevention",
    "citus.enable_local_reference_table_foreign_keys",
    "citus.enable_outer_joins_with_pseudoconstant_quals_pre_pg17",
    "citus.enable_repartition_joins",
    "citus.enable_schema_based_sharding",
    "citus.enable_stat_counters",
    "citus.enable_statistics_collection",
    "citus.explain_all_tasks",
    "citus.explain_analyze_sort_method",
    "citus.limit_clause_row_fetch_count",
    "citus.local_hostname",
    "citus.local_shared_pool_size",
    "citus.log_remote_commands",
    "citus.max_background_task_executors",
    "citus.max_background_task_executors_per_node",
    "citus.max_cached_connection_lifetime",
    "citus.max_cached_conns_per_worker",
    "citus.max_client_connections",
    "citus.max_high_priority_background_processes",
    "citus.max_intermediate_result_size",
    "citus.max_matview_size_to_auto_recreate",
    "citus.max_shared_pool_size",
    "citus.max_worker_nodes_tracked",
    "citus.multi_task_query_log_level",
    "citus.node_connection_timeout",
    "citus.node_conninfo",
    "citus.propagate_set_commands",
    "citus.recover_2pc_interval",
    "citus.remote_task_check_interval",
    "citus.repartition_join_bucket_count_per_node",
    "citus.shard_count",
    "citus.shard_replication_factor",
    "citus.show_shards_for_app_name_prefixes",
    "citus.skip_constraint_validation",
    "citus.skip_jsonb_validation_in_copy",
    "citus.stat_statements_track",
    "citus.stat_tenants_limit",
    "citus.stat_tenants_log_level",
    "citus.stat_tenants_period",
    "citus.stat_tenants_track",
    "citus.stat_tenants_untracked_sample_rate",
    "citus.superuser",
    "citus.task_executor_type",
    "citus.use_citus_managed_tables",
    "citus.use_secondary_nodes",
    "citus.version",
    "citus.worker_min_messages",
    "citus.writable_standby_coordinator",
];

/// Every knob lancet knows for Citus, whether this release has it or not.
pub(super) fn known_knobs() -> Vec<Knob> {
    let switches = SWITCHES
        .iter()
        .map(|(name, what)| Knob::switch(name, &format!("Citus may use {what}")));
    let settings = SETTINGS
        .iter()
        .map(|(name, what, values)| Knob::valued(name, what, values));
    switches.chain(settings).collect()
}

/// The known knobs this Citus has (many are hidden from `pg_settings`, so
/// each is asked for by name), and the visible `citus.*` settings lancet
/// has never met.
pub(super) fn read_knobs(admin: &mut PgConnection) -> anyhow::Result<(Vec<Knob>, Vec<String>)> {
    let known = known_knobs();
    let names: Vec<String> = known.iter().map(|k| format!("'{}'", k.name)).collect();
    let present: Vec<String> = admin
        .query_text(
            &format!(
                "SELECT n FROM unnest(ARRAY[{}]::text[]) AS n WHERE current_setting(n, true) IS NOT NULL",
                names.join(", ")
            ),
            &[],
        )?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    let visible: Vec<String> = admin
        .query_text(
            "SELECT name FROM pg_settings WHERE name LIKE 'citus.%' ORDER BY name",
            &[],
        )?
        .into_iter()
        .filter_map(|r| r.into_iter().next().flatten())
        .collect();
    let knobs: Vec<Knob> = known
        .into_iter()
        .filter(|k| present.contains(&k.name))
        .collect();
    let unknown = visible
        .into_iter()
        .filter(|n| !LEFT_ALONE.contains(&n.as_str()) && !knobs.iter().any(|k| &k.name == n))
        .collect();
    Ok((knobs, unknown))
}
