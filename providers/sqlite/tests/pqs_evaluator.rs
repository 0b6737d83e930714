//! Validation of the PQS evaluator against the SQLite it models: random
//! predicates from the PQS generator over pivot rows of random databases,
//! and every subexpression of them, each evaluated by lancet and by
//! SQLite, must agree on the truth value and on the value itself. Any
//! disagreement would be a PQS false alarm. A second test compares the
//! ported number/text conversions on random inputs.
//!
//! `LANCET_PQS_EXPRESSIONS` sets how many predicates to generate (default
//! 100,000 in release builds, 10,000 in debug builds), `LANCET_PQS_SEED`
//! the seed, `LANCET_PQS_SQLITE_LIB=PATH` another libsqlite3 to check
//! against, and `LANCET_PQS_DUMP=DIR` writes each disagreement to a file.
//! `cargo test --release -p lancet-sqlite --test pqs_evaluator --
//! --nocapture` prints the figures.
//!
//! Just over 600 lines on purpose: the two validations share the database
//! and pivot-row helpers.

use lancet_core::rng::database_rng;
use lancet_core::{
    DatabaseId, Expr, FromClause, Provider, Query, Rng, Schema, Select, SelectItem, Session,
    TableFactor, ToSql, Truth, Value,
};
use lancet_sqlite::database::SqliteDatabase;
use lancet_sqlite::dialect::DIALECT;
use lancet_sqlite::eval::fp;
use lancet_sqlite::eval::value::{self, Val};
use lancet_sqlite::eval::Evaluator;
use lancet_sqlite::pqs::{self, PivotTables};
use lancet_sqlite::SqliteProvider;
use rand::Rng as _;
use std::collections::BTreeMap;

const SEED: u64 = 0x9175;
const PIVOTS_PER_DATABASE: usize = 20;
const EXPRESSIONS_PER_PIVOT: usize = 25;

fn session(provider: &SqliteProvider, k: u64) -> Session<'_> {
    let id = DatabaseId {
        run: "pqs".into(),
        thread: 0,
        index: k,
    };
    let conn = provider.create_database(&id).unwrap().conn;
    Session::new(conn, DIALECT, provider.expected_errors())
}

/// One factor of the pivot FROM clause: its table and how a row is
/// named in SQL (by rowid where the table has one).
struct Factor {
    table: String,
    alias: String,
    has_rowid: bool,
}

fn factors(from: &FromClause, db: &SqliteDatabase) -> Vec<Factor> {
    let mut all = vec![&from.first];
    all.extend(from.joins.iter().map(|j| &j.factor));
    all.into_iter()
        .map(|f| match f {
            TableFactor::Table { name, alias, .. } => Factor {
                table: name.clone(),
                alias: alias.clone().unwrap_or_else(|| name.clone()),
                has_rowid: db.schema.relation(name).is_some() && !db.without_rowid.contains(name),
            },
            TableFactor::Derived { .. } => panic!("pivot tables are base tables"),
        })
        .collect()
}

