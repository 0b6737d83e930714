//! Fills a fresh database: tables (plain, inheriting, partitioned by range,
//! list or hash), indexes (btree with DESC/NULLS FIRST, hash, partial, on
//! expressions, INCLUDE), views, extended statistics, rows (INSERT with ON
//! CONFLICT, UPDATE, DELETE), ANALYZE, VACUUM and planner settings.
//!
//! DDL and DML are printed here as text (PostgreSQL's DDL is wider than
//! the core tree); every expression in them comes from [`ExprGen`]. Tables
//! are drawn in [`tables`], rows written in [`dml`], views in [`views`],
//! Citus' twin tables in [`twins`]; indexes and statistics here.

use crate::expr::{ExprGen, TypedColumn};
use crate::schema::{PgSchema, PgTable, Placement};
use crate::types::{literal, Category, PgType};
use crate::Flavor;
use lancet_core::schema::RelationKind;
use lancet_core::{BinaryOp, ExecError, Expr, Rng, Session, StatementKind, ToSql, TWIN_SCHEMA};
use lancet_server::populate::random_table;
use rand::seq::IndexedRandom;
use rand::Rng as _;

mod dml;
mod tables;
mod twins;
mod views;
use dml::{delete, insert, insert_select, update};
use tables::create_table;
mod sample;
use sample::sample_values;
use twins::write_twins;
pub use twins::{qualify, twin_statements};
use views::create_view;
#[cfg(test)]
use views::is_row_constant;

fn sql(e: &Expr) -> String {
    e.to_sql(crate::dialect::DIALECT)
}

/// Runs the statements that build a database, and remembers those that
/// succeeded so that the twins can be written by the same statements.
pub struct Out<'s, 'e> {
    session: &'s mut Session<'e>,
    /// Statements to repeat on the twins; `None` if the flavor keeps none.
    twin_log: Option<Vec<(StatementKind, String)>>,
}

impl<'e> Out<'_, 'e> {
    /// Runs one statement; `Ok(false)` if it failed with an expected error.
    pub fn run(&mut self, kind: StatementKind, sql: String) -> Result<bool, ExecError> {
        let done = self.session.execute_sql(kind, sql.clone())?;
        if done && kind != StatementKind::Setting {
            if let Some(log) = &mut self.twin_log {
                log.push((kind, sql));
            }
        }
        Ok(done)
    }

    /// The session itself, for statements that concern the primary tables
    /// only (Citus's placement calls).
    pub fn session(&mut self) -> &mut Session<'e> {
        self.session
    }
}

/// Generates and runs the statements that build one database.
pub fn populate(
    rng: &mut Rng,
    session: &mut Session,
    flavor: &dyn Flavor,
    server: &crate::ServerProfile,
) -> Result<PgSchema, ExecError> {
    let features = flavor.features();
    let mut version = server.features();
    version.virtual_generated_columns &= features.virtual_generated_columns;
    let mut schema = PgSchema {
        features: version,
        ..PgSchema::default()
    };
    for stmt in flavor.session_setup() {
        session.execute_sql(StatementKind::Setting, stmt)?;
    }
    let mut out = Out {
        session,
        twin_log: flavor.keeps_twins().then(Vec::new),
    };
    let out = &mut out;
    let tables = rng.random_range(2..=4);
    for i in 0..tables {
        create_table(rng, out, &mut schema, i, flavor)?;
    }
    let mut index_no = 0;
    let mut view_no = 0;
    let mut stats_no = 0;
    let mut stats_names = Vec::new();
    // Small tables: a three-way join with correlated subqueries over a few
    // hundred rows already takes a second.
    let steps = rng.random_range(6..16);
    for _ in 0..steps {
        match rng.random_range(0..100) {
            0..38 => insert(rng, out, &schema)?,
            38..45 => insert_select(rng, out, &schema)?,
            45..55 => update(rng, out, &schema)?,
            55..60 => delete(rng, out, &schema)?,
            60..75 => {
                create_index(rng, out, &schema, index_no)?;
                index_no += 1;
            }
            75..82 if features.views => {
                create_view(rng, out, &mut schema, view_no)?;
                view_no += 1;
            }
            82..86 => {
                let t = random_table(rng, &schema).map(|t| t.name.clone());
                if let Some(t) = t {
                    let stmt = if rng.random_bool(0.5) {
                        format!("ANALYZE {t}")
                    } else {
                        format!("VACUUM {t}")
                    };
                    out.run(StatementKind::Maintenance, stmt)?;
                }
            }
            86..90 => {
                if let Some(name) = statistics(rng, out, &schema, stats_no)? {
                    stats_names.push(name);
                }
                stats_no += 1;
            }
            90..95 => {
                let name = server
                    .planner
                    .switches
                    .choose(rng)
                    .map_or("enable_seqscan", String::as_str);
                out.run(StatementKind::Setting, format!("SET {name} = off"))?;
            }
            _ => {
                out.run(StatementKind::Maintenance, "ANALYZE".to_string())?;
            }
        }
    }
    // Most data goes in after the indexes, some before: both paths are
    // tested. A few inserts per table, so that most tables hold rows (an
    // insert whose one row breaks a constraint adds none): queries over
    // empty tables check little.
    for _ in 0..rng.random_range(4..8) * tables {
        insert(rng, out, &schema)?;
    }
    if let Some(log) = out.twin_log.take() {
        write_twins(out, &mut schema, &stats_names, log)?;
    }
    sample_values(out.session, &mut schema)?;
    Ok(schema)
}

