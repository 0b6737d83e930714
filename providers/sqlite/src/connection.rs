//! One in-memory SQLite database behind lancet's [`Connection`] interface,
//! and the pieces every SQLite connection shares: the linked library's
//! connection here, and the one over a library loaded at run time
//! ([`crate::dynamic`]) map values and errors through the same functions.
//!
//! Errors carry the *extended* result code's name (`SQLITE_CONSTRAINT_UNIQUE`,
//! not just `SQLITE_CONSTRAINT`) because expected-error rules match on it:
//! the finer the code, the narrower a rule can be.
//!
//! A statement that runs past the time limit is interrupted (a progress
//! handler checks the clock) and reported as a timeout, so that one
//! runaway query cannot stall a run; SQLite rolls the statement back.

use crate::knobs;
use lancet_core::{Connection, DbError, FailureKind, KnobSetting, Row, Value};
use rusqlite::types::ValueRef;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one statement may run before it is interrupted. Embedded
/// queries take well under a millisecond; one that runs for seconds is a
/// pathological join whose check would stall its thread (interrupted
/// statements skip their check, like expected errors).
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(2);

/// Virtual-machine steps between two looks at the clock.
pub(crate) const PROGRESS_STEPS: i32 = 100_000;

/// The time limit of one connection's statements. The connection starts
/// the clock before each statement; its progress handler (which SQLite
/// calls every [`PROGRESS_STEPS`] steps) interrupts the statement once
/// [`StatementClock::expired`] says so.
#[derive(Clone, Debug)]
pub(crate) struct StatementClock {
    limit: Duration,
    /// When the running statement must stop.
    deadline: Arc<Mutex<Option<Instant>>>,
}

impl StatementClock {
    pub(crate) fn new(limit: Duration) -> StatementClock {
        StatementClock {
            limit,
            deadline: Arc::new(Mutex::new(None)),
        }
    }

    /// Gives the next statement the full time limit.
    pub(crate) fn start(&self) {
        if let Ok(mut d) = self.deadline.lock() {
            *d = Some(Instant::now() + self.limit);
        }
    }

    /// Whether the running statement is past its deadline.
    pub(crate) fn expired(&self) -> bool {
        self.deadline
            .lock()
            .ok()
            .and_then(|d| *d)
            .is_some_and(|d| Instant::now() > d)
    }
}

/// A fresh `:memory:` database; dropping it frees the database.
pub struct SqliteConnection {
    conn: rusqlite::Connection,
    clock: StatementClock,
}

impl SqliteConnection {
    /// Opens a new, empty in-memory database with [`DEFAULT_TIME_LIMIT`].
    pub fn open_in_memory() -> anyhow::Result<SqliteConnection> {
        Self::open_with_time_limit(DEFAULT_TIME_LIMIT)
    }

    /// Opens a new, empty in-memory database whose statements are
    /// interrupted after `time_limit`.
    pub fn open_with_time_limit(time_limit: Duration) -> anyhow::Result<SqliteConnection> {
        let mut conn = rusqlite::Connection::open_in_memory()?;
        let clock = StatementClock::new(time_limit);
        let watched = clock.clone();
        // `true` interrupts the statement.
        conn.progress_handler(PROGRESS_STEPS, Some(move || watched.expired()))?;
        Ok(SqliteConnection { conn, clock })
    }
}

impl SqliteConnection {
    /// Opens (creating it if need be) the database file at `path`: the
    /// transaction oracle's sessions share one database, which an
    /// in-memory one cannot.
    pub fn open_file(
        path: &std::path::Path,
        time_limit: Duration,
    ) -> anyhow::Result<SqliteConnection> {
        let mut conn = rusqlite::Connection::open(path)?;
        let clock = StatementClock::new(time_limit);
        let watched = clock.clone();
        conn.progress_handler(PROGRESS_STEPS, Some(move || watched.expired()))?;
        Ok(SqliteConnection { conn, clock })
    }
}

impl Connection for SqliteConnection {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.clock.start();
        // `execute_batch` steps the statement once, which completes any DML
        // or DDL and also accepts PRAGMAs that answer with a row.
        self.conn.execute_batch(sql).map_err(map_error)
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        self.clock.start();
        let mut stmt = self.conn.prepare(sql).map_err(map_error)?;
        let width = stmt.column_count();
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(map_error)? {
            let mut values = Vec::with_capacity(width);
            for i in 0..width {
                values.push(to_value(row.get_ref_unwrap(i)));
            }
            out.push(values);
        }
        Ok(out)
    }

    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        let mask = knob_mask(setting, rusqlite::version_number())?;
        // SAFETY: the handle is this connection's open database, used on
        // this thread only; TESTCTRL_OPTIMIZATIONS takes (sqlite3*, u32)
        // and only sets the connection's mask of disabled optimizations.
        unsafe {
            rusqlite::ffi::sqlite3_test_control(
                knobs::SQLITE_TESTCTRL_OPTIMIZATIONS,
                self.conn.handle(),
                mask,
            );
        }
        Ok(())
    }
}