fn column_list(schema: &Schema, f: &Factor) -> String {
    let rel = schema.relation(&f.table).unwrap();
    rel.columns
        .iter()
        .map(|c| format!("{}.{}", f.alias, c.name))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `from` with every table `NOT INDEXED`.
fn not_indexed(from: &FromClause) -> FromClause {
    let mut from = from.clone();
    let mut factors = vec![&mut from.first];
    factors.extend(from.joins.iter_mut().map(|j| &mut j.factor));
    for f in factors {
        if let TableFactor::Table { indexed_by, .. } = f {
            *indexed_by = Some(None);
        }
    }
    from
}

/// Exact equality of values as SQLite returned them (reals bit for bit).
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Real(x), Value::Real(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// A literal SQLite reads as exactly `v`, if there is one.
fn exact_literal(v: &Value) -> Option<String> {
    match v {
        Value::Real(r) if !r.is_finite() => None,
        Value::Real(r) if fp::atof(format!("{:?}", r.abs()).as_bytes()).1 != r.abs() => None,
        Value::Text(t) if t.contains(['\0', '\u{FFFD}']) => None,
        Value::Integer(_) | Value::Real(_) | Value::Text(_) | Value::Blob(_) => {
            Some(Expr::Literal(v.clone()).to_sql(DIALECT))
        }
        _ => None,
    }
}

/// The pivot row: one random row of each factor, and the WHERE terms that
/// select it: by rowid, or by the primary key of a WITHOUT ROWID table
/// (unique under its own affinity and collation). Rows are also matched
/// by value afterwards; `exact` says whether the filters alone select one
/// row of the product.
fn pick_pivot(
    session: &mut Session,
    schema: &Schema,
    factors: &[Factor],
    rng: &mut Rng,
) -> Option<(Vec<Value>, Vec<String>, bool)> {
    let mut pivot = vec![];
    let mut filters = vec![];
    let mut exact = true;
    for f in factors {
        let cols = column_list(schema, f);
        let sql = if f.has_rowid {
            format!(
                "SELECT {}.rowid, {cols} FROM {} AS {}",
                f.alias, f.table, f.alias
            )
        } else {
            format!("SELECT {cols} FROM {} AS {}", f.table, f.alias)
        };
        let mut rows = session.query_sql(&sql).ok()?;
        if rows.is_empty() {
            return None;
        }
        rows.sort_by_cached_key(|r| lancet_core::value::format_row(r));
        let mut row = rows.swap_remove(rng.random_range(0..rows.len()));
        if f.has_rowid {
            let rowid = row.remove(0);
            filters.push(format!("{}.rowid = {rowid}", f.alias));
        } else {
            let rel = schema.relation(&f.table)?;
            for (c, v) in rel.columns.iter().zip(&row) {
                if !c.primary_key {
                    continue;
                }
                match exact_literal(v) {
                    Some(lit) => filters.push(format!("{}.{} = {lit}", f.alias, c.name)),
                    None => exact = false,
                }
            }
        }
        pivot.extend(row);
    }
    Some((pivot, filters, exact))
}

/// What the evaluator claims about one expression on the pivot row.
#[derive(Clone)]
struct Claim {
    expr: Expr,
    truth: Truth,
    value: Value,
}

/// Every subexpression of `e` (itself included) that the evaluator
/// evaluates on the pivot, as claims to check.
fn claims(e: &Expr, evaluator: &Evaluator, out: &mut Vec<Claim>) {
    if let Ok(v) = evaluator.eval(e) {
        out.push(Claim {
            expr: e.clone(),
            truth: value::truth(&v),
            value: v.to_value(),
        });
    }
    for c in e.children() {
        claims(c, evaluator, out);
    }
}

/// The query that asks SQLite for each expression's truth and value on
/// the rows selected by `filters`.
fn check_query(
    from: &FromClause,
    scope_items: &[Expr],
    claims: &[Claim],
    filters: &[String],
) -> String {
    let mut items: Vec<SelectItem> = scope_items
        .iter()
        .map(|e| SelectItem::Expr {
            expr: e.clone(),
            alias: None,
        })
        .collect();
    for c in claims {
        let e = &c.expr;
        for value in [true, false] {
            items.push(SelectItem::Expr {
                expr: Expr::IsBool {
                    expr: Box::new(e.clone()),
                    value,
                    negated: false,
                },
                alias: None,
            });
        }
        items.push(SelectItem::Expr {
            expr: Expr::is_null(e.clone()),
            alias: None,
        });
        items.push(SelectItem::Expr {
            expr: e.clone(),
            alias: None,
        });
    }
    let select = Select {
        items,
        from: Some(from.clone()),
        ..Select::default()
    };
    let mut sql = Query::select(select).to_sql(DIALECT);
    if !filters.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&filters.join(" AND "));
    }
    sql
}

fn sqlite_truth(flags: &[Value]) -> Option<Truth> {
    match flags {
        [Value::Integer(1), Value::Integer(0), Value::Integer(0)] => Some(Truth::True),
        [Value::Integer(0), Value::Integer(1), Value::Integer(0)] => Some(Truth::False),
        [Value::Integer(0), Value::Integer(0), Value::Integer(1)] => Some(Truth::Null),
        _ => None,
    }
}

