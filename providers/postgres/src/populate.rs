//! Fills a fresh database: tables (plain, inheriting, partitioned by range,
//! list or hash), indexes (btree with DESC/NULLS FIRST, hash, partial, on
//! expressions, INCLUDE), views, extended statistics, rows (INSERT with ON
//! CONFLICT, UPDATE, DELETE), ANALYZE, VACUUM and planner settings.
//!
//! DDL and DML are printed here as text (PostgreSQL's DDL is wider than
//! the core tree); every expression in them comes from [`ExprGen`].

use crate::expr::{ExprGen, TypedColumn};
use crate::schema::{PgSchema, PgTable};
use crate::types::{literal, Category, PgType};
use crate::Flavor;
use lancet_core::schema::RelationKind;
use lancet_core::{ExecError, Expr, Rng, Session, StatementKind, ToSql};
use rand::seq::IndexedRandom;
use rand::Rng as _;

fn sql(e: &Expr) -> String {
    e.to_sql(crate::dialect::DIALECT)
}

/// Generates and runs the statements that build one database.
pub fn populate(
    rng: &mut Rng,
    session: &mut Session,
    flavor: &dyn Flavor,
) -> Result<PgSchema, ExecError> {
    let mut schema = PgSchema::default();
    let features = flavor.features();
    let tables = rng.random_range(2..=4);
    for i in 0..tables {
        create_table(rng, session, &mut schema, i, flavor)?;
    }
    let mut index_no = 0;
    let mut view_no = 0;
    let mut stats_no = 0;
    // Small tables: a three-way join with correlated subqueries over a few
    // hundred rows already takes a second.
    let steps = rng.random_range(6..16);
    for _ in 0..steps {
        match rng.random_range(0..100) {
            0..45 => insert(rng, session, &schema)?,
            45..55 => update(rng, session, &schema)?,
            55..60 => delete(rng, session, &schema)?,
            60..75 => {
                create_index(rng, session, &schema, index_no)?;
                index_no += 1;
            }
            75..82 if features.views => {
                create_view(rng, session, &mut schema, view_no)?;
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
                    session.execute_sql(StatementKind::Maintenance, stmt)?;
                }
            }
            86..90 => {
                statistics(rng, session, &schema, stats_no)?;
                stats_no += 1;
            }
            90..95 => {
                let (name, _) = crate::knobs::PLANNER_SWITCHES
                    .choose(rng)
                    .copied()
                    .unwrap_or(("enable_seqscan", ""));
                session.execute_sql(StatementKind::Setting, format!("SET {name} = off"))?;
            }
            _ => {
                session.execute_sql(StatementKind::Maintenance, "ANALYZE".to_string())?;
            }
        }
    }
    // Most data goes in after the indexes, some before: both paths are tested.
    for _ in 0..rng.random_range(1..4) {
        insert(rng, session, &schema)?;
    }
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

fn create_table(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut PgSchema,
    i: usize,
    flavor: &dyn Flavor,
) -> Result<(), ExecError> {
    let name = format!("t{i}");
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
    let n = rng.random_range(1..=5);
    let mut columns: Vec<(String, PgType)> = Vec::new();
    let mut defs: Vec<String> = Vec::new();
    let mut insertable: Vec<String> = parent
        .as_ref()
        .map(|p| p.insertable.clone())
        .unwrap_or_default();
    let mut all_cols: Vec<(String, PgType)> = parent
        .as_ref()
        .map(|p| p.columns.clone())
        .unwrap_or_default();
    for k in 0..n {
        let cname = format!("c{}", first_own + k);
        let ty = if partitioned && k == 0 {
            PgType::from_name("integer")
        } else {
            PgType::random(rng)
        };
        let mut def = format!("{cname} {}", ty.name);
        let generated = k > 0 && rng.random_bool(0.1);
        if generated {
            let cat = ty.category;
            let base: Vec<TypedColumn> = columns
                .iter()
                .filter(|(c, _)| insertable.contains(c))
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
            def.push_str(&format!(" GENERATED ALWAYS AS ({}) STORED", sql(&e)));
        } else {
            insertable.push(cname.clone());
        }
        if ty.category == Category::Text && rng.random_bool(0.2) {
            def.push_str(if rng.random_bool(0.5) {
                " COLLATE \"C\""
            } else {
                " COLLATE \"POSIX\""
            });
        }
        if rng.random_bool(0.15) {
            def.push_str(" NOT NULL");
        }
        if !generated && rng.random_bool(0.2) {
            def.push_str(&format!(" DEFAULT {}", sql(&literal(rng, ty.category))));
        }
        if !partitioned && rng.random_bool(0.1) {
            def.push_str(" UNIQUE");
        }
        defs.push(def);
        columns.push((cname.clone(), ty.clone()));
        all_cols.push((cname, ty));
    }
    let mut primary_key = None;
    if !partitioned && parent.is_none() && rng.random_bool(0.4) {
        let pk = columns[0].0.clone();
        defs.push(format!("PRIMARY KEY ({pk})"));
        primary_key = Some(pk);
    }
    if rng.random_bool(0.25) {
        let own: Vec<TypedColumn> = all_cols
            .iter()
            .filter(|(_, t)| DDL_CATEGORIES.contains(&t.category))
            .map(|(c, t)| TypedColumn {
                expr: Expr::column(None, c),
                category: t.category,
            })
            .collect();
        let mut g = ExprGen::new(schema, false);
        defs.push(format!("CHECK ({})", sql(&g.predicate(rng, &own, 2))));
    }
    let mut stmt = format!("CREATE TABLE {name} ({})", defs.join(", "));
    if let Some(p) = &parent {
        stmt.push_str(&format!(" INHERITS ({})", p.name));
    }
    let method = rng.random_range(0..3);
    if partitioned {
        stmt.push_str(match method {
            0 => " PARTITION BY RANGE (c0)",
            1 => " PARTITION BY LIST (c0)",
            _ => " PARTITION BY HASH (c0)",
        });
    }
    if !session.execute_sql(StatementKind::CreateTable, stmt)? {
        return Ok(());
    }
    let table = PgTable {
        name: name.clone(),
        columns: all_cols.clone(),
        kind: RelationKind::Table,
        insertable: insertable.clone(),
        primary_key,
        writable: true,
        inheritable: !partitioned,
    };
    flavor.after_create_table(rng, session, &table)?;
    schema.relations.push(table);
    if partitioned {
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
            if session.execute_sql(StatementKind::CreateTable, stmt)? {
                schema.relations.push(PgTable {
                    name: part,
                    columns: all_cols.clone(),
                    kind: RelationKind::Table,
                    insertable: insertable.clone(),
                    primary_key: None,
                    writable: true,
                    inheritable: false,
                });
            }
        }
    }
    Ok(())
}

