//! The toolkit of providers of typed DBMSs (PostgreSQL, MySQL/MariaDB,
//! DuckDB): what their generators share, written once.
//!
//! A provider describes its DBMS with three traits and gets the rest:
//!
//! - [`ServerCategory`], on its category type (what an expression's value
//!   is, for choosing operators): the categories, their literals, how type
//!   names and expression shapes map to them.
//! - [`ServerTable`] (with [`ColumnType`]), on its table model: name, kind,
//!   typed columns, what PQS can evaluate, what the core schema records.
//! - [`ServerSchema`], on its schema model: the relations and sampled
//!   constants, and its expression and predicate menus, which pick among
//!   the builders of [`ExprGen`] with the provider's own weights and
//!   function catalogue.
//!
//! In return: [`ExprGen`] (leaves from columns, sampled data and literals;
//! CASE, casts, calls, comparisons, BETWEEN, IN, LIKE, regular
//! expressions, EXISTS/IN/ANY/ALL subqueries), [`QueryCore`] (typing of
//! scope columns, reuse of productive FROM clauses, widened predicates,
//! PQS pivot tables and predicates, join conditions, aggregate
//! arguments, derived tables and joined FROM clauses by a [`JoinMenu`]),
//! [`ExactAggregates`] (aggregates and window calls whose value the rows
//! determine),
//! [`dml`] (DELETE, UPDATE, constants sampled from the data),
//! [`populate`] (the pipeline that fills a database, for providers that
//! implement [`populate::Population`]), [`pivot`] (PQS's evaluator),
//! [`literals`] (edge values shared by every DBMS), [`read_plain`] (PQS
//! values), [`to_core`] and [`ServerDatabase`]. Dependencies point one
//! way: this crate knows lancet-core, never a provider.
//!
//! May not touch: a connection or a DBMS by name (what differs between
//! DBMSs is stated by the provider through the traits above), the
//! oracles, the runner, findings.

mod derived;
pub mod dml;
mod expr;
mod factors;
pub mod folded;
mod from;
mod grouped;
pub mod literals;
mod model;
pub mod pivot;
pub mod populate;
mod query;
mod window;

pub use expr::ExprGen;
pub use factors::{one_table_from, table_factor};
pub use from::JoinMenu;
pub use model::{to_core, Sampled, ServerDatabase, TypedColumn};
pub use query::{equal_pair, QueryCore};
pub use window::ExactAggregates;

use lancet_core::schema::{Column, Index, RelationKind};
use lancet_core::{Expr, QueryGenerator, Rng, TypeName, Value};
use pivot::{Kind, Semantics, V};
use std::fmt::Debug;

/// What an expression's value is, for the generator: which operators and
/// functions fit it. Implemented on the provider's category enum.
pub trait ServerCategory: Copy + Eq + Debug + Send + Sync + 'static {
    /// Every category, for drawing one at random.
    const CATEGORIES: &'static [Self];
    /// A random literal of a category, written so that the DBMS reads it
    /// as one.
    const LITERAL: fn(&mut Rng, Self) -> Expr;
    /// A type name for the category, for scope columns whose exact type
    /// is not known.
    fn scope_type(self) -> &'static str;
    /// The category of a type name as a scope column or a cast carries it.
    fn of_type_name(name: &str) -> Self;
    /// The category of an expression the column lookup did not know,
    /// from its shape (a literal, a cast, a call); `known` types a
    /// subexpression the same way.
    fn of_shape(expr: &Expr, known: &dyn Fn(&Expr) -> Option<Self>) -> Option<Self>;
    /// Whether `=` compares values of the category (PostgreSQL's bytea
    /// is left out of IN subqueries).
    fn comparable(self) -> bool {
        true
    }
}

/// A column type as the provider declares it.
pub trait ColumnType: Clone {
    type Category: ServerCategory;
    /// The type as CREATE TABLE writes it, and its category.
    fn declared(&self) -> (&str, Self::Category);
    /// How a query reads a column of the type (MySQL reads BIT as a
    /// number, see its schema); the column itself by default.
    fn read(&self, column: Expr) -> Expr {
        column
    }
}

/// A table, partition or view of the provider's schema model.
pub trait ServerTable: Clone {
    type Type: ColumnType;
    fn name(&self) -> &str;
    fn kind(&self) -> RelationKind;
    fn columns(&self) -> &[(String, Self::Type)];
    /// Whether rows may be inserted directly (not a view): PQS pivots
    /// and the populating statements read only these.
    fn writable(&self) -> bool;
    /// Its generated columns, which no statement writes; none by default.
    fn generated(&self) -> &[String] {
        &[]
    }
    /// The core schema's column: its type name, and what the DDL
    /// promises where the provider records it.
    fn core_column(&self, name: &str, ty: &Self::Type) -> Column {
        Column {
            name: name.to_string(),
            ty: Some(TypeName(ty.declared().0.to_string())),
            not_null: false,
            primary_key: false,
            unique: false,
            collation: None,
            generated: self.generated().iter().any(|g| g == name),
        }
    }

