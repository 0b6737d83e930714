//! SQLite from a shared library loaded at run time (`--sqlite-lib PATH`),
//! so that SQLite's developers can test their own builds and bisect a
//! finding across releases with the same lancet binary.
//!
//! Only C functions that every release since 3.20 has are called (most are
//! far older), looked up by name when the library is loaded: a file that
//! lacks one is refused with its name. Values and errors go through the
//! same mapping as the bundled connection ([`crate::connection`]), so a
//! finding reads the same whichever library produced it.
//!
//! The bundled SQLite is linked into lancet but not exported from it, so
//! the loaded library's calls to its own functions stay inside it: the two
//! never mix (the tests check `sqlite_version()` through each).

use crate::connection::{
    describe_version, error_from_code, knob_mask, multiple_statements_error, no_statement_error,
    to_value, StatementClock, DEFAULT_TIME_LIMIT, PROGRESS_STEPS,
};
use crate::knobs;
use anyhow::Context;
use lancet_core::{Connection, DbError, KnobSetting, Row, Value};
use rusqlite::types::ValueRef;
use std::ffi::{c_char, c_int, c_uchar, c_void, CStr};
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// `sqlite3*` and `sqlite3_stmt*`: opaque to us.
type Db = *mut c_void;
type Stmt = *mut c_void;
type ProgressCallback = unsafe extern "C" fn(*mut c_void) -> c_int;

// Result codes, open flags and column types: fixed since SQLite 3.0.
const SQLITE_OK: c_int = 0;
const SQLITE_ROW: c_int = 100;
const SQLITE_DONE: c_int = 101;
const SQLITE_OPEN_READWRITE: c_int = 0x0000_0002;
const SQLITE_OPEN_CREATE: c_int = 0x0000_0004;
const SQLITE_OPEN_NOMUTEX: c_int = 0x0000_8000;
const SQLITE_INTEGER: c_int = 1;
const SQLITE_FLOAT: c_int = 2;
const SQLITE_TEXT: c_int = 3;
const SQLITE_BLOB: c_int = 4;

/// Declares the C functions lancet calls, and loads them all by name.
macro_rules! api {
    ($($field:ident = $symbol:literal : $ty:ty;)*) => {
        /// The C functions of one loaded library. They stay valid as long
        /// as the [`libloading::Library`] they came from is loaded.
        struct Api {
            $($field: $ty,)*
        }

        impl Api {
            /// Looks up every function, or names the first one missing.
            ///
            /// # Safety
            /// `lib` must be a libsqlite3 whose functions have the C API's
            /// signatures, and must outlive every use of the result.
            unsafe fn load(lib: &libloading::Library) -> anyhow::Result<Api> {
                Ok(Api {
                    $($field: *lib.get::<$ty>(concat!($symbol, "\0").as_bytes()).map_err(|_| {
                        anyhow::anyhow!("it has no function {}; is it a libsqlite3 build?", $symbol)
                    })?,)*
                })
            }
        }
    };
}

api! {
    open_v2 = "sqlite3_open_v2":
        unsafe extern "C" fn(*const c_char, *mut Db, c_int, *const c_char) -> c_int;
    close = "sqlite3_close": unsafe extern "C" fn(Db) -> c_int;
    prepare_v2 = "sqlite3_prepare_v2":
        unsafe extern "C" fn(Db, *const c_char, c_int, *mut Stmt, *mut *const c_char) -> c_int;
    step = "sqlite3_step": unsafe extern "C" fn(Stmt) -> c_int;
    finalize = "sqlite3_finalize": unsafe extern "C" fn(Stmt) -> c_int;
    column_count = "sqlite3_column_count": unsafe extern "C" fn(Stmt) -> c_int;
    column_type = "sqlite3_column_type": unsafe extern "C" fn(Stmt, c_int) -> c_int;
    column_int64 = "sqlite3_column_int64": unsafe extern "C" fn(Stmt, c_int) -> i64;
    column_double = "sqlite3_column_double": unsafe extern "C" fn(Stmt, c_int) -> f64;
    column_text = "sqlite3_column_text": unsafe extern "C" fn(Stmt, c_int) -> *const c_uchar;
    column_blob = "sqlite3_column_blob": unsafe extern "C" fn(Stmt, c_int) -> *const c_void;
    column_bytes = "sqlite3_column_bytes": unsafe extern "C" fn(Stmt, c_int) -> c_int;
    errmsg = "sqlite3_errmsg": unsafe extern "C" fn(Db) -> *const c_char;
    extended_result_codes = "sqlite3_extended_result_codes": unsafe extern "C" fn(Db, c_int) -> c_int;
    libversion = "sqlite3_libversion": unsafe extern "C" fn() -> *const c_char;
    libversion_number = "sqlite3_libversion_number": unsafe extern "C" fn() -> c_int;
    sourceid = "sqlite3_sourceid": unsafe extern "C" fn() -> *const c_char;
    threadsafe = "sqlite3_threadsafe": unsafe extern "C" fn() -> c_int;
    progress_handler = "sqlite3_progress_handler":
        unsafe extern "C" fn(Db, c_int, Option<ProgressCallback>, *mut c_void);
    test_control = "sqlite3_test_control": unsafe extern "C" fn(c_int, ...) -> c_int;
}

