//! INSERT, UPDATE and DELETE, maintenance (ANALYZE, REINDEX, VACUUM) and
//! the PRAGMAs that change how SQLite plans queries.
//!
//! Values come from the same small pools as query literals, so data and
//! predicates meet. Keyed columns draw from a wider range so that UNIQUE
//! and PRIMARY KEY constraints do not reject most rows. Rowid aliases get
//! only small integers or NULL: a rowid of i64::MAX would make SQLite pick
//! *random* rowids for later rows, and the database would no longer follow
//! from its seed. UPDATE assignments are shallow so values cannot grow
//! over repeated updates.

use crate::expr_gen::ExprGen;
use crate::literals;
use crate::schema_gen::TableModel;
use crate::statements::{Delete, Insert, OnConflict, Statement, Update};
use lancet_core::{Expr, Rng, Schema, Value};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// Mostly OR IGNORE: one bad row of a plain multi-row INSERT rejects all of them.
fn conflict_clause(rng: &mut Rng) -> Option<OnConflict> {
    match rng.random_range(0..100) {
        0..25 => None,
        25..80 => Some(OnConflict::Ignore),
        80..85 => Some(OnConflict::Abort),
        _ => Some(OnConflict::Replace),
    }
}

/// A value for column `i` of `table` in a new or updated row.
fn column_value(rng: &mut Rng, exprs: &mut ExprGen, table: &TableModel, i: usize) -> Expr {
    let c = &table.columns[i];
    if c.rowid_alias {
        return if rng.random_bool(0.2) {
            Expr::Literal(Value::Null)
        } else {
            Expr::int(rng.random_range(-5..=60))
        };
    }
    if c.keyed && rng.random_bool(0.5) {
        return Expr::int(rng.random_range(-20..=200));
    }
    if rng.random_bool(0.05) {
        // A constant expression rather than a literal.
        return exprs.expression(rng, &[], 1, 0);
    }
    let mut value = literals::literal(rng, Some(c.affinity));
    if c.not_null && value.is_null() && rng.random_bool(0.8) {
        value = literals::literal(rng, Some(c.affinity));
    }
    Expr::Literal(value)
}

/// An INSERT of `rows` rows into `table` (rarely DEFAULT VALUES).
pub fn insert(
    rng: &mut Rng,
    schema: &Schema,
    version: i32,
    table: &TableModel,
    rows: usize,
) -> Insert {
    let mut exprs = ExprGen::new(schema, version);
    let writable: Vec<usize> = (0..table.columns.len())
        .filter(|&i| !table.columns[i].generated)
        .collect();
    if rng.random_bool(0.02) {
        return Insert {
            table: table.name.clone(),
            or: conflict_clause(rng),
            columns: vec![],
            rows: vec![],
        };
    }
    // Mostly every writable column; sometimes leave out those that may be
    // omitted (nullable or defaulted), to exercise defaults and NULLs.
    let chosen: Vec<usize> = if rng.random_bool(0.75) {
        writable.clone()
    } else {
        let some: Vec<usize> = writable
            .iter()
            .copied()
            .filter(|&i| {
                let c = &table.columns[i];
                (c.not_null && !c.has_default) || rng.random_bool(0.6)
            })
            .collect();
        if some.is_empty() {
            writable.clone()
        } else {
            some
        }
    };
    let all_columns = chosen.len() == table.columns.len();
    let columns = if all_columns && rng.random_bool(0.3) {
        vec![]
    } else {
        chosen
            .iter()
            .map(|&i| table.columns[i].name.clone())
            .collect()
    };
    let rows = (0..rows.max(1))
        .map(|_| {
            chosen
                .iter()
                .map(|&i| column_value(rng, &mut exprs, table, i))
                .collect()
        })
        .collect();
    Insert {
        table: table.name.clone(),
        or: conflict_clause(rng),
        columns,
        rows,
    }
}

