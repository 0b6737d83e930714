//! What lancet generated in one SQLite database: the core view of its
//! tables, views and indexes, and what only SQLite needs to know about
//! them. The query generator reads this model, never the core one alone
//! ([`crate::query_gen::Generated`] hands it to the runner).

use lancet_core::{Schema, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One generated SQLite database.
#[derive(Clone, Debug, Default)]
pub struct SqliteDatabase {
    pub schema: Schema,
    /// Indexes with a WHERE clause: INDEXED BY one of them fails with "no
    /// query solution" unless the query's WHERE implies the index's.
    pub partial_indexes: BTreeSet<String>,
    /// Tables declared WITHOUT ROWID: they have no `rowid` column to read.
    pub without_rowid: BTreeSet<String>,
    /// Rows in each table and view, counted once the database is
    /// populated: the query generator's cost model (see `query_gen`).
    pub row_counts: BTreeMap<String, u64>,
    /// Values sampled from the tables once populated: comparisons take
    /// their constants from here half the time, so that predicates cut
    /// through the data instead of missing it (see `expr_gen`).
    pub sampled: Vec<Value>,
    /// Each table's CREATE TABLE as it ran, and its stored (not generated)
    /// columns: the twins oracle's recipes build twins from them
    /// ([`crate::twins`]).
    pub definitions: BTreeMap<String, TableDefinition>,
}

/// A table as created: what a twin of it starts from.
#[derive(Clone, Debug)]
pub struct TableDefinition {
    pub create: crate::statements::CreateTable,
    /// The columns that take values in INSERT (not generated), in order.
    pub stored_columns: Vec<String>,
}

impl SqliteDatabase {
    /// Whether INDEXED BY `index` can always be planned.
    pub fn is_full_index(&self, index: &str) -> bool {
        !self.partial_indexes.contains(index)
    }

    /// Rows in table or view `name`; one whose rows could not be counted
    /// is taken to be large.
    pub fn rows(&self, name: &str) -> u64 {
        self.row_counts.get(name).copied().unwrap_or(UNCOUNTED_ROWS)
    }
}

/// What the cost model assumes of a relation it could not count.
pub const UNCOUNTED_ROWS: u64 = 1_000;

impl SqliteDatabase {}
