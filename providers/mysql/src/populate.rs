//! Fills a fresh database: tables of every engine the server has (InnoDB,
//! MyISAM, MEMORY, MariaDB's Aria), with NOT NULL, UNIQUE, primary keys,
//! defaults and generated columns, some partitioned by hash; indexes
//! (multi-column, unique, prefix, descending); views; rows through INSERT
//! [IGNORE], REPLACE and ON DUPLICATE KEY UPDATE; UPDATE, DELETE, ANALYZE
//! and OPTIMIZE TABLE. Every expression comes from [`ExprGen`].

use crate::expr::ExprGen;
use crate::schema::{MySchema, MyTable, TypedColumn};
use crate::types::{literal, Category, MyType};
use crate::ServerKind;
use lancet_core::schema::{Index, RelationKind};
use lancet_core::{ExecError, Expr, Rng, Session, StatementKind, ToSql, Value};
use rand::seq::IndexedRandom;
use rand::Rng as _;

fn sql(e: &Expr) -> String {
    e.to_sql(crate::dialect::DIALECT)
}

/// Fills the database behind `session` and returns the model of what it made.
pub fn populate(
    rng: &mut Rng,
    session: &mut Session,
    kind: ServerKind,
) -> Result<MySchema, ExecError> {
    let mut schema = MySchema {
        server: Some(kind),
        ..MySchema::default()
    };
    let tables = rng.random_range(1..=3);
    for t in 0..tables {
        create_table(rng, session, &mut schema, kind, t)?;
    }
    for _ in 0..rng.random_range(0..=3) {
        create_index(rng, session, &mut schema)?;
    }
    let writable: Vec<MyTable> = schema.tables().cloned().collect();
    for table in &writable {
        for _ in 0..rng.random_range(2..=5) {
            insert(rng, session, &schema, table)?;
        }
    }
    for _ in 0..rng.random_range(0..=3) {
        let Some(table) = writable.choose(rng) else {
            break;
        };
        match rng.random_range(0..4) {
            0 => update(rng, session, &schema, table)?,
            1 => delete(rng, session, &schema, table)?,
            2 => insert(rng, session, &schema, table)?,
            _ => {
                let what = if rng.random_bool(0.7) {
                    "ANALYZE"
                } else {
                    "OPTIMIZE"
                };
                session.execute_sql(
                    StatementKind::Maintenance,
                    format!("{what} TABLE {}", table.name),
                )?;
            }
        }
    }
    for v in 0..rng.random_range(0..=2) {
        create_view(rng, session, &mut schema, v)?;
    }
    sample_values(session, &mut schema)?;
    Ok(schema)
}

/// Engines this kind of server has (a missing one would be an error).
fn engines(kind: ServerKind) -> &'static [&'static str] {
    match kind {
        ServerKind::MariaDb => &["InnoDB", "InnoDB", "MyISAM", "MEMORY", "Aria"],
        ServerKind::MySql => &["InnoDB", "InnoDB", "MyISAM", "MEMORY"],
    }
}