    /// The columns as `alias.column`, read as the type says, typed.
    fn typed_columns(&self, alias: &str) -> Vec<TypedColumn<CategoryOf<Self>>> {
        self.columns()
            .iter()
            .map(|(name, ty)| TypedColumn {
                expr: ty.read(Expr::column(Some(alias), name)),
                category: ty.declared().1,
            })
            .collect()
    }
}

/// The category type of a table's columns.
pub type CategoryOf<T> = <<T as ServerTable>::Type as ColumnType>::Category;

/// How subqueries in predicates look: correlation and filtering shares.
#[derive(Clone, Copy, Debug)]
pub struct SubqueryShape {
    /// The share of subqueries whose WHERE also reads the outer columns.
    pub correlated: f64,
    /// The share of subqueries with a WHERE at all.
    pub filtered: f64,
}

/// Columns an expression may read.
pub type Cols<S> = [TypedColumn<<S as ServerSchema>::Category>];

/// A generator of expressions of a category to a depth.
pub type Compound<S> =
    fn(&mut ExprGen<'_, S>, &mut Rng, &Cols<S>, <S as ServerSchema>::Category, u32) -> Expr;

/// A provider's expression menus: where its weights, function catalogue
/// and known-bug rules live.
pub struct Menu<S: ServerSchema> {
    /// The share of expressions below the depth limit that are leaves.
    pub leaf_share: f64,
    /// An expression of a category that is not a leaf (depth > 0): the
    /// provider's choice among the shared forms and its own functions.
    pub compound: Compound<S>,
    /// A predicate: comparisons, connectives and tests.
    pub predicate: fn(&mut ExprGen<'_, S>, &mut Rng, &Cols<S>, u32) -> Expr,
    /// A comparison likely to hold on some rows, for widening a random
    /// predicate by OR (see [`QueryCore::predicate`]).
    pub selective: fn(&mut ExprGen<'_, S>, &mut Rng, &Cols<S>) -> Expr,
}

/// What the PQS evaluator ([`pivot`]) can read of a
/// provider's columns (`T`, its column type) and values.
pub struct Pqs<T> {
    /// The largest magnitudes it keeps integers within.
    pub semantics: Semantics,
    /// The evaluator's kind for a column type, if it supports it.
    pub kind: fn(&T) -> Option<Kind>,
    /// A pivot value as the evaluator reads it; `None` where its text
    /// form is ambiguous.
    pub read: fn(Kind, &Value) -> Option<V>,
}

/// A pivot value as the evaluator reads it where the DBMS's values are
/// plain: NULL, integers, booleans, and text without control characters
/// (whose comparison a collation may treat otherwise than byte order).
/// A provider's [`Pqs::read`] adds its own exclusions before it.
pub fn read_plain(kind: Kind, v: &Value) -> Option<V> {
    match (kind, v) {
        (_, Value::Null) => Some(V::Null),
        (Kind::Int, Value::Integer(i)) => Some(V::Int(*i)),
        (Kind::Bool, Value::Boolean(b)) => Some(V::Bool(*b)),
        (Kind::Text, Value::Text(t)) if !t.chars().any(|c| c.is_control()) => {
            Some(V::Text(t.clone()))
        }
        _ => None,
    }
}

/// The column type of a schema's tables.
pub type TypeOf<S> = <<S as ServerSchema>::Table as ServerTable>::Type;

/// One generated database of a server DBMS, as its generators read it;
/// the provider's expression and predicate menus, and what PQS reads.
pub trait ServerSchema: Clone + Send + Sized + 'static {
    type Category: ServerCategory;
    type Table: ServerTable<Type: ColumnType<Category = Self::Category>>;

    /// The expression and predicate menus.
    const MENU: Menu<Self>;
    /// What PQS reads.
    const PQS: Pqs<TypeOf<Self>>;

    /// The relations, and constants read from the data after it was
    /// filled.
    fn parts(&self) -> (&[Self::Table], &Sampled<Self::Category>);
    /// Indexes the core schema records.
    fn indexes(&self) -> Vec<Index> {
        Vec::new()
    }
    /// Subqueries' correlation and filtering: by default half correlated,
    /// 70% filtered.
    fn subquery_shape(&self) -> SubqueryShape {
        SubqueryShape {
            correlated: 0.5,
            filtered: 0.7,
        }
    }
    /// Whether the DBMS plans the cartesian product of `a` and `b`, as
    /// PQS's pivot reads two tables: by default yes.
    fn cross_joinable(&self, _a: &Self::Table, _b: &Self::Table) -> bool {
        true
    }
    /// The query generator over this database.
    fn query_generator(&self) -> Box<dyn QueryGenerator + '_>;
}
