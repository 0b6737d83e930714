//! The tables and views of one generated PostgreSQL database, with the
//! PostgreSQL type of every column (the core schema keeps type names; this
//! keeps what expressions need).

use crate::types::PgType;
use crate::types::{Category, TypedColumn};
use lancet_core::schema::{Column, RelationKind};
use lancet_core::{Expr, TypeName};

/// A table, partition, child table or view.
#[derive(Clone, Debug)]
pub struct PgTable {
    pub name: String,
    pub columns: Vec<(String, PgType)>,
    pub kind: RelationKind,
    /// Columns a new row may be given (not GENERATED).
    pub insertable: Vec<String>,
    /// The single-column PRIMARY KEY, if any (for ON CONFLICT).
    pub primary_key: Option<String>,
    /// Whether rows may be inserted directly (not a view).
    pub writable: bool,
    /// Whether another table may inherit from it (not partitioned, not a partition).
    pub inheritable: bool,
    /// Where its rows live (Citus); plain PostgreSQL keeps every table [`Placement::Plain`].
    pub placement: Placement,
    /// The plain local copy with the same rows, written by the same
    /// statements (the dist-vs-local oracle reads it), if the flavor keeps twins.
    pub twin: Option<String>,
    /// What the DDL promises of its columns.
    pub facts: ColumnFacts,
}

/// What a table's DDL promises of its columns, for queries that rely on
/// it (a self-join on a unique key) and DDL that must avoid a column.
#[derive(Clone, Debug, Default)]
pub struct ColumnFacts {
    /// Columns whose values are distinct across every row the table's name
    /// reads (UNIQUE or a one-column PRIMARY KEY, on a table no other
    /// inherits from; NULLs may repeat unless NOT NULL).
    pub unique: Vec<String>,
    pub not_null: Vec<String>,
    /// PostgreSQL 18's virtual generated columns: never in an index, a
    /// unique constraint or extended statistics.
    pub virtual_generated: Vec<String>,
}

/// Where a table's rows live on a Citus cluster. Queries must know it:
/// Citus refuses joins of distributed tables that are not on their
/// distribution columns, so a generator that ignores placement tests
/// mostly Citus's error messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// An ordinary PostgreSQL table (on the coordinator only, unknown to Citus).
    #[default]
    Plain,
    /// Hash-distributed in shards over the workers.
    Distributed {
        /// The distribution column.
        column: String,
        /// Tables of one group have co-located shards: joins on their
        /// distribution columns are pushed down whole.
        colocation: u32,
        /// Its number of shards (that of its group).
        shards: u32,
    },
    /// Replicated whole to every node.
    Reference,
    /// A Citus local table: on the coordinator, but in Citus's metadata.
    CitusLocal,
}

impl Placement {
    pub fn is_distributed(&self) -> bool {
        matches!(self, Placement::Distributed { .. })
    }

    /// The distribution column, for a distributed table.
    pub fn column(&self) -> Option<&str> {
        match self {
            Placement::Distributed { column, .. } => Some(column),
            _ => None,
        }
    }
}

impl PgTable {
    /// The columns an index or extended statistics may name (not virtual
    /// generated ones).
    pub fn indexable_columns(&self) -> Vec<&(String, PgType)> {
        self.columns
            .iter()
            .filter(|(name, _)| !self.facts.virtual_generated.contains(name))
            .collect()
    }

    /// The columns as `alias.cN`, typed.
    pub fn typed_columns(&self, alias: &str) -> Vec<TypedColumn> {
        lancet_server::ServerTable::typed_columns(self, alias)
    }

    /// The columns unqualified (DDL inside the table's own definition).
    pub fn bare_columns(&self) -> Vec<TypedColumn> {
        self.columns
            .iter()
            .map(|(name, ty)| TypedColumn {
                expr: Expr::column(None, name),
                category: ty.category,
            })
            .collect()
    }
}

/// Everything queries may read.
#[derive(Clone, Debug, Default)]
pub struct PgSchema {
    pub relations: Vec<PgTable>,
    /// Values from the tables' rows, as literals of their category, for
    /// comparisons' constants (see [`crate::populate::sample_values`]).
    pub sampled: Sampled,
    /// What the server's release lets the generator write.
    pub features: crate::VersionFeatures,
    /// The twin recipe a campaign file declared for an extension, if any
    /// ([`crate::recipes`]).
    pub declared: Option<lancet_core::DeclaredRecipe>,
}

/// Generates expressions over some columns (and, for subqueries, the
/// schema), with the menus of [`crate::expr`].
pub type ExprGen<'s> = lancet_server::ExprGen<'s, PgSchema>;

/// Constants taken from the data: a comparison with one selects rows,
/// where the generator's own constants mostly miss small tables.
pub type Sampled = lancet_server::Sampled<Category>;

impl PgSchema {
    /// Whether any table is distributed (Citus): queries must then join
    /// distributed tables on their distribution columns.
    pub fn has_distributed(&self) -> bool {
        self.relations.iter().any(|t| t.placement.is_distributed())
    }

    /// Whether an UPDATE or DELETE of `t` may have subqueries. Citus (13.2
    /// and 14.0) sends `UPDATE plain SET c = (SELECT ... FROM reference)`
    /// (and the like in WHERE) to a worker, where the plain table does not
    /// exist (42P01), and fails on `UPDATE reference ... WHERE x IN (SELECT
    /// ... FROM plain)` or `DELETE FROM plain WHERE NOT EXISTS (SELECT ...
    /// FROM distributed)` with XX000 "relation ... is not distributed":
    /// bugs lancet met in most Citus runs, so not generated again.
    pub fn modifications_may_have_subqueries(&self, t: &PgTable) -> bool {
        !(matches!(t.placement, Placement::Plain | Placement::Reference) && self.has_citus_tables())
    }

    /// Whether any table is in Citus's metadata (distributed, reference or
    /// Citus local).
    pub fn has_citus_tables(&self) -> bool {
        self.relations
            .iter()
            .any(|t| t.placement != Placement::Plain)
    }
}

impl lancet_server::ServerTable for PgTable {
    type Type = PgType;

    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> RelationKind {
        self.kind
    }

    fn columns(&self) -> &[(String, PgType)] {
        &self.columns
    }

    fn writable(&self) -> bool {
        self.writable
    }

    /// With what the DDL promises: NOT NULL, the primary key, UNIQUE.
    fn core_column(&self, name: &str, ty: &PgType) -> Column {
        Column {
            name: name.to_string(),
            ty: Some(TypeName(ty.name.clone())),
            not_null: self.facts.not_null.iter().any(|c| c == name),
            primary_key: self.primary_key.as_deref() == Some(name),
            unique: self.facts.unique.iter().any(|c| c == name),
            collation: None,
            generated: self.writable && !self.insertable.iter().any(|c| c == name),
        }
    }
}
