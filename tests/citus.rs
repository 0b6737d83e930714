//! lancet against a real Citus cluster: a coordinator and two workers
//! (lancet-testkit: three throwaway PostgreSQL servers on 127.0.0.1 with
//! Citus preloaded), stopped at the end of each test.
//!
//! Citus 14.0.1 on PostgreSQL 18 by default; the knob check also on
//! Citus 13.2.2 on PostgreSQL 15. The promises every DBMS keeps (clean
//! runs on both lines, crashes, hangs, cleanup) are in tests/conformance/. Citus is in no package
//! registry the test machines reach: tests/run.sh builds both lines from
//! ../shared/vendor/citus (tests/engines.sh). Where one is missing a test
//! prints one SKIPPED line and passes, except in CI, where it fails.

mod common;
use common::citus_psql::{coordinator_psql, psql_shows};
use common::*;
use lancet_testkit::{CitusCluster, PgServer};
use std::time::{Duration, Instant};

/// The `lancet_` databases on `node`, comma-separated.
fn lancet_databases(node: &PgServer) -> String {
    node.psql(
        "postgres",
        "SELECT coalesce(string_agg(datname, ','), '') FROM pg_database WHERE datname LIKE 'lancet\\_%'",
    )
    .unwrap()
}

fn assert_no_lancet_databases(cluster: &CitusCluster) {
    for node in cluster.nodes() {
        assert_eq!(
            lancet_databases(node),
            "",
            "lancet left databases on the node on port {}",
            node.port()
        );
    }
}