fn create_table(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut MySchema,
    kind: ServerKind,
    t: usize,
) -> Result<(), ExecError> {
    let name = format!("t{t}");
    let n = rng.random_range(1..=5);
    let engine = *engines(kind).choose(rng).unwrap_or(&"InnoDB");
    let mut columns: Vec<(String, MyType)> = Vec::new();
    let mut generated = Vec::new();
    let mut defs = Vec::new();
    for c in 0..n {
        let mut ty = MyType::random(rng);
        if engine == "MEMORY" && ty.is_lob {
            // MEMORY tables take no TEXT or BLOB.
            ty = MyType::random(rng);
        }
        let col = format!("c{c}");
        let mut def = format!("{col} {}", ty.sql);
        let ints: Vec<TypedColumn> = columns
            .iter()
            .filter(|(_, t)| t.category == Category::Int)
            .map(|(n, t)| TypedColumn {
                expr: Expr::column(None, n),
                category: t.category,
            })
            .collect();
        if !ints.is_empty() && ty.category == Category::Int && rng.random_bool(0.15) {
            // A generated column over earlier integer columns.
            let mut g = ExprGen::new(schema, false);
            let e = g.expr(rng, &ints, Category::Int, 1);
            let storage = if rng.random_bool(0.5) {
                "VIRTUAL"
            } else {
                "STORED"
            };
            def.push_str(&format!(" AS ({}) {storage}", sql(&e)));
            generated.push(col.clone());
        } else {
            // Never a NOT NULL DATE or DATETIME: MySQL and MariaDB read
            // `c IS NULL` on such a column as `c = '0000-00-00'` (documented
            // ODBC compatibility) in WHERE but not under NOT, so the
            // partitions of such a predicate overlap by design.
            if rng.random_bool(0.2) && ty.category != Category::Date {
                def.push_str(" NOT NULL");
            }
            if rng.random_bool(0.15) && !ty.is_lob {
                def.push_str(" UNIQUE");
            }
            if rng.random_bool(0.1) && !ty.is_lob && !ty.fixed_domain {
                let d = literal(rng, ty.category);
                if !matches!(d, Expr::Literal(Value::Null)) {
                    def.push_str(&format!(" DEFAULT {}", sql(&d)));
                }
            }
        }
        defs.push(def);
        columns.push((col, ty));
    }
    let int_key = columns
        .iter()
        .position(|(_, t)| t.category == Category::Int && !t.sql.contains("UNSIGNED"));
    if let Some(k) = int_key {
        if rng.random_bool(0.3) && !generated.contains(&format!("c{k}")) {
            defs.push(format!("PRIMARY KEY (c{k})"));
        }
    }
    let mut sql_text = format!("CREATE TABLE {name} ({}) ENGINE={engine}", defs.join(", "));
    if let Some(k) = int_key {
        if engine != "MEMORY" && rng.random_bool(0.15) {
            sql_text.push_str(&format!(
                " PARTITION BY HASH(c{k}) PARTITIONS {}",
                rng.random_range(2..=4)
            ));
        }
    }
    if session.execute_sql(StatementKind::CreateTable, sql_text)? {
        schema.relations.push(MyTable {
            name,
            kind: RelationKind::Table,
            columns,
            writable: true,
            generated,
        });
    }
    Ok(())
}

fn create_index(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut MySchema,
) -> Result<(), ExecError> {
    let Some(table) = schema.random_table(rng) else {
        return Ok(());
    };
    let name = format!("i{}", schema.indexes.len());
    let n = rng.random_range(1..=table.columns.len().min(3));
    let parts: Vec<String> = table
        .columns
        .choose_multiple(rng, n)
        .map(|(c, ty)| {
            if schema.server == Some(crate::ServerKind::MySql)
                && !ty.is_lob
                && rng.random_bool(0.15)
            {
                // A functional key part (MySQL 8.0.13 and later; MariaDB
                // has none): an expression over the column.
                let mut g = ExprGen::new(schema, false);
                let col = [TypedColumn {
                    expr: Expr::column(None, c),
                    category: ty.category,
                }];
                return format!("({})", sql(&g.expr(rng, &col, ty.category, 1)));
            }
            let prefix = if ty.is_lob
                || (ty.category == Category::Text && !ty.fixed_domain && rng.random_bool(0.3))
            {
                format!("({})", rng.random_range(1..=5))
            } else {
                String::new()
            };
            let desc = if rng.random_bool(0.2) { " DESC" } else { "" };
            format!("{c}{prefix}{desc}")
        })
        .collect();
    let unique = rng.random_bool(0.2);
    let text = format!(
        "CREATE {}INDEX {name} ON {} ({})",
        if unique { "UNIQUE " } else { "" },
        table.name,
        parts.join(", ")
    );
    if session.execute_sql(StatementKind::CreateIndex, text)? {
        schema.indexes.push(Index {
            name,
            table: table.name.clone(),
            unique,
        });
    }
    Ok(())
}

/// The columns a statement may write: all but generated ones.
fn writable_columns(table: &MyTable) -> Vec<(String, MyType)> {
    table
        .columns
        .iter()
        .filter(|(c, _)| !table.generated.contains(c))
        .cloned()
        .collect()
}