fn insert(rng: &mut Rng, session: &mut Session, schema: &PgSchema) -> Result<(), ExecError> {
    let Some(t) = writable(rng, schema) else {
        return Ok(());
    };
    let cols: Vec<&(String, PgType)> = t
        .columns
        .iter()
        .filter(|(c, _)| t.insertable.contains(c))
        .collect();
    if cols.is_empty() {
        return Ok(());
    }
    let rows = rng.random_range(1..=4);
    let values: Vec<String> = (0..rows)
        .map(|_| {
            let vs: Vec<String> = cols
                .iter()
                .map(|(_, ty)| {
                    if rng.random_bool(0.05) {
                        "DEFAULT".to_string()
                    } else {
                        sql(&literal(rng, ty.category))
                    }
                })
                .collect();
            format!("({})", vs.join(", "))
        })
        .collect();
    let names: Vec<&str> = cols.iter().map(|(c, _)| c.as_str()).collect();
    let mut stmt = format!(
        "INSERT INTO {} ({}) VALUES {}",
        t.name,
        names.join(", "),
        values.join(", ")
    );
    match (rng.random_range(0..4), &t.primary_key) {
        (0, _) => stmt.push_str(" ON CONFLICT DO NOTHING"),
        (1, Some(pk)) => {
            if let Some((c, _)) = cols.iter().find(|(c, _)| c != pk) {
                stmt.push_str(&format!(
                    " ON CONFLICT ({pk}) DO UPDATE SET {c} = EXCLUDED.{c}"
                ));
            }
        }
        _ => {}
    }
    session.execute_sql(StatementKind::Insert, stmt)?;
    Ok(())
}

fn update(rng: &mut Rng, session: &mut Session, schema: &PgSchema) -> Result<(), ExecError> {
    let Some(t) = writable(rng, schema) else {
        return Ok(());
    };
    let Some(target) = t.insertable.choose(rng).cloned() else {
        return Ok(());
    };
    let Some((_, ty)) = t.columns.iter().find(|(c, _)| *c == target) else {
        return Ok(());
    };
    let cols = t.bare_columns();
    let mut g = ExprGen::new(schema, true);
    let value = g.expr(rng, &cols, ty.category, 2);
    let mut stmt = format!("UPDATE {} SET {target} = {}", t.name, sql(&value));
    if rng.random_bool(0.8) {
        stmt.push_str(&format!(" WHERE {}", sql(&g.predicate(rng, &cols, 2))));
    }
    session.execute_sql(StatementKind::Update, stmt)?;
    Ok(())
}

fn delete(rng: &mut Rng, session: &mut Session, schema: &PgSchema) -> Result<(), ExecError> {
    let Some(t) = writable(rng, schema) else {
        return Ok(());
    };
    let cols = t.bare_columns();
    let mut g = ExprGen::new(schema, true);
    let stmt = format!(
        "DELETE FROM {} WHERE {}",
        t.name,
        sql(&g.predicate(rng, &cols, 2))
    );
    session.execute_sql(StatementKind::Delete, stmt)?;
    Ok(())
}

