//! The pipeline that fills a fresh database of a server DBMS, written once:
//! tables, indexes, first rows, a few changes (UPDATE, DELETE, INSERT,
//! maintenance), views, then constants sampled from the data. A provider
//! supplies what differs, its tables, types and dialect, through
//! [`Population`]; the order of the steps and of every draw is the
//! pipeline's, so a provider's databases are the same for the same seed.
//! (PostgreSQL's population is a random walk of its own, see its
//! provider.)

use crate::dml::{self, SampleOf};
use crate::{
    ColumnType, ExprGen, Sampled, ServerCategory, ServerSchema, ServerTable, TypeOf, TypedColumn,
};
use lancet_core::schema::Index;
use lancet_core::{Dialect, ExecError, Expr, Rng, Session, StatementKind, ToSql};
use rand::seq::IndexedRandom;
use rand::Rng as _;
use std::ops::RangeInclusive;

/// A table of a population's schema.
pub type TableOf<P> = <<P as Population>::Schema as ServerSchema>::Table;
/// A column type of a population's schema.
pub type ColumnOf<P> = TypeOf<<P as Population>::Schema>;
/// A category of a population's schema.
pub type CategoryIn<P> = <<P as Population>::Schema as ServerSchema>::Category;

/// What a provider tells the pipeline: its tables, types and dialect,
/// and the forms its statements take where DBMSs differ.
pub trait Population {
    /// The provider's model of a generated database.
    type Schema: ServerSchema;

    /// How statements and expressions are printed.
    const DIALECT: Dialect;
    /// How many indexes the pipeline tries to create. The counts are
    /// drawn as `i32`, as they were before the pipeline was shared, so
    /// that the databases of a seed stay the same.
    const INDEXES: RangeInclusive<i32>;
    /// How many maintenance statements [`Population::maintenance`] knows:
    /// a change is one of UPDATE, DELETE, INSERT or one of these.
    const MAINTENANCE: i32;

    /// The schema's relations, indexes and sampled constants, to add to.
    fn parts_mut(
        schema: &mut Self::Schema,
    ) -> (
        &mut Vec<TableOf<Self>>,
        &mut Vec<Index>,
        &mut Sampled<CategoryIn<Self>>,
    );

    /// Creates table `t{t}` and adds it to the schema if the DBMS took it.
    fn create_table(
        &self,
        rng: &mut Rng,
        session: &mut Session,
        schema: &mut Self::Schema,
        t: usize,
    ) -> Result<(), ExecError>;

    /// The columns an index may be over.
    fn index_columns(&self, table: &TableOf<Self>) -> Vec<(String, ColumnOf<Self>)>;
    /// How an index names a column (a prefix, DESC, an expression over
    /// it).
    fn index_part(
        &self,
        rng: &mut Rng,
        schema: &Self::Schema,
        column: &str,
        ty: &ColumnOf<Self>,
    ) -> String;
    /// Notes an index the DBMS created on `table` (a unique one is a key
    /// an INSERT may conflict on); nothing by default.
    fn index_created(&self, _schema: &mut Self::Schema, _table: &str, _unique: bool) {}

