//! A libsqlite3 loaded at run time behaves like the bundled SQLite behind
//! lancet's interface (same values, same error codes and messages, same
//! statement rules, a time limit), and optimizer knobs change plans but not
//! results on both. The loaded library is Debian's (SQLite 3.40.1); its
//! tests are skipped with a note where the file is missing.

use lancet_core::{Connection, DatabaseId, FailureKind, KnobSetting, Provider, Row, Value};
use lancet_sqlite::{DynamicConnection, SqliteConnection, SqliteLibrary, SqliteProvider};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SYSTEM_LIB: &str = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";

fn system_lib() -> Option<Arc<SqliteLibrary>> {
    if !Path::new(SYSTEM_LIB).exists() {
        eprintln!("note: {SYSTEM_LIB} is missing (install libsqlite3-0); skipping");
        return None;
    }
    Some(SqliteLibrary::load(Path::new(SYSTEM_LIB)).expect("loading Debian's libsqlite3"))
}

fn open(lib: &Arc<SqliteLibrary>) -> DynamicConnection {
    DynamicConnection::open(Arc::clone(lib), Duration::from_secs(10)).unwrap()
}

#[test]
fn the_loaded_library_reports_its_own_version() {
    let Some(lib) = system_lib() else { return };
    assert_eq!(lib.version_number(), 3_040_001);
    assert!(
        lib.version_string()
            .starts_with("SQLite 3.40.1 (source id 2022-12-28 14:03:47 df5c253c"),
        "{}",
        lib.version_string()
    );
    assert!(lib.has_knobs());
    let mut c = open(&lib);
    assert_eq!(
        c.query("SELECT sqlite_version()").unwrap(),
        vec![vec![Value::Text("3.40.1".into())]]
    );
}

#[test]
fn loaded_and_bundled_connections_agree_on_values_and_errors() {
    let Some(lib) = system_lib() else { return };
    let mut dynamic = open(&lib);
    let mut bundled = SqliteConnection::open_in_memory().unwrap();
    let statements = [
        "CREATE TABLE t0 (c0 UNIQUE, c1 NOT NULL, c2 CHECK (c2 <> 7), c3 INTEGER PRIMARY KEY)",
        "INSERT INTO t0 VALUES (1, 1, 1, 1)",
        "INSERT INTO t0 VALUES (1, 2, 2, 2)",
        "INSERT INTO t0 VALUES (2, NULL, 2, 2)",
        "INSERT INTO t0 VALUES (2, 2, 7, 2)",
        "INSERT INTO t0 VALUES (2, 2, 2, 1)",
        // Several statements run in order; an error stops the rest.
        "INSERT INTO t0 VALUES (3, 3, 3, 3); INSERT INTO t0 VALUES (4, 4, 4, 4);",
        "INSERT INTO t0 VALUES (5, 5, 5, 5); garbage; INSERT INTO t0 VALUES (6, 6, 6, 6)",
        "",
        "  -- only a comment",
        ";;",
        "PRAGMA journal_mode = OFF",
        "SELEC 1",
    ];
    for sql in statements {
        assert_eq!(
            dynamic.execute(sql),
            bundled.execute(sql),
            "execute {sql:?}"
        );
    }
    let queries = [
        "SELECT * FROM t0 ORDER BY c3",
        "SELECT NULL, 1, -1.5, 'a', X'00FF', CAST(X'FF' AS TEXT), X'', '', 'é'",
        "SELECT 9223372036854775807, -9223372036854775808, 1e308 * 10, -0.0, 0.1 + 0.2",
        "SELECT abs(-9223372036854775808)",
        "SELECT x, CASE WHEN x > 1 THEN abs(-9223372036854775808) END FROM (SELECT 1 AS x UNION ALL SELECT 2)",
        "SELEC 1",
        "SELECT * FROM no_such_table",
        "SELECT 1;",
        "SELECT 1; -- done",
        "SELECT 1;;",
        "SELECT 1; SELECT 2",
        "SELECT 1; garbage",
        "",
        "-- nothing",
        ";",
        "SELECT c0 FROM t0 WHERE 0",
    ];
    for sql in queries {
        let (d, b) = (dynamic.query(sql), bundled.query(sql));
        assert_eq!(d, b, "query {sql:?}");
    }
    // The cases above cover each outcome, not only agreement.
    let e = dynamic
        .query("SELECT abs(-9223372036854775808)")
        .unwrap_err();
    assert_eq!(e.code.as_deref(), Some("SQLITE_ERROR"));
    assert_eq!(e.message, "integer overflow");
    let e = dynamic
        .execute("INSERT INTO t0 VALUES (1, 2, 2, 2)")
        .unwrap_err();
    assert_eq!(e.code.as_deref(), Some("SQLITE_CONSTRAINT_UNIQUE"));
    assert_eq!(e.message, "UNIQUE constraint failed: t0.c0");
    let e = dynamic.query("SELECT 1; SELECT 2").unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (None, "Multiple statements provided")
    );
    assert_eq!(
        dynamic.query("SELECT c0 FROM t0 ORDER BY c0").unwrap(),
        vec![
            vec![Value::Integer(1)],
            vec![Value::Integer(3)],
            vec![Value::Integer(4)],
            vec![Value::Integer(5)]
        ]
    );
}

