//! Fills a fresh database: tables (plain, inheriting, partitioned by range,
//! list or hash), indexes (btree with DESC/NULLS FIRST, hash, partial, on
//! expressions, INCLUDE), views, extended statistics, rows (INSERT with ON
//! CONFLICT, UPDATE, DELETE), ANALYZE, VACUUM and planner settings.
//!
//! DDL and DML are printed here as text (PostgreSQL's DDL is wider than
//! the core tree); every expression in them comes from [`ExprGen`]. Rows
//! are written in [`dml`], views in [`views`], Citus' twin tables in
//! [`twins`]; tables, indexes and statistics here.

use crate::expr::{ExprGen, TypedColumn};
use crate::schema::{PgSchema, PgTable, Placement};
use crate::types::{literal, Category, PgType};
use crate::Flavor;
use lancet_core::schema::RelationKind;
use lancet_core::{BinaryOp, ExecError, Expr, Rng, Session, StatementKind, ToSql, TWIN_SCHEMA};
use rand::seq::IndexedRandom;
use rand::Rng as _;

mod dml;
mod twins;
mod views;
use dml::{delete, insert, insert_select, update};
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
                let t = writable(rng, &schema).map(|t| t.name.clone());
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

fn writable<'a>(rng: &mut Rng, schema: &'a PgSchema) -> Option<&'a PgTable> {
    let tables: Vec<&PgTable> = schema.relations.iter().filter(|t| t.writable).collect();
    tables.choose(rng).copied()
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

/// Creates table `t{i}`, with its partitions if it is partitioned, and adds
/// what succeeded to the schema.
fn create_table(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &mut PgSchema,
    i: usize,
    flavor: &dyn Flavor,
) -> Result<(), ExecError> {
    let name = format!("t{i}");
    let shape = TableShape::draw(rng, schema, flavor);
    let n = rng.random_range(1..=5);
    let mut cols = TableColumns::inherited(shape.parent.as_ref());
    for k in 0..n {
        cols.declare(rng, schema, &shape, k);
    }
    let primary_key = cols.table_constraints(rng, schema, &shape);
    let mut stmt = format!("CREATE TABLE {name} ({})", cols.defs.join(", "));
    if let Some(p) = &shape.parent {
        stmt.push_str(&format!(" INHERITS ({})", p.name));
    }
    let method = rng.random_range(0..3);
    if shape.partitioned {
        stmt.push_str(match method {
            0 => " PARTITION BY RANGE (c0)",
            1 => " PARTITION BY LIST (c0)",
            _ => " PARTITION BY HASH (c0)",
        });
    }
    if !out.run(StatementKind::CreateTable, stmt)? {
        return Ok(());
    }
    // The parent's unique columns are no longer unique over the rows its
    // name reads (the child's rows join them).
    if let Some(p) = &shape.parent {
        if let Some(t) = schema.relations.iter_mut().find(|t| t.name == p.name) {
            t.facts.unique.clear();
        }
    }
    let mut table = PgTable {
        name,
        columns: cols.all,
        kind: RelationKind::Table,
        insertable: cols.insertable,
        primary_key,
        writable: true,
        inheritable: !shape.partitioned && shape.placement == Placement::Plain,
        placement: shape.placement,
        twin: None,
        facts: cols.facts,
    };
    // The placement call concerns these tables only, not their twins.
    table.placement = flavor.after_create_table(out.session(), schema, &table)?;
    // A partition reads as its parent does, without its keys and facts.
    let partition = shape.partitioned.then(|| PgTable {
        primary_key: None,
        inheritable: false,
        facts: Default::default(),
        ..table.clone()
    });
    schema.relations.push(table);
    if let Some(partition) = partition {
        create_partitions(out, schema, method, &partition)?;
    }
    Ok(())
}

/// What a new table is before its columns: partitioned or a child of an
/// earlier table (or neither), and where its rows go (Citus).
struct TableShape {
    partitioned: bool,
    parent: Option<PgTable>,
    /// The number of its first own column (the parent's come first).
    first_own: usize,
    placement: Placement,
    /// Whether its rows are spread over the workers by its first own column.
    distributed: bool,
    /// The type the placement requires of its first own column, if any.
    first_type: Option<PgType>,
}

