//! One in-memory DuckDB database behind lancet's [`Connection`]: a
//! database instance of its own (nothing shared between generated
//! databases) with one connection, one thread (results and plans do not
//! depend on a thread pool's timing, and a worker process holds no idle
//! threads), and a watchdog that interrupts a statement past its time
//! limit (`duckdb_interrupt`), reported as a timeout. A statement that
//! ignores the interrupt blocks its caller; the worker process's parent
//! then kills it, a hang.

use crate::errors;
use crate::library::{text, DuckDbLibrary, Handle, Idx, RawResult};
use lancet_core::{Connection, DbError, KnobSetting, Row, Value};
use std::ffi::{c_char, CString};
use std::ptr;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long one statement may run before it is interrupted: embedded
/// queries over lancet's small tables take well under a millisecond.
pub const DEFAULT_TIME_LIMIT: Duration = Duration::from_secs(2);

/// The database's settings at open: one thread, and no extension loaded
/// or fetched behind lancet's back.
const CONFIG: &[(&str, &str)] = &[
    ("threads", "1"),
    ("autoinstall_known_extensions", "false"),
    ("autoload_known_extensions", "false"),
];

/// What the watchdog thread watches.
#[derive(Default)]
struct WatchState {
    /// When the running statement must be interrupted; `None` when idle.
    deadline: Option<Instant>,
    /// The connection is closing: the thread ends.
    closed: bool,
}

/// A connection handle the watchdog may interrupt from its thread.
struct SendHandle(Handle);
// SAFETY: `duckdb_interrupt` is the one call made from the watchdog
// thread, and DuckDB documents it as callable while another thread runs a
// query on the connection.
unsafe impl Send for SendHandle {}

type Watch = Arc<(Mutex<WatchState>, Condvar)>;

/// A fresh in-memory DuckDB database and its connection.
pub struct DuckDbConnection {
    lib: Arc<DuckDbLibrary>,
    db: Handle,
    conn: Handle,
    limit: Duration,
    watch: Watch,
    watchdog: Option<JoinHandle<()>>,
    /// The first statement that failed with an INTERNAL or FATAL error,
    /// either of which may invalidate the database: named in the errors
    /// of the statements after it (see [`errors::invalidated_by`]).
    fatal: Option<String>,
}

// SAFETY: the handles are used by one thread at a time (`&mut self`) apart
// from the watchdog's `duckdb_interrupt`; DuckDB's databases and
// connections are not tied to the thread that made them.
unsafe impl Send for DuckDbConnection {}

impl DuckDbConnection {
    /// Opens a new, empty in-memory database of `lib` whose statements are
    /// interrupted after `limit`.
    pub fn open(lib: Arc<DuckDbLibrary>, limit: Duration) -> anyhow::Result<DuckDbConnection> {
        let api = &lib.api;
        let mut config: Handle = ptr::null_mut();
        let mut db: Handle = ptr::null_mut();
        let mut conn: Handle = ptr::null_mut();
        // SAFETY: the C API's calls in its order: a config is made, set,
        // used to open and destroyed; every out-pointer is a local; an
        // error message from open is freed with duckdb_free.
        unsafe {
            if (api.create_config)(&mut config) != 0 {
                anyhow::bail!("duckdb_create_config failed");
            }
            for (name, value) in CONFIG {
                let (n, v) = (CString::new(*name)?, CString::new(*value)?);
                // An older release without a setting keeps its default.
                (api.set_config)(config, n.as_ptr(), v.as_ptr());
            }
            let mut error: *mut c_char = ptr::null_mut();
            let state = (api.open_ext)(ptr::null(), &mut db, config, &mut error);
            (api.destroy_config)(&mut config);
            if state != 0 {
                let message = text(error);
                if !error.is_null() {
                    (api.free)(error.cast());
                }
                anyhow::bail!(
                    "cannot open an in-memory database with {}: {message}",
                    lib.path().display()
                );
            }
            if (api.connect)(db, &mut conn) != 0 {
                (api.close)(&mut db);
                anyhow::bail!("cannot connect to a new DuckDB database");
            }
        }
        let watch: Watch = Arc::default();
        let watchdog = spawn_watchdog(Arc::clone(&lib), SendHandle(conn), Arc::clone(&watch))?;
        Ok(DuckDbConnection {
            lib,
            db,
            conn,
            limit,
            watch,
            watchdog: Some(watchdog),
            fatal: None,
        })
    }

    /// Sets or clears the running statement's deadline.
    fn arm(&self, deadline: Option<Instant>) {
        let (state, wake) = &*self.watch;
        if let Ok(mut s) = state.lock() {
            s.deadline = deadline;
        }
        wake.notify_one();
    }