#[test]
fn runaway_statements_time_out_on_the_loaded_library() {
    let Some(lib) = system_lib() else { return };
    let mut c = DynamicConnection::open(lib, Duration::from_millis(200)).unwrap();
    let start = Instant::now();
    let e = c
        .query("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r")
        .unwrap_err();
    assert_eq!(e.kind, FailureKind::Timeout);
    assert_eq!(e.code.as_deref(), Some("SQLITE_INTERRUPT"));
    assert!(start.elapsed() < Duration::from_secs(5));
    // A fresh clock per statement: the connection stays usable.
    assert_eq!(c.query("SELECT 1").unwrap(), vec![vec![Value::Integer(1)]]);
}

#[test]
fn the_provider_runs_on_the_loaded_library() {
    let Some(_) = system_lib() else { return };
    let provider = SqliteProvider::new()
        .unwrap()
        .with_library(Path::new(SYSTEM_LIB))
        .unwrap();
    // The generators target the loaded library's version.
    assert_eq!(provider.version_number(), 3_040_001);
    assert!(provider.version().unwrap().starts_with("SQLite 3.40.1 "));
    let id = DatabaseId {
        run: "t".into(),
        thread: 0,
        index: 0,
    };
    let mut c = provider.create_database(&id).unwrap().conn;
    assert_eq!(
        c.query("SELECT sqlite_version()").unwrap(),
        vec![vec![Value::Text("3.40.1".into())]]
    );
    // Only the knobs 3.40.1 has.
    let names: Vec<String> = provider.knobs().into_iter().map(|k| k.name).collect();
    assert_eq!(names.len(), 25, "{names:?}");
    assert!(names.iter().any(|n| n == "indexed-expr"));
    assert!(!names.iter().any(|n| n == "coroutines"));
    let e = c
        .set_knobs(&KnobSetting::with(&["coroutines"]))
        .unwrap_err();
    assert!(e.message.contains("exists from 3.41.0 on"), "{e}");
}

#[test]
fn a_file_that_is_not_sqlite_is_refused() {
    let e = SqliteLibrary::load(Path::new("/no/such/lib.so")).unwrap_err();
    let text = format!("{e:#}");
    assert!(
        text.starts_with("cannot load SQLite library /no/such/lib.so: "),
        "{text}"
    );
    let Err(e) = SqliteProvider::new()
        .unwrap()
        .with_library(Path::new("/no/such/lib.so"))
    else {
        panic!("a missing library must be an error");
    };
    assert!(format!("{e:#}").contains("/no/such/lib.so"));
}

// ---- optimizer knobs ----