fn insert(
    rng: &mut Rng,
    session: &mut Session,
    schema: &MySchema,
    table: &MyTable,
) -> Result<(), ExecError> {
    let cols = writable_columns(table);
    if cols.is_empty() {
        return Ok(());
    }
    let rows = rng.random_range(1..=4);
    let mut g = ExprGen::new(schema, false);
    let values: Vec<String> = (0..rows)
        .map(|_| {
            let row: Vec<String> = cols
                .iter()
                .map(|(_, ty)| {
                    if rng.random_bool(0.9) {
                        sql(&literal(rng, ty.category))
                    } else {
                        sql(&g.expr(rng, &[], ty.category, 1))
                    }
                })
                .collect();
            format!("({})", row.join(", "))
        })
        .collect();
    let names: Vec<&str> = cols.iter().map(|(c, _)| c.as_str()).collect();
    let (verb, tail) = match rng.random_range(0..6) {
        0 => ("INSERT IGNORE INTO", String::new()),
        1 => ("REPLACE INTO", String::new()),
        2 => {
            let (c, ty) = cols.choose(rng).cloned().unwrap_or_else(|| cols[0].clone());
            let typed = table.typed_columns(&table.name);
            let e = g.expr(rng, &typed, ty.category, 1);
            (
                "INSERT INTO",
                format!(" ON DUPLICATE KEY UPDATE {c} = {}", sql(&e)),
            )
        }
        _ => ("INSERT INTO", String::new()),
    };
    session.execute_sql(
        StatementKind::Insert,
        format!(
            "{verb} {} ({}) VALUES {}{tail}",
            table.name,
            names.join(", "),
            values.join(", ")
        ),
    )?;
    Ok(())
}

fn update(
    rng: &mut Rng,
    session: &mut Session,
    schema: &MySchema,
    table: &MyTable,
) -> Result<(), ExecError> {
    let cols = writable_columns(table);
    let Some((c, _)) = cols.choose(rng).cloned() else {
        return Ok(());
    };
    let dialect = crate::dialect::DIALECT;
    lancet_server::dml::update(rng, session, (schema, table), (&c, None), dialect)
}

fn delete(
    rng: &mut Rng,
    session: &mut Session,
    schema: &MySchema,
    table: &MyTable,
) -> Result<(), ExecError> {
    lancet_server::dml::delete(rng, session, schema, table, crate::dialect::DIALECT)
}

fn create_view(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut MySchema,
    v: usize,
) -> Result<(), ExecError> {
    let Some(base) = schema.random_table(rng) else {
        return Ok(());
    };
    let typed = base.typed_columns(&base.name);
    let mut g = ExprGen::new(schema, true);
    let n = rng.random_range(1..=3);
    let mut items = Vec::new();
    let mut columns = Vec::new();
    for i in 0..n {
        let category = typed
            .choose(rng)
            .map(|c| c.category)
            .unwrap_or(Category::Int);
        let e = if rng.random_bool(0.6) {
            typed
                .iter()
                .filter(|c| c.category == category)
                .collect::<Vec<_>>()
                .choose(rng)
                .map(|c| c.expr.clone())
                .unwrap_or_else(|| g.expr(rng, &typed, category, 1))
        } else {
            g.expr(rng, &typed, category, 1)
        };
        items.push(format!("{} AS c{i}", sql(&e)));
        columns.push((
            format!("c{i}"),
            MyType {
                sql: format!("{category:?}"),
                category,
                is_lob: false,
                fixed_domain: false,
            },
        ));
    }
    // DISTINCT only over columns whose equal values are identical: of
    // 'b' and 'B' under a case-insensitive collation it keeps either, and
    // which one depends on the plan (a condition pushed below it picks
    // the other), so every query reading the view would be undetermined.
    let exact = columns
        .iter()
        .all(|(_, t): &(String, MyType)| t.category.is_number() || t.category == Category::Blob);
    let mut text = format!(
        "CREATE VIEW v{v} AS SELECT {}{} FROM {}",
        if exact && rng.random_bool(0.2) {
            "DISTINCT "
        } else {
            ""
        },
        items.join(", "),
        base.name
    );
    if rng.random_bool(0.5) {
        let p = g.predicate(rng, &typed, 1);
        text.push_str(&format!(" WHERE {}", sql(&p)));
    }
    if session.execute_sql(StatementKind::CreateView, text)? {
        schema.relations.push(MyTable {
            name: format!("v{v}"),
            kind: RelationKind::View,
            columns,
            writable: false,
            generated: Vec::new(),
        });
    }
    Ok(())
}

/// Samples constants from every table, ordered so that a database
/// regenerated on the same server samples the same values.
fn sample_values(session: &mut Session, schema: &mut MySchema) -> Result<(), ExecError> {
    let tables = schema
        .tables()
        .map(|table| lancet_server::dml::SampleOf {
            table: &table.name,
            columns: table
                .columns
                .iter()
                .filter(|(_, t)| {
                    matches!(
                        t.category,
                        Category::Int | Category::Decimal | Category::Text
                    )
                })
                .enumerate()
                .map(|(i, (c, t))| (c.clone(), format!("{}", i + 1), t.category))
                .collect(),
        })
        .collect();
    schema.sampled = lancet_server::dml::sample(session, tables)?;
    Ok(())
}