/// The disable mask for `setting` on the library with version number
/// `version`, or the error [`Connection::set_knobs`] reports for an
/// unknown knob.
pub(crate) fn knob_mask(setting: &KnobSetting, version: i32) -> Result<u32, DbError> {
    knobs::mask(setting, version).map_err(|message| DbError::statement(None, message))
}

/// A column value as lancet sees it: the storage class, with text that is
/// not valid UTF-8 decoded lossily.
pub(crate) fn to_value(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Integer(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

/// The [`DbError`] for a failed call that returned the (extended) result
/// code `code`, with `message` from `sqlite3_errmsg()`. An interrupt is
/// the progress handler's doing: the statement ran out of time.
pub(crate) fn error_from_code(code: i32, message: String) -> DbError {
    if code == rusqlite::ffi::SQLITE_INTERRUPT {
        DbError {
            kind: FailureKind::Timeout,
            code: Some(code_name(code).into_owned()),
            message,
        }
    } else {
        DbError::statement(Some(code_name(code).into_owned()), message)
    }
}

/// Maps a rusqlite error to a [`DbError`] with SQLite's own code and text.
pub(crate) fn map_error(e: rusqlite::Error) -> DbError {
    match e {
        rusqlite::Error::SqliteFailure(err, msg) => {
            let message = msg.unwrap_or_else(|| err.to_string());
            error_from_code(err.extended_code, message)
        }
        // Syntax-level errors, reported with the offset of the bad token.
        rusqlite::Error::SqlInputError { error, msg, .. } => {
            error_from_code(error.extended_code, msg)
        }
        other => DbError::statement(None, other.to_string()),
    }
}

/// What `query` reports for a text with more than one statement.
pub(crate) fn multiple_statements_error() -> DbError {
    map_error(rusqlite::Error::MultipleStatement)
}

/// What `query` reports for a text with no statement at all (empty, or
/// only comments and semicolons): rusqlite steps the null statement and
/// SQLite answers `SQLITE_MISUSE`, and a loaded library's connection says
/// the same.
pub(crate) fn no_statement_error() -> DbError {
    error_from_code(
        rusqlite::ffi::SQLITE_MISUSE,
        "bad parameter or other API misuse".into(),
    )
}

/// The name of an SQLite (extended) result code, e.g. `SQLITE_CONSTRAINT_UNIQUE`.
/// Codes this table does not know print as `SQLITE_<number>`.
pub fn code_name(code: i32) -> Cow<'static, str> {
    let name = match code {
        0 => "SQLITE_OK",
        1 => "SQLITE_ERROR",
        2 => "SQLITE_INTERNAL",
        3 => "SQLITE_PERM",
        4 => "SQLITE_ABORT",
        5 => "SQLITE_BUSY",
        6 => "SQLITE_LOCKED",
        7 => "SQLITE_NOMEM",
        8 => "SQLITE_READONLY",
        9 => "SQLITE_INTERRUPT",
        10 => "SQLITE_IOERR",
        11 => "SQLITE_CORRUPT",
        12 => "SQLITE_NOTFOUND",
        13 => "SQLITE_FULL",
        14 => "SQLITE_CANTOPEN",
        15 => "SQLITE_PROTOCOL",
        16 => "SQLITE_EMPTY",
        17 => "SQLITE_SCHEMA",
        18 => "SQLITE_TOOBIG",
        19 => "SQLITE_CONSTRAINT",
        20 => "SQLITE_MISMATCH",
        21 => "SQLITE_MISUSE",
        22 => "SQLITE_NOLFS",
        23 => "SQLITE_AUTH",
        24 => "SQLITE_FORMAT",
        25 => "SQLITE_RANGE",
        26 => "SQLITE_NOTADB",
        27 => "SQLITE_NOTICE",
        28 => "SQLITE_WARNING",
        100 => "SQLITE_ROW",
        101 => "SQLITE_DONE",
        // Extended codes: primary | (n << 8).
        257 => "SQLITE_ERROR_MISSING_COLLSEQ",
        513 => "SQLITE_ERROR_RETRY",
        769 => "SQLITE_ERROR_SNAPSHOT",
        516 => "SQLITE_ABORT_ROLLBACK",
        261 => "SQLITE_BUSY_RECOVERY",
        517 => "SQLITE_BUSY_SNAPSHOT",
        773 => "SQLITE_BUSY_TIMEOUT",
        262 => "SQLITE_LOCKED_SHAREDCACHE",
        518 => "SQLITE_LOCKED_VTAB",
        264 => "SQLITE_READONLY_RECOVERY",
        520 => "SQLITE_READONLY_CANTLOCK",
        776 => "SQLITE_READONLY_ROLLBACK",
        1032 => "SQLITE_READONLY_DBMOVED",
        1288 => "SQLITE_READONLY_CANTINIT",
        1544 => "SQLITE_READONLY_DIRECTORY",
        266 => "SQLITE_IOERR_READ",
        522 => "SQLITE_IOERR_SHORT_READ",
        778 => "SQLITE_IOERR_WRITE",
        1034 => "SQLITE_IOERR_FSYNC",
        1290 => "SQLITE_IOERR_DIR_FSYNC",
        1546 => "SQLITE_IOERR_TRUNCATE",
        1802 => "SQLITE_IOERR_FSTAT",
        2058 => "SQLITE_IOERR_UNLOCK",
        2314 => "SQLITE_IOERR_RDLOCK",
        2570 => "SQLITE_IOERR_DELETE",
        2826 => "SQLITE_IOERR_BLOCKED",
        3082 => "SQLITE_IOERR_NOMEM",
        3338 => "SQLITE_IOERR_ACCESS",
        3594 => "SQLITE_IOERR_CHECKRESERVEDLOCK",
        3850 => "SQLITE_IOERR_LOCK",
        4106 => "SQLITE_IOERR_CLOSE",
        4362 => "SQLITE_IOERR_DIR_CLOSE",
        4618 => "SQLITE_IOERR_SHMOPEN",
        4874 => "SQLITE_IOERR_SHMSIZE",
        5130 => "SQLITE_IOERR_SHMLOCK",
        5386 => "SQLITE_IOERR_SHMMAP",
        5642 => "SQLITE_IOERR_SEEK",
        5898 => "SQLITE_IOERR_DELETE_NOENT",
        6154 => "SQLITE_IOERR_MMAP",
        6410 => "SQLITE_IOERR_GETTEMPPATH",
        6666 => "SQLITE_IOERR_CONVPATH",
        6922 => "SQLITE_IOERR_VNODE",
        7178 => "SQLITE_IOERR_AUTH",
        7434 => "SQLITE_IOERR_BEGIN_ATOMIC",
        7690 => "SQLITE_IOERR_COMMIT_ATOMIC",
        7946 => "SQLITE_IOERR_ROLLBACK_ATOMIC",
        8202 => "SQLITE_IOERR_DATA",
        8458 => "SQLITE_IOERR_CORRUPTFS",
        8714 => "SQLITE_IOERR_IN_PAGE",
        267 => "SQLITE_CORRUPT_VTAB",
        523 => "SQLITE_CORRUPT_SEQUENCE",
        779 => "SQLITE_CORRUPT_INDEX",
        270 => "SQLITE_CANTOPEN_NOTEMPDIR",
        526 => "SQLITE_CANTOPEN_ISDIR",
        782 => "SQLITE_CANTOPEN_FULLPATH",
        1038 => "SQLITE_CANTOPEN_CONVPATH",
        1294 => "SQLITE_CANTOPEN_DIRTYWAL",
        1550 => "SQLITE_CANTOPEN_SYMLINK",
        275 => "SQLITE_CONSTRAINT_CHECK",
        531 => "SQLITE_CONSTRAINT_COMMITHOOK",
        787 => "SQLITE_CONSTRAINT_FOREIGNKEY",
        1043 => "SQLITE_CONSTRAINT_FUNCTION",
        1299 => "SQLITE_CONSTRAINT_NOTNULL",
        1555 => "SQLITE_CONSTRAINT_PRIMARYKEY",
        1811 => "SQLITE_CONSTRAINT_TRIGGER",
        2067 => "SQLITE_CONSTRAINT_UNIQUE",
        2323 => "SQLITE_CONSTRAINT_VTAB",
        2579 => "SQLITE_CONSTRAINT_ROWID",
        2835 => "SQLITE_CONSTRAINT_PINNED",
        3091 => "SQLITE_CONSTRAINT_DATATYPE",
        283 => "SQLITE_NOTICE_RECOVER_WAL",
        539 => "SQLITE_NOTICE_RECOVER_ROLLBACK",
        795 => "SQLITE_NOTICE_RBU",
        284 => "SQLITE_WARNING_AUTOINDEX",
        279 => "SQLITE_AUTH_USER",
        256 => "SQLITE_OK_LOAD_PERMANENTLY",
        512 => "SQLITE_OK_SYMLINK",
        other => return Cow::Owned(format!("SQLITE_{other}")),
    };
    Cow::Borrowed(name)
}

/// `SQLite 3.50.2 (source id 2025-06-28 ...)`: the library this process
/// links, read from a throwaway connection.
pub fn version_string() -> anyhow::Result<String> {
    let conn = rusqlite::Connection::open_in_memory()?;
    let source_id: String = conn.query_row("SELECT sqlite_source_id()", [], |r| r.get(0))?;
    Ok(describe_version(rusqlite::version(), &source_id))
}

/// How summaries and findings name an SQLite library.
pub(crate) fn describe_version(version: &str, source_id: &str) -> String {
    format!("SQLite {version} (source id {source_id})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extended_codes_are_named() {
        // Primary | (n << 8), checked against the constants of the linked library.
        use rusqlite::ffi;
        for (code, name) in [
            (ffi::SQLITE_CONSTRAINT_UNIQUE, "SQLITE_CONSTRAINT_UNIQUE"),
            (ffi::SQLITE_CONSTRAINT_NOTNULL, "SQLITE_CONSTRAINT_NOTNULL"),
            (ffi::SQLITE_CONSTRAINT_CHECK, "SQLITE_CONSTRAINT_CHECK"),
            (
                ffi::SQLITE_CONSTRAINT_PRIMARYKEY,
                "SQLITE_CONSTRAINT_PRIMARYKEY",
            ),
            (ffi::SQLITE_CONSTRAINT_TRIGGER, "SQLITE_CONSTRAINT_TRIGGER"),
            (
                ffi::SQLITE_CONSTRAINT_DATATYPE,
                "SQLITE_CONSTRAINT_DATATYPE",
            ),
            (ffi::SQLITE_IOERR_IN_PAGE, "SQLITE_IOERR_IN_PAGE"),
            (
                ffi::SQLITE_ERROR_MISSING_COLLSEQ,
                "SQLITE_ERROR_MISSING_COLLSEQ",
            ),
            (ffi::SQLITE_TOOBIG, "SQLITE_TOOBIG"),
            (ffi::SQLITE_MISMATCH, "SQLITE_MISMATCH"),
            (ffi::SQLITE_RANGE, "SQLITE_RANGE"),
        ] {
            assert_eq!(code_name(code), name);
        }
        assert_eq!(code_name(12345), "SQLITE_12345");
    }

    #[test]
    fn errors_carry_extended_code_and_plain_message() {
        let mut c = SqliteConnection::open_in_memory().unwrap();
        c.execute("CREATE TABLE t0 (c0 UNIQUE, c1 NOT NULL)")
            .unwrap();
        c.execute("INSERT INTO t0 VALUES (1, 1)").unwrap();
        let e = c.execute("INSERT INTO t0 VALUES (1, 2)").unwrap_err();
        assert_eq!(e.code.as_deref(), Some("SQLITE_CONSTRAINT_UNIQUE"));
        assert_eq!(e.message, "UNIQUE constraint failed: t0.c0");
        let e = c.execute("INSERT INTO t0 VALUES (2, NULL)").unwrap_err();
        assert_eq!(e.code.as_deref(), Some("SQLITE_CONSTRAINT_NOTNULL"));
        let e = c.query("SELECT abs(-9223372036854775808)").unwrap_err();
        assert_eq!(e.code.as_deref(), Some("SQLITE_ERROR"));
        assert_eq!(e.message, "integer overflow");
        let e = c.query("SELEC 1").unwrap_err();
        assert_eq!(e.code.as_deref(), Some("SQLITE_ERROR"));
        assert_eq!(e.message, "near \"SELEC\": syntax error");
    }

    #[test]
    fn runaway_statements_time_out() {
        let mut c = SqliteConnection::open_with_time_limit(Duration::from_millis(200)).unwrap();
        let start = Instant::now();
        let e = c
            .query("WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r")
            .unwrap_err();
        assert_eq!(e.kind, FailureKind::Timeout);
        assert!(start.elapsed() < Duration::from_secs(5));
        // The connection stays usable, with a fresh clock per statement.
        assert_eq!(c.query("SELECT 1").unwrap(), vec![vec![Value::Integer(1)]]);
    }

    #[test]
    fn values_map_to_storage_classes() {
        let mut c = SqliteConnection::open_in_memory().unwrap();
        let rows = c
            .query("SELECT NULL, 1, 1.5, 'a', X'00FF', CAST(X'FF' AS TEXT)")
            .unwrap();
        assert_eq!(
            rows,
            vec![vec![
                Value::Null,
                Value::Integer(1),
                Value::Real(1.5),
                Value::Text("a".into()),
                Value::Blob(vec![0, 0xFF]),
                Value::Text("\u{FFFD}".into()),
            ]]
        );
        // PRAGMAs that answer with a row run through `execute`.
        c.execute("PRAGMA journal_mode = OFF").unwrap();
    }
}
