//! Validation of the PQS evaluator against the SQLite it models: random
//! predicates from the PQS generator over pivot rows of random databases,
//! each evaluated by lancet and by SQLite, must agree on the truth value
//! and on the value itself. Any disagreement would be a PQS false alarm.
//!
//! `LANCET_PQS_EXPRESSIONS` sets how many expressions to generate (default
//! 100,000); `LANCET_PQS_DUMP=DIR` writes each disagreement as a script.
//! Run in release mode: `cargo test --release -p lancet-sqlite --test
//! pqs_evaluator -- --nocapture` prints the figures.

use lancet_core::rng::database_rng;
use lancet_core::{
    DatabaseId, Dialect, Expr, FromClause, Provider, Query, Rng, Schema, Select, SelectItem,
    Session, TableFactor, ToSql, Truth, Value,
};
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
    let conn = provider.create_database(&id).unwrap();
    Session::new(conn, Dialect::Sqlite, provider.expected_errors())
}

/// One factor of the pivot FROM clause: its table and how a row is
/// named in SQL (by rowid where the table has one).
struct Factor {
    table: String,
    alias: String,
    has_rowid: bool,
}

fn factors(from: &FromClause, schema: &Schema) -> Vec<Factor> {
    let mut all = vec![&from.first];
    all.extend(from.joins.iter().map(|j| &j.factor));
    all.into_iter()
        .map(|f| match f {
            TableFactor::Table { name, alias, .. } => Factor {
                table: name.clone(),
                alias: alias.clone().unwrap_or_else(|| name.clone()),
                has_rowid: schema.relation(name).is_some_and(|r| r.has_rowid),
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

/// Exact equality of values as SQLite returned them (reals bit for bit).
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Real(x), Value::Real(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// The pivot row: one random row of each factor, and the WHERE terms that
/// select it (rowid tables only; other factors are matched by value).
fn pick_pivot(
    session: &mut Session,
    schema: &Schema,
    factors: &[Factor],
    rng: &mut Rng,
) -> Option<(Vec<Value>, Vec<String>)> {
    let mut pivot = vec![];
    let mut filters = vec![];
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
        }
        pivot.extend(row);
    }
    Some((pivot, filters))
}

/// The query that asks SQLite for each expression's truth and value on
/// the rows selected by `filters`.
fn check_query(
    from: &FromClause,
    scope_items: &[Expr],
    exprs: &[&Expr],
    filters: &[String],
) -> String {
    let mut items: Vec<SelectItem> = scope_items
        .iter()
        .map(|e| SelectItem::Expr {
            expr: e.clone(),
            alias: None,
        })
        .collect();
    for &e in exprs {
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
    let mut sql = Query::select(select).to_sql(Dialect::Sqlite);
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
    rows_compared: usize,
    truths: BTreeMap<String, usize>,
    reasons: BTreeMap<&'static str, usize>,
    failures: Vec<String>,
}

/// Checks one batch of expressions on the pivot; records disagreements.
#[allow(clippy::too_many_arguments)]
fn check_batch(
    session: &mut Session,
    tables: &PivotTables,
    from: &FromClause,
    pivot: &[Value],
    filters: &[String],
    exprs: &[(Expr, Truth)],
    figures: &mut Figures,
    k: u64,
) {
    let scope: Vec<Expr> = tables
        .scope
        .columns
        .iter()
        .map(|c| c.expr.clone())
        .collect();
    let refs: Vec<&Expr> = exprs.iter().map(|(e, _)| e).collect();
    let sql = check_query(from, &scope, &refs, filters);
    let rows = match session.query_sql(&sql) {
        Ok(rows) => rows,
        Err(_) if exprs.len() > 1 => {
            // Find the expressions SQLite rejects, one by one.
            for one in exprs {
                check_batch(
                    session,
                    tables,
                    from,
                    pivot,
                    filters,
                    std::slice::from_ref(one),
                    figures,
                    k,
                );
            }
            return;
        }
        Err(e) => {
            figures.failures.push(format!(
                "database {k}: SQLite raised {e} where the evaluator says {:?}\n{sql};\n-- setup:\n{};",
                exprs[0].1,
                session.setup().join(";\n")
            ));
            return;
        }
    };
    let n = scope.len();
    let infos = tables.column_infos(pivot);
    let evaluator = Evaluator::new(&infos);
    let matching: Vec<&Vec<Value>> = rows
        .iter()
        .filter(|r| r[..n].iter().zip(pivot).all(|(a, b)| identical(a, b)))
        .collect();
    if matching.is_empty() {
        figures.failures.push(format!(
            "database {k}: the pivot row is not in\n{sql};\n-- setup:\n{};",
            session.setup().join(";\n")
        ));
        return;
    }
    for row in matching {
        figures.rows_compared += 1;
        for (i, (expr, truth)) in exprs.iter().enumerate() {
            let cells = &row[n + 4 * i..n + 4 * i + 4];
            let theirs = sqlite_truth(&cells[..3]);
            let value_ours = evaluator.eval(expr).map(|v| v.to_value());
            let value_ok = match &value_ours {
                Ok(v) => identical(v, &cells[3]),
                Err(_) => false,
            };
            if theirs != Some(*truth) || !value_ok {
                let single = check_query(from, &scope, &[expr], filters);
                figures.failures.push(format!(
                    "database {k}: evaluator says {truth:?} = {value_ours:?}, SQLite says {theirs:?} = {:?}\n\
                     predicate: {}\n{single};\n-- setup:\n{};",
                    cells[3],
                    expr.to_sql(Dialect::Sqlite),
                    session.setup().join(";\n")
                ));
            }
        }
    }
}

#[test]
fn evaluator_agrees_with_sqlite() {
    let provider = SqliteProvider::new().unwrap();
    let version = provider.version_number();
    assert!(
        lancet_sqlite::eval::SUPPORTED_VERSIONS.contains(&version),
        "the bundled SQLite is one the evaluator supports"
    );
    let target: usize = std::env::var("LANCET_PQS_EXPRESSIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let start = std::time::Instant::now();
    let mut figures = Figures::default();
    let mut databases = 0;
    for k in 0.. {
        if figures.generated >= target {
            break;
        }
        databases += 1;
        let mut rng = database_rng(SEED, 0, k);
        let mut session = session(&provider, k);
        let schema = provider
            .populate(&mut rng, &mut session)
            .unwrap_or_else(|e| panic!("database {k}: {e}"));
        for _ in 0..PIVOTS_PER_DATABASE {
            let Some((from, tables)) = pqs::pivot_tables(&mut rng, &schema) else {
                break;
            };
            let factors = factors(&from, &schema);
            let Some((pivot, filters)) = pick_pivot(&mut session, &schema, &factors, &mut rng)
            else {
                continue;
            };
            let mut batch = vec![];
            for _ in 0..EXPRESSIONS_PER_PIVOT {
                figures.generated += 1;
                let (expr, truth) = pqs::generate(&mut rng, &tables, &pivot, version);
                match truth {
                    Ok(t) => {
                        figures.checked += 1;
                        *figures.truths.entry(format!("{t:?}")).or_default() += 1;
                        batch.push((expr, t));
                    }
                    Err(why) => {
                        figures.declined += 1;
                        *figures.reasons.entry(why.0).or_default() += 1;
                    }
                }
            }
            check_batch(
                &mut session,
                &tables,
                &from,
                &pivot,
                &filters,
                &batch,
                &mut figures,
                k,
            );
        }
    }
    eprintln!(
        "{databases} databases, {} expressions generated: {} checked against SQLite on {} pivot rows, \
         {} declined ({:.2}%); {:?}; {:.1}s",
        figures.generated,
        figures.checked,
        figures.rows_compared,
        figures.declined,
        100.0 * figures.declined as f64 / figures.generated as f64,
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
    for _ in 0..n {
        let r = random_real(&mut rng);
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
