//! The provider's model of a generated database: its tables and views with
//! typed columns, which the query generator reads through the server
//! toolkit's [`lancet_server::ServerSchema`] (implemented in
//! [`crate::expr`]).

use crate::types::{Category, DuckType};
use lancet_core::schema::{Column, Index, RelationKind};
use lancet_core::TypeName;

/// A column and the category of its type.
pub type TypedColumn = lancet_server::TypedColumn<Category>;

/// Generates expressions over some columns (and, for subqueries, the
/// schema), with the menus of [`crate::expr`].
pub type ExprGen<'s> = lancet_server::ExprGen<'s, DuckSchema>;

/// Values read from the tables after they were filled, by category.
pub type Sampled = lancet_server::Sampled<Category>;

/// A table or view.
#[derive(Clone, Debug)]
pub struct DuckTable {
    pub name: String,
    pub kind: RelationKind,
    pub columns: Vec<(String, DuckType)>,
    /// Whether inserts go into it (a view takes none).
    pub writable: bool,
    /// Its generated columns, which no statement writes.
    pub generated: Vec<String>,
    /// How many keys (PRIMARY KEY, UNIQUE) an INSERT may conflict on.
    pub keys: usize,
    /// Each column as declared without constraints: its name, its type
    /// (with its collation) and a generated column's expression. What a
    /// twin repeats ([`crate::twins`]); empty for a view.
    pub shape: Vec<String>,
}

impl DuckTable {
    pub fn typed_columns(&self, alias: &str) -> Vec<TypedColumn> {
        lancet_server::ServerTable::typed_columns(self, alias)
    }
}

impl lancet_server::ServerTable for DuckTable {
    type Type = DuckType;

    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> RelationKind {
        self.kind
    }

    fn columns(&self) -> &[(String, DuckType)] {
        &self.columns
    }

    fn writable(&self) -> bool {
        self.writable
    }

    fn generated(&self) -> &[String] {
        &self.generated
    }

    /// The column's collation goes into the core schema: oracles that
    /// compare values of a collated column know they are not exact.
    fn core_column(&self, name: &str, ty: &DuckType) -> Column {
        Column {
            name: name.to_string(),
            ty: Some(TypeName(ty.sql.clone())),
            not_null: false,
            primary_key: false,
            unique: false,
            collation: ty.collation.map(str::to_string),
            generated: self.generated.iter().any(|g| g == name),
        }
    }
}

/// One generated database.
#[derive(Clone, Debug, Default)]
pub struct DuckSchema {
    pub relations: Vec<DuckTable>,
    pub indexes: Vec<Index>,
    pub sampled: Sampled,
}