/// An UPDATE of one or two columns of `table`, mostly with a WHERE clause.
pub fn update(rng: &mut Rng, schema: &Schema, version: i32, table: &TableModel) -> Option<Update> {
    let mut exprs = ExprGen::new(schema, version);
    let scope = table.scope(Some(&table.name));
    let writable: Vec<usize> = (0..table.columns.len())
        .filter(|&i| !table.columns[i].generated)
        .collect();
    let n = rng.random_range(1..=2).min(writable.len());
    let assignments = writable
        .choose_multiple(rng, n)
        .map(|&i| {
            let c = &table.columns[i];
            let value = if c.rowid_alias {
                // NULL would be a datatype mismatch here.
                Expr::int(rng.random_range(-5..=60))
            } else if rng.random_bool(0.5) {
                column_value(rng, &mut exprs, table, i)
            } else {
                // One level deep: repeated updates cannot blow values up.
                exprs.expression(rng, &scope, 1, 0)
            };
            (c.name.clone(), value)
        })
        .collect::<Vec<_>>();
    if assignments.is_empty() {
        return None;
    }
    Some(Update {
        table: table.name.clone(),
        or: conflict_clause(rng),
        assignments,
        selection: rng
            .random_bool(0.9)
            .then(|| exprs.predicate(rng, &scope, 2, 1)),
    })
}

/// A DELETE whose WHERE clause is a conjunction, so that it seldom
/// empties the table.
pub fn delete(rng: &mut Rng, schema: &Schema, version: i32, table: &TableModel) -> Delete {
    let mut exprs = ExprGen::new(schema, version);
    let scope = table.scope(Some(&table.name));
    let p = exprs.predicate(rng, &scope, 1, 1);
    let q = exprs.predicate(rng, &scope, 1, 0);
    Delete {
        table: table.name.clone(),
        selection: Some(Expr::and(p, q)),
    }
}

/// ANALYZE, REINDEX or VACUUM, on everything or on one object.
pub fn maintenance(rng: &mut Rng, schema: &Schema) -> Statement {
    let table = schema
        .tables()
        .collect::<Vec<_>>()
        .choose(rng)
        .map(|t| t.name.clone());
    match rng.random_range(0..100) {
        0..45 => Statement::Analyze(if rng.random_bool(0.5) { table } else { None }),
        45..75 => {
            let target = match rng.random_range(0..4) {
                0 => table,
                1 => schema.indexes.choose(rng).map(|i| i.name.clone()),
                // REINDEX of a collation rebuilds every index that uses it.
                2 => Some(
                    ["BINARY", "NOCASE", "RTRIM"]
                        .choose(rng)
                        .unwrap_or(&"NOCASE")
                        .to_string(),
                ),
                _ => None,
            };
            Statement::Reindex(target)
        }
        _ => Statement::Vacuum,
    }
}

/// A PRAGMA that changes query planning but not results.
pub fn planner_pragma(rng: &mut Rng) -> Statement {
    let (name, value): (&str, String) = match rng.random_range(0..7) {
        0 => ("automatic_index", bool_value(rng)),
        1 => ("reverse_unordered_selects", bool_value(rng)),
        2 => (
            "cache_size",
            [-2000i64, 0, 1, 10, 100, 10000]
                .choose(rng)
                .unwrap_or(&-2000)
                .to_string(),
        ),
        3 => (
            "analysis_limit",
            [0i64, 1, 10, 100, 1000]
                .choose(rng)
                .unwrap_or(&0)
                .to_string(),
        ),
        4 => ("temp_store", rng.random_range(0..=2).to_string()),
        5 => ("secure_delete", bool_value(rng)),
        _ => ("cell_size_check", bool_value(rng)),
    };
    Statement::Pragma {
        name: name.to_string(),
        value,
    }
}

/// PRAGMAs that must come before any table: LIKE's case sensitivity (a
/// LIKE in a CHECK or index would otherwise see two meanings) and the page size.
pub fn initial_pragma(rng: &mut Rng) -> Statement {
    if rng.random_bool(0.5) {
        Statement::Pragma {
            name: "case_sensitive_like".into(),
            value: bool_value(rng),
        }
    } else {
        Statement::Pragma {
            name: "page_size".into(),
            value: [512i64, 1024, 4096, 65536]
                .choose(rng)
                .unwrap_or(&4096)
                .to_string(),
        }
    }
}

fn bool_value(rng: &mut Rng) -> String {
    if rng.random_bool(0.5) { "1" } else { "0" }.to_string()
}