    /// Runs `sql` (every statement in it) and hands its last result to
    /// `read`, or returns its error.
    fn run<T>(
        &mut self,
        sql: &str,
        read: impl FnOnce(&Self, *mut RawResult) -> T,
    ) -> Result<T, DbError> {
        let text_sql = CString::new(sql)
            .map_err(|_| DbError::statement(None, "statement text holds a NUL character"))?;
        let api = &self.lib.api;
        let mut result = RawResult::empty();
        self.arm(Some(Instant::now() + self.limit));
        // SAFETY: an open connection, a NUL-terminated text, a result the
        // call fills (and which is destroyed below whatever the state).
        let state = unsafe { (api.query)(self.conn, text_sql.as_ptr(), &mut result) };
        self.arm(None);
        let out = if state != 0 {
            // SAFETY: the failed result holds its message and type.
            let (message, type_value) = unsafe {
                (
                    text((api.result_error)(&mut result)),
                    api.result_error_type.map(|f| f(&mut result)),
                )
            };
            let error = errors::error(type_value, message);
            if matches!(error.code.as_deref(), Some("INTERNAL" | "FATAL")) {
                self.fatal.get_or_insert_with(|| sql.to_string());
            }
            Err(errors::invalidated_by(error, self.fatal.as_deref()))
        } else {
            Ok(read(self, &mut result))
        };
        // SAFETY: the result was filled by duckdb_query and is destroyed once.
        unsafe { (api.destroy_result)(&mut result) };
        out
    }

    /// Every row of a successful result, or (`Err`) the column types when
    /// one is a type the C API's value accessors do not read (see
    /// [`READABLE`]).
    fn rows(&self, result: *mut RawResult) -> Result<Vec<Row>, Vec<i32>> {
        let api = &self.lib.api;
        // SAFETY: a successful, materialized result.
        let (width, height) = unsafe { ((api.column_count)(result), (api.row_count)(result)) };
        let types: Vec<i32> = (0..width)
            // SAFETY: column indexes within the result's width.
            .map(|c| unsafe { (api.column_type)(result, c) })
            .collect();
        if types.iter().any(|t| !READABLE.contains(t)) {
            return Err(types);
        }
        Ok((0..height)
            .map(|r| {
                types
                    .iter()
                    .zip(0..)
                    .map(|(&ty, c)| self.value(result, c, r, ty))
                    .collect()
            })
            .collect())
    }

    /// The value at (`col`, `row`) of a column of C API type `ty`.
    fn value(&self, result: *mut RawResult, col: Idx, row: Idx, ty: i32) -> Value {
        let api = &self.lib.api;
        // SAFETY: indexes within the result; strings and blobs the
        // accessors return are copied and freed with duckdb_free.
        unsafe {
            if (api.value_is_null)(result, col, row) {
                return Value::Null;
            }
            match ty {
                // TINYINT .. BIGINT, UTINYINT .. UINTEGER: within i64.
                2..=8 => Value::Integer((api.value_int64)(result, col, row)),
                // FLOAT, DOUBLE.
                10 | 11 => Value::Real((api.value_double)(result, col, row)),
                // BLOB.
                18 => {
                    let blob = (api.value_blob)(result, col, row);
                    let bytes = match usize::try_from(blob.size) {
                        Ok(n) if n > 0 && !blob.data.is_null() => {
                            std::slice::from_raw_parts(blob.data as *const u8, n).to_vec()
                        }
                        _ => Vec::new(),
                    };
                    if !blob.data.is_null() {
                        (api.free)(blob.data);
                    }
                    Value::Blob(bytes)
                }
                _ => {
                    let p = (api.value_varchar)(result, col, row);
                    let s = text(p);
                    if !p.is_null() {
                        (api.free)(p.cast());
                    }
                    typed_text(ty, s)
                }
            }
        }
    }
}

/// The C API types whose values the (deprecated, row-wise) accessors
/// read: BOOLEAN through the TIMESTAMP_S/MS/NS types, and UHUGEINT. They
/// read an ENUM or a nested value (LIST, STRUCT, MAP, ARRAY, UNION) as
/// nothing, and a UUID leaves the result broken for the next column (the
/// next accessor call crashes): columns of every other type are read
/// again as VARCHAR ([`others_as_text`]).
const READABLE: &[i32] = &[
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 32,
];

