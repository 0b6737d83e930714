//! Fills a fresh DuckDB database: tables of every column type the
//! generator knows, with NOT NULL, UNIQUE, PRIMARY KEY, CHECK, DEFAULT and
//! generated (virtual) columns; ART indexes (unique, multi-column); views;
//! rows through INSERT, INSERT OR IGNORE and INSERT OR REPLACE; UPDATE,
//! DELETE, ANALYZE and CHECKPOINT. Every expression comes from
//! [`ExprGen`].

use crate::dialect::DIALECT;
use crate::expr::ExprGen;
use crate::schema::{DuckSchema, DuckTable, TypedColumn};
use crate::types::{literal, Category, DuckType};
use lancet_core::schema::{Index, RelationKind};
use lancet_core::{ExecError, Expr, Rng, Session, StatementKind, ToSql, Value};
use rand::seq::IndexedRandom;
use rand::Rng as _;

fn sql(e: &Expr) -> String {
    e.to_sql(DIALECT)
}

/// Fills the database behind `session` and returns the model of what it made.
pub fn populate(rng: &mut Rng, session: &mut Session) -> Result<DuckSchema, ExecError> {
    let mut schema = DuckSchema::default();
    for t in 0..rng.random_range(1..=3) {
        create_table(rng, session, &mut schema, t)?;
    }
    for _ in 0..rng.random_range(0..=2) {
        create_index(rng, session, &mut schema)?;
    }
    let writable: Vec<DuckTable> = schema.tables().cloned().collect();
    for table in &writable {
        for _ in 0..rng.random_range(2..=5) {
            insert(rng, session, &schema, table)?;
        }
    }
    for _ in 0..rng.random_range(0..=3) {
        let Some(table) = writable.choose(rng) else {
            break;
        };
        match rng.random_range(0..5) {
            0 => update(rng, session, &schema, table)?,
            1 => lancet_server::dml::delete(rng, session, &schema, table, DIALECT)?,
            2 => insert(rng, session, &schema, table)?,
            3 => {
                session.execute_sql(
                    StatementKind::Maintenance,
                    format!("ANALYZE {}", table.name),
                )?;
            }
            _ => {
                session.execute_sql(StatementKind::Maintenance, "CHECKPOINT".to_string())?;
            }
        }
    }
    for v in 0..rng.random_range(0..=2) {
        create_view(rng, session, &mut schema, v)?;
    }
    sample_values(session, &mut schema)?;
    Ok(schema)
}

/// The earlier columns of a table as bare names, for CHECK constraints
/// and generated columns.
fn bare(columns: &[(String, DuckType)]) -> Vec<TypedColumn> {
    columns
        .iter()
        .map(|(n, t)| TypedColumn {
            expr: Expr::column(None, n),
            category: t.category,
        })
        .collect()
}