/// Categories allowed in DDL expressions (CHECK, GENERATED, index
/// expressions must be immutable: no dates, whose text form depends on
/// settings).
const DDL_CATEGORIES: [Category; 4] = [
    Category::Int,
    Category::Numeric,
    Category::Text,
    Category::Bool,
];

fn create_index(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &PgSchema,
    i: usize,
) -> Result<(), ExecError> {
    let Some(t) = random_table(rng, schema) else {
        return Ok(());
    };
    let name = format!("i{i}");
    let indexable = t.indexable_columns();
    let cols: Vec<TypedColumn> = t
        .bare_columns()
        .into_iter()
        .filter(|c| {
            indexable
                .iter()
                .any(|(n, _)| c.expr == Expr::column(None, n))
        })
        .collect();
    if indexable.is_empty() {
        return Ok(());
    }
    if rng.random_bool(0.15) {
        let Some((c, _)) = indexable.choose(rng) else {
            return Ok(());
        };
        let stmt = format!("CREATE INDEX {name} ON {} USING hash ({c})", t.name);
        out.run(StatementKind::CreateIndex, stmt)?;
        return Ok(());
    }
    let n = rng.random_range(1..=3.min(indexable.len()).max(1));
    // Index expressions and predicates must be immutable: DDL categories only.
    let ddl: Vec<TypedColumn> = cols
        .iter()
        .filter(|c| DDL_CATEGORIES.contains(&c.category))
        .cloned()
        .collect();
    let mut keys = Vec::new();
    for _ in 0..n {
        let mut key = if rng.random_bool(0.25) {
            let cat = *DDL_CATEGORIES.choose(rng).unwrap_or(&Category::Int);
            let mut g = ExprGen::new(schema, false);
            format!("({})", sql(&g.expr(rng, &ddl, cat, 2)))
        } else {
            indexable
                .choose(rng)
                .map(|(c, _)| c.clone())
                .unwrap_or_default()
        };
        if rng.random_bool(0.3) {
            key.push_str(" DESC");
        }
        if rng.random_bool(0.2) {
            key.push_str(if rng.random_bool(0.5) {
                " NULLS FIRST"
            } else {
                " NULLS LAST"
            });
        }
        keys.push(key);
    }
    let unique = rng.random_bool(0.2);
    let mut stmt = format!(
        "CREATE {}INDEX {name} ON {} ({})",
        if unique { "UNIQUE " } else { "" },
        t.name,
        keys.join(", ")
    );
    if rng.random_bool(0.2) {
        if let Some((c, _)) = indexable.choose(rng) {
            stmt.push_str(&format!(" INCLUDE ({c})"));
        }
    }
    if rng.random_bool(0.25) {
        let mut g = ExprGen::new(schema, false);
        stmt.push_str(&format!(" WHERE {}", sql(&g.predicate(rng, &ddl, 2))));
    }
    out.run(StatementKind::CreateIndex, stmt)?;
    Ok(())
}

