//! One open PostgreSQL database, through `tokio-postgres`' simple query
//! protocol: every value comes back as text, so every type maps the same
//! way without per-type decoding, and both queries of a check go through
//! the same path.
//!
//! Every call is bounded, so that a hung server never freezes a worker:
//!
//! 1. the server's `statement_timeout` is the time limit; a statement that
//!    runs longer ends with 57014, a [`FailureKind::Timeout`];
//! 2. if no answer has come [`margin`] after the limit, lancet sends a
//!    cancel request (itself bounded by [`CANCEL_LIMIT`]);
//! 3. if the statement still has not ended [`HANG_GRACE`] later, lancet
//!    closes the connection and the call returns [`FailureKind::Hang`].
//!
//! After a hang or a lost connection every later call fails at once with
//! [`FailureKind::ConnectionLost`]. Connecting is bounded as a whole
//! ([`CONNECT_LIMIT`]), not only its TCP connect.
//!
//! Why an async client: the sync `postgres` client cannot close a socket
//! that another thread is blocked on, so a watchdog could only send a
//! cancel request and then wait forever with it. Here each connection owns
//! a current-thread runtime that runs only inside its own calls (one
//! `block_on` per call, no thread hop): a call can stop waiting, and
//! aborting the connection's task closes the socket.

use lancet_core::{DbError, FailureKind, KnobSetting, Row, Value};
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tokio::time::timeout;
use tokio_postgres::error::{Severity, SqlState};
use tokio_postgres::types::ToSql;
use tokio_postgres::{AsyncMessage, CancelToken, Client, Config, NoTls, SimpleQueryMessage};

/// Settings every lancet session starts with, so that results do not depend
/// on the server's configuration. Warnings come through: the one a backend
/// sends when the postmaster ends it after another crashed (57P02) tells
/// a crash's collateral from the crash.
const SESSION_SETTINGS: &str = "SET client_min_messages = warning; SET TimeZone = 'UTC'; \
     SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 1; \
     SET bytea_output = 'hex'; SET jit = off";

pub use lancet_postgres_url::CONNECT_LIMIT;
/// The longest lancet waits for a cancel request to be delivered.
pub const CANCEL_LIMIT: Duration = Duration::from_secs(2);
/// How long a statement may take to end after its cancel request before
/// lancet calls it a hang and closes the connection.
pub const HANG_GRACE: Duration = Duration::from_secs(3);
/// How long the orderly goodbye of a closing connection may take.
const CLOSE_LIMIT: Duration = Duration::from_millis(500);

/// How long after the server's time limit lancet sends a cancel request:
/// half the limit and half a second, at most 5 s.
pub fn margin(limit: Duration) -> Duration {
    (limit / 2).min(Duration::from_millis(4500)) + Duration::from_millis(500)
}

/// The longest a call may take with time limit `limit`: the limit, the
/// margin, the cancel request and the grace before a hang.
pub fn worst_case(limit: Duration) -> Duration {
    limit + margin(limit) + CANCEL_LIMIT + HANG_GRACE
}

pub struct PgConnection {
    /// `None` once the connection is closed (a hang or a lost connection).
    open: Option<Open>,
    /// Why the connection is closed, for the errors of later calls.
    closed: String,
    time_limit: Duration,
    /// The optimizer configuration in force (knobs turned off).
    knobs: KnobSetting,
    /// Warnings the server sent (SQLSTATE, message), collected by the
    /// connection's task.
    warnings: Arc<Mutex<Vec<(String, String)>>>,
    /// The error the server ended the session with, if it sent one.
    ended_by: Arc<Mutex<Option<DbError>>>,
    /// Prefixes of warnings that say a query's result is wrong (Citus:
    /// "Query could not find the intermediate result file"): such a query
    /// fails with the warning instead of returning its rows.
    failing_warnings: Vec<String>,
    /// Runs the connection's task, only inside this connection's calls.
    /// Declared last: dropped after the client and the task.
    rt: Runtime,
}

/// A call of the driver, holding its client.
type Call<'a, T> = std::pin::Pin<Box<dyn Future<Output = Result<T, tokio_postgres::Error>> + 'a>>;

