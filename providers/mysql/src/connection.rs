//! One open MySQL or MariaDB database through the `mysql` crate's text
//! protocol, every call bounded:
//!
//! 1. the server's own statement limit (MariaDB `max_statement_time`,
//!    MySQL `max_execution_time`, which covers SELECT only) ends a long
//!    statement with an error, a [`FailureKind::Timeout`];
//! 2. the socket's read timeout, [`HANG_GRACE`] past that limit, ends a
//!    call the server never answers: a [`FailureKind::Hang`], and the
//!    connection is closed.
//!
//! After a hang or a lost connection every later call fails at once with
//! [`FailureKind::ConnectionLost`].

use crate::knobs;
use crate::url::ServerUrl;
use crate::ServerKind;
use lancet_core::{Connection, DbError, FailureKind, KnobSetting, Row, Value};
use mysql::consts::{ColumnFlags, ColumnType};
use mysql::prelude::Queryable;
use std::time::Duration;

/// How long past the statement limit a call may wait for an answer.
pub const HANG_GRACE: Duration = Duration::from_secs(5);
/// How long connecting may take.
pub const CONNECT_LIMIT: Duration = Duration::from_secs(10);

/// The SQL mode every lancet session sets, so that results do not depend
/// on the server's defaults: no strict mode (a value that does not fit is
/// clipped with a warning on every server alike), no engine substitution
/// (an engine the server lacks is an error, not InnoDB in disguise).
pub const SQL_MODE: &str = "NO_ENGINE_SUBSTITUTION";

/// The settings every generated database starts with, run as its first
/// statements and so written into every reproducer: the SQL mode, UTC,
/// utf8mb4 with literals compared in byte order (as PQS's evaluator
/// does), 30 decimal digits for divisions and AVG (the default 4 would
/// round AVG far from the SUM/COUNT an oracle recombines), and the
/// server's known-bug workarounds ([`knobs::baseline`]). The connection
/// does not set them itself: a reduction that drops one then runs under
/// the server's defaults, as the client would, so a reduced reproducer
/// shows its bug in the client too.
pub fn database_settings(kind: ServerKind) -> Vec<String> {
    let mut s = vec![
        format!("SET SESSION sql_mode = '{SQL_MODE}'"),
        "SET SESSION time_zone = '+00:00'".to_string(),
        "SET NAMES utf8mb4 COLLATE utf8mb4_bin".to_string(),
        "SET SESSION div_precision_increment = 30".to_string(),
    ];
    if let Some(b) = knobs::baseline(kind) {
        s.push(format!("SET SESSION optimizer_switch = '{b}'"));
    }
    s
}

/// What every connection sets, changing no result: the statement time
/// limit, and the known-crash workaround (also in
/// [`database_settings`]), so that no replay meets the crash.
fn connection_settings(kind: ServerKind, time_limit: Duration) -> Vec<String> {
    let mut s = Vec::new();
    if let Some(b) = knobs::baseline(kind) {
        s.push(format!("SET SESSION optimizer_switch = '{b}'"));
    }
    s.push(match kind {
        ServerKind::MariaDb => format!(
            "SET SESSION max_statement_time = {}",
            time_limit.as_secs_f64()
        ),
        ServerKind::MySql => format!(
            "SET SESSION max_execution_time = {}",
            time_limit.as_millis()
        ),
    });
    s
}

pub struct MySqlConnection {
    conn: Option<mysql::Conn>,
    kind: ServerKind,
    /// The configuration in force.
    knobs: KnobSetting,
}

/// Error numbers that mean the statement ran out of time.
const TIMEOUT_CODES: &[u16] = &[1969, 3024, 1317];
/// Error numbers that mean the session is gone (killed, server shutting down).
const GONE_CODES: &[u16] = &[1927, 1053, 2006, 2013];