impl TableShape {
    /// Draws a shape among those the flavor supports.
    fn draw(rng: &mut Rng, schema: &PgSchema, flavor: &dyn Flavor) -> TableShape {
        let features = flavor.features();
        let parents: Vec<PgTable> = schema
            .relations
            .iter()
            .filter(|t| t.inheritable)
            .cloned()
            .collect();
        let shape = rng.random_range(0..100);
        let partitioned = features.partitioning && shape < 20;
        let parent = if features.inheritance && (20..30).contains(&shape) {
            parents.choose(rng).cloned()
        } else {
            None
        };
        let first_own = parent.as_ref().map_or(0, |p| p.columns.len());
        // Where the table goes decides which constraints it may have (Citus:
        // unique keys must include the distribution column, its first own).
        let (placement, first_type) = flavor.place(
            rng,
            schema,
            &format!("c{first_own}"),
            partitioned,
            parent.is_some(),
        );
        let distributed = placement.is_distributed();
        TableShape {
            partitioned,
            parent,
            first_own,
            placement,
            distributed,
            first_type,
        }
    }
}

/// The columns of a new table as its CREATE TABLE declares them, and what
/// the schema must know of them.
struct TableColumns {
    /// Its own columns (not inherited).
    own: Vec<(String, PgType)>,
    /// The definitions of its own columns, then its table constraints.
    defs: Vec<String>,
    /// The columns a new row may be given, inherited ones first.
    insertable: Vec<String>,
    /// Every column, inherited ones first.
    all: Vec<(String, PgType)>,
    facts: crate::schema::ColumnFacts,
}

impl TableColumns {
    /// The columns a table starts with: its parent's, if it has one. A
    /// child inherits its parent's NOT NULL and virtual columns, not its
    /// unique constraints.
    fn inherited(parent: Option<&PgTable>) -> TableColumns {
        TableColumns {
            own: Vec::new(),
            defs: Vec::new(),
            insertable: parent.map(|p| p.insertable.clone()).unwrap_or_default(),
            all: parent.map(|p| p.columns.clone()).unwrap_or_default(),
            facts: crate::schema::ColumnFacts {
                unique: Vec::new(),
                ..parent.map(|p| p.facts.clone()).unwrap_or_default()
            },
        }
    }

    /// Declares own column `k`: its type, whether it is generated, and its
    /// column constraints.
    fn declare(&mut self, rng: &mut Rng, schema: &PgSchema, shape: &TableShape, k: usize) {
        let cname = format!("c{}", shape.first_own + k);
        let ty = if shape.partitioned && k == 0 {
            PgType::from_name("integer")
        } else if let (0, Some(t)) = (k, &shape.first_type) {
            t.clone()
        } else {
            PgType::random(rng)
        };
        let mut def = format!("{cname} {}", ty.name);
        let generated = k > 0 && rng.random_bool(0.1);
        if generated {
            let clause = self.generation(rng, schema, shape.partitioned, &cname, &ty);
            def.push_str(&clause);
        } else {
            self.insertable.push(cname.clone());
        }
        let constraints = self.column_constraints(rng, shape, k, generated, &cname, &ty);
        def.push_str(&constraints);
        self.defs.push(def);
        self.own.push((cname.clone(), ty.clone()));
        self.all.push((cname, ty));
    }

    /// The GENERATED clause of column `cname`: an expression over the own
    /// columns before it that take values, stored or virtual.
    fn generation(
        &mut self,
        rng: &mut Rng,
        schema: &PgSchema,
        partitioned: bool,
        cname: &str,
        ty: &PgType,
    ) -> String {
        let cat = ty.category;
        let base: Vec<TypedColumn> = self
            .own
            .iter()
            .filter(|(c, _)| self.insertable.contains(c))
            .map(|(c, t)| TypedColumn {
                expr: Expr::column(None, c),
                category: t.category,
            })
            .collect();
        let mut g = ExprGen::new(schema, false);
        let e = if DDL_CATEGORIES.contains(&cat) {
            g.expr(rng, &base, cat, 2)
        } else {
            literal(rng, cat)
        };
        // PostgreSQL 18: virtual columns, expanded into every query
        // that reads them (not in partitioned tables here: a partition
        // must declare them as its parent does). Only of types without
        // a length or precision: a value that does not fit fails the
        // query that reads it (22001), where a stored one fails the
        // INSERT.
        let is_virtual = schema.features.virtual_generated_columns
            && !partitioned
            && !ty.name.contains('(')
            && rng.random_bool(0.5);
        if is_virtual {
            self.facts.virtual_generated.push(cname.to_string());
            format!(" GENERATED ALWAYS AS ({}) VIRTUAL", sql(&e))
        } else {
            format!(" GENERATED ALWAYS AS ({}) STORED", sql(&e))
        }
    }

