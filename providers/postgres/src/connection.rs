//! One open PostgreSQL database, through the `postgres` driver's simple
//! query protocol: every value comes back as text, so every type maps the
//! same way without per-type decoding, and both queries of a check go
//! through the same path.
//!
//! A statement has two time limits: the server's `statement_timeout`, and a
//! watchdog thread that sends a cancel request (the driver's cancel token)
//! if the server has not stopped it shortly after, so that a hung backend
//! never stalls a worker.

use lancet_core::{DbError, FailureKind, KnobSetting, Row, Value};
use postgres::error::SqlState;
use postgres::{CancelToken, Client, Config, NoTls, SimpleQueryMessage};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Settings every lancet session starts with, so that results do not depend
/// on the server's configuration.
const SESSION_SETTINGS: &str = "SET client_min_messages = error; SET TimeZone = 'UTC'; \
     SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'; SET extra_float_digits = 1; \
     SET bytea_output = 'hex'";

pub struct PgConnection {
    client: Client,
    watchdog: Arc<Watchdog>,
}

/// The deadline of the running statement, watched by a thread.
struct Watchdog {
    deadline: Mutex<Option<Instant>>,
    closed: AtomicBool,
    cancel: CancelToken,
}

impl PgConnection {
    /// Connects with `config` and applies lancet's session settings and the
    /// statement time limit.
    pub fn open(config: &Config, time_limit: Duration) -> Result<PgConnection, DbError> {
        let mut client = config.connect(NoTls).map_err(|e| map_error(&e))?;
        let settings = format!(
            "{SESSION_SETTINGS}; SET statement_timeout = {}",
            time_limit.as_millis()
        );
        client.batch_execute(&settings).map_err(|e| map_error(&e))?;
        let watchdog = Arc::new(Watchdog {
            deadline: Mutex::new(None),
            closed: AtomicBool::new(false),
            cancel: client.cancel_token(),
        });
        let margin = time_limit / 2 + Duration::from_millis(500);
        let w = watchdog.clone();
        std::thread::Builder::new()
            .name("lancet-pg-watchdog".into())
            .spawn(move || w.watch(time_limit + margin))
            .map_err(|e| DbError {
                kind: FailureKind::ConnectionLost,
                code: None,
                message: format!("cannot start the statement watchdog: {e}"),
            })?;
        Ok(PgConnection { client, watchdog })
    }

    fn timed<R>(
        &mut self,
        f: impl FnOnce(&mut Client) -> Result<R, postgres::Error>,
    ) -> Result<R, DbError> {
        *self
            .watchdog
            .deadline
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        let out = f(&mut self.client);
        *self
            .watchdog
            .deadline
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = None;
        out.map_err(|e| map_error(&e))
    }
}

impl Watchdog {
    /// Cancels a statement that has run longer than `limit`.
    fn watch(&self, limit: Duration) {
        while !self.closed.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            let started = *self.deadline.lock().unwrap_or_else(|e| e.into_inner());
            if started.is_some_and(|s| s.elapsed() > limit) {
                let _ = self.cancel.cancel_query(NoTls);
                // One cancel per statement; the next one sets a new start.
                *self.deadline.lock().unwrap_or_else(|e| e.into_inner()) = None;
            }
        }
    }
}

impl Drop for PgConnection {
    fn drop(&mut self) {
        self.watchdog.closed.store(true, Ordering::Relaxed);
    }
}

/// Maps a driver error to lancet's: the SQLSTATE as the code, a lost
/// connection (backend terminated, server shut down, socket closed) as
/// `ConnectionLost`, a cancelled statement as `Timeout`.
pub fn map_error(e: &postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let kind = if *code == SqlState::QUERY_CANCELED {
            FailureKind::Timeout
        } else if [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
        ]
        .contains(code)
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
    DbError {
        // Anything but an error from the server is the connection: closed,
        // refused, reset, or a protocol failure.
        kind: FailureKind::ConnectionLost,
        code: None,
        message: e.to_string(),
    }
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
        self.timed(|c| c.batch_execute(sql))
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        let messages = self.timed(|c| c.simple_query(sql))?;
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
        let sql: String = crate::knobs::commands(setting).join(" ");
        if sql.is_empty() {
            return Ok(());
        }
        self.execute(&sql)
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