/// A libsqlite3 loaded from a file, shared by every connection opened
/// through it.
pub struct SqliteLibrary {
    path: PathBuf,
    api: Api,
    version_number: i32,
    version: String,
    source_id: String,
    /// Whether `sqlite3_test_control` does anything (not a build with
    /// `SQLITE_UNTESTABLE`); found out right after loading.
    testable: AtomicBool,
    /// For a build with `SQLITE_THREADSAFE=0`, which must not be entered
    /// from two threads at once: every call into it holds this lock.
    serial: Option<Mutex<()>>,
    /// Kept loaded as long as `api` may be called; declared last, so it
    /// is unloaded after everything else is dropped.
    _lib: libloading::Library,
}

impl std::fmt::Debug for SqliteLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteLibrary")
            .field("path", &self.path)
            .field("version", &self.version)
            .field("source_id", &self.source_id)
            .finish_non_exhaustive()
    }
}

/// A C string from the library, as Rust text.
///
/// # Safety
/// `p` is null or a NUL-terminated string that stays valid for the call.
unsafe fn text(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

impl SqliteLibrary {
    /// Loads the libsqlite3 at `path` and checks that it has every C
    /// function lancet calls.
    pub fn load(path: &Path) -> anyhow::Result<Arc<SqliteLibrary>> {
        Self::load_inner(path)
            .with_context(|| format!("cannot load SQLite library {}", path.display()))
    }

    fn load_inner(path: &Path) -> anyhow::Result<Arc<SqliteLibrary>> {
        // SAFETY: loading runs the library's initializers; a libsqlite3
        // has none that matter. The symbols are checked by name below; a
        // file that exports them with other signatures is not SQLite, and
        // naming such a file is the user's error we cannot detect.
        let lib = unsafe { libloading::Library::new(path) }?;
        // SAFETY: as above; `lib` moves into the struct with `api`.
        let api = unsafe { Api::load(&lib) }?;
        // SAFETY: these take no arguments and return static data.
        let (version_number, version, source_id, threadsafe) = unsafe {
            (
                (api.libversion_number)(),
                text((api.libversion)()),
                text((api.sourceid)()),
                (api.threadsafe)(),
            )
        };
        let library = Arc::new(SqliteLibrary {
            path: path.to_path_buf(),
            api,
            version_number,
            version,
            source_id,
            testable: AtomicBool::new(true),
            serial: (threadsafe == 0).then(|| Mutex::new(())),
            _lib: lib,
        });
        // A build with SQLITE_UNTESTABLE ignores sqlite3_test_control; ask
        // it (a build without compile-option diagnostics is assumed testable).
        let mut probe = DynamicConnection::open(Arc::clone(&library), DEFAULT_TIME_LIMIT)?;
        if let Ok(rows) = probe.query("SELECT sqlite_compileoption_used('SQLITE_UNTESTABLE')") {
            if rows == vec![vec![Value::Integer(1)]] {
                library.testable.store(false, Ordering::Relaxed);
            }
        }
        Ok(library)
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `sqlite3_libversion_number()`: 3040001 for 3.40.1.
    pub fn version_number(&self) -> i32 {
        self.version_number
    }

    /// `SQLite 3.40.1 (source id ...)`, as summaries and findings name it.
    pub fn version_string(&self) -> String {
        describe_version(&self.version, &self.source_id)
    }

    /// Whether optimizer knobs work on this build.
    pub fn has_knobs(&self) -> bool {
        self.testable.load(Ordering::Relaxed)
    }

    fn serialize(&self) -> Option<MutexGuard<'_, ()>> {
        self.serial
            .as_ref()
            .map(|m| m.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// One in-memory database of a loaded library, with the same behaviour as
/// [`crate::SqliteConnection`]: `execute` runs every statement of its text
/// (stepping each once, which completes DDL and DML), `query` exactly one,
/// and a statement past the time limit is interrupted.
pub struct DynamicConnection {
    lib: Arc<SqliteLibrary>,
    db: Db,
    /// Boxed: the progress handler holds its address.
    clock: Box<StatementClock>,
}

// SAFETY: the handle is used by one thread at a time (`&mut self`), and the
// library is either threadsafe (SQLITE_THREADSAFE=1 or 2: connections on
// different threads are independent) or serialized by `SqliteLibrary::serial`.
unsafe impl Send for DynamicConnection {}

/// The progress handler: a non-zero answer interrupts the statement.
///
/// # Safety
/// `clock` is the `StatementClock` the connection registered it with.
unsafe extern "C" fn progress(clock: *mut c_void) -> c_int {
    c_int::from((*(clock as *const StatementClock)).expired())
}

/// A prepared statement, finalized when dropped.
struct Prepared<'c> {
    conn: &'c DynamicConnection,
    stmt: Stmt,
}

impl Drop for Prepared<'_> {
    fn drop(&mut self) {
        // SAFETY: `stmt` came from `prepare_v2` on this connection and is
        // finalized once. Its result repeats the last step's error, which
        // was already reported.
        unsafe {
            (self.conn.lib.api.finalize)(self.stmt);
        }
    }
}

impl DynamicConnection {
    /// Opens a new, empty in-memory database of `lib` whose statements are
    /// interrupted after `time_limit`.
    pub fn open(
        lib: Arc<SqliteLibrary>,
        time_limit: Duration,
    ) -> anyhow::Result<DynamicConnection> {
        DynamicConnection::open_named(lib, c":memory:", time_limit)
    }

    /// Opens (or creates) the database file at `path` with `lib`: one of
    /// the transaction oracle's sessions on a shared database.
    pub fn open_file(
        lib: Arc<SqliteLibrary>,
        path: &std::path::Path,
        time_limit: Duration,
    ) -> anyhow::Result<DynamicConnection> {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| anyhow::anyhow!("a NUL byte in {}", path.display()))?;
        DynamicConnection::open_named(lib, &name, time_limit)
    }

    fn open_named(
        lib: Arc<SqliteLibrary>,
        name: &std::ffi::CStr,
        time_limit: Duration,
    ) -> anyhow::Result<DynamicConnection> {
        let _serial = lib.serialize();
        let api = &lib.api;
        let mut db: Db = ptr::null_mut();
        // SAFETY: a NUL-terminated name and flags; `db` receives the handle,
        // which must be closed even when the open fails.
        let rc = unsafe {
            (api.open_v2)(
                name.as_ptr(),
                &mut db,
                // No per-connection mutex: one thread at a time uses a
                // connection (as rusqlite opens the bundled library's).
                SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                ptr::null(),
            )
        };
        if rc != SQLITE_OK {
            // SAFETY: `db` is null or a handle to report on and close.
            let message = unsafe {
                let m = if db.is_null() {
                    format!("result code {rc}")
                } else {
                    text((api.errmsg)(db))
                };
                (api.close)(db);
                m
            };
            anyhow::bail!(
                "cannot open the database {} with {}: {message}",
                name.to_string_lossy(),
                lib.path.display()
            );
        }
        let clock = Box::new(StatementClock::new(time_limit));
        // SAFETY: `db` is open. The clock is boxed, so its address is stable,
        // and it lives in the connection, which removes the handler (by
        // closing the database) before it is dropped.
        unsafe {
            (api.extended_result_codes)(db, 1);
            (api.progress_handler)(
                db,
                PROGRESS_STEPS,
                Some(progress),
                &*clock as *const StatementClock as *mut c_void,
            );
        }
        drop(_serial);
        Ok(DynamicConnection { lib, db, clock })
    }

    /// The error of the call on this connection that just returned `rc`.
    /// Extended result codes are on, so `rc` is the extended code, as
    /// rusqlite reports it for the bundled library.
    fn error(&self, rc: c_int) -> DbError {
        // SAFETY: `db` is open; the message is copied before the next call.
        let message = unsafe { text((self.lib.api.errmsg)(self.db)) };
        error_from_code(rc, message)
    }

    /// Prepares the first statement of `sql`: `None` if it holds only
    /// whitespace, comments or semicolons, and the byte offset where the
    /// rest begins (`sql.len()` if nothing follows).
    fn prepare<'c>(&'c self, sql: &str) -> Result<(Option<Prepared<'c>>, usize), DbError> {
        let len = c_int::try_from(sql.len())
            .map_err(|_| DbError::statement(None, "statement text too long for SQLite"))?;
        let mut stmt: Stmt = ptr::null_mut();
        let mut tail: *const c_char = ptr::null();
        // SAFETY: `sql` is valid for `len` bytes (SQLite reads no further,
        // so no NUL is needed); `stmt` and `tail` receive the results.
        let rc = unsafe {
            (self.lib.api.prepare_v2)(self.db, sql.as_ptr().cast(), len, &mut stmt, &mut tail)
        };
        let prepared = (!stmt.is_null()).then_some(Prepared { conn: self, stmt });
        if rc != SQLITE_OK {
            return Err(self.error(rc));
        }
        let rest = if tail.is_null() {
            sql.len()
        } else {
            // `tail` points into `sql`, at a statement boundary.
            (tail as usize)
                .saturating_sub(sql.as_ptr() as usize)
                .min(sql.len())
        };
        Ok((prepared, rest))
    }

    /// One step: `true` if it produced a row, `false` when done.
    fn step(&self, p: &Prepared<'_>) -> Result<bool, DbError> {
        // SAFETY: `p.stmt` is a live statement of this connection.
        match unsafe { (self.lib.api.step)(p.stmt) } {
            SQLITE_ROW => Ok(true),
            SQLITE_DONE => Ok(false),
            rc => Err(self.error(rc)),
        }
    }

    /// Column `i` of the current row.
    fn column(&self, p: &Prepared<'_>, i: c_int) -> Value {
        let api = &self.lib.api;
        // SAFETY: `p` has a current row with more than `i` columns. The
        // text and blob pointers are valid for `column_bytes` bytes until
        // the next step, and `to_value` copies them before that; the
        // length is read after the pointer, as the C API requires.
        unsafe {
            let value = match (api.column_type)(p.stmt, i) {
                SQLITE_INTEGER => ValueRef::Integer((api.column_int64)(p.stmt, i)),
                SQLITE_FLOAT => ValueRef::Real((api.column_double)(p.stmt, i)),
                SQLITE_TEXT => {
                    let data = (api.column_text)(p.stmt, i);
                    ValueRef::Text(bytes(data.cast(), (api.column_bytes)(p.stmt, i)))
                }
                SQLITE_BLOB => {
                    let data = (api.column_blob)(p.stmt, i);
                    ValueRef::Blob(bytes(data.cast(), (api.column_bytes)(p.stmt, i)))
                }
                _ => ValueRef::Null,
            };
            to_value(value)
        }
    }
}

