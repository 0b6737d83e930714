//! The provider's model of a generated database: its tables and views with
//! typed columns, which the query generator reads (through the server
//! toolkit's [`lancet_server::ServerSchema`], implemented in
//! [`crate::expr`]).

use crate::types::{Category, MyType};
use lancet_core::schema::{Index, RelationKind};

/// A column and the category of its type.
pub type TypedColumn = lancet_server::TypedColumn<Category>;

/// Values read from the tables after they were filled, by category, so
/// that constants in predicates hit rows.
pub type Sampled = lancet_server::Sampled<Category>;

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
    /// Whether its engine undoes changes on ROLLBACK (InnoDB; not
    /// MyISAM, MEMORY or Aria); false for a view.
    pub transactional: bool,
    /// How the table was declared, for its twins ([`crate::twins`]);
    /// `None` for a view.
    pub declared: Option<Declared>,
}

/// A table's CREATE TABLE in parts, as a twin repeats or leaves them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Declared {
    /// Each column without its constraints: name, type (with its
    /// character set and collation) and a generated column's `AS (e)
    /// VIRTUAL|STORED`.
    pub columns: Vec<String>,
    /// Each column's constraints as declared (` NOT NULL UNIQUE`,
    /// ` DEFAULT 1`), empty where it has none.
    pub constraints: Vec<String>,
    /// The column of its PRIMARY KEY, if it has one.
    pub primary_key: Option<String>,
    /// Its storage engine (`InnoDB`, `MyISAM`, `MEMORY`, `Aria`).
    pub engine: &'static str,
    /// Whether it is partitioned (by HASH).
    pub partitioned: bool,
}

impl MyTable {
    /// The columns as `alias.column`; a BIT column as `(alias.column +
    /// 0)` (see [`MyType`]'s `read`).
    pub fn typed_columns(&self, alias: &str) -> Vec<TypedColumn> {
        lancet_server::ServerTable::typed_columns(self, alias)
    }
}

impl lancet_server::ServerTable for MyTable {
    type Type = MyType;

    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> RelationKind {
        self.kind
    }

    fn columns(&self) -> &[(String, MyType)] {
        &self.columns
    }

    fn writable(&self) -> bool {
        self.writable
    }

    fn generated(&self) -> &[String] {
        &self.generated
    }
}

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
}