fn create_table(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut DuckSchema,
    t: usize,
) -> Result<(), ExecError> {
    let name = format!("t{t}");
    let mut columns: Vec<(String, DuckType)> = Vec::new();
    let mut generated = Vec::new();
    let mut defs = Vec::new();
    for c in 0..rng.random_range(1..=5) {
        let mut ty = DuckType::random(rng);
        let col = format!("c{c}");
        let mut def = format!("{col} {}", ty.sql);
        let earlier: Vec<TypedColumn> = bare(&columns)
            .into_iter()
            .filter(|tc| !generated.contains(&column_name(&tc.expr)))
            .collect();
        // Not on a collated type: DuckDB's grammar takes no GENERATED after
        // COLLATE.
        if !earlier.is_empty()
            && !ty.fixed_domain
            && ty.collation.is_none()
            && rng.random_bool(0.15)
        {
            // A generated column over earlier stored columns.
            let mut g = ExprGen::new(schema, false);
            let e = g.expr(rng, &earlier, ty.category, 1);
            def.push_str(&format!(" GENERATED ALWAYS AS ({}) VIRTUAL", sql(&e)));
            generated.push(col.clone());
            if ty.category == Category::Text {
                ty.collation = inherited_collation(&columns);
            }
        } else {
            if rng.random_bool(0.2) {
                def.push_str(" NOT NULL");
            }
            if rng.random_bool(0.1) && ty.category.keyable() {
                def.push_str(" UNIQUE");
            }
            if rng.random_bool(0.1) {
                let d = literal(rng, ty.category);
                if !matches!(d, Expr::Literal(Value::Null)) && !ty.fixed_domain {
                    def.push_str(&format!(" DEFAULT {}", sql(&d)));
                }
            }
        }
        defs.push(def);
        columns.push((col, ty));
    }
    let stored: Vec<&(String, DuckType)> = columns
        .iter()
        .filter(|(c, _)| !generated.contains(c))
        .collect();
    let keyable: Vec<&&(String, DuckType)> = stored
        .iter()
        .filter(|(_, t)| t.category.keyable())
        .collect();
    if let Some((k, _)) = keyable.choose(rng) {
        if rng.random_bool(0.3) {
            defs.push(format!("PRIMARY KEY ({k})"));
        }
    }
    if rng.random_bool(0.15) {
        // Over stored columns: DuckDB takes no constraint on generated ones.
        let stored: Vec<(String, DuckType)> = stored.iter().map(|c| (*c).clone()).collect();
        let mut g = ExprGen::new(schema, false);
        let p = g.predicate(rng, &bare(&stored), 1);
        defs.push(format!("CHECK ({})", sql(&p)));
    }
    let text = format!("CREATE TABLE {name} ({})", defs.join(", "));
    let keys = defs
        .iter()
        .filter(|d| d.contains(" UNIQUE") || d.starts_with("PRIMARY KEY"))
        .count();
    if session.execute_sql(StatementKind::CreateTable, text)? {
        schema.relations.push(DuckTable {
            name,
            kind: RelationKind::Table,
            columns,
            writable: true,
            generated,
            keys,
        });
    }
    Ok(())
}

/// The name of a bare column expression.
fn column_name(e: &Expr) -> String {
    match e {
        Expr::Column(c) => c.column.clone(),
        _ => String::new(),
    }
}

fn create_index(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut DuckSchema,
) -> Result<(), ExecError> {
    let Some(table) = schema.random_table(rng) else {
        return Ok(());
    };
    let stored: Vec<(String, DuckType)> = writable_columns(&table)
        .into_iter()
        .filter(|(_, t)| t.category.keyable())
        .collect();
    if stored.is_empty() {
        return Ok(());
    }
    let name = format!("i{}", schema.indexes.len());
    let n = rng.random_range(1..=stored.len().min(3));
    let parts: Vec<&str> = stored
        .choose_multiple(rng, n)
        .map(|(c, _)| c.as_str())
        .collect();
    let unique = rng.random_bool(0.2);
    let text = format!(
        "CREATE {}INDEX {name} ON {} ({})",
        if unique { "UNIQUE " } else { "" },
        table.name,
        parts.join(", ")
    );
    if session.execute_sql(StatementKind::CreateIndex, text)? {
        if unique {
            if let Some(t) = schema.relations.iter_mut().find(|t| t.name == table.name) {
                t.keys += 1;
            }
        }
        schema.indexes.push(Index {
            name,
            table: table.name.clone(),
            unique,
        });
    }
    Ok(())
}

/// The columns a statement may write: all but generated ones.
fn writable_columns(table: &DuckTable) -> Vec<(String, DuckType)> {
    table
        .columns
        .iter()
        .filter(|(c, _)| !table.generated.contains(c))
        .cloned()
        .collect()
}

/// A value to store in a column of `ty`: mostly a literal (an ENUM's
/// member for most of its values), sometimes an expression.
fn stored_value(g: &mut ExprGen<'_>, rng: &mut Rng, ty: &DuckType) -> Expr {
    if ty.fixed_domain && rng.random_bool(0.9) {
        let member = *["0", "1", "a", "ab", "b"].choose(rng).unwrap_or(&"a");
        return Expr::Literal(Value::Text(member.into()));
    }
    if rng.random_bool(0.9) {
        literal(rng, ty.category)
    } else {
        g.expr(rng, &[], ty.category, 1)
    }
}

