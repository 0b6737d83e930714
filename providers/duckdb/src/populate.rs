//! Fills a fresh DuckDB database: tables of every column type the
//! generator knows, with NOT NULL, UNIQUE, PRIMARY KEY, CHECK, DEFAULT and
//! generated (virtual) columns; ART indexes (unique, multi-column); views;
//! rows through INSERT, INSERT OR IGNORE and INSERT OR REPLACE; UPDATE,
//! DELETE, ANALYZE and CHECKPOINT. The steps are the server toolkit's
//! pipeline ([`lancet_server::populate`]); here are DuckDB's tables and
//! the forms of its statements. Every expression comes from [`ExprGen`].

use crate::dialect::DIALECT;
use crate::schema::{DuckSchema, DuckTable, ExprGen, Sampled, TypedColumn};
use crate::types::{literal, Category, DuckType};
use lancet_core::schema::{Index, RelationKind};
use lancet_core::{ExecError, Expr, Rng, Session, StatementKind, ToSql, Value};
use lancet_server::populate::{writable_columns, Population};
use rand::seq::IndexedRandom;
use rand::Rng as _;

fn sql(e: &Expr) -> String {
    e.to_sql(DIALECT)
}

/// Fills the database behind `session` and returns the model of what it made.
pub fn populate(rng: &mut Rng, session: &mut Session) -> Result<DuckSchema, ExecError> {
    lancet_server::populate::populate(&DuckPopulation, rng, session, DuckSchema::default())
}

/// DuckDB's part of the pipeline.
struct DuckPopulation;

impl Population for DuckPopulation {
    type Schema = DuckSchema;
    const DIALECT: lancet_core::Dialect = DIALECT;
    const INDEXES: std::ops::RangeInclusive<i32> = 0..=2;
    /// ANALYZE of the table, or CHECKPOINT.
    const MAINTENANCE: i32 = 2;

    fn parts_mut(schema: &mut DuckSchema) -> (&mut Vec<DuckTable>, &mut Vec<Index>, &mut Sampled) {
        (
            &mut schema.relations,
            &mut schema.indexes,
            &mut schema.sampled,
        )
    }

    fn create_table(
        &self,
        rng: &mut Rng,
        session: &mut Session,
        schema: &mut DuckSchema,
        t: usize,
    ) -> Result<(), ExecError> {
        create_table(rng, session, schema, t)
    }

    /// The stored columns of a type an ART index takes.
    fn index_columns(&self, table: &DuckTable) -> Vec<(String, DuckType)> {
        writable_columns(table)
            .into_iter()
            .filter(|(_, t)| t.category.keyable())
            .collect()
    }

    fn index_part(&self, _rng: &mut Rng, _schema: &DuckSchema, c: &str, _ty: &DuckType) -> String {
        c.to_string()
    }

    /// A unique index is one more key an INSERT may conflict on.
    fn index_created(&self, schema: &mut DuckSchema, table: &str, unique: bool) {
        if unique {
            if let Some(t) = schema.relations.iter_mut().find(|t| t.name == table) {
                t.keys += 1;
            }
        }
    }

    fn stored_value(&self, g: &mut ExprGen<'_>, rng: &mut Rng, ty: &DuckType) -> Expr {
        stored_value(g, rng, ty)
    }

    /// OR IGNORE needs a key to conflict on, OR REPLACE exactly one.
    fn insert_form(
        &self,
        _g: &mut ExprGen<'_>,
        rng: &mut Rng,
        table: &DuckTable,
        _cols: &[(String, DuckType)],
    ) -> (&'static str, String) {
        let verb = match rng.random_range(0..6) {
            0 if table.keys > 0 => "INSERT OR IGNORE INTO",
            1 if table.keys == 1 => "INSERT OR REPLACE INTO",
            _ => "INSERT INTO",
        };
        (verb, String::new())
    }

    /// An ENUM takes its members only.
    fn update_value(&self, schema: &DuckSchema, rng: &mut Rng, ty: &DuckType) -> Option<Expr> {
        ty.fixed_domain
            .then(|| stored_value(&mut ExprGen::new(schema, false), rng, ty))
    }

    fn maintenance(
        &self,
        _rng: &mut Rng,
        session: &mut Session,
        table: &DuckTable,
        which: i32,
    ) -> Result<(), ExecError> {
        let text = match which {
            0 => format!("ANALYZE {}", table.name),
            _ => "CHECKPOINT".to_string(),
        };
        session.execute_sql(StatementKind::Maintenance, text)?;
        Ok(())
    }

    /// Mostly one of the base's columns, else an expression of a
    /// column's category.
    fn view_item(
        &self,
        g: &mut ExprGen<'_>,
        rng: &mut Rng,
        typed: &[TypedColumn],
    ) -> (Expr, Category) {
        let source = typed.choose(rng).cloned();
        match source {
            Some(c) if rng.random_bool(0.6) => (c.expr, c.category),
            Some(c) => (g.expr(rng, typed, c.category, 1), c.category),
            None => (literal(rng, Category::Int), Category::Int),
        }
    }

    /// The category's type, with a collation any of the base's (see
    /// `inherited_collation`).
    fn view_column(&self, category: Category, base: &DuckTable) -> DuckType {
        let collation = match category {
            Category::Text => inherited_collation(&base.columns),
            _ => None,
        };
        DuckType {
            collation,
            ..DuckType::new(&DuckType::cast_target(category).0, category)
        }
    }

    /// Not text ('b' and 'B' under NOCASE), floats or intervals ('1
    /// month' and '30 days').
    fn exact(&self, category: Category) -> bool {
        !matches!(
            category,
            Category::Text | Category::Float | Category::Interval
        )
    }

    fn view(&self, name: String, columns: Vec<(String, DuckType)>) -> DuckTable {
        DuckTable {
            name,
            kind: RelationKind::View,
            columns,
            writable: false,
            generated: Vec::new(),
            keys: 0,
            shape: Vec::new(),
        }
    }

    fn sampled(&self, category: Category) -> bool {
        matches!(category, Category::Int | Category::Decimal | Category::Text)
    }

    /// Text under NOCASE by its bytes ('a' and 'A' sort either way
    /// otherwise).
    fn sample_order(&self, _position: usize, name: &str, ty: &DuckType) -> String {
        match ty.collation {
            Some(_) => format!("{name} COLLATE \"binary\""),
            None => name.to_string(),
        }
    }
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
    let mut shape = Vec::new();
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
            shape.push(def.clone());
            generated.push(col.clone());
            if ty.category == Category::Text {
                ty.collation = inherited_collation(&columns);
            }
        } else {
            shape.push(def.clone());
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
            shape,
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

/// The collation a text column computed from `columns` may compare under:
/// DuckDB carries a collation through casts, CASE and functions (`lower`,
/// `concat`), also into a column declared plain VARCHAR, so a text column
/// over a collated one is taken as collated (PQS, which reads binary text
/// only, leaves it out). The first collation among them, or none.
fn inherited_collation(columns: &[(String, DuckType)]) -> Option<&'static str> {
    columns.iter().find_map(|(_, t)| t.collation)
}