struct Open {
    /// Shared with the running call's future only.
    client: Arc<Client>,
    cancel: CancelToken,
    /// The task that owns the socket; aborting it closes the socket.
    task: JoinHandle<()>,
}

fn lost(message: impl Into<String>) -> DbError {
    DbError {
        kind: FailureKind::ConnectionLost,
        code: None,
        message: message.into(),
    }
}

impl PgConnection {
    /// Connects with `config` and applies lancet's session settings and the
    /// statement time limit.
    pub fn open(config: &Config, time_limit: Duration) -> Result<PgConnection, DbError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()
            .map_err(|e| lost(format!("cannot start the connection's runtime: {e}")))?;
        let limit = config
            .get_connect_timeout()
            .map_or(CONNECT_LIMIT, |t| (*t).max(CONNECT_LIMIT));
        let (client, connection) = rt
            .block_on(async { timeout(limit, config.connect(NoTls)).await })
            .map_err(|_| {
                lost(format!(
                    "no answer from the server within {} s while connecting",
                    limit.as_secs()
                ))
            })?
            .map_err(|e| map_error(&e))?;
        let warnings: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
        let sink = warnings.clone();
        let ended_by: Arc<Mutex<Option<DbError>>> = Arc::default();
        let ending = ended_by.clone();
        let mut connection = connection;
        let task = rt.spawn(async move {
            loop {
                match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                    // After a crash the postmaster ends every other backend,
                    // which says why as a WARNING (57P02) before it goes.
                    Some(Ok(AsyncMessage::Notice(n))) if *n.code() == SqlState::CRASH_SHUTDOWN => {
                        *ending.lock().unwrap_or_else(|e| e.into_inner()) = Some(DbError {
                            kind: FailureKind::ConnectionLost,
                            code: Some(n.code().code().to_string()),
                            message: n.message().to_string(),
                        });
                    }
                    Some(Ok(AsyncMessage::Notice(n)))
                        if n.parsed_severity() == Some(Severity::Warning) =>
                    {
                        sink.lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((n.code().code().to_string(), n.message().to_string()));
                    }
                    Some(Ok(_)) => {}
                    // The server's last word (57P02: another backend
                    // crashed), which the failing call does not see.
                    Some(Err(e)) => {
                        let mut last = ending.lock().unwrap_or_else(|e| e.into_inner());
                        if last.is_none() {
                            *last = Some(map_error(&e));
                        }
                        break;
                    }
                    None => break,
                }
            }
        });
        let cancel = client.cancel_token();
        let mut conn = PgConnection {
            open: Some(Open {
                client: Arc::new(client),
                cancel,
                task,
            }),
            closed: String::new(),
            knobs: KnobSetting::default(),
            warnings,
            ended_by,
            failing_warnings: Vec::new(),
            time_limit,
            rt,
        };
        let settings = format!(
            "{SESSION_SETTINGS}; SET statement_timeout = {}",
            time_limit.as_millis()
        );
        conn.execute_sql(&settings)?;
        Ok(conn)
    }

    /// The time limit of this connection's statements.
    pub fn time_limit(&self) -> Duration {
        self.time_limit
    }

    /// The open client, or the error that closed it.
    fn client(&self) -> Result<&Open, DbError> {
        match &self.open {
            Some(open) if !open.client.is_closed() => Ok(open),
            Some(_) => Err(lost("the server closed the connection")),
            None => Err(lost(format!("the connection is closed: {}", self.closed))),
        }
    }

    /// Closes the connection after a hang or a lost connection, so that
    /// later calls fail at once.
    fn settle<T>(&mut self, mut out: Result<T, DbError>) -> Result<T, DbError> {
        if let Err(e) = &mut out {
            // A loss the call saw only as a closed socket takes the code
            // and message the server sent as it ended the session.
            let last_word = self
                .ended_by
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            if let Some(word) = last_word.filter(|w| w.code.is_some()) {
                if e.kind == FailureKind::ConnectionLost && e.code.is_none() {
                    e.message = format!("{} ({})", word.message, e.message);
                    e.code = word.code;
                }
            }
            let gone = matches!(e.kind, FailureKind::Hang | FailureKind::ConnectionLost)
                || self.open.as_ref().is_some_and(|o| o.client.is_closed());
            if gone {
                self.close(&e.message);
            }
        }
        out
    }

    /// Drops the client and aborts the task that owns the socket: the
    /// socket is closed without waiting for the server.
    fn close(&mut self, why: &str) {
        if let Some(open) = self.open.take() {
            self.closed = why.to_string();
            drop(open.client);
            open.task.abort();
            // Awaiting the aborted task makes the runtime drop it (and its
            // socket) now rather than when the connection is dropped.
            let _ = self
                .rt
                .block_on(async { timeout(CLOSE_LIMIT, open.task).await });
        }
    }

    /// Runs one call of the driver within the connection's bounds.
    fn call<'a, T>(&mut self, f: impl FnOnce(Arc<Client>) -> Call<'a, T>) -> Result<T, DbError> {
        let out = match self.client() {
            Ok(open) => bounded(
                &self.rt,
                &open.cancel,
                self.time_limit,
                f(open.client.clone()),
            ),
            Err(e) => Err(e),
        };
        self.settle(out)
    }

    fn execute_sql(&mut self, sql: &str) -> Result<(), DbError> {
        self.call(|c| Box::pin(async move { c.batch_execute(sql).await }))
    }

    /// Makes queries that draw a warning starting with one of `prefixes`
    /// fail with it (the session must let warnings through:
    /// `client_min_messages` at `warning` or below).
    pub fn fail_on_warnings(&mut self, prefixes: &[&str]) {
        self.failing_warnings = prefixes.iter().map(|p| p.to_string()).collect();
    }

    /// The first warning since the last call that makes a query fail.
    fn failing_warning(&mut self) -> Option<DbError> {
        let seen = std::mem::take(&mut *self.warnings.lock().unwrap_or_else(|e| e.into_inner()));
        seen.into_iter()
            .find(|(_, m)| {
                self.failing_warnings
                    .iter()
                    .any(|p| m.starts_with(p.as_str()))
            })
            .map(|(code, message)| DbError::statement(Some(code), message))
    }

    /// Runs a query with text parameters through the extended protocol
    /// (for lancet's own lookups, never for generated SQL); every column
    /// must be of type text (cast it).
    pub fn query_text(
        &mut self,
        sql: &str,
        params: &[&str],
    ) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let params: Vec<&(dyn ToSql + Sync)> =
            params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        let rows = self.call(|c| Box::pin(async move { c.query(sql, &params).await }))?;
        rows.iter()
            .map(|r| {
                (0..r.len())
                    .map(|i| r.try_get::<_, Option<String>>(i))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| DbError::statement(None, e.to_string()))
    }
}