fn insert(
    rng: &mut Rng,
    session: &mut Session,
    schema: &DuckSchema,
    table: &DuckTable,
) -> Result<(), ExecError> {
    let cols = writable_columns(table);
    if cols.is_empty() {
        return Ok(());
    }
    let mut g = ExprGen::new(schema, false);
    let values: Vec<String> = (0..rng.random_range(1..=4))
        .map(|_| {
            let row: Vec<String> = cols
                .iter()
                .map(|(_, ty)| sql(&stored_value(&mut g, rng, ty)))
                .collect();
            format!("({})", row.join(", "))
        })
        .collect();
    let names: Vec<&str> = cols.iter().map(|(c, _)| c.as_str()).collect();
    // OR IGNORE needs a key to conflict on, OR REPLACE exactly one.
    let verb = match rng.random_range(0..6) {
        0 if table.keys > 0 => "INSERT OR IGNORE INTO",
        1 if table.keys == 1 => "INSERT OR REPLACE INTO",
        _ => "INSERT INTO",
    };
    session.execute_sql(
        StatementKind::Insert,
        format!(
            "{verb} {} ({}) VALUES {}",
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
    schema: &DuckSchema,
    table: &DuckTable,
) -> Result<(), ExecError> {
    let cols = writable_columns(table);
    let Some((c, ty)) = cols.choose(rng).cloned() else {
        return Ok(());
    };
    // An ENUM takes its members only.
    let value = ty
        .fixed_domain
        .then(|| stored_value(&mut ExprGen::new(schema, false), rng, &ty));
    lancet_server::dml::update(rng, session, (schema, table), (&c, value), DIALECT)
}

fn create_view(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut DuckSchema,
    v: usize,
) -> Result<(), ExecError> {
    let Some(base) = schema.random_table(rng) else {
        return Ok(());
    };
    let typed = base.typed_columns(&base.name);
    let mut g = ExprGen::new(schema, true);
    let mut items = Vec::new();
    let mut columns = Vec::new();
    for i in 0..rng.random_range(1..=3) {
        let source = typed.choose(rng).cloned();
        let (e, category) = match source {
            Some(c) if rng.random_bool(0.6) => (c.expr, c.category),
            Some(c) => (g.expr(rng, &typed, c.category, 1), c.category),
            None => (literal(rng, Category::Int), Category::Int),
        };
        items.push(format!("{} AS c{i}", sql(&e)));
        // Its type is the category's, and its collation may be any of
        // the base's (see `inherited_collation`).
        let collation = match category {
            Category::Text => inherited_collation(&base.columns),
            _ => None,
        };
        columns.push((
            format!("c{i}"),
            DuckType {
                collation,
                ..DuckType::new(&DuckType::cast_target(category).0, category)
            },
        ));
    }
    // DISTINCT only over columns whose equal values are identical: of 'b'
    // and 'B' under NOCASE (or '1 month' and '30 days') it keeps either,
    // depending on the plan.
    let exact = columns.iter().all(|(_, t)| {
        !matches!(
            t.category,
            Category::Text | Category::Float | Category::Interval
        )
    });
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
        schema.relations.push(DuckTable {
            name: format!("v{v}"),
            kind: RelationKind::View,
            columns,
            writable: false,
            generated: Vec::new(),
            keys: 0,
        });
    }
    Ok(())
}

/// Samples constants from every table, ordered so that a database
/// regenerated on the same library samples the same values: text under
/// NOCASE by its bytes ('a' and 'A' sort either way otherwise).
fn sample_values(session: &mut Session, schema: &mut DuckSchema) -> Result<(), ExecError> {
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
                .map(|(c, t)| {
                    let order = match t.collation {
                        Some(_) => format!("{c} COLLATE \"binary\""),
                        None => c.clone(),
                    };
                    (c.clone(), order, t.category)
                })
                .collect(),
        })
        .collect();
    schema.sampled = lancet_server::dml::sample(session, tables)?;
    Ok(())
}

/// The collation a text column computed from `columns` may compare under:
/// DuckDB carries a collation through casts, CASE and functions (`lower`,
/// `concat`), also into a column declared plain VARCHAR, so a text column
/// over a collated one is taken as collated (PQS, which reads binary text
/// only, leaves it out). The first collation among them, or none.
fn inherited_collation(columns: &[(String, DuckType)]) -> Option<&'static str> {
    columns.iter().find_map(|(_, t)| t.collation)
}