    /// The column constraints of own column `k` (COLLATE, NOT NULL,
    /// DEFAULT, UNIQUE), as far as its table's placement allows them.
    fn column_constraints(
        &mut self,
        rng: &mut Rng,
        shape: &TableShape,
        k: usize,
        generated: bool,
        cname: &str,
        ty: &PgType,
    ) -> String {
        let mut def = String::new();
        let distributed = shape.distributed;
        // Co-located distribution columns must have one collation.
        if ty.category == Category::Text && !(distributed && k == 0) && rng.random_bool(0.2) {
            def.push_str(if rng.random_bool(0.5) {
                " COLLATE \"C\""
            } else {
                " COLLATE \"POSIX\""
            });
        }
        if rng.random_bool(0.15) {
            def.push_str(" NOT NULL");
            self.facts.not_null.push(cname.to_string());
        }
        // A distributed row needs a value in its distribution column.
        let distribution_column = distributed && k == 0;
        if !generated && !distribution_column && rng.random_bool(0.2) {
            def.push_str(&format!(" DEFAULT {}", sql(&literal(rng, ty.category))));
        }
        if !shape.partitioned && (!distributed || distribution_column) && rng.random_bool(0.1) {
            if self.facts.virtual_generated.iter().any(|c| c == cname) {
                // PostgreSQL refuses unique constraints on virtual columns.
            } else {
                def.push_str(" UNIQUE");
                self.facts.unique.push(cname.to_string());
            }
        }
        def
    }

    /// Adds the table constraints: a PRIMARY KEY on the first own column
    /// (returned, for ON CONFLICT) and a CHECK.
    fn table_constraints(
        &mut self,
        rng: &mut Rng,
        schema: &PgSchema,
        shape: &TableShape,
    ) -> Option<String> {
        let mut primary_key = None;
        if !shape.partitioned && shape.parent.is_none() && rng.random_bool(0.4) {
            let pk = self.own[0].0.clone();
            self.defs.push(format!("PRIMARY KEY ({pk})"));
            self.facts.unique.push(pk.clone());
            self.facts.not_null.push(pk.clone());
            primary_key = Some(pk);
        }
        if rng.random_bool(0.25) {
            let own: Vec<TypedColumn> = self
                .all
                .iter()
                .filter(|(_, t)| DDL_CATEGORIES.contains(&t.category))
                .map(|(c, t)| TypedColumn {
                    expr: Expr::column(None, c),
                    category: t.category,
                })
                .collect();
            // Lenient: `p OR q` rejects a row only where both are false (a
            // random predicate alone is often false on every row, or constant,
            // and leaves the table empty); a share stays strict.
            let mut g = ExprGen::new(schema, false);
            let mut check = g.predicate(rng, &own, 1);
            if rng.random_bool(0.8) {
                check = Expr::binary(BinaryOp::Or, check, g.predicate(rng, &own, 1));
            }
            self.defs.push(format!("CHECK ({})", sql(&check)));
        }
        primary_key
    }
}

/// Creates the partitions of table `parent`, partitioned by `method` (0:
/// range, 1: list, else hash); each that succeeds is `parent` under its
/// own name in the schema.
fn create_partitions(
    out: &mut Out<'_, '_>,
    schema: &mut PgSchema,
    method: i32,
    parent: &PgTable,
) -> Result<(), ExecError> {
    let name = &parent.name;
    let bounds: Vec<&str> = match method {
        0 => vec!["FROM (MINVALUE) TO (0)", "FROM (0) TO (5)", "DEFAULT"],
        1 => vec!["IN (0, 1, 2)", "IN (3, 4, NULL)", "DEFAULT"],
        _ => vec![
            "WITH (MODULUS 2, REMAINDER 0)",
            "WITH (MODULUS 2, REMAINDER 1)",
        ],
    };
    for (k, bound) in bounds.iter().enumerate() {
        let part = format!("{name}_p{k}");
        let for_values = if *bound == "DEFAULT" {
            "DEFAULT".to_string()
        } else {
            format!("FOR VALUES {bound}")
        };
        let stmt = format!("CREATE TABLE {part} PARTITION OF {name} {for_values}");
        if out.run(StatementKind::CreateTable, stmt)? {
            schema.relations.push(PgTable {
                name: part,
                ..parent.clone()
            });
        }
    }
    Ok(())
}

fn create_index(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &PgSchema,
    i: usize,
) -> Result<(), ExecError> {
    let Some(t) = writable(rng, schema) else {
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
    let Some(t) = writable(rng, schema) else {
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