fn map_error(e: &mysql::Error) -> DbError {
    match e {
        mysql::Error::MySqlError(m) => {
            let kind = if TIMEOUT_CODES.contains(&m.code) {
                FailureKind::Timeout
            } else if GONE_CODES.contains(&m.code) {
                FailureKind::ConnectionLost
            } else {
                FailureKind::Statement
            };
            DbError {
                kind,
                code: Some(m.code.to_string()),
                message: m.message.clone(),
            }
        }
        mysql::Error::IoError(io)
            if matches!(
                io.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            DbError {
                kind: FailureKind::Hang,
                code: None,
                message: format!(
                    "no answer within the statement limit and {} s more; lancet closed the connection",
                    HANG_GRACE.as_secs()
                ),
            }
        }
        other => DbError {
            kind: FailureKind::ConnectionLost,
            code: None,
            message: other.to_string(),
        },
    }
}

impl MySqlConnection {
    /// Connects to `database` and sets up the session.
    pub fn open(
        url: &ServerUrl,
        database: Option<&str>,
        kind: ServerKind,
        time_limit: Duration,
    ) -> Result<MySqlConnection, DbError> {
        let opts = url
            .opts_for(database)
            .tcp_connect_timeout(Some(CONNECT_LIMIT))
            .read_timeout(Some(time_limit + HANG_GRACE))
            .write_timeout(Some(time_limit + HANG_GRACE));
        let conn = mysql::Conn::new(opts).map_err(|e| {
            let mut e = map_error(&e);
            if e.kind == FailureKind::Hang {
                e.kind = FailureKind::ConnectionLost;
            }
            e
        })?;
        let mut c = MySqlConnection {
            conn: Some(conn),
            kind,
            knobs: KnobSetting::default(),
        };
        for s in connection_settings(kind, time_limit) {
            c.execute(&s)?;
        }
        Ok(c)
    }

    fn conn(&mut self) -> Result<&mut mysql::Conn, DbError> {
        self.conn.as_mut().ok_or_else(|| DbError {
            kind: FailureKind::ConnectionLost,
            code: None,
            message: "the connection was closed after an earlier failure".into(),
        })
    }

    /// Runs `call`, and closes the connection if it failed for good.
    fn call<T>(
        &mut self,
        call: impl FnOnce(&mut mysql::Conn) -> Result<T, mysql::Error>,
    ) -> Result<T, DbError> {
        let out = call(self.conn()?).map_err(|e| map_error(&e));
        if let Err(e) = &out {
            if matches!(e.kind, FailureKind::Hang | FailureKind::ConnectionLost) {
                self.conn = None;
            }
        }
        out
    }

    /// Runs a query of lancet's own and returns its rows as text.
    pub fn query_text(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let rows = self.call(|c| c.query::<mysql::Row, _>(sql))?;
        Ok(rows
            .into_iter()
            .map(|r| {
                r.unwrap()
                    .into_iter()
                    .map(|v| match v {
                        mysql::Value::NULL => None,
                        mysql::Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
                    })
                    .collect()
            })
            .collect())
    }
}

/// One row of EXPLAIN's table as one step of a plan, in the last column
/// where [`lancet_core::plans::plan_signature`] reads it: the select, the
/// table, the access type, the key and the Extra notes, without row
/// estimates (which vary from run to run). Parentheses become brackets, so
/// that the join buffer's algorithm (`BNL`, `BKA`) stays in the signature.
fn plan_step(row: mysql::Row) -> Row {
    let names: Vec<String> = row
        .columns_ref()
        .iter()
        .map(|c| c.name_str().to_ascii_lowercase())
        .collect();
    let values = row.unwrap();
    let get = |name: &str| -> String {
        names
            .iter()
            .position(|n| n == name)
            .and_then(|i| values.get(i))
            .map(|v| match v {
                mysql::Value::NULL => "-".to_string(),
                mysql::Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
                other => other.as_sql(true),
            })
            .unwrap_or_default()
    };
    let step = ["id", "select_type", "table", "type", "key", "extra"]
        .map(get)
        .join(" ")
        .replace('(', "[")
        .replace(')', "]");
    vec![Value::Text(step)]
}