#[derive(Default)]
struct Figures {
    generated: usize,
    checked: usize,
    declined: usize,
    pivots: usize,
    /// Subexpressions (predicates included) checked.
    claims: usize,
    /// Claims whose query failed on a row that may not be the pivot.
    inconclusive: usize,
    truths: BTreeMap<String, usize>,
    reasons: BTreeMap<&'static str, usize>,
    failures: Vec<String>,
}

/// Where to check claims: the pivot tables, the pivot row and the WHERE
/// terms that select it.
struct Pivot<'a> {
    tables: &'a PivotTables,
    from: &'a FromClause,
    values: &'a [Value],
    filters: &'a [String],
    /// Whether the filters alone select the pivot row.
    exact: bool,
}

/// Checks claims on the pivot; records disagreements.
fn check_claims(
    session: &mut Session,
    pivot: &Pivot,
    claims: &[Claim],
    figures: &mut Figures,
    k: u64,
) {
    let scope: Vec<Expr> = pivot
        .tables
        .scope
        .columns
        .iter()
        .map(|c| c.expr.clone())
        .collect();
    let sql = check_query(pivot.from, &scope, claims, pivot.filters);
    let rows = match session.query_sql(&sql) {
        Ok(rows) => rows,
        Err(_) if claims.len() > 1 => {
            // Find the expressions SQLite rejects, one by one.
            for one in claims {
                check_claims(session, pivot, std::slice::from_ref(one), figures, k);
            }
            return;
        }
        // An error may come from another row than the pivot.
        Err(_) if !pivot.exact => {
            figures.inconclusive += 1;
            return;
        }
        Err(e) => {
            figures.failures.push(format!(
                "database {k}: SQLite raised {e} where the evaluator says {:?} = {}\n{sql};\n-- setup:\n{};",
                claims[0].truth,
                claims[0].value,
                session.setup().join(";\n")
            ));
            return;
        }
    };
    let n = scope.len();
    let matching: Vec<&Vec<Value>> = rows
        .iter()
        .filter(|r| {
            r[..n]
                .iter()
                .zip(pivot.values)
                .all(|(a, b)| identical(a, b))
        })
        .collect();
    if matching.is_empty() {
        figures.failures.push(format!(
            "database {k}: the pivot row is not in\n{sql};\n-- setup:\n{};",
            session.setup().join(";\n")
        ));
        return;
    }
    for row in matching {
        for (i, c) in claims.iter().enumerate() {
            let cells = &row[n + 4 * i..n + 4 * i + 4];
            let theirs = sqlite_truth(&cells[..3]);
            if theirs != Some(c.truth) || !identical(&c.value, &cells[3]) {
                let single =
                    check_query(pivot.from, &scope, std::slice::from_ref(c), pivot.filters);
                figures.failures.push(format!(
                    "database {k}: evaluator says {:?} = {}, SQLite says {theirs:?} = {}\n\
                     expression: {}\n{single};\n-- setup:\n{};",
                    c.truth,
                    c.value,
                    cells[3],
                    c.expr.to_sql(DIALECT),
                    session.setup().join(";\n")
                ));
            }
        }
    }
}

/// Claims per query: each takes four result columns (SQLite allows 2000).
const CLAIMS_PER_QUERY: usize = 300;

