//! What a provider knows about the database it generated: tables, views,
//! columns and indexes, so that queries name only what exists.

use crate::ast::TypeName;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Column {
    pub name: String,
    /// The declared type, if any (SQLite columns may have none).
    pub ty: Option<TypeName>,
    pub not_null: bool,
    pub primary_key: bool,
    pub unique: bool,
    pub collation: Option<String>,
    /// Computed from other columns (`GENERATED ALWAYS AS`, `AS (...)`):
    /// no INSERT or UPDATE may set it. An oracle that writes a column
    /// (dqe's marker) leaves it alone.
    #[serde(default)]
    pub generated: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RelationKind {
    Table,
    View,
}

/// A table or view that queries can read from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Relation {
    pub name: String,
    pub kind: RelationKind,
    pub columns: Vec<Column>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Index {
    pub name: String,
    pub table: String,
    pub unique: bool,
}

/// The schema of one generated database.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Schema {
    pub relations: Vec<Relation>,
    pub indexes: Vec<Index>,
}

impl Schema {
    pub fn tables(&self) -> impl Iterator<Item = &Relation> {
        self.relations
            .iter()
            .filter(|r| r.kind == RelationKind::Table)
    }

    pub fn views(&self) -> impl Iterator<Item = &Relation> {
        self.relations
            .iter()
            .filter(|r| r.kind == RelationKind::View)
    }

    pub fn relation(&self, name: &str) -> Option<&Relation> {
        self.relations.iter().find(|r| r.name == name)
    }

    pub fn indexes_on<'a>(&'a self, table: &'a str) -> impl Iterator<Item = &'a Index> + 'a {
        self.indexes.iter().filter(move |i| i.table == table)
    }
}
