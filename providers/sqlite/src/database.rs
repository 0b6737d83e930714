//! What lancet generated in one SQLite database: the core view of its
//! tables, views and indexes, and what only SQLite needs to know about
//! them. The query generator reads this model, never the core one alone
//! ([`crate::query_gen::Generated`] hands it to the runner).

use lancet_core::Schema;
use std::collections::BTreeSet;

/// One generated SQLite database.
#[derive(Clone, Debug, Default)]
pub struct SqliteDatabase {
    pub schema: Schema,
    /// Indexes with a WHERE clause: INDEXED BY one of them fails with "no
    /// query solution" unless the query's WHERE implies the index's.
    pub partial_indexes: BTreeSet<String>,
    /// Tables declared WITHOUT ROWID: they have no `rowid` column to read.
    pub without_rowid: BTreeSet<String>,
}

impl SqliteDatabase {
    /// Whether INDEXED BY `index` can always be planned.
    pub fn is_full_index(&self, index: &str) -> bool {
        !self.partial_indexes.contains(index)
    }
}
