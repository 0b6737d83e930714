//! The provider end to end: random databases populate without unexpected
//! errors, random queries over them run without unexpected errors and
//! often return rows, and a seed always gives the same database.

use lancet_core::rng::database_rng;
use lancet_core::{
    DatabaseId, ExecError, GeneratedDatabase, Provider, Query, Rng, Select, SelectItem, Session,
    StatementKind, ToSql,
};
use lancet_sqlite::dialect::DIALECT;
use lancet_sqlite::SqliteProvider;
use rand::Rng as _;
use std::collections::BTreeMap;

const SEED: u64 = 0x5eed;

fn id(k: u64) -> DatabaseId {
    DatabaseId {
        run: "test".into(),
        thread: 0,
        index: k,
    }
}

fn session<'e>(provider: &'e SqliteProvider, k: u64) -> Session<'e> {
    let conn = provider.create_database(&id(k)).unwrap().conn;
    Session::new(conn, DIALECT, provider.expected_errors())
}

fn populate(
    provider: &SqliteProvider,
    rng: &mut Rng,
    session: &mut Session,
    k: u64,
) -> Box<dyn GeneratedDatabase> {
    match provider.populate(rng, session) {
        Ok(generated) => generated,
        Err(e) => panic!(
            "database {k}: {e}\n-- setup so far:\n{};",
            session.setup().join(";\n")
        ),
    }
}

/// `SELECT <columns and expressions> FROM <from> WHERE <predicate>`.
fn random_query(generated: &dyn GeneratedDatabase, rng: &mut Rng, n: usize) -> Vec<Query> {
    let mut generator = generated.query_generator();
    (0..n)
        .map(|_| {
            let (from, scope) = generator.from_clause(rng);
            let items = (0..rng.random_range(1..=3))
                .map(|_| {
                    let expr = if rng.random_bool(0.5) && !scope.columns.is_empty() {
                        let i = rng.random_range(0..scope.columns.len());
                        scope.columns[i].expr.clone()
                    } else {
                        generator.expression(rng, &scope)
                    };
                    SelectItem::Expr { expr, alias: None }
                })
                .collect();
            Query::select(Select {
                items,
                from: Some(from),
                selection: Some(generator.predicate(rng, &scope)),
                ..Select::default()
            })
        })
        .collect()
}

