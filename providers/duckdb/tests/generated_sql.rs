//! The generator's DuckDB-only SQL runs: over generated databases, FROM
//! clauses with QUALIFY, GROUP BY ALL, `* REPLACE`, ASOF and POSITIONAL joins, and
//! expressions with list functions, integer lists, structs and maps are drawn, and DuckDB accepts every one (an error it
//! raises is on the expected list). Needs the library tests/engines.sh
//! installs (or LANCET_DUCKDB_LIB).

use lancet_core::rng::database_rng;
use lancet_core::{
    DatabaseId, ExecError, Provider, Query, QueryGenerator, Rng, Scope, Select, SelectItem,
    Session, ToSql,
};
use lancet_duckdb::dialect::DIALECT;
use lancet_duckdb::DuckDbProvider;

/// Every column of a generated FROM clause, by its qualified name (as the
/// oracles read them: `*` over a NATURAL FULL JOIN merges columns of one
/// name, which DuckDB refuses between two types).
fn everything(_: &mut dyn QueryGenerator, _: &mut Rng, scope: &Scope) -> Vec<SelectItem> {
    scope
        .columns
        .iter()
        .map(|c| SelectItem::Expr {
            expr: c.expr.clone(),
            alias: None,
        })
        .collect()
}

/// One item: an expression or a predicate of the generator's.
fn expression_or_predicate(
    generator: &mut dyn QueryGenerator,
    rng: &mut Rng,
    scope: &Scope,
) -> Vec<SelectItem> {
    let expr = if rand::Rng::random_bool(rng, 0.5) {
        generator.expression(rng, scope)
    } else {
        generator.predicate(rng, scope)
    };
    vec![SelectItem::Expr { expr, alias: None }]
}

/// How many generated queries (`items` over a generated FROM clause)
/// printed each clause, over a fixed set of seeded databases; panics on an
/// unexpected error.
fn clauses_run(
    clauses: &[&str],
    items: fn(&mut dyn QueryGenerator, &mut Rng, &Scope) -> Vec<SelectItem>,
) -> Vec<usize> {
    let provider = DuckDbProvider::new(None).expect("run tests/engines.sh first");
    let mut seen = vec![0; clauses.len()];
    for k in 0..25 {
        let id = DatabaseId {
            run: "derived".into(),
            thread: 0,
            index: k,
        };
        let conn = provider.create_database(&id).unwrap().conn;
        let mut session = Session::new(conn, DIALECT, provider.expected_errors());
        let mut rng = database_rng(31, 0, k);
        let Ok(generated) = provider.populate(&mut rng, &mut session) else {
            continue;
        };
        let mut generator = generated.query_generator();
        for _ in 0..120 {
            let (from, scope) = generator.from_clause(&mut rng);
            let query = Query::select(Select {
                items: items(&mut *generator, &mut rng, &scope),
                from: Some(from),
                ..Select::default()
            });
            let sql = query.to_sql(DIALECT);
            let printed: Vec<bool> = clauses.iter().map(|c| sql.contains(c)).collect();
            if !printed.contains(&true) {
                continue;
            }
            match session.query(&query) {
                Ok(_) | Err(ExecError::Expected(_)) => {}
                Err(e) => panic!("{e}"),
            }
            for (n, p) in seen.iter_mut().zip(printed) {
                *n += usize::from(p);
            }
        }
    }
    seen
}

/// QUALIFY filters by window calls the window determines (see
/// `ExactAggregates::qualify`), over listed items and `* EXCLUDE`.
#[test]
fn derived_tables_with_qualify_run() {
    let seen = clauses_run(&[" QUALIFY "], everything);
    assert!(seen[0] >= 20, "{seen:?}");
}

/// GROUP BY ALL over exact keys and aggregates (see the server toolkit's
/// `QueryCore::grouped`), never with QUALIFY, which DuckDB 1.5 refuses
/// beside it.
#[test]
fn derived_tables_grouped_by_all_run() {
    let seen = clauses_run(&[" GROUP BY ALL", " GROUP BY ALL HAVING "], everything);
    assert!(seen[0] >= 20 && seen[1] >= 3, "{seen:?}");
}

/// `* REPLACE (e AS c)`: every column of the relation, some computed.
#[test]
fn derived_tables_with_replaced_columns_run() {
    let seen = clauses_run(&["* REPLACE ("], everything);
    // 17 over the seeded databases since ASOF joins and nested columns
    // came in: the floor says they are drawn, not how often.
    assert!(seen[0] >= 10, "{seen:?}");
}

/// List functions over scalars (see `lancet_duckdb::lists`) in select
/// items and predicates.
#[test]
fn list_functions_run() {
    let seen = clauses_run(&["list_value("], expression_or_predicate);
    assert!(seen[0] >= 50, "{seen:?}");
}

/// Integer lists as values of their own (see `lancet_duckdb::lists`):
/// list expressions in select items (read back as text) and predicates
/// (compared, in IN lists).
#[test]
fn integer_list_expressions_run() {
    let seen = clauses_run(
        &[
            "list_concat(",
            "list_append(",
            "list_prepend(",
            "list_slice(",
        ],
        expression_or_predicate,
    );
    assert!(seen.iter().all(|n| *n >= 5), "{seen:?}");
}

/// ASOF and ASOF LEFT joins over a right side of its keys only (see
/// `lancet_server::QueryCore::asof_join`) are drawn, and DuckDB runs them.
#[test]
fn asof_joins_run() {
    let seen = clauses_run(&[" ASOF JOIN ", " ASOF LEFT JOIN "], everything);
    assert!(seen.iter().all(|n| *n >= 20), "{seen:?}");
}

/// Structs of two integer fields (see `lancet_duckdb::structs`): built,
/// compared and read back by field.
#[test]
fn struct_expressions_run() {
    let seen = clauses_run(&["AS STRUCT(", "struct_extract("], expression_or_predicate);
    assert!(seen.iter().all(|n| *n >= 5), "{seen:?}");
}

/// Maps from integers to integers (see `lancet_duckdb::maps`): built from
/// constant keys, compared, and read back by size, keys, values and
/// membership.
#[test]
fn map_expressions_run() {
    let seen = clauses_run(
        &[
            "AS MAP(",
            "cardinality(",
            "map_keys(",
            "map_values(",
            "map_contains(",
        ],
        expression_or_predicate,
    );
    // `map_keys` and `map_values` are one draw of two, a few of each.
    let (keys_or_values, others) = (seen[2] + seen[3], [seen[0], seen[1], seen[4]]);
    assert!(
        keys_or_values >= 4 && others.iter().all(|n| *n >= 3),
        "{seen:?}"
    );
}

/// POSITIONAL joins, only as the first join and of two base tables (see
/// `lancet_server::JoinMenu::positional`), are drawn, and DuckDB runs
/// them.
#[test]
fn positional_joins_run() {
    let seen = clauses_run(&[" POSITIONAL JOIN "], everything);
    assert!(seen[0] >= 20, "{seen:?}");
}