// Long because: one validation loop with its figures, step by step.
#[test]
fn evaluator_agrees_with_sqlite() {
    // `LANCET_PQS_SQLITE_LIB=PATH` checks the evaluator against another
    // libsqlite3 (what widening `SUPPORTED_VERSIONS` needs).
    let provider = match std::env::var("LANCET_PQS_SQLITE_LIB") {
        Ok(path) => SqliteProvider::new()
            .unwrap()
            .with_library(std::path::Path::new(&path))
            .unwrap(),
        Err(_) => SqliteProvider::new().unwrap(),
    };
    let version = provider.version_number();
    if provider.library().is_none() {
        assert!(
            lancet_sqlite::eval::SUPPORTED_VERSIONS.contains(&version),
            "the bundled SQLite is one the evaluator supports"
        );
    }
    let target: usize = std::env::var("LANCET_PQS_EXPRESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if cfg!(debug_assertions) {
            10_000
        } else {
            100_000
        });
    let seed: u64 = std::env::var("LANCET_PQS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SEED);
    let start = std::time::Instant::now();
    let mut figures = Figures::default();
    let mut databases = 0;
    for k in 0.. {
        if figures.generated >= target {
            break;
        }
        databases += 1;
        let mut rng = database_rng(seed, 0, k);
        let mut session = session(&provider, k);
        let db =
            lancet_sqlite::populate::populate(&mut rng, &mut session, provider.version_number())
                .unwrap_or_else(|e| panic!("database {k}: {e}"));
        let schema = &db.schema;
        for _ in 0..PIVOTS_PER_DATABASE {
            let Some((from, tables)) = pqs::pivot_tables(&mut rng, &db) else {
                break;
            };
            let factors = factors(&from, &db);
            let Some((values, filters, exact)) =
                pick_pivot(&mut session, schema, &factors, &mut rng)
            else {
                continue;
            };
            figures.pivots += 1;
            // SQLite computes the reference values without secondary
            // indexes: an index can substitute its stored value for an
            // expression, which is an optimization PQS itself tests (and
            // found wrong: an index on a REAL generated column
            // `AS (CAST(x AS INTEGER))` makes that CAST return a REAL).
            let reference_from = not_indexed(&from);
            let infos = tables.column_infos(&values);
            let evaluator = Evaluator::new(&infos);
            let mut batch: Vec<Claim> = vec![];
            let mut seen = std::collections::HashSet::new();
            for _ in 0..EXPRESSIONS_PER_PIVOT {
                figures.generated += 1;
                let expr = pqs::predicate(&mut rng, &tables, &values, version);
                match evaluator.truth(&expr) {
                    Ok(t) => {
                        figures.checked += 1;
                        *figures.truths.entry(format!("{t:?}")).or_default() += 1;
                        let mut all = vec![];
                        claims(&expr, &evaluator, &mut all);
                        assert_eq!(all.first().map(|c| c.truth), Some(t));
                        batch.extend(
                            all.into_iter()
                                .filter(|c| seen.insert(c.expr.to_sql(DIALECT))),
                        );
                    }
                    Err(why) => {
                        figures.declined += 1;
                        *figures.reasons.entry(why.0).or_default() += 1;
                    }
                }
            }
            figures.claims += batch.len();
            let pivot = Pivot {
                tables: &tables,
                from: &reference_from,
                values: &values,
                filters: &filters,
                exact,
            };
            for chunk in batch.chunks(CLAIMS_PER_QUERY) {
                check_claims(&mut session, &pivot, chunk, &mut figures, k);
            }
        }
    }
    eprintln!(
        "{databases} databases, {} pivot rows, {} predicates generated: {} checked against SQLite \
         ({} distinct subexpressions with them), {} declined ({:.2}%), {} inconclusive (an error \
         on another row); {:?}; {:.1}s",
        figures.pivots,
        figures.generated,
        figures.checked,
        figures.claims,
        figures.declined,
        100.0 * figures.declined as f64 / figures.generated as f64,
        figures.inconclusive,
        figures.truths,
        start.elapsed().as_secs_f64()
    );
    eprintln!("declined because: {:?}", figures.reasons);
    if let Ok(dir) = std::env::var("LANCET_PQS_DUMP") {
        for (i, f) in figures.failures.iter().enumerate() {
            let _ = std::fs::write(format!("{dir}/pqs{i}.txt"), f);
        }
    }
    assert!(
        figures.failures.is_empty(),
        "{} disagreements; first:\n{}",
        figures.failures.len(),
        figures.failures[0]
    );
    assert!(figures.checked >= target * 9 / 10, "too many declined");
}

/// SQLite's own answers to a one-row query with parameters.
fn ask(conn: &rusqlite::Connection, sql: &str, params: impl rusqlite::Params) -> Value {
    conn.query_row(sql, params, |r| {
        Ok(match r.get_ref(0)? {
            rusqlite::types::ValueRef::Null => Value::Null,
            rusqlite::types::ValueRef::Integer(i) => Value::Integer(i),
            rusqlite::types::ValueRef::Real(f) => Value::Real(f),
            rusqlite::types::ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into()),
            rusqlite::types::ValueRef::Blob(b) => Value::Blob(b.to_vec()),
        })
    })
    .unwrap()
}