/// Runs one call of a connection within its bounds (see the module's
/// documentation).
fn bounded<T>(
    rt: &Runtime,
    cancel: &CancelToken,
    limit: Duration,
    call: impl Future<Output = Result<T, tokio_postgres::Error>>,
) -> Result<T, DbError> {
    let started = Instant::now();
    rt.block_on(async {
        let mut call = pin!(call);
        if let Ok(out) = timeout(limit + margin(limit), &mut call).await {
            return out.map_err(|e| map_error(&e));
        }
        // Whether or not the cancel request gets through, the statement
        // has HANG_GRACE more to end.
        let _ = timeout(CANCEL_LIMIT, cancel.cancel_query(NoTls)).await;
        match timeout(HANG_GRACE, &mut call).await {
            Ok(out) => out.map_err(|e| map_error(&e)),
            Err(_) => Err(DbError {
                kind: FailureKind::Hang,
                code: None,
                message: format!(
                    "no answer within {:.1} s, nor to a cancel request; lancet closed the connection",
                    started.elapsed().as_secs_f64()
                ),
            }),
        }
    })
}

impl Drop for PgConnection {
    fn drop(&mut self) {
        // An orderly goodbye (the task sends Terminate once the client is
        // gone), so that the backend leaves before a DROP DATABASE; bounded,
        // as the server may not be reading.
        if let Some(open) = self.open.take() {
            drop(open.client);
            let _ = self
                .rt
                .block_on(async { timeout(CLOSE_LIMIT, open.task).await });
        }
    }
}