/// `sql` as a derived table whose columns of types the accessors do not
/// read (by position, `#n`) are cast to VARCHAR: its rows, with each such
/// value as DuckDB prints it (an ENUM as its member, a list as
/// `[1, NULL, 3]`, a struct as `{'a': 1}`), which is one text for equal
/// values of the integer lists the generator makes.
fn others_as_text(sql: &str, types: &[i32]) -> String {
    let items: Vec<String> = types
        .iter()
        .enumerate()
        .map(|(i, t)| match READABLE.contains(t) {
            true => format!("#{}", i + 1),
            false => format!("CAST(#{} AS VARCHAR)", i + 1),
        })
        .collect();
    let inner = sql.trim_end().trim_end_matches(';');
    format!(
        "SELECT {} FROM ({inner}) AS lancet_as_text",
        items.join(", ")
    )
}

/// A value DuckDB gave as text, as lancet's value of its type: BOOLEAN as
/// a boolean; UBIGINT, HUGEINT and UHUGEINT as integers where they fit
/// 64 bits, else exact decimals; DECIMAL as a decimal; the rest (text,
/// dates, times, intervals, enums, nested values) as text.
fn typed_text(ty: i32, s: String) -> Value {
    match ty {
        1 => Value::Boolean(s == "true"),
        9 | 16 | 32 => match s.parse::<i64>() {
            Ok(i) => Value::Integer(i),
            Err(_) => Value::Decimal(s),
        },
        19 => Value::Decimal(s),
        _ => Value::Text(s),
    }
}

/// The thread that interrupts a statement past its deadline.
fn spawn_watchdog(
    lib: Arc<DuckDbLibrary>,
    conn: SendHandle,
    watch: Watch,
) -> anyhow::Result<JoinHandle<()>> {
    let spawned = std::thread::Builder::new()
        .name("duckdb-watchdog".into())
        .spawn(move || {
            let conn = conn;
            let (state, wake) = &*watch;
            let Ok(mut s) = state.lock() else { return };
            loop {
                if s.closed {
                    return;
                }
                s = match s.deadline {
                    None => match wake.wait(s) {
                        Ok(s) => s,
                        Err(_) => return,
                    },
                    Some(d) if Instant::now() >= d => {
                        // SAFETY: the connection is open until `closed`
                        // is set, which this lock keeps from happening.
                        unsafe { (lib.api.interrupt)(conn.0) };
                        s.deadline = None;
                        s
                    }
                    Some(d) => {
                        match wake.wait_timeout(s, d.saturating_duration_since(Instant::now())) {
                            Ok((s, _)) => s,
                            Err(_) => return,
                        }
                    }
                };
            }
        });
    Ok(spawned?)
}

impl Connection for DuckDbConnection {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.run(sql, |_, _| ())
    }

    /// A result with columns of types the accessors do not read (ENUM,
    /// LIST, STRUCT, ...) is read again through a query that casts them
    /// to VARCHAR (see [`others_as_text`]); if that still has one, it is
    /// an error, never a wrong value.
    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        let types = match self.run(sql, |c, r| c.rows(r))? {
            Ok(rows) => return Ok(rows),
            Err(types) => types,
        };
        let unreadable = |types: &[i32]| {
            let t = types.iter().find(|t| !READABLE.contains(t)).copied();
            DbError::statement(
                Some("LANCET_UNREADABLE".into()),
                format!(
                    "lancet does not read DuckDB values of C API type {}, even cast to \
                     VARCHAR",
                    t.unwrap_or_default()
                ),
            )
        };
        match self.run(&others_as_text(sql, &types), |c, r| c.rows(r))? {
            Ok(rows) => Ok(rows),
            Err(types) => Err(unreadable(&types)),
        }
    }

    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        let sql = crate::knobs::statement(setting).map_err(|m| DbError::statement(None, m))?;
        self.execute(&sql)
    }
}

impl Drop for DuckDbConnection {
    fn drop(&mut self) {
        {
            let (state, wake) = &*self.watch;
            if let Ok(mut s) = state.lock() {
                s.closed = true;
            }
            wake.notify_one();
        }
        if let Some(t) = self.watchdog.take() {
            let _ = t.join();
        }
        // SAFETY: the watchdog has ended; every result was destroyed; the
        // connection is closed before its database.
        unsafe {
            (self.lib.api.disconnect)(&mut self.conn);
            (self.lib.api.close)(&mut self.db);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_columns_are_cast_by_position() {
        // An ENUM (23) and a LIST (24) beside an INTEGER.
        assert_eq!(
            others_as_text("SELECT a, e, l FROM t ORDER BY 1; ", &[4, 23, 24]),
            "SELECT #1, CAST(#2 AS VARCHAR), CAST(#3 AS VARCHAR) \
             FROM (SELECT a, e, l FROM t ORDER BY 1) AS lancet_as_text"
        );
    }
}