/// Reals of every magnitude and of the shapes data and arithmetic produce.
fn random_real(rng: &mut Rng) -> f64 {
    match rng.random_range(0..6) {
        0 => f64::from_bits(rng.random::<u64>()),
        1 => f64::from(rng.random_range(-100_000i32..100_000)) / 1000.0,
        2 => rng.random_range(-1e6..1e6),
        3 => {
            let m: f64 = rng.random_range(1.0..10.0);
            let e: i32 = rng.random_range(-320..=308);
            m * 10f64.powi(e)
        }
        4 => rng.random_range(-1e18..1e18f64).trunc(),
        _ => (rng.random_range(-1e15..1e15f64)).trunc() / 100.0,
    }
}

/// Texts that are, begin with or resemble numbers.
fn random_numeric_text(rng: &mut Rng) -> String {
    const ALPHABET: &[u8] = b"0123456789012345678901234567890123456789..eE+- \t x";
    if rng.random_bool(0.3) {
        return fp::render_real(random_real(rng));
    }
    let len = rng.random_range(0..28);
    (0..len)
        .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
        .collect()
}

#[test]
fn number_text_conversions_match_sqlite() {
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    let mut rng = database_rng(SEED, 1, 0);
    let n: usize = std::env::var("LANCET_PQS_CONVERSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000);
    let mut failures = vec![];
    let specials = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
        1e15,
        1e16,
        1e17,
        123_456_789_012_345_680.0,
        0.1 + 0.2,
        9.223_372_036_854_776e18,
        -9.223_372_036_854_776e18,
        4_503_599_627_370_496.5,
        2.5,
        -2.5,
        0.49999999999999994,
    ];
    for i in 0..n + specials.len() {
        let r = match specials.get(i) {
            Some(r) => *r,
            None => random_real(&mut rng),
        };
        if r.is_nan() {
            continue;
        }
        let ours = Value::Text(fp::render_real(r));
        let theirs = ask(&conn, "SELECT CAST(?1 AS TEXT)", [r]);
        if ours != theirs {
            failures.push(format!("render {r:?}: {ours} vs {theirs}"));
        }
        let digits = rng.random_range(0..=30i64);
        let ours = Value::Real(match value::real_value(&Val::Real(r)) {
            x if !(-4_503_599_627_370_496.0..=4_503_599_627_370_496.0).contains(&x) => x,
            x if digits == 0 => ((x + if x < 0.0 { -0.5 } else { 0.5 }) as i64) as f64,
            x => fp::round_digits(x, digits as i32),
        });
        let theirs = ask(&conn, "SELECT round(?1, ?2)", rusqlite::params![r, digits]);
        if !identical(&ours, &theirs) {
            failures.push(format!("round({r:?}, {digits}): {ours} vs {theirs}"));
        }

        let t = random_numeric_text(&mut rng);
        let v = Val::Text(t.clone());
        let checks: [(&str, Val); 4] = [
            (
                "SELECT CAST(?1 AS REAL)",
                value::cast(&v, value::CastTo::Real).unwrap(),
            ),
            (
                "SELECT CAST(?1 AS INTEGER)",
                value::cast(&v, value::CastTo::Integer).unwrap(),
            ),
            (
                "SELECT CAST(?1 AS NUMERIC)",
                value::cast(&v, value::CastTo::Numeric).unwrap(),
            ),
            (
                "SELECT ?1 + 0",
                lancet_sqlite::eval::arithmetic(lancet_core::BinaryOp::Add, v.clone(), Val::Int(0))
                    .unwrap(),
            ),
        ];
        for (sql, ours) in checks {
            let ours = ours.to_value();
            let theirs = ask(&conn, sql, [&t]);
            if !identical(&ours, &theirs) {
                failures.push(format!("{sql} with {t:?}: {ours} vs {theirs}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} disagreements, first: {:?}",
        failures.len(),
        &failures[..failures.len().min(10)]
    );
}