#[test]
fn selftest_catches_every_planted_fault_on_citus_and_its_dist_vs_local_finding_reduces() {
    let Some(cluster) = CitusCluster::start_or_skip("citus selftest") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    // Every oracle's line is checked by tests/conformance/.
    let stdout = selftest_catches("citus", &cluster.url(), out_dir.path(), &["dist-vs-local"]);
    // The fault that drops a row only from queries that read no twin is
    // invisible to the oracles comparing two queries over the same
    // tables; dist-vs-local catches it.
    let line = stdout
        .lines()
        .find(|l| l.starts_with("dist-vs-local "))
        .unwrap();
    assert!(line.contains("drop-row-off-twins"), "{line}");

    // That finding reduces on Citus, and the reduced file runs with psql.
    let finding = walk(out_dir.path())
        .into_iter()
        .find(|p| {
            p.extension().is_some_and(|e| e == "sql")
                && p.to_string_lossy().contains("dist-vs-local")
                && !p.to_string_lossy().contains("reduced")
                && !p
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("index")
        })
        .expect("a dist-vs-local finding");
    let started = Instant::now();
    let out = run(&[
        "reduce",
        "--url",
        &cluster.url(),
        "--time-limit",
        "120",
        finding.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reduced = finding.with_extension("reduced.sql");
    let text = std::fs::read_to_string(&reduced).unwrap();
    let statements = text
        .lines()
        .filter(|l| !l.starts_with("--") && l.trim_end().ends_with(';'))
        .count();
    let original = std::fs::read_to_string(&finding)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("--") && l.trim_end().ends_with(';'))
        .count();
    assert!(statements < original, "{statements} >= {original}\n{text}");
    // The reducer simplified the tables' statements and derived the twins'
    // anew: each twin statement is still the copy of a remaining one.
    // The setup: after the header (the first blank line), before the
    // queries.
    let body = text.split_once("\n\n").map_or("", |(_, b)| b);
    let setup: Vec<String> = body
        .lines()
        .take_while(|l| !l.starts_with("-- query") && !l.starts_with("-- statement"))
        .filter(|l| !l.starts_with("--") && !l.trim().is_empty())
        .map(|l| l.trim_end().trim_end_matches(';').to_string())
        .collect();
    let (twins, base): (Vec<String>, Vec<String>) =
        setup.into_iter().partition(|s| s.contains("lancet_twin"));
    assert_eq!(
        twins,
        lancet_postgres::populate::twin_statements(&base),
        "{text}"
    );
    eprintln!(
        "reduced {original} -> {statements} statements in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    // The reduced file runs with psql on the coordinator, with its
    // create_distributed_table calls.
    let run_psql = coordinator_psql(&cluster)
        .args(["-c", "CREATE SCHEMA lancet_repro"])
        .args(["-c", "SET search_path TO lancet_repro"])
        .args(["-f", reduced.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        run_psql.status.success(),
        "{}",
        String::from_utf8_lossy(&run_psql.stderr)
    );
    assert_no_lancet_databases(&cluster);
}

#[test]
fn a_terminated_backend_on_a_worker_is_a_crash_finding_and_the_run_goes_on() {
    let Some(cluster) = CitusCluster::start_or_skip("citus worker crash") else {
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let summary = out_dir.path().join("summary.json");
    let child = lancet()
        .args([
            "fuzz",
            "--dbms",
            "citus",
            "--url",
            &cluster.url(),
            "--oracle",
            "tlp-where",
            "--threads",
            "1",
            "--seed",
            "3",
            "--timeout",
            "40",
            "--no-reduce",
            "--status-interval",
            "0",
            "--checks-per-database",
            "200",
            "--out",
            out_dir.path().to_str().unwrap(),
            "--summary-json",
            summary.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Terminate, on a worker, a backend through which the coordinator runs
    // one of lancet's queries on a shard (Citus names them `citus_internal
    // gpid=...`) while it runs or its transaction is open. Small databases
    // (200 checks each) bring one with distributed tables soon: a database
    // of reference and local tables only is read on the coordinator. Such a query takes a millisecond or so, and
    // a terminated idle connection Citus just opens anew, so the worker
    // itself watches for one (a loop in a function, clearing its
    // statistics snapshot each time). lancet's own connections (named
    // `lancet`) that set databases up are left alone: a terminated set-up
    // is waited out, not a finding. A read of a reference table may move
    // to another node's copy; keep at it until a crash finding is on disk.
    let worker = &cluster.workers[0];
    // In a database of its own: Citus refuses DDL in a worker's databases.
    worker.psql("postgres", "CREATE DATABASE watch").unwrap();
    worker
        .psql(
            "watch",
            r#"CREATE FUNCTION terminate_a_shard_query(seconds float8) RETURNS text LANGUAGE plpgsql AS $f$
               DECLARE killed text;
                       deadline timestamptz := clock_timestamp() + seconds * interval '1 second';
               BEGIN
                 WHILE killed IS NULL AND clock_timestamp() < deadline LOOP
                   PERFORM pg_stat_clear_snapshot();
                   SELECT string_agg(query, ' | ') INTO killed FROM pg_stat_activity
                    WHERE datname LIKE 'lancet\_%' AND state IN ('active', 'idle in transaction')
                      AND application_name LIKE 'citus\_internal%'
                      AND query ~* '^\s*(SELECT|WITH)' AND query ~ '_[0-9]{6}\M'
                      AND pg_terminate_backend(pid);
                   PERFORM pg_sleep(0.0002);
                 END LOOP;
                 RETURN coalesce(killed, '');
               END $f$"#,
        )
        .unwrap();
    let start = Instant::now();
    let mut terminated = Vec::new();
    let crash_on_disk = || {
        std::fs::read_dir(out_dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .any(|run| {
                finding_files(&run.path().join("findings"), "json")
                    .iter()
                    .any(|f| read_json(f)["kind"] == "crash")
            })
    };
    while start.elapsed() < Duration::from_secs(30) && !crash_on_disk() {
        let n = worker
            .psql("watch", "SELECT terminate_a_shard_query(3)")
            .unwrap();
        if !n.is_empty() {
            terminated.push(n);
        }
        // The finding is written once the statement's error is back.
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        !terminated.is_empty(),
        "no query of lancet's on a shard of the worker to terminate"
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a crash is a finding; terminated during {terminated:?}:\n{stderr}"
    );
    let s = read_json(&summary);
    let findings = run_dir(out_dir.path()).join("findings");
    let crash = finding_files(&findings, "json")
        .into_iter()
        .map(|p| read_json(&p))
        .find(|f| f["kind"] == "crash")
        .unwrap_or_else(|| panic!("no crash finding on disk: {s}\n{stderr}"));
    assert!(!crash["setup"].as_array().unwrap().is_empty());
    // The run went on after the crash: it kept checking until its timeout.
    assert!(s["checks"].as_u64().unwrap() > 0, "{s}");
    assert!(s["databases"].as_u64().unwrap() >= 2, "{s}");
    assert_no_lancet_databases(&cluster);
}

#[test]
fn urls_that_are_not_a_usable_coordinator_are_clear_errors() {
    let Some(cluster) = CitusCluster::start_or_skip("citus bad URLs") else {
        return;
    };
    cluster
        .coordinator
        .psql("postgres", "CREATE ROLE weak LOGIN CREATEDB")
        .unwrap();
    cluster
        .coordinator
        .psql("postgres", "CREATE DATABASE nocitus")
        .unwrap();
    // A plain PostgreSQL server: no Citus at all.
    let plain = PgServer::start().unwrap();
    let cases: Vec<(String, &str)> = vec![
        (
            cluster.workers[0].url(),
            "is not a Citus coordinator (citus_is_coordinator() is false)",
        ),
        (
            cluster.coordinator.url_for("weak", "postgres"),
            "is not a superuser",
        ),
        (
            cluster.coordinator.url_for("postgres", "nocitus"),
            "the citus extension is not installed",
        ),
        (plain.url(), "is not a Citus coordinator"),
        (
            "postgres://x@127.0.0.1:notaport/db".into(),
            "not a valid PostgreSQL URL",
        ),
    ];
    for (url, expected) in cases {
        let out = run(&["fuzz", "--dbms", "citus", "--url", &url, "--queries", "10"]);
        assert_eq!(out.status.code(), Some(2), "{url}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{url}: {err}");
    }
    // No worker registered: the coordinator alone is refused.
    for w in &cluster.workers {
        cluster
            .coordinator
            .psql(
                "postgres",
                &format!("SELECT citus_remove_node('127.0.0.1', {})", w.port()),
            )
            .unwrap();
    }
    let out = run(&[
        "fuzz",
        "--dbms",
        "citus",
        "--url",
        &cluster.url(),
        "--queries",
        "10",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("has no active worker"),
        "{}",
        stderr(&out)
    );
    assert_no_lancet_databases(&cluster);
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Every Citus knob lancet offers is a setting this Citus accepts, and
/// changes no result: generated queries over generated databases give the
/// same rows (as multisets) with the knob as without it.
#[test]
fn citus_14_knobs_are_valid_settings_and_change_no_result() {
    citus_knobs_change_no_result(18);
}

#[test]
fn citus_13_2_knobs_are_valid_settings_and_change_no_result() {
    citus_knobs_change_no_result(15);
}

// Long because: one scenario end to end, its steps in order.
fn citus_knobs_change_no_result(major: u32) {
    use lancet_core::rng::database_rng;
    use lancet_core::{DatabaseId, KnobSetting, Provider, Session};
    let Some(cluster) = CitusCluster::start_or_skip_major("citus knobs", major) else {
        return;
    };
    let provider = lancet_postgres::PostgresProvider::connect_flavor(
        &cluster.url(),
        Box::new(lancet_postgres::citus::Citus::new()),
    )
    .unwrap();
    // Every change a configuration may make: switches off, each value of
    // a setting.
    let citus_knobs: Vec<String> = provider
        .knobs()
        .iter()
        .filter(|k| k.name.starts_with("citus."))
        .flat_map(|k| k.changes())
        .collect();
    assert!(citus_knobs.len() >= 10, "{citus_knobs:?}");
    let mut compared = std::collections::BTreeMap::<String, usize>::new();
    let mut plan_changed = std::collections::BTreeMap::<String, usize>::new();
    for index in 0..3 {
        let id = DatabaseId {
            run: format!("knobs{}", std::process::id()),
            thread: 0,
            index,
        };
        let created = provider.create_database(&id).unwrap();
        let owned = created.owned.clone();
        let mut session =
            Session::new(created.conn, provider.dialect(), provider.expected_errors());
        let mut rng = database_rng(11, 0, index);
        let db = provider.populate(&mut rng, &mut session).unwrap();
        let mut generator = db.query_generator();
        for _ in 0..40 {
            let (from, scope) = generator.from_clause(&mut rng);
            let selection = Some(generator.predicate(&mut rng, &scope));
            let query = lancet_core::Query::select(lancet_core::Select {
                items: vec![lancet_core::SelectItem::Wildcard],
                from: Some(from),
                selection,
                ..Default::default()
            });
            let Ok(mut plain) = session.query(&query) else {
                continue;
            };
            plain.sort_by_key(|r| format!("{r:?}"));
            let text = lancet_core::ToSql::to_sql(&query, provider.dialect());
            let plan = |s: &mut Session| {
                s.connection()
                    .query(&format!("EXPLAIN (COSTS OFF) {text}"))
                    .ok()
                    .map(|r| lancet_core::plans::plan_signature(&r))
            };
            let default_plan = plan(&mut session);
            for knob in &citus_knobs {
                session
                    .connection()
                    .set_knobs(&KnobSetting::with(&[knob.as_str()]))
                    .unwrap_or_else(|e| panic!("{knob} is not a valid setting: {e}"));
                if default_plan.is_some() && plan(&mut session) != default_plan {
                    *plan_changed.entry(knob.clone()).or_default() += 1;
                }
                let with = session.query(&query);
                session
                    .connection()
                    .set_knobs(&KnobSetting::default())
                    .unwrap();
                let Ok(mut with) = with else { continue };
                with.sort_by_key(|r| format!("{r:?}"));
                assert_eq!(plain, with, "{knob} changed the result of {query:?}");
                *compared.entry(knob.clone()).or_default() += 1;
            }
        }
        drop(generator);
        drop(db);
        drop(session);
        provider.drop_database(&owned).unwrap();
    }
    for knob in &citus_knobs {
        assert!(
            compared.get(knob).copied().unwrap_or(0) >= 20,
            "{knob}: only {:?} queries compared",
            compared.get(knob)
        );
    }
    eprintln!("queries compared per knob: {compared:?}");
    eprintln!("plans changed per knob: {plan_changed:?}");
    // Knobs that change how a plan runs, not the plan EXPLAIN shows: the
    // knob oracle reaches them together with a knob that changes the plan.
    const EXECUTION_ONLY: &[&str] = &[
        "citus.enable_binary_protocol",
        "citus.enable_local_execution",
        "citus.force_max_query_parallelization=on",
        "citus.max_adaptive_executor_pool_size=1",
        "citus.executor_slow_start_interval=0",
        "citus.multi_shard_modify_mode=sequential",
        "citus.task_assignment_policy=round-robin",
        "citus.enable_repartitioned_insert_select",
        "citus.enable_local_fast_path_query_optimization",
    ];
    // Planner knobs whose shapes are rare in 120 `SELECT *` queries over 3
    // databases: the knob oracle's plan guidance finds them in a run.
    const RARE_SHAPES: &[&str] = &[
        "citus.enable_fast_path_router_planner", // single-shard filters on the distribution column
        "citus.enable_recurring_outer_join_pushdown", // reference LEFT JOIN distributed
        "citus.enable_single_hash_repartition_joins=on", // joins of non-co-located tables
        "citus.enable_non_colocated_router_query_pushdown=on", // one shard of each of two groups
        "citus.local_table_join_policy=prefer-local", // joins of local and distributed tables
        "citus.local_table_join_policy=prefer-distributed",
        "citus.values_materialization_threshold=0", // VALUES lists
    ];
    let inert: Vec<&String> = citus_knobs
        .iter()
        .filter(|k| {
            !EXECUTION_ONLY.contains(&k.as_str())
                && !RARE_SHAPES.contains(&k.as_str())
                && !plan_changed.contains_key(*k)
        })
        .collect();
    assert!(
        inert.is_empty(),
        "these Citus knobs changed no plan of the generated queries (PostgreSQL {major}): {inert:?}"
    );
    assert_no_lancet_databases(&cluster);
}

/// The psql check of the runs above tells a real disagreement from none:
/// a reproducer of a real Citus bug (13.2.2 and 14.0.1: a reference table
/// LEFT JOIN a distributed table whose ON prunes shards by a constant loses
/// preserved rows) is shown, the same file with both queries alike is not.
#[test]
fn psql_shows_a_real_citus_bug_and_not_an_agreement() {
    let Some(cluster) = CitusCluster::start_or_skip("citus psql check") else {
        return;
    };
    let bug = "-- oracle: knobs
-- relation that broke: RS(Q under the default configuration) = RS(Q with knobs changed), as multisets
-- confirmed on a fresh database: yes

CREATE TABLE t0 (c0 integer);
SELECT create_distributed_table('t0', 'c0', shard_count => 4);
CREATE TABLE t3 (c0 integer);
SELECT create_reference_table('t3');
INSERT INTO t3 SELECT g FROM generate_series(1, 13) g;

-- query 1 (defaults)
SELECT t3.c0, a1.c0 FROM t3 LEFT JOIN t0 AS a1 ON t3.c0 = a1.c0 AND a1.c0 IN (7, 1);

-- query 2 (knobs: citus.enable_recurring_outer_join_pushdown off)
SET citus.enable_recurring_outer_join_pushdown = 'off';
SELECT t3.c0, a1.c0 FROM t3 LEFT JOIN t0 AS a1 ON t3.c0 = a1.c0 AND a1.c0 IN (7, 1);
";
    assert!(psql_shows(&cluster, bug));
    let agreement = bug.replace("AND a1.c0 IN (7, 1)", "");
    assert!(!psql_shows(&cluster, &agreement));
}
