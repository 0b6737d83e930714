//! The provider's model of a generated database: its tables and views with
//! typed columns, which the query generator reads.

use crate::types::{Category, MyType};
use lancet_core::schema::{Column, Index, Relation, RelationKind, Schema};
use lancet_core::{Expr, TypeName, Value};

/// A column and the category of its type.
#[derive(Clone, Debug, PartialEq)]
pub struct TypedColumn {
    pub expr: Expr,
    pub category: Category,
}

/// A table or view.
#[derive(Clone, Debug)]
pub struct MyTable {
    pub name: String,
    pub kind: RelationKind,
    pub columns: Vec<(String, MyType)>,
    /// Whether inserts go into it (a view takes none).
    pub writable: bool,
    /// Its generated columns, which no statement writes.
    pub generated: Vec<String>,
}

impl MyTable {
    /// The columns as `alias.column`; a BIT column as `(alias.column +
    /// 0)`. MariaDB labels some results of BIT type (a BIT column read
    /// through a derived table, a UNION or MAX) yet sends them as decimal
    /// text instead of bits, so a bare BIT value in a result cannot be
    /// read back reliably, by lancet or by the `mariadb` client; as a
    /// number it always can.
    pub fn typed_columns(&self, alias: &str) -> Vec<TypedColumn> {
        self.columns
            .iter()
            .map(|(name, ty)| {
                let column = Expr::column(Some(alias), name);
                TypedColumn {
                    expr: if ty.is_bit() {
                        Expr::binary(lancet_core::BinaryOp::Add, column, Expr::int(0))
                    } else {
                        column
                    },
                    category: ty.category,
                }
            })
            .collect()
    }
}

/// Values read from the tables after they were filled, by category, so
/// that constants in predicates hit rows.
#[derive(Clone, Debug, Default)]
pub struct Sampled(pub Vec<(Category, Value)>);

/// One generated database.
#[derive(Clone, Debug, Default)]
pub struct MySchema {
    /// The server, whose known bugs the generator steers clear of (see
    /// [`MySchema::avoids_known_bugs`]).
    pub server: Option<crate::ServerKind>,
    pub relations: Vec<MyTable>,
    pub indexes: Vec<Index>,
    pub sampled: Sampled,
}

impl MySchema {
    /// Whether the generator leaves out shapes that meet MariaDB bugs
    /// lancet has found (README, *Bugs lancet has found*), so that one
    /// known bug does not flood every run: `NOT (x IS [NOT] TRUE|FALSE)`
    /// and `REPLACE(s, '', NULL)` (not NULL, yet taken to reject NULLs)
    /// turning an outer join into an inner one, `CAST(double AS CHAR)`
    /// truncated under UNION ALL, and a crash on a bare grouping column
    /// under NOT and OR in HAVING (numbers are compared with 0 instead).
    pub fn avoids_known_bugs(&self) -> bool {
        self.server == Some(crate::ServerKind::MariaDb)
    }

    pub fn tables(&self) -> impl Iterator<Item = &MyTable> {
        self.relations.iter().filter(|t| t.writable)
    }

    /// A base table, drawn from `rng`; `None` if there is none.
    pub fn random_table(&self, rng: &mut lancet_core::Rng) -> Option<MyTable> {
        use rand::seq::IndexedRandom;
        self.tables()
            .collect::<Vec<_>>()
            .choose(rng)
            .map(|t| (*t).clone())
    }

    /// The core view of the schema, for the rest of lancet.
    pub fn to_core(&self) -> Schema {
        Schema {
            relations: self
                .relations
                .iter()
                .map(|t| Relation {
                    name: t.name.clone(),
                    kind: t.kind,
                    columns: t
                        .columns
                        .iter()
                        .map(|(name, ty)| Column {
                            name: name.clone(),
                            ty: Some(TypeName(ty.sql.clone())),
                            not_null: false,
                            primary_key: false,
                            unique: false,
                            collation: None,
                        })
                        .collect(),
                })
                .collect(),
            indexes: self.indexes.clone(),
        }
    }
}