    /// A value to store in a column of `ty`: mostly a literal, sometimes
    /// an expression.
    fn stored_value(
        &self,
        g: &mut ExprGen<'_, Self::Schema>,
        rng: &mut Rng,
        ty: &ColumnOf<Self>,
    ) -> Expr {
        let category = ty.declared().1;
        if rng.random_bool(0.9) {
            (<CategoryIn<Self> as ServerCategory>::LITERAL)(rng, category)
        } else {
            g.expr(rng, &[], category, 1)
        }
    }
    /// How an INSERT of `columns` into `table` begins (`INSERT INTO`,
    /// `INSERT IGNORE INTO`) and what follows its VALUES.
    fn insert_form(
        &self,
        g: &mut ExprGen<'_, Self::Schema>,
        rng: &mut Rng,
        table: &TableOf<Self>,
        columns: &[(String, ColumnOf<Self>)],
    ) -> (&'static str, String);
    /// The value an UPDATE sets a column of `ty` to, where the provider
    /// chooses it; `None` (the default) for an expression of its category.
    fn update_value(
        &self,
        _schema: &Self::Schema,
        _rng: &mut Rng,
        _ty: &ColumnOf<Self>,
    ) -> Option<Expr> {
        None
    }
    /// Runs maintenance statement `which` (below [`Population::MAINTENANCE`])
    /// on `table` or the database.
    fn maintenance(
        &self,
        rng: &mut Rng,
        session: &mut Session,
        table: &TableOf<Self>,
        which: i32,
    ) -> Result<(), ExecError>;

    /// A column of a view over `typed` (a base table's columns): its
    /// expression and category.
    fn view_item(
        &self,
        g: &mut ExprGen<'_, Self::Schema>,
        rng: &mut Rng,
        typed: &[TypedColumn<CategoryIn<Self>>],
    ) -> (Expr, CategoryIn<Self>);
    /// The type a view's column of `category` over `base` has.
    fn view_column(&self, category: CategoryIn<Self>, base: &TableOf<Self>) -> ColumnOf<Self>;
    /// Whether equal values of `category` are identical, so that DISTINCT
    /// keeps the same one under every plan.
    fn exact(&self, category: CategoryIn<Self>) -> bool;
    /// The model of view `name` with `columns`.
    fn view(&self, name: String, columns: Vec<(String, ColumnOf<Self>)>) -> TableOf<Self>;

    /// Whether constants of `category` are sampled from the data.
    fn sampled(&self, category: CategoryIn<Self>) -> bool;
    /// How ORDER BY sorts the column `name` of `ty`, the `position`th
    /// sampled (from 1), so that a database regenerated on the same DBMS
    /// samples the same values.
    fn sample_order(&self, position: usize, name: &str, ty: &ColumnOf<Self>) -> String;
}

/// Fills the database behind `session`, starting from `schema` (empty but
/// for what the provider records of the server), and returns the model of
/// what it made.
pub fn populate<P: Population>(
    population: &P,
    rng: &mut Rng,
    session: &mut Session,
    mut schema: P::Schema,
) -> Result<P::Schema, ExecError> {
    for t in 0..rng.random_range(1..=3) {
        population.create_table(rng, session, &mut schema, t)?;
    }
    for _ in 0..rng.random_range(P::INDEXES) {
        create_index(population, rng, session, &mut schema)?;
    }
    let writable: Vec<TableOf<P>> = tables(&schema).cloned().collect();
    for table in &writable {
        for _ in 0..rng.random_range(2..=5) {
            insert(population, rng, session, &schema, table)?;
        }
    }
    for _ in 0..rng.random_range(0..=3) {
        let Some(table) = writable.choose(rng) else {
            break;
        };
        match rng.random_range(0..3 + P::MAINTENANCE) {
            0 => {
                // One column the statement may write, set to the
                // provider's value or an expression of its category.
                let cols = writable_columns(table);
                if let Some((c, ty)) = cols.choose(rng).cloned() {
                    let value = population.update_value(&schema, rng, &ty);
                    dml::update(rng, session, (&schema, table), (&c, value), P::DIALECT)?;
                }
            }
            1 => dml::delete(rng, session, &schema, table, P::DIALECT)?,
            2 => insert(population, rng, session, &schema, table)?,
            which => population.maintenance(rng, session, table, which - 3)?,
        }
    }
    for v in 0..rng.random_range(0..=2) {
        create_view(population, rng, session, &mut schema, v)?;
    }
    sample_values(population, session, &mut schema)?;
    Ok(schema)
}

/// The schema's tables that take rows (not its views).
pub fn tables<S: ServerSchema>(schema: &S) -> impl Iterator<Item = &S::Table> {
    schema.parts().0.iter().filter(|t| t.writable())
}

/// A table that takes rows, drawn from `rng`; `None` if there is none.
pub fn random_table<'s, S: ServerSchema>(rng: &mut Rng, schema: &'s S) -> Option<&'s S::Table> {
    tables(schema).collect::<Vec<_>>().choose(rng).copied()
}

/// The columns a statement may write: all but generated ones.
pub fn writable_columns<T: ServerTable>(table: &T) -> Vec<(String, T::Type)> {
    table
        .columns()
        .iter()
        .filter(|(c, _)| !table.generated().contains(c))
        .cloned()
        .collect()
}