/// `len` bytes at `data`, or none if `data` is null (an empty blob).
///
/// # Safety
/// `data` is null or valid for `len` bytes for the returned lifetime.
unsafe fn bytes<'a>(data: *const u8, len: c_int) -> &'a [u8] {
    match usize::try_from(len) {
        Ok(n) if n > 0 && !data.is_null() => std::slice::from_raw_parts(data, n),
        _ => &[],
    }
}

impl Connection for DynamicConnection {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        let _serial = self.lib.serialize();
        self.clock.start();
        let mut rest = sql;
        while !rest.is_empty() {
            let (prepared, tail) = self.prepare(rest)?;
            if let Some(p) = &prepared {
                // One step completes DDL and DML and accepts PRAGMAs that
                // answer with a row, as rusqlite's `execute_batch` does.
                self.step(p)?;
            }
            match rest.get(tail..) {
                Some(next) if tail > 0 => rest = next,
                _ => break,
            }
        }
        Ok(())
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        let _serial = self.lib.serialize();
        self.clock.start();
        let (prepared, tail) = self.prepare(sql)?;
        // What follows the statement must hold no other, as rusqlite's
        // `prepare` demands.
        let mut rest = sql.get(tail..).unwrap_or_default();
        while !rest.is_empty() {
            let (next, next_tail) = self.prepare(rest)?;
            if next.is_some() {
                return Err(multiple_statements_error());
            }
            match rest.get(next_tail..) {
                Some(r) if next_tail > 0 => rest = r,
                _ => break,
            }
        }
        let Some(p) = prepared else {
            return Err(no_statement_error());
        };
        // SAFETY: a live statement of this connection.
        let width = unsafe { (self.lib.api.column_count)(p.stmt) };
        let mut rows = Vec::new();
        while self.step(&p)? {
            rows.push((0..width).map(|i| self.column(&p, i)).collect());
        }
        Ok(rows)
    }

    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        let mask = knob_mask(setting, self.lib.version_number)?;
        if mask != 0 && !self.lib.has_knobs() {
            return Err(DbError::statement(
                None,
                format!(
                    "{} was built with SQLITE_UNTESTABLE: it has no optimizer knobs",
                    self.lib.path.display()
                ),
            ));
        }
        let _serial = self.lib.serialize();
        // SAFETY: `db` is open; TESTCTRL_OPTIMIZATIONS takes (sqlite3*, u32)
        // and only sets this connection's mask of disabled optimizations.
        unsafe {
            (self.lib.api.test_control)(knobs::SQLITE_TESTCTRL_OPTIMIZATIONS, self.db, mask);
        }
        Ok(())
    }
}

impl Drop for DynamicConnection {
    fn drop(&mut self) {
        let _serial = self.lib.serialize();
        // SAFETY: every statement was finalized (they borrow the
        // connection), so the close succeeds and frees the database.
        unsafe {
            (self.lib.api.close)(self.db);
        }
    }
}