fn create_index(
    rng: &mut Rng,
    session: &mut Session,
    schema: &PgSchema,
    i: usize,
) -> Result<(), ExecError> {
    let Some(t) = writable(rng, schema) else {
        return Ok(());
    };
    let name = format!("i{i}");
    let cols = t.bare_columns();
    if rng.random_bool(0.15) {
        let Some((c, _)) = t.columns.choose(rng) else {
            return Ok(());
        };
        let stmt = format!("CREATE INDEX {name} ON {} USING hash ({c})", t.name);
        session.execute_sql(StatementKind::CreateIndex, stmt)?;
        return Ok(());
    }
    let n = rng.random_range(1..=3.min(t.columns.len()).max(1));
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
            t.columns
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
        if let Some((c, _)) = t.columns.choose(rng) {
            stmt.push_str(&format!(" INCLUDE ({c})"));
        }
    }
    if rng.random_bool(0.25) {
        let mut g = ExprGen::new(schema, false);
        stmt.push_str(&format!(" WHERE {}", sql(&g.predicate(rng, &ddl, 2))));
    }
    session.execute_sql(StatementKind::CreateIndex, stmt)?;
    Ok(())
}

fn statistics(
    rng: &mut Rng,
    session: &mut Session,
    schema: &PgSchema,
    i: usize,
) -> Result<(), ExecError> {
    let Some(t) = writable(rng, schema) else {
        return Ok(());
    };
    if t.columns.len() < 2 {
        return Ok(());
    }
    let a = &t.columns[0].0;
    let b = &t.columns[1].0;
    let kinds = *["", " (ndistinct)", " (dependencies)", " (mcv)"]
        .choose(rng)
        .unwrap_or(&"");
    let stmt = format!(
        "CREATE STATISTICS st{i}_{}{kinds} ON {a}, {b} FROM {}",
        t.name, t.name
    );
    session.execute_sql(StatementKind::Maintenance, stmt)?;
    Ok(())
}

fn create_view(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut PgSchema,
    i: usize,
) -> Result<(), ExecError> {
    let tables: Vec<PgTable> = schema
        .relations
        .iter()
        .filter(|t| t.writable)
        .cloned()
        .collect();
    let Some(t) = tables.choose(rng) else {
        return Ok(());
    };
    let cols = t.typed_columns("a0");
    let n = rng.random_range(1..=3);
    let mut g = ExprGen::new(schema, true);
    let mut items = Vec::new();
    let mut keys = Vec::new();
    let mut vcols = Vec::new();
    for k in 0..n {
        let cat = *[
            Category::Int,
            Category::Text,
            Category::Numeric,
            Category::Bool,
            Category::Float,
        ]
        .choose(rng)
        .unwrap_or(&Category::Int);
        let e = if rng.random_bool(0.6) {
            match cols
                .iter()
                .filter(|c| c.category == cat)
                .collect::<Vec<_>>()
                .choose(rng)
            {
                Some(c) => c.expr.clone(),
                None => g.expr(rng, &cols, cat, 1),
            }
        } else {
            g.expr(rng, &cols, cat, 2)
        };
        items.push(format!("{} AS c{k}", sql(&e)));
        // A constant separates no rows, and DISTINCT ON refuses a bare
        // non-integer one (it would read it as a column position).
        let constant = matches!(e, Expr::Literal(_));
        if !constant {
            keys.push(sql(&e));
        }
        if !constant && matches!(cat, Category::Numeric | Category::Float | Category::Text) {
            // Equal values that print differently (-0 and 0, 1.0 and 1.00,
            // 'a' and 'a  ' as bpchar) are distinct rows of the view.
            keys.push(sql(&Expr::Cast {
                expr: Box::new(e.clone()),
                ty: lancet_core::TypeName("text".into()),
            }));
        }
        let ty = match cat {
            Category::Int => "bigint",
            Category::Numeric => "numeric",
            Category::Float => "double precision",
            Category::Bool => "boolean",
            _ => "text",
        };
        vcols.push((format!("c{k}"), PgType::from_name(ty)));
    }
    // A DISTINCT view keeps an arbitrary one of several equal rows, and
    // PostgreSQL pushes a query's WHERE into the view below its DISTINCT:
    // a predicate that tells equal values apart (`CAST(c0 AS text) = '0'`
    // over -0 and 0) would then see another row than the view shows. So
    // the rows are made distinct by the values' text too (DISTINCT ON), and
    // every row the view keeps is determined.
    let mut stmt = format!(
        "CREATE VIEW v{i} AS SELECT {}{} FROM {} AS a0",
        if rng.random_bool(0.2) {
            if keys.is_empty() {
                // Only constants: every row is the same row.
                "DISTINCT ".to_string()
            } else {
                format!("DISTINCT ON ({}) ", keys.join(", "))
            }
        } else {
            String::new()
        },
        items.join(", "),
        t.name
    );
    if rng.random_bool(0.5) {
        stmt.push_str(&format!(" WHERE {}", sql(&g.predicate(rng, &cols, 2))));
    }
    if session.execute_sql(StatementKind::CreateView, stmt)? {
        schema.relations.push(PgTable {
            name: format!("v{i}"),
            columns: vcols,
            kind: RelationKind::View,
            insertable: vec![],
            primary_key: None,
            writable: false,
            inheritable: false,
        });
    }
    Ok(())
}