/// Maps a driver error to lancet's: the SQLSTATE as the code; a cancelled
/// statement as `Timeout`; a lost or refused connection (backend
/// terminated, server shutting down or starting, too many connections,
/// class 08, or any error that did not come from the server) as
/// `ConnectionLost`, which the runner treats as transient.
pub fn map_error(e: &tokio_postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let kind = if *code == SqlState::QUERY_CANCELED {
            FailureKind::Timeout
        } else if [
            SqlState::TOO_MANY_CONNECTIONS,
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
        ]
        .contains(code)
            || code.code().starts_with("08")
        {
            FailureKind::ConnectionLost
        } else {
            FailureKind::Statement
        };
        return DbError {
            kind,
            code: Some(code.code().to_string()),
            message: db.message().to_string(),
        };
    }
    // Anything but an error from the server is the connection: closed,
    // refused, reset, or a protocol failure. The driver's Display leaves
    // out the cause (connection refused, timed out): add it.
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        message = format!("{message}: {cause}");
        source = cause.source();
    }
    lost(message)
}

/// A value as PostgreSQL printed it. Integers and decimal numbers become
/// numbers, so that `1.0` and `1.00` (equal `numeric`s, either of which
/// DISTINCT may keep) and float sums compare as numbers; everything else
/// stays text. Both sides of every comparison go through this mapping.
pub fn parse_value(text: Option<&str>) -> Value {
    let Some(t) = text else {
        return Value::Null;
    };
    let numeric = !t.is_empty()
        && t.bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        && t.bytes().any(|b| b.is_ascii_digit());
    if numeric {
        if let Ok(i) = t.parse::<i64>() {
            return Value::Integer(i);
        }
        if let Ok(f) = t.parse::<f64>() {
            return Value::Real(f);
        }
    }
    match t {
        "NaN" => Value::Real(f64::NAN),
        "Infinity" => Value::Real(f64::INFINITY),
        "-Infinity" => Value::Real(f64::NEG_INFINITY),
        _ => Value::Text(t.to_string()),
    }
}

impl lancet_core::Connection for PgConnection {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.execute_sql(sql)
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        // Warnings of earlier statements go (they are kept only to fail a
        // query on, below).
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let messages = self.call(|c| Box::pin(async move { c.simple_query(sql).await }))?;
        if !self.failing_warnings.is_empty() {
            if let Some(e) = self.failing_warning() {
                return Err(e);
            }
        }
        Ok(messages
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => {
                    Some((0..r.len()).map(|i| parse_value(r.get(i))).collect())
                }
                _ => None,
            })
            .collect())
    }

    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        if let Some(bad) = setting
            .changes
            .iter()
            .find(|n| crate::knobs::setting_of(n).is_none())
        {
            return Err(DbError::statement(
                None,
                format!("'{bad}' is not a PostgreSQL setting name (or name=value)"),
            ));
        }
        let sql: String = crate::knobs::commands(&self.knobs, setting).join(" ");
        if !sql.is_empty() {
            self.execute(&sql)?;
        }
        self.knobs = setting.clone();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::parse_value;
    use lancet_core::Value;

    #[test]
    fn values_map_by_their_text() {
        assert_eq!(parse_value(None), Value::Null);
        assert_eq!(parse_value(Some("42")), Value::Integer(42));
        assert_eq!(parse_value(Some("1.50")), Value::Real(1.5));
        assert_eq!(parse_value(Some("-1e+20")), Value::Real(-1e20));
        assert_eq!(parse_value(Some("abc")), Value::Text("abc".into()));
        assert_eq!(parse_value(Some("t")), Value::Text("t".into()));
        assert_eq!(parse_value(Some("e")), Value::Text("e".into()));
        assert_eq!(
            parse_value(Some("2020-01-02")),
            Value::Text("2020-01-02".into())
        );
    }
}