/// The `detail` column of `EXPLAIN QUERY PLAN sql`.
fn plan(c: &mut dyn Connection, sql: &str) -> Vec<String> {
    c.query(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap()
        .into_iter()
        .map(|row| match row.last() {
            Some(Value::Text(t)) => t.clone(),
            other => panic!("unexpected plan row {other:?}"),
        })
        .collect()
}

fn sorted(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by_key(|r| format!("{r:?}"));
    rows
}

/// On one connection: each knob changes the plan of a query that its
/// optimization applies to, never the rows; defaults bring the plan back.
fn knobs_change_plans_not_results(c: &mut dyn Connection) {
    c.execute("CREATE TABLE t (a INT, b INT)").unwrap();
    c.execute("CREATE INDEX i ON t (a)").unwrap();
    c.execute("INSERT INTO t VALUES (1, 10), (2, 20), (1, 30), (NULL, 40), (3, NULL)")
        .unwrap();
    let cases = [
        // Flattening merges the subquery into the outer query; without it
        // the subquery runs as a co-routine (or is materialized).
        (
            "query-flattener",
            "SELECT * FROM (SELECT * FROM t) WHERE a = 1",
            "subquery",
        ),
        // A full scan of the smaller index instead of the table.
        ("cover-idx-scan", "SELECT a FROM t", "COVERING INDEX"),
    ];
    for (knob, sql, marker) in cases {
        c.set_knobs(&KnobSetting::defaults()).unwrap();
        let default_plan = plan(c, sql);
        let default_rows = sorted(c.query(sql).unwrap());
        c.set_knobs(&KnobSetting::with(&[knob])).unwrap();
        let off_plan = plan(c, sql);
        let off_rows = sorted(c.query(sql).unwrap());
        assert_ne!(default_plan, off_plan, "{knob} changes the plan of {sql}");
        assert_eq!(default_rows, off_rows, "{knob} keeps the rows of {sql}");
        let has = |p: &[String]| p.iter().any(|d| d.contains(marker));
        assert_ne!(
            has(&default_plan),
            has(&off_plan),
            "{default_plan:?} / {off_plan:?}"
        );
        c.set_knobs(&KnobSetting::defaults()).unwrap();
        assert_eq!(plan(c, sql), default_plan, "defaults restore the plan");
    }
    let e = c
        .set_knobs(&KnobSetting::with(&["no-such-knob"]))
        .unwrap_err();
    assert!(
        e.message
            .contains("unknown SQLite optimizer knob 'no-such-knob'"),
        "{e}"
    );
}

#[test]
fn knobs_change_plans_on_the_bundled_library() {
    let mut c = SqliteConnection::open_in_memory().unwrap();
    knobs_change_plans_not_results(&mut c);
}

#[test]
fn knobs_change_plans_on_the_loaded_library() {
    let Some(lib) = system_lib() else { return };
    knobs_change_plans_not_results(&mut open(&lib));
}

#[test]
fn the_provider_lists_knobs_and_renders_them_for_the_shell() {
    let p = SqliteProvider::new().unwrap();
    let knobs = p.knobs();
    assert!(knobs.len() >= 25);
    let flattener = knobs.iter().find(|k| k.name == "query-flattener").unwrap();
    assert!(flattener.description.contains("SQLITE_QueryFlattener"));
    assert!(p
        .knob_commands(&KnobSetting::defaults(), &KnobSetting::defaults())
        .is_empty());
    let off = KnobSetting::with(&["query-flattener", "cover-idx-scan"]);
    let lines = p.knob_commands(&KnobSetting::defaults(), &off);
    assert_eq!(
        lines,
        vec![".testctrl optimizations 0x00000021".to_string()]
    );

    // The sqlite3 shell applies the line: the same plan change as set_knobs.
    let Ok(out) = std::process::Command::new("sqlite3")
        .arg("--version")
        .output()
    else {
        eprintln!("note: no sqlite3 shell; skipping its part");
        return;
    };
    assert!(out.status.success());
    let shell = |prefix: &[String]| {
        let script = format!(
            "{}\nCREATE TABLE t (a INT, b INT);\nCREATE INDEX i ON t (a);\n\
             EXPLAIN QUERY PLAN SELECT * FROM (SELECT * FROM t) WHERE a = 1;\n\
             EXPLAIN QUERY PLAN SELECT a FROM t;\n",
            prefix.join("\n")
        );
        let mut child = std::process::Command::new("sqlite3")
            .arg(":memory:")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(script.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let default_plan = shell(&[]);
    let off_plan = shell(&lines);
    assert!(default_plan.contains("COVERING INDEX") && !default_plan.contains("subquery"));
    assert!(
        off_plan.contains("subquery") && !off_plan.contains("COVERING INDEX"),
        "{off_plan}"
    );
}