fn statistics(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &PgSchema,
    i: usize,
) -> Result<Option<String>, ExecError> {
    let Some(t) = random_table(rng, schema) else {
        return Ok(None);
    };
    let indexable = t.indexable_columns();
    if indexable.len() < 2 {
        return Ok(None);
    }
    let a = &indexable[0].0;
    let b = &indexable[1].0;
    let kinds = *["", " (ndistinct)", " (dependencies)", " (mcv)"]
        .choose(rng)
        .unwrap_or(&"");
    let name = format!("st{i}_{}", t.name);
    let stmt = format!(
        "CREATE STATISTICS {name}{kinds} ON {a}, {b} FROM {}",
        t.name
    );
    Ok(out.run(StatementKind::Maintenance, stmt)?.then_some(name))
}

/// A literal that is not NULL.
fn non_null_literal(rng: &mut Rng, category: Category) -> Expr {
    for _ in 0..16 {
        let e = literal(rng, category);
        if !matches!(&e, Expr::Cast { expr, .. } if matches!(**expr, Expr::Literal(lancet_core::Value::Null)))
        {
            return e;
        }
    }
    match category {
        Category::Int | Category::Numeric | Category::Float => Expr::int(0),
        Category::Bool => Expr::Literal(lancet_core::Value::Boolean(false)),
        Category::Date => Expr::Literal(lancet_core::Value::Text("2020-01-01".into())),
        _ => Expr::Literal(lancet_core::Value::Text(String::new())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualify_names_tables_views_and_statistics_but_not_literals_or_columns() {
        let names: Vec<String> = ["t0", "t1", "v0", "st0_t1"].map(String::from).to_vec();
        assert_eq!(
            qualify(
                "CREATE VIEW v0 AS SELECT a0.c0, 't0' AS c1, \"t1\" FROM t0 AS a0 JOIN t1 USING (c0)",
                &names,
                "lancet_twin"
            ),
            "CREATE VIEW lancet_twin.v0 AS SELECT a0.c0, 't0' AS c1, \"t1\" \
             FROM lancet_twin.t0 AS a0 JOIN lancet_twin.t1 USING (c0)"
        );
        assert_eq!(
            qualify(
                "CREATE STATISTICS st0_t1 (mcv) ON c0, c1 FROM t1",
                &names,
                "s"
            ),
            "CREATE STATISTICS s.st0_t1 (mcv) ON c0, c1 FROM s.t1"
        );
        // Already qualified names, dotted column references, words that
        // merely start with a table's name, and '' inside literals.
        assert_eq!(
            qualify(
                "UPDATE t0 SET c0 = 'it''s t0' WHERE t0.c0 = t01.c0 AND x.t0 IS NULL",
                &names,
                "s"
            ),
            "UPDATE s.t0 SET c0 = 'it''s t0' WHERE t0.c0 = t01.c0 AND x.t0 IS NULL"
        );
    }

    #[test]
    fn twin_statements_copy_ddl_and_dml_but_not_settings_or_citus_calls() {
        let base: Vec<String> = [
            "SET citus.enable_repartition_joins = on",
            "CREATE TABLE t1 (c0 INTEGER)",
            "SELECT create_distributed_table('t1', 'c0')",
            "CREATE VIEW v0 AS SELECT a0.c0 AS c0 FROM t1 AS a0",
            "INSERT INTO t1 (c0) VALUES (0), (1)",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            twin_statements(&base),
            [
                "CREATE SCHEMA lancet_twin",
                "CREATE TABLE lancet_twin.t1 (c0 INTEGER)",
                "CREATE VIEW lancet_twin.v0 AS SELECT a0.c0 AS c0 FROM lancet_twin.t1 AS a0",
                "INSERT INTO lancet_twin.t1 (c0) VALUES (0), (1)",
            ]
        );
    }

    #[test]
    fn row_constants_hold_no_column_and_no_subquery() {
        assert!(is_row_constant(&Expr::int(-2147483647)));
        assert!(is_row_constant(&Expr::func(
            "abs",
            vec![Expr::Unary {
                op: lancet_core::UnaryOp::Neg,
                expr: Box::new(Expr::int(3)),
            }]
        )));
        assert!(!is_row_constant(&Expr::func(
            "abs",
            vec![Expr::column(Some("a0"), "c0")]
        )));
    }
}
