//! lancet against a real PostgreSQL 15: a throwaway server per test
//! (lancet-testkit: initdb + pg_ctl on 127.0.0.1, a free port, a temporary
//! directory, as the postgres user when run as root), stopped at the end.
//! tests/run.sh installs the server package when it is missing.

mod common;
use common::*;
use lancet_core::{Connection, DatabaseId, FailureKind, KnobSetting, Provider};
use lancet_testkit::PgServer;
use std::time::{Duration, Instant};

fn server() -> PgServer {
    PgServer::start().expect("starting a throwaway PostgreSQL (tests/run.sh installs it)")
}

#[test]
fn bad_urls_and_missing_privileges_are_clear_errors() {
    let pg = server();
    pg.psql("postgres", "CREATE ROLE weak LOGIN").unwrap();
    let refused = format!(
        "postgres://postgres@127.0.0.1:{}/postgres",
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    );
    let cases: Vec<(String, &str)> = vec![
        ("mysql://x@127.0.0.1/db".into(), "is not a PostgreSQL URL"),
        (
            "postgres://127.0.0.1:notaport/db".into(),
            "not a valid PostgreSQL URL",
        ),
        (refused, "cannot connect"),
        (pg.url_for("weak", "postgres"), "may not create databases"),
        (pg.url_for("postgres", "nosuchdb"), "cannot connect"),
    ];
    for (url, expected) in cases {
        let start = Instant::now();
        let out = run(&[
            "fuzz",
            "--dbms",
            "postgres",
            "--url",
            &url,
            "--queries",
            "10",
        ]);
        assert_eq!(out.status.code(), Some(2), "{url}");
        let err = stderr(&out);
        assert!(err.contains(expected), "{url}: {err}");
        assert!(!err.contains("worker"), "threads started for {url}: {err}");
        assert!(start.elapsed() < Duration::from_secs(30));
    }
    let out = lancet()
        .args(["fuzz", "--dbms", "postgres", "--queries", "10"])
        .env_remove("LANCET_PG_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("needs a server"));
    let out = run(&[
        "fuzz",
        "--dbms",
        "sqlite",
        "--url",
        &pg.url(),
        "--queries",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// A password in a URL that fails never reaches the output (a run's
/// findings and files are checked by tests/conformance/).
#[test]
fn a_bad_url_does_not_show_its_password() {
    let out = run(&[
        "fuzz",
        "--dbms",
        "postgres",
        "--url",
        "postgres://u:s3cret@127.0.0.1:1/x",
    ]);
    assert!(!stderr(&out).contains("s3cret"));
}

/// Each value of each knob with values changes the plan of at least one of
/// a few queries (joins, a range, an aggregate, a derived table, DISTINCT)
/// and the rows of none.
fn every_knob_with_values_changes_some_plan_not_rows(
    provider: &lancet_postgres::PostgresProvider,
    conn: &mut Box<dyn Connection>,
) {
    conn.execute(
        "CREATE TABLE k2 (a int, b int); INSERT INTO k2 SELECT g, g % 3 FROM generate_series(1, 50) g; \
         CREATE TABLE k3 (a int, b int); INSERT INTO k3 SELECT g, g % 5 FROM generate_series(1, 20) g; \
         ANALYZE k2; ANALYZE k3",
    )
    .unwrap();
    let queries = [
        "SELECT * FROM k JOIN k2 ON k.b = k2.b JOIN k3 ON k3.a = k2.a WHERE k.a < 100",
        "SELECT * FROM k WHERE a BETWEEN 10 AND 900",
        "SELECT b, count(*) FROM k GROUP BY b",
        "SELECT * FROM k3, (SELECT k2.a FROM k2 JOIN k ON k.a = k2.a) s WHERE s.a = k3.a",
        "SELECT DISTINCT a FROM k",
        "SELECT * FROM k3 JOIN k2 ON k2.b = k3.b JOIN k ON k.a = k2.a JOIN k k4 ON k4.a = k3.a",
    ];
    let look = |c: &mut Box<dyn Connection>, setting: &KnobSetting| {
        c.set_knobs(setting).unwrap();
        queries
            .iter()
            .map(|q| {
                let plan = c.query(&format!("EXPLAIN (COSTS OFF) {q}")).unwrap();
                let mut rows = c.query(q).unwrap();
                rows.sort_by_key(|r| format!("{r:?}"));
                (format!("{plan:?}"), rows)
            })
            .collect::<Vec<_>>()
    };
    let defaults = look(conn, &KnobSetting::defaults());
    // The cost and collapse settings, which these queries are written for;
    // every knob of each major is checked over generated queries in
    // tests/pg_versions.rs.
    let valued: Vec<String> = provider
        .knobs()
        .iter()
        .filter(|k| !k.values.is_empty())
        .filter(|k| {
            !k.name.starts_with("enable_")
                && !["constraint_exclusion", "effective_cache_size"].contains(&k.name.as_str())
        })
        .flat_map(|k| k.changes())
        .collect();
    assert!(
        valued.iter().any(|c| c == "join_collapse_limit=1"),
        "{valued:?}"
    );
    for change in valued {
        let changed = look(conn, &KnobSetting::with(&[change.as_str()]));
        let plans_differ = defaults.iter().zip(&changed).any(|(d, c)| d.0 != c.0);
        assert!(plans_differ, "{change} changes no plan");
        for (q, (d, c)) in queries.iter().zip(defaults.iter().zip(&changed)) {
            assert_eq!(d.1, c.1, "{change} changes the rows of {q}");
        }
    }
    conn.set_knobs(&KnobSetting::defaults()).unwrap();
}

#[test]
fn connection_errors_timeouts_and_knobs() {
    let pg = server();
    let provider = lancet_postgres::PostgresProvider::connect(&pg.url())
        .unwrap()
        .with_time_limit(Duration::from_secs(1));
    let id = DatabaseId {
        run: format!("conntest{}", std::process::id()),
        thread: 0,
        index: 0,
    };
    let created = provider.create_database(&id).unwrap();
    let (mut conn, owned) = (created.conn, created.owned);
    let e = conn.execute("SELEC 1").unwrap_err();
    assert_eq!(
        (e.kind, e.code.as_deref()),
        (FailureKind::Statement, Some("42601"))
    );
    let start = Instant::now();
    let e = conn.query("SELECT pg_sleep(10)").unwrap_err();
    assert_eq!(e.kind, FailureKind::Timeout, "{e}");
    assert!(start.elapsed() < Duration::from_secs(4));
    // Knobs change the plan, not the rows.
    conn.execute(
        "CREATE TABLE k (a int, b int); INSERT INTO k SELECT g, g % 7 FROM generate_series(1, 5000) g; \
         CREATE INDEX k_a ON k (a); ANALYZE k",
    )
    .unwrap();
    let q = "SELECT a, b FROM k WHERE a BETWEEN 10 AND 20";
    let plan =
        |c: &mut Box<dyn Connection>| format!("{:?}", c.query(&format!("EXPLAIN {q}")).unwrap());
    let (before, rows) = (plan(&mut conn), conn.query(q).unwrap());
    conn.set_knobs(&KnobSetting::with(&[
        "enable_indexscan",
        "enable_bitmapscan",
    ]))
    .unwrap();
    let (after, rows_after) = (plan(&mut conn), conn.query(q).unwrap());
    assert_ne!(before, after, "turning index scans off changes the plan");
    assert_eq!(rows, rows_after);
    assert!(provider.knobs().iter().any(|k| k.name == "enable_hashjoin"));
    every_knob_with_values_changes_some_plan_not_rows(&provider, &mut conn);
    // A terminated backend is a lost connection.
    pg.psql(
        "postgres",
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}'",
            id.name()
        ),
    )
    .unwrap();
    let e = conn.query("SELECT 1").unwrap_err();
    assert_eq!(e.kind, FailureKind::ConnectionLost, "{e}");
    drop(conn);
    provider.drop_database(&owned).unwrap();
    // lancet refuses to drop what it did not create.
    assert!(lancet_postgres::ensure_ours("keepme").is_err());
}

/// A backend that crashes (SIGSEGV: the postmaster then ends every other
/// backend, as after a real crash) under two threads is one crash finding,
/// naming the statement; the other thread's lost session is the crash's
/// collateral, kept with the unconfirmed findings, not a finding of its own.
#[test]
fn one_server_crash_under_two_threads_is_one_crash_finding() {
    // A collateral backend's warning can miss its client now and then (it
    // ends as the postmaster resets shared memory): one more try then.
    let mut last = String::new();
    for _ in 0..2 {
        match crash_under_two_threads() {
            Ok(()) => return,
            Err(why) => last = why,
        }
    }
    panic!("{last}");
}

/// `lancet fuzz` of TLP WHERE on `pg` with two threads for `seconds`, into
/// a new directory; returns it, the summary's path and the process.
fn fuzz_two_threads(
    pg: &PgServer,
    seed: &str,
    seconds: &str,
    extra: &[&str],
) -> (tempfile::TempDir, std::path::PathBuf, std::process::Child) {
    let out = tempfile::tempdir().unwrap();
    let url = pg.url();
    let summary = out.path().join("summary.json");
    let mut args = vec![
        "--dbms",
        "postgres",
        "--url",
        &url,
        "--oracle",
        "tlp-where",
        "--threads",
        "2",
        "--seed",
        seed,
        "--timeout",
        seconds,
        "--summary-json",
        summary.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let child = spawn_fuzz(out.path(), &args);
    (out, summary, child)
}

/// One try of the scenario above: `Err` says what was wrong.
fn crash_under_two_threads() -> Result<(), String> {
    let pg = server();
    let (out_dir, summary, child) = fuzz_two_threads(
        &pg,
        "9",
        "30",
        &[
            "--checks-per-database",
            "100000",
            "--finish-reductions",
            "60",
        ],
    );
    // Both threads testing: two backends whose last statement read a table.
    let testing = "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity \
                   WHERE datname LIKE 'lancet\\_%' AND query ~ '\\mt[0-9]+\\M'";
    let start = Instant::now();
    let mut pids = Vec::new();
    while start.elapsed() < Duration::from_secs(20) && pids.len() < 2 {
        std::thread::sleep(Duration::from_millis(300));
        pids = pg
            .psql("postgres", testing)
            .unwrap()
            .split_whitespace()
            .map(str::to_string)
            .collect();
    }
    assert!(pids.len() >= 2, "two testing backends: {pids:?}");
    let segv = try_signal(pids[0].parse().unwrap(), "SEGV");
    let out = wait_within(child, Duration::from_secs(120));
    if !segv {
        return Err("the backend ended before the signal".into());
    }
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let findings = run_dir(out_dir.path()).join("findings");
    let crashes: Vec<serde_json::Value> = records_of_kind(&findings, "crash");
    let s = read_json(&summary);
    assert!(
        s["databases"].as_u64().unwrap() >= 2,
        "the run went on: {s}"
    );
    let err = stderr(&out);
    if crashes.len() != 1 || !err.contains("another server process crashed") {
        return Err(format!(
            "not one crash and its collateral: {crashes:?}\n{err}"
        ));
    }
    // A signal does not come back when the statements are replayed: the
    // crash stays a finding, said not to repeat, with what the other
    // session was running.
    let replay = &crashes[0]["crash_replay"];
    assert_eq!(replay["repeated"], false, "{replay}");
    let others = replay["also_running"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if others.is_empty() {
        return Err(format!("the collateral session is not listed: {replay}"));
    }
    assert_eq!(s["unrepeated_crashes"], 1, "{s}");
    Ok(())
}

/// A server crash that repeats (a backend killed whenever it runs CREATE
/// INDEX, which an event trigger makes last long enough to be caught)
/// under two threads: the crash findings name that statement, repeat on a
/// fresh database and are reduced to the table and the index.
#[test]
fn a_server_crash_that_repeats_is_named_and_reduced() {
    let pg = server();
    // Databases are made from template0: the event trigger goes there.
    let slow_index = "CREATE FUNCTION slow_index() RETURNS event_trigger LANGUAGE plpgsql \
                      AS $$ BEGIN PERFORM pg_sleep(1); END $$; \
                      CREATE EVENT TRIGGER slow_index ON ddl_command_end \
                      WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION slow_index()";
    pg.psql(
        "postgres",
        "UPDATE pg_database SET datallowconn = true WHERE datname = 'template0'",
    )
    .unwrap();
    pg.psql("template0", slow_index).unwrap();
    pg.psql(
        "postgres",
        "UPDATE pg_database SET datallowconn = false WHERE datname = 'template0'",
    )
    .unwrap();
    let (out_dir, summary, child) = fuzz_two_threads(
        &pg,
        "3",
        "10",
        &["--reduce-time", "90", "--finish-reductions", "200"],
    );
    // The crash: every backend caught in CREATE INDEX, while lancet runs.
    let watching = "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity \
                    WHERE datname LIKE 'lancet\\_%' AND state = 'active' \
                    AND query ILIKE 'CREATE%INDEX%'";
    let done = std::sync::atomic::AtomicBool::new(false);
    let out = std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if let Ok(pids) = pg.psql("postgres", watching) {
                    for pid in pids.split_whitespace() {
                        try_signal(pid.parse().unwrap(), "SEGV");
                    }
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let out = wait_within(child, Duration::from_secs(400));
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        out
    });
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let findings = run_dir(out_dir.path()).join("findings");
    let crashes: Vec<serde_json::Value> = records_of_kind(&findings, "crash");
    assert!(!crashes.is_empty(), "{}", stderr(&out));
    for c in &crashes {
        let statement = c["queries"][0]["sql"].as_str().unwrap();
        assert!(
            statement.starts_with("CREATE") && statement.contains(" INDEX "),
            "{statement}"
        );
        assert_eq!(c["crash_replay"]["repeated"], true, "{c}");
    }
    let reduced: Vec<serde_json::Value> = finding_files(&findings, "json")
        .iter()
        .filter(|f| f.to_string_lossy().ends_with(".reduced.json"))
        .map(|f| read_json(f))
        .collect();
    assert!(!reduced.is_empty(), "a crash reduced: {}", stderr(&out));
    for r in &reduced {
        assert_eq!(r["kind"], "crash");
        assert!(
            r["setup"].as_array().unwrap().len() <= 3,
            "reduced to the table (and what it needs): {r}"
        );
    }
    let s = read_json(&summary);
    assert_eq!(s["unrepeated_crashes"], 0, "{s}");
}
