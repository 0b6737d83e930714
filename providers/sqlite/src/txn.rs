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
//! Schedules may move rows to new keys (`k` is the rowid), have a UNIQUE
//! index on `v`, and hold `INSERT ... ON CONFLICT (k) DO UPDATE` (from
//! 3.24.0, sqlite.org/lang_upsert.html), `INSERT OR IGNORE` and `UPDATE
//! OR IGNORE` (sqlite.org/lang_conflict.html: IGNORE "skips the one row
//! that contains the constraint violation"); a duplicate key fails with
//! SQLITE_CONSTRAINT_PRIMARYKEY or SQLITE_CONSTRAINT_UNIQUE.
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
use lancet_core::txn::{
    Conflict, Form, IndexV, IsolationLevel, KnobScope, LevelRules, ReadView, Transactions, TxnKnob,
    WriteRule,
};
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

/// The journal modes lancet draws, WAL first (the mode of a database
/// whose record names none). "OFF" is left out: without a journal
/// ROLLBACK "results in undefined behavior" (sqlite.org/pragma.html).
pub const JOURNAL_MODES: &[&str] = &["wal", "delete", "truncate", "persist", "memory"];

/// The journal mode, a database's knob: in a rollback-journal mode a
/// reader's SHARED lock makes a writer's COMMIT fail with SQLITE_BUSY and
/// no reader ever sees a commit newer than its first read, which leaves
/// the level's rules as they are in WAL mode (sqlite.org/lockingv3.html,
/// sqlite.org/wal.html); WAL cannot be left while another connection has
/// the file open, so the mode is the database's, set when its sessions
/// open.
pub fn journal_mode_knob() -> TxnKnob {
    TxnKnob::new(
        "journal_mode",
        JOURNAL_MODES,
        KnobScope::Database,
        "WAL's snapshots against a rollback journal's SHARED/RESERVED/PENDING/EXCLUSIVE locks \
         (sqlite.org/lockingv3.html, sqlite.org/wal.html, sqlite.org/pragma.html#pragma_journal_mode)",
    )
}

/// Result codes of the conflicts SQLite's transactions allow.
pub fn conflict(error: &DbError) -> Option<Conflict> {
    match error.code.as_deref()? {
        "SQLITE_BUSY" => Some(Conflict::LockTimeout),
        "SQLITE_BUSY_SNAPSHOT" => Some(Conflict::Serialization),
        "SQLITE_CONSTRAINT_PRIMARYKEY" | "SQLITE_CONSTRAINT_UNIQUE" => Some(Conflict::DuplicateKey),
        _ => None,
    }
}

/// The first release with upserts (`ON CONFLICT ... DO UPDATE`), 3.24.0.
const UPSERT_VERSION: i32 = 3_024_000;

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

    fn knobs(&self) -> Vec<TxnKnob> {
        vec![journal_mode_knob()]
    }

    fn setting_sql(&self, name: &str, value: &str) -> String {
        format!("PRAGMA {name} = {value}")
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

    fn create_table(&self, name: &str, index: IndexV, _placement: Option<&str>) -> Vec<String> {
        lancet_core::txn::table_statements(name, index, "INTEGER", "")
    }

    fn spelling(&self, form: Form) -> Option<String> {
        match form {
            Form::UpsertAdd => (self.version_number() >= UPSERT_VERSION).then(|| {
                "INSERT INTO {table} (k, v) VALUES ({k}, {v}) ON CONFLICT (k) DO UPDATE SET v = v + {c}"
                    .into()
            }),
            Form::InsertIgnore => Some("INSERT OR IGNORE INTO {table} (k, v) VALUES ({k}, {v})".into()),
            Form::UpdateIgnore => Some("UPDATE OR IGNORE {table} SET {set}{where}".into()),
        }
    }

    fn key_updates(&self) -> bool {
        true
    }

    fn unique_v(&self) -> bool {
        true
    }

    fn session_setup(&self) -> Vec<String> {
        // The journal mode is the database's knob (`journal_mode_knob`).
        // No fsync: durability after a power loss is no part of
        // isolation, and a rollback journal's syncs made a schedule ten
        // times slower (sqlite.org/pragma.html#pragma_synchronous).
        vec![
            "PRAGMA busy_timeout = 0".into(),
            "PRAGMA synchronous = OFF".into(),
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
        "sqlite3 lancet_repro.db (in the journal mode the setup script sets)".into()
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
        assert_eq!(
            conflict(&e("SQLITE_CONSTRAINT_PRIMARYKEY")),
            Some(Conflict::DuplicateKey)
        );
        assert_eq!(conflict(&e("SQLITE_CONSTRAINT_NOTNULL")), None);
        assert!(file_of("../etc/passwd").is_err());
        assert!(file_of("lancet_ab_0_1").is_ok());
    }
}