/// A value of the text protocol as lancet's [`Value`], by the column's type.
fn parse_value(v: mysql::Value, column: &mysql::Column) -> Value {
    let bytes = match v {
        mysql::Value::NULL => return Value::Null,
        mysql::Value::Bytes(b) => b,
        mysql::Value::Int(i) => return Value::Integer(i),
        mysql::Value::UInt(u) => {
            return i64::try_from(u)
                .map(Value::Integer)
                .unwrap_or_else(|_| Value::Decimal(u.to_string()))
        }
        mysql::Value::Float(f) => return Value::Real(f64::from(f)),
        mysql::Value::Double(d) => return Value::Real(d),
        other => return Value::Text(other.as_sql(true).trim_matches('\'').to_string()),
    };
    let text = || String::from_utf8_lossy(&bytes).into_owned();
    match column.column_type() {
        ColumnType::MYSQL_TYPE_TINY
        | ColumnType::MYSQL_TYPE_SHORT
        | ColumnType::MYSQL_TYPE_LONG
        | ColumnType::MYSQL_TYPE_INT24
        | ColumnType::MYSQL_TYPE_LONGLONG
        | ColumnType::MYSQL_TYPE_YEAR => {
            let t = text();
            t.parse::<i64>()
                .map(Value::Integer)
                .unwrap_or(Value::Decimal(t))
        }
        ColumnType::MYSQL_TYPE_DECIMAL | ColumnType::MYSQL_TYPE_NEWDECIMAL => {
            Value::Decimal(text())
        }
        ColumnType::MYSQL_TYPE_FLOAT | ColumnType::MYSQL_TYPE_DOUBLE => {
            let t = text();
            t.parse::<f64>().map(Value::Real).unwrap_or(Value::Text(t))
        }
        // BIT(n) comes as n bits, big-endian.
        ColumnType::MYSQL_TYPE_BIT => Value::Integer(
            bytes
                .iter()
                .fold(0i64, |acc, b| acc.wrapping_shl(8) | i64::from(*b)),
        ),
        // Character set 63 is `binary`: BLOB, VARBINARY, BINARY.
        _ if column.character_set() == 63
            && !column.flags().contains(ColumnFlags::ENUM_FLAG)
            && matches!(
                column.column_type(),
                ColumnType::MYSQL_TYPE_BLOB
                    | ColumnType::MYSQL_TYPE_TINY_BLOB
                    | ColumnType::MYSQL_TYPE_MEDIUM_BLOB
                    | ColumnType::MYSQL_TYPE_LONG_BLOB
                    | ColumnType::MYSQL_TYPE_VAR_STRING
                    | ColumnType::MYSQL_TYPE_STRING
                    | ColumnType::MYSQL_TYPE_VARCHAR
            ) =>
        {
            Value::Blob(bytes)
        }
        _ => Value::Text(text()),
    }
}

impl Connection for MySqlConnection {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.call(|c| c.query_drop(sql))
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        let rows = self.call(|c| c.query::<mysql::Row, _>(sql))?;
        if sql.starts_with(crate::dialect::EXPLAIN) {
            return Ok(rows.into_iter().map(plan_step).collect());
        }
        Ok(rows
            .into_iter()
            .map(|r| {
                // The row shares its columns (an Arc): no copy per row.
                let columns = r.columns();
                r.unwrap()
                    .into_iter()
                    .zip(columns.iter())
                    .map(|(v, c)| parse_value(v, c))
                    .collect()
            })
            .collect())
    }

    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        if *setting == self.knobs {
            return Ok(());
        }
        let sql = knobs::commands(&self.knobs, setting, self.kind)
            .map_err(|e| DbError::statement(None, e))?
            .join(" ");
        // One statement at a time: in a multi-statement query the mysql
        // crate lets an error of a later statement pass unseen (a
        // configuration MariaDB refuses ran as if applied).
        for statement in sql.split(';').map(str::trim).filter(|s| !s.is_empty()) {
            self.execute(statement)?;
        }
        self.knobs = setting.clone();
        Ok(())
    }
}
