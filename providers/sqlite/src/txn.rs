//! SQLite's transactions as the transaction oracle models them, from
//! "Isolation In SQLite" (sqlite.org/isolation.html) and "Write-Ahead
//! Logging" (sqlite.org/wal.html):
//! - one level, SERIALIZABLE: "all transactions in SQLite show
//!   serializable isolation";
//! - in WAL mode a reader sees the database as of the start of its read
//!   transaction, which a DEFERRED transaction begins at its first
//!   statement (`BEGIN DEFERRED`) or at `BEGIN IMMEDIATE`, and its own
//!   changes;
//! - one writer at a time: a second writer fails at once with SQLITE_BUSY
//!   (lancet sets no busy timeout), as does a second `BEGIN IMMEDIATE`, and a transaction whose snapshot is
//!   older than the last commit cannot become a writer: SQLITE_BUSY_SNAPSHOT;
//! - `ROLLBACK TO SAVEPOINT` undoes the writes since and "does not cancel
//!   the transaction" (sqlite.org/lang_savepoint.html): its snapshot and
//!   write lock stay (seen on 3.40: another `BEGIN IMMEDIATE` still fails),
//!   and a SAVEPOINT reads nothing, so it takes no snapshot.
//!
//! The sessions share a database file in the system's temporary
//! directory, removed when the database is done. Each session runs in a
//! worker process of its own where crash isolation is on (the default of
//! `fuzz`), so that a crash of the library is a `crash` finding of the
//! schedule, not the end of the run; a build loaded with `--sqlite-lib`
//! serves them as it serves every database.

use crate::connection::{SqliteConnection, DEFAULT_TIME_LIMIT};
use crate::dynamic::DynamicConnection;
use crate::SqliteProvider;
use lancet_core::txn::{Conflict, IsolationLevel, LevelRules, ReadView, Transactions, WriteRule};
use lancet_core::{Connection, DbError, OwnedDatabase};
use std::path::PathBuf;
use std::sync::Arc;

const SOURCE: &str = "sqlite.org/isolation.html, sqlite.org/wal.html";

/// How `BEGIN IMMEDIATE` is named among the level's modes.
pub const IMMEDIATE: &str = "immediate";

/// The rules of SQLite's one level: `BEGIN DEFERRED` (the default mode)
/// and `BEGIN IMMEDIATE`.
pub fn rules() -> Vec<LevelRules> {
    let deferred = LevelRules {
        // A commit conflicts by the pages it wrote: one that rewrote a
        // value as it was may leave the database as it was.
        same_value_is_no_change: true,
        ..LevelRules::new(
            IsolationLevel::Serializable,
            ReadView::FirstStatement,
            WriteRule::SnapshotOrAbort,
            false,
            SOURCE,
        )
    };
    // "IMMEDIATE causes the database connection to start a new write
    // immediately, without waiting for a write statement": its read
    // snapshot is taken at BEGIN, and a second BEGIN IMMEDIATE fails with
    // SQLITE_BUSY while one is open (sqlite.org/lang_transaction.html).
    let immediate = LevelRules {
        read_view: ReadView::Begin,
        mode: Some(IMMEDIATE.to_string()),
        exclusive_begin: true,
        source: format!("{SOURCE}, sqlite.org/lang_transaction.html"),
        ..deferred.clone()
    };
    vec![deferred, immediate]
}

/// Result codes of the conflicts SQLite's transactions allow.
pub fn conflict(error: &DbError) -> Option<Conflict> {
    match error.code.as_deref()? {
        "SQLITE_BUSY" => Some(Conflict::LockTimeout),
        "SQLITE_BUSY_SNAPSHOT" => Some(Conflict::Serialization),
        _ => None,
    }
}

/// The file of database `name`, which only lancet's names may be.
fn file_of(name: &str) -> anyhow::Result<PathBuf> {
    anyhow::ensure!(
        name.starts_with(lancet_core::DatabaseId::PREFIX)
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
        "refusing a database file for the name '{name}'"
    );
    Ok(std::env::temp_dir().join(format!("{name}.sqlite")))
}

impl Transactions for SqliteProvider {
    fn levels(&self) -> Vec<LevelRules> {
        rules()
    }

    fn begin(&self, _level: IsolationLevel, mode: Option<&str>) -> Vec<String> {
        if mode == Some(IMMEDIATE) {
            vec!["BEGIN IMMEDIATE".into()]
        } else {
            vec!["BEGIN DEFERRED".into()]
        }
    }

    /// Savepoints (3.6.8+, every release lancet loads;
    /// sqlite.org/lang_savepoint.html) and subqueries; no row locks, so no
    /// locking reads.
    fn more_statements(&self) -> lancet_core::txn::MoreStatements {
        lancet_core::txn::MoreStatements {
            savepoints: true,
            reads_before_rollback_to: true,
            subqueries: true,
            ..Default::default()
        }
    }

    fn create_table(&self, name: &str, index_v: bool, _placement: Option<&str>) -> Vec<String> {
        lancet_core::txn::table_statements(name, index_v, "INTEGER", "")
    }

    fn session_setup(&self) -> Vec<String> {
        vec![
            "PRAGMA journal_mode = WAL".into(),
            "PRAGMA busy_timeout = 0".into(),
        ]
    }

    fn conflict(&self, error: &DbError) -> Option<Conflict> {
        conflict(error)
    }

    fn open_session(&self, db: &OwnedDatabase) -> anyhow::Result<Box<dyn Connection>> {
        let path = file_of(&db.name)?;
        Ok(match (&self.workers, &self.library) {
            (Some(workers), _) => Box::new(workers.open_file(&path)?),
            (None, Some(lib)) => Box::new(DynamicConnection::open_file(
                Arc::clone(lib),
                &path,
                DEFAULT_TIME_LIMIT,
            )?),
            (None, None) => Box::new(SqliteConnection::open_file(&path, DEFAULT_TIME_LIMIT)?),
        })
    }

    fn client_command(&self) -> String {
        "sqlite3 lancet_repro.db (in WAL mode: PRAGMA journal_mode = WAL)".into()
    }

    fn release(&self, db: &OwnedDatabase) {
        if let Ok(path) = file_of(&db.name) {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut p = path.clone().into_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_is_a_lock_conflict_and_a_stale_snapshot_a_serialization_one() {
        let e = |code: &str| DbError::statement(Some(code.into()), "x");
        assert_eq!(conflict(&e("SQLITE_BUSY")), Some(Conflict::LockTimeout));
        assert_eq!(
            conflict(&e("SQLITE_BUSY_SNAPSHOT")),
            Some(Conflict::Serialization)
        );
        assert_eq!(conflict(&e("SQLITE_CONSTRAINT_PRIMARYKEY")), None);
        assert!(file_of("../etc/passwd").is_err());
        assert!(file_of("lancet_ab_0_1").is_ok());
    }
}
