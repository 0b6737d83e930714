//! The DuckDB connection over the loaded library: values as lancet's
//! types, errors by DuckDB's error type, the statement time limit, and
//! the optimizer passes. Needs the library tests/engines.sh installs
//! (or LANCET_DUCKDB_LIB).

use lancet_core::{Connection, FailureKind, KnobSetting, Value};
use lancet_duckdb::{DuckDbConnection, DuckDbLibrary};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn library() -> Arc<DuckDbLibrary> {
    let path = lancet_duckdb::locate::library(None).expect("run tests/engines.sh first");
    DuckDbLibrary::load(&path).unwrap()
}

fn open() -> DuckDbConnection {
    DuckDbConnection::open(library(), Duration::from_secs(5)).unwrap()
}

#[test]
fn values_map_to_lancet_types() {
    let mut c = open();
    let rows = c
        .query(
            "SELECT NULL, 1::TINYINT, -5::BIGINT, 200::UTINYINT, 1.5::DOUBLE, 2.50::DECIMAL(4,2), \
             'a', '\\x00\\xFF'::BLOB, TRUE, DATE '2000-01-01', 170141183460469231731687303715884105727::HUGEINT, \
             7::HUGEINT",
        )
        .unwrap();
    assert_eq!(
        rows,
        vec![vec![
            Value::Null,
            Value::Integer(1),
            Value::Integer(-5),
            Value::Integer(200),
            Value::Real(1.5),
            Value::Decimal("2.50".into()),
            Value::Text("a".into()),
            Value::Blob(vec![0, 0xFF]),
            Value::Boolean(true),
            Value::Text("2000-01-01".into()),
            Value::Decimal("170141183460469231731687303715884105727".into()),
            Value::Integer(7),
        ]]
    );
    c.execute("CREATE TABLE t0 (c0 INTEGER); INSERT INTO t0 VALUES (1), (2)")
        .unwrap();
    assert_eq!(
        c.query("SELECT count(*) FROM t0").unwrap(),
        vec![vec![Value::Integer(2)]]
    );
}

#[test]
fn errors_carry_duckdb_error_types() {
    let mut c = open();
    for (sql, code) in [
        ("SELECT CAST('a' AS INTEGER)", "CONVERSION"),
        ("SELECT 127::TINYINT + 1::TINYINT", "OUT_OF_RANGE"),
        ("SELECT * FROM nowhere", "CATALOG"),
        ("SELEC 1", "PARSER"),
        ("SELECT 1 = 'a'::BLOB", "CONVERSION"),
        ("SELECT nowhere FROM range(1)", "BINDER"),
    ] {
        let e = c.query(sql).unwrap_err();
        assert_eq!(e.code.as_deref(), Some(code), "{sql}: {e}");
        assert_eq!(e.kind, FailureKind::Statement);
    }
    c.execute("CREATE TABLE t0 (c0 INTEGER PRIMARY KEY)")
        .unwrap();
    c.execute("INSERT INTO t0 VALUES (1)").unwrap();
    let e = c.execute("INSERT INTO t0 VALUES (1)").unwrap_err();
    assert_eq!(e.code.as_deref(), Some("CONSTRAINT"), "{e}");
}

#[test]
fn runaway_statements_are_interrupted() {
    let mut c = DuckDbConnection::open(library(), Duration::from_millis(300)).unwrap();
    let start = Instant::now();
    let e = c
        .query("SELECT count(*) FROM range(100000000000) a, range(1000) b WHERE a.range + b.range = -1")
        .unwrap_err();
    assert_eq!(e.kind, FailureKind::Timeout, "{e}");
    assert!(start.elapsed() < Duration::from_secs(10));
    // The connection stays usable, with a fresh limit per statement.
    assert_eq!(c.query("SELECT 1").unwrap(), vec![vec![Value::Integer(1)]]);
}

#[test]
fn optimizer_passes_are_knobs() {
    let mut c = open();
    c.set_knobs(&KnobSetting::with(&["filter_pushdown", "join_order"]))
        .unwrap();
    assert_eq!(
        c.query("SELECT current_setting('disabled_optimizers')")
            .unwrap(),
        vec![vec![Value::Text("filter_pushdown,join_order".into())]]
    );
    c.set_knobs(&KnobSetting::default()).unwrap();
    assert!(c.set_knobs(&KnobSetting::with(&["no such pass"])).is_err());
}

#[test]
fn values_the_accessors_do_not_read_are_read_as_text() {
    let mut c = open();
    // Lists, structs and maps as DuckDB prints them (the row accessors
    // read them as nothing), NULL as NULL.
    let rows = c
        .query(
            "SELECT [1, NULL, 3], {'a': 1, 'b': 'x'}, MAP {1: 'a'}, \
             CAST(NULL AS INTEGER[]), 7 ORDER BY 5",
        )
        .unwrap();
    assert_eq!(
        rows,
        vec![vec![
            Value::Text("[1, NULL, 3]".into()),
            Value::Text("{'a': 1, 'b': x}".into()),
            Value::Text("{1=a}".into()),
            Value::Null,
            Value::Integer(7),
        ]]
    );
    let rows = c
        .query(
            "SELECT 1, TIME '01:02:03', INTERVAL '1 day', \
             TIMESTAMP '2000-01-01 01:02:03', 1::UHUGEINT, 1.5::REAL, NULL",
        )
        .unwrap();
    assert_eq!(rows[0][1], Value::Text("01:02:03".into()));
    assert_eq!(rows[0][4], Value::Integer(1));
    assert_eq!(rows[0][5], Value::Real(1.5));
    // ENUM values are read again as text (the accessors read them as '').
    let rows = c
        .query("SELECT 1 AS a, 'b'::ENUM('a', 'b') AS a, NULL::ENUM('a') ORDER BY 1;")
        .unwrap();
    assert_eq!(
        rows,
        vec![vec![
            Value::Integer(1),
            Value::Text("b".into()),
            Value::Null
        ]]
    );
}

/// Why a generated text column over a collated one is modelled as
/// collated (see populate.rs): DuckDB carries the collation through CASE
/// and casts into a column declared plain VARCHAR.
#[test]
fn a_generated_column_keeps_the_collation_of_its_expression() {
    let mut c = open();
    c.execute(
        "CREATE TABLE t0 (c0 VARCHAR COLLATE nocase, \
         c1 VARCHAR GENERATED ALWAYS AS (CASE WHEN c0 <> '' THEN CAST(c0 AS VARCHAR) END) VIRTUAL)",
    )
    .unwrap();
    c.execute("INSERT INTO t0 (c0) VALUES ('a')").unwrap();
    let rows = c.query("SELECT c1 = 'A' FROM t0").unwrap();
    assert_eq!(rows, vec![vec![Value::Boolean(true)]]);
}