fn create_index<P: Population>(
    population: &P,
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut P::Schema,
) -> Result<(), ExecError> {
    let Some(table) = random_table(rng, &*schema).cloned() else {
        return Ok(());
    };
    let columns = population.index_columns(&table);
    if columns.is_empty() {
        return Ok(());
    }
    let name = format!("i{}", P::parts_mut(schema).1.len());
    let n = rng.random_range(1..=columns.len().min(3));
    let parts: Vec<String> = columns
        .choose_multiple(rng, n)
        .map(|(c, ty)| population.index_part(rng, schema, c, ty))
        .collect();
    let unique = rng.random_bool(0.2);
    let text = format!(
        "CREATE {}INDEX {name} ON {} ({})",
        if unique { "UNIQUE " } else { "" },
        table.name(),
        parts.join(", ")
    );
    if session.execute_sql(StatementKind::CreateIndex, text)? {
        P::parts_mut(schema).1.push(Index {
            name,
            table: table.name().to_string(),
            unique,
        });
        population.index_created(schema, table.name(), unique);
    }
    Ok(())
}

fn insert<P: Population>(
    population: &P,
    rng: &mut Rng,
    session: &mut Session,
    schema: &P::Schema,
    table: &TableOf<P>,
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
                .map(|(_, ty)| population.stored_value(&mut g, rng, ty).to_sql(P::DIALECT))
                .collect();
            format!("({})", row.join(", "))
        })
        .collect();
    let names: Vec<&str> = cols.iter().map(|(c, _)| c.as_str()).collect();
    let (verb, tail) = population.insert_form(&mut g, rng, table, &cols);
    session.execute_sql(
        StatementKind::Insert,
        format!(
            "{verb} {} ({}) VALUES {}{tail}",
            table.name(),
            names.join(", "),
            values.join(", ")
        ),
    )?;
    Ok(())
}

fn create_view<P: Population>(
    population: &P,
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut P::Schema,
    v: usize,
) -> Result<(), ExecError> {
    let Some(base) = random_table(rng, &*schema).cloned() else {
        return Ok(());
    };
    let typed = base.typed_columns(base.name());
    let mut g = ExprGen::new(&*schema, true);
    let mut items = Vec::new();
    let mut columns = Vec::new();
    for i in 0..rng.random_range(1..=3) {
        let (e, category) = population.view_item(&mut g, rng, &typed);
        items.push(format!("{} AS c{i}", e.to_sql(P::DIALECT)));
        columns.push((format!("c{i}"), population.view_column(category, &base)));
    }
    // DISTINCT only over columns whose equal values are identical: of
    // 'b' and 'B' under a case-insensitive collation it keeps either, and
    // which one depends on the plan (a condition pushed below it picks
    // the other), so every query reading the view would be undetermined.
    let exact = columns
        .iter()
        .all(|(_, t)| population.exact(t.declared().1));
    let mut text = format!(
        "CREATE VIEW v{v} AS SELECT {}{} FROM {}",
        if exact && rng.random_bool(0.2) {
            "DISTINCT "
        } else {
            ""
        },
        items.join(", "),
        base.name()
    );
    if rng.random_bool(0.5) {
        let p = g.predicate(rng, &typed, 1);
        text.push_str(&format!(" WHERE {}", p.to_sql(P::DIALECT)));
    }
    if session.execute_sql(StatementKind::CreateView, text)? {
        let view = population.view(format!("v{v}"), columns);
        P::parts_mut(schema).0.push(view);
    }
    Ok(())
}

/// Samples constants from every table (see [`Population::sample_order`]).
fn sample_values<P: Population>(
    population: &P,
    session: &mut Session,
    schema: &mut P::Schema,
) -> Result<(), ExecError> {
    let tables = tables(schema)
        .map(|table| SampleOf {
            table: table.name(),
            columns: table
                .columns()
                .iter()
                .filter(|(_, ty)| population.sampled(ty.declared().1))
                .enumerate()
                .map(|(i, (c, ty))| {
                    let order = population.sample_order(i + 1, c, ty);
                    (c.clone(), order, ty.declared().1)
                })
                .collect(),
        })
        .collect();
    let sampled = dml::sample(session, tables)?;
    *P::parts_mut(schema).2 = sampled;
    Ok(())
}