#[test]
fn random_databases_and_queries_raise_no_unexpected_errors() {
    let provider = SqliteProvider::new().unwrap();
    let databases: u64 = std::env::var("LANCET_TEST_DATABASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let queries_per_db = 200;
    let mut setup_failed = 0usize;
    let mut setup_statements = 0usize;
    let mut query_expected: BTreeMap<String, usize> = BTreeMap::new();
    let (mut queries, mut nonempty, mut expected, mut rows_total) =
        (0usize, 0usize, 0usize, 0usize);
    let mut unexpected = vec![];
    let start = std::time::Instant::now();
    for k in 0..databases {
        let mut rng = database_rng(SEED, 0, k);
        let mut session = session(&provider, k);
        let schema = populate(&provider, &mut rng, &mut session, k);
        setup_statements += session.stats.statements as usize;
        // The setup keeps only statements that succeeded; the rest failed
        // with expected errors.
        setup_failed += session.stats.statements as usize - session.setup().len();
        for query in random_query(&*schema, &mut rng, queries_per_db) {
            queries += 1;
            match session.query(&query) {
                Ok(rows) => {
                    nonempty += usize::from(!rows.is_empty());
                    rows_total += rows.len();
                }
                Err(ExecError::Expected(e)) => {
                    expected += 1;
                    *query_expected.entry(e.to_string()).or_default() += 1;
                }
                Err(e) => unexpected.push(format!(
                    "database {k}: {e}\n-- setup:\n{};",
                    session.setup().join(";\n")
                )),
            }
        }
    }
    let share = nonempty as f64 / queries as f64;
    let expected_share = expected as f64 / queries as f64;
    eprintln!(
        "{databases} databases ({setup_statements} setup statements, {setup_failed} with \
         expected errors), {queries} queries: {:.1}% non-empty, {:.2}% expected errors, \
         {:.1} rows per query",
        share * 100.0,
        expected_share * 100.0,
        rows_total as f64 / queries as f64
    );
    eprintln!("expected query errors: {query_expected:?}");
    eprintln!("elapsed: {:?}", start.elapsed());
    if let Ok(dir) = std::env::var("LANCET_TEST_DUMP") {
        // Each unexpected error as a script: setup, then the failing query.
        for (i, u) in unexpected.iter().enumerate() {
            eprintln!("UNEXPECTED {}", u.lines().next().unwrap_or(""));
            let (head, setup) = u.split_once("\n-- setup:\n").unwrap_or((u, ""));
            let query = head.split_once(" in: ").map_or("", |x| x.1);
            let _ = std::fs::write(format!("{dir}/case{i}.sql"), format!("{setup}\n{query};\n"));
        }
    }
    assert!(
        unexpected.is_empty(),
        "{} unexpected errors; first:\n{}",
        unexpected.len(),
        unexpected[0]
    );
    assert!(
        share >= 0.3,
        "only {:.1}% of queries returned rows",
        share * 100.0
    );
    assert!(
        expected_share < 0.05,
        "{:.2}% expected errors",
        expected_share * 100.0
    );
}

#[test]
fn a_seed_gives_the_same_database_and_queries() {
    let provider = SqliteProvider::new().unwrap();
    for k in 0..20 {
        let run = || {
            let mut rng = database_rng(SEED, 3, k);
            let mut session = session(&provider, k);
            let schema = populate(&provider, &mut rng, &mut session, k);
            let queries: Vec<String> = random_query(&*schema, &mut rng, 20)
                .iter()
                .map(|q| q.to_sql(DIALECT))
                .collect();
            (session.setup().to_vec(), schema.schema().clone(), queries)
        };
        let (setup_a, schema_a, queries_a) = run();
        let (setup_b, schema_b, queries_b) = run();
        assert!(!setup_a.is_empty());
        assert_eq!(setup_a, setup_b, "database {k}");
        assert_eq!(schema_a, schema_b, "database {k}");
        assert_eq!(queries_a, queries_b, "database {k}");
    }
}

#[test]
fn setup_statements_replay_to_the_same_database() {
    // A reproducer is the setup statements alone: running them again on a
    // fresh database must give the same contents.
    let provider = SqliteProvider::new().unwrap();
    for k in 0..20 {
        let mut rng = database_rng(SEED, 5, k);
        let mut first = session(&provider, k);
        let schema = populate(&provider, &mut rng, &mut first, k);
        let mut second = session(&provider, k);
        for sql in first.setup() {
            second
                .execute_sql(StatementKind::Query, sql.clone())
                .unwrap_or_else(|e| panic!("replaying {sql}: {e}"));
        }
        for rel in &schema.schema().relations {
            let sql = format!("SELECT * FROM {}", rel.name);
            let mut a = first.query_sql(&sql).unwrap();
            let mut b = second.query_sql(&sql).unwrap();
            let key = |r: &Vec<lancet_core::Value>| lancet_core::value::format_row(r);
            a.sort_by_key(key);
            b.sort_by_key(key);
            assert_eq!(a, b, "database {k}, {}", rel.name);
        }
    }
}

#[test]
fn generated_sql_covers_the_features() {
    let provider = SqliteProvider::new().unwrap();
    let mut setup = String::new();
    let mut queries = String::new();
    for k in 0..150 {
        let mut rng = database_rng(SEED, 7, k);
        let mut session = session(&provider, k);
        let schema = populate(&provider, &mut rng, &mut session, k);
        for s in session.setup() {
            setup.push_str(s);
            setup.push('\n');
        }
        for q in random_query(&*schema, &mut rng, 100) {
            queries.push_str(&q.to_sql(DIALECT));
            queries.push('\n');
        }
    }
    let setup_features = [
        "WITHOUT ROWID",
        "INTEGER PRIMARY KEY",
        ", PRIMARY KEY (",
        "UNIQUE (",
        " NOT NULL",
        "CHECK (",
        "DEFAULT (",
        "COLLATE NOCASE",
        "COLLATE RTRIM",
        "GENERATED ALWAYS AS",
        " VARCHAR(10)",
        " BOOLEAN",
        " DOUBLE",
        "CREATE UNIQUE INDEX",
        " DESC",
        "CREATE VIEW",
        "UNION ALL",
        "INSERT OR IGNORE",
        "INSERT OR REPLACE",
        "UPDATE OR",
        "DELETE FROM",
        "ANALYZE",
        "REINDEX",
        "VACUUM",
        "PRAGMA automatic_index",
        "PRAGMA reverse_unordered_selects",
        "PRAGMA case_sensitive_like",
    ];
    let query_features = [
        " JOIN ",
        " LEFT JOIN ",
        " RIGHT JOIN ",
        " FULL JOIN ",
        " CROSS JOIN ",
        " NATURAL ",
        " USING (",
        " ON ",
        ", t",
        " INDEXED BY ",
        " NOT INDEXED",
        "(SELECT ",
        "EXISTS (",
        " IN (SELECT",
        "(SELECT COUNT(*)",
        "(SELECT MIN(",
        "(SELECT MAX(",
        "CASE ",
        "CAST(",
        " LIKE ",
        " GLOB ",
        " ESCAPE ",
        " BETWEEN ",
        " IN (",
        " IS NULL",
        " IS NOT ",
        " IS TRUE",
        " COLLATE ",
        " << ",
        " || ",
        "~",
        " % ",
        "X'",
        "(-9223372036854775808)",
        "(-0.0)",
        "1e308",
    ];
    for f in setup_features {
        assert!(setup.contains(f), "no setup statement has {f:?}");
    }
    for f in query_features {
        assert!(queries.contains(f), "no query has {f:?}");
    }
    // Every function of the table (all are available in the bundled SQLite).
    for f in lancet_sqlite::functions::FUNCTIONS {
        let call = format!("{}(", f.name);
        assert!(queries.contains(&call), "no query calls {}", f.name);
    }
    // Index variety: partial, on expressions.
    assert!(setup
        .lines()
        .any(|l| l.starts_with("CREATE INDEX") && l.contains(" WHERE ")));
    assert!(setup
        .lines()
        .any(|l| l.starts_with("CREATE INDEX") && l.contains(" ((")));
}

/// How many rows `from` has (`None` where counting them fails).
fn rows_of(session: &mut Session, from: lancet_core::FromClause) -> Option<u64> {
    let count = Query::select(Select {
        items: vec![SelectItem::Expr {
            expr: lancet_core::Expr::CountStar,
            alias: None,
        }],
        from: Some(from),
        ..Select::default()
    });
    match session.query(&count).ok()?.first()?.first()? {
        lancet_core::Value::Integer(n) => u64::try_from(*n).ok(),
        _ => None,
    }
}

/// The cost model: most FROM clauses read at most a few hundred rows, a
/// share reads more on purpose, and three-factor FROM clauses are still
/// generated (over small tables, or as heavy queries).
#[test]
fn the_cost_model_bounds_most_from_clauses_and_keeps_heavy_ones() {
    let provider = SqliteProvider::new().unwrap();
    let (mut light, mut over, mut three_factors, mut total) = (0, 0, 0, 0);
    for k in 0..60 {
        let mut rng = database_rng(SEED, 9, k);
        let mut session = session(&provider, k);
        let generated = populate(&provider, &mut rng, &mut session, k);
        let mut generator = generated.query_generator();
        for _ in 0..100 {
            let (from, _) = generator.from_clause(&mut rng);
            if from.joins.len() == 2 {
                three_factors += 1;
            }
            let Some(n) = rows_of(&mut session, from) else {
                continue;
            };
            total += 1;
            // Outer joins may add the unmatched rows of each side.
            if n <= 2 * lancet_sqlite::query_gen::LIGHT_ROWS {
                light += 1;
            } else {
                over += 1;
            }
        }
    }
    assert!(total > 5_000, "{total} FROM clauses counted");
    assert!(
        light as f64 >= 0.93 * total as f64,
        "{light} of {total} FROM clauses within the light bound"
    );
    assert!(over > 0, "no heavy FROM clause in {total}");
    assert!(
        three_factors > 100,
        "{three_factors} three-factor FROM clauses"
    );
}

/// Feedback: once checks report which FROM clauses saw rows, more FROM
/// clauses have rows, and empty ones are still generated (fresh clauses).
#[test]
fn feedback_draws_from_clauses_that_saw_rows_again() {
    let provider = SqliteProvider::new().unwrap();
    // (non-empty, total) without and with feedback, over the same databases.
    let mut shares = [(0u32, 0u32); 2];
    for (with_feedback, share) in shares.iter_mut().enumerate() {
        for k in 0..30 {
            let mut rng = database_rng(SEED, 11, k);
            let mut session = session(&provider, k);
            let generated = populate(&provider, &mut rng, &mut session, k);
            let mut generator = generated.query_generator();
            for _ in 0..150 {
                let (from, _) = generator.from_clause(&mut rng);
                let Some(n) = rows_of(&mut session, from) else {
                    continue;
                };
                let saw_rows = n > 0;
                generator.check_ended(with_feedback == 1 && saw_rows);
                share.0 += u32::from(saw_rows);
                share.1 += 1;
            }
        }
    }
    let pct = |(n, total): (u32, u32)| 100.0 * f64::from(n) / f64::from(total.max(1));
    let (without, with) = (pct(shares[0]), pct(shares[1]));
    assert!(
        with >= without + 5.0,
        "non-empty FROM clauses: {without:.0}% without feedback, {with:.0}% with"
    );
    assert!(
        with < 99.0,
        "empty FROM clauses are still generated: {with:.0}%"
    );
}
