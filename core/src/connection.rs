//! The small interface between lancet and one open database: run a
//! statement, run a query and get rows. Providers implement it over their
//! drivers; wrappers (fault injection, timing) stack on it.

use crate::knobs::KnobSetting;
use crate::value::Row;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Why a statement did not complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FailureKind {
    /// The DBMS rejected the statement; the connection is still usable.
    Statement,
    /// The connection is gone (server crashed or restarted, backend killed).
    ConnectionLost,
    /// The statement ran longer than the provider's statement time limit and
    /// was cancelled; the statement had no effect.
    Timeout,
    /// The statement neither finished within its time limit nor answered
    /// the cancel request within a few seconds more: the DBMS hangs. The
    /// provider has closed the connection; it is a finding, and the
    /// database is abandoned.
    Hang,
}

/// An error reported by the DBMS, with its code where it gives one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DbError {
    pub kind: FailureKind,
    /// The DBMS's own code: SQLite extended result code name
    /// (`SQLITE_CONSTRAINT_UNIQUE`), PostgreSQL SQLSTATE, MySQL error number.
    pub code: Option<String>,
    pub message: String,
}

impl DbError {
    pub fn statement(code: Option<String>, message: impl Into<String>) -> DbError {
        DbError {
            kind: FailureKind::Statement,
            code,
            message: message.into(),
        }
    }
}

impl fmt::Display for DbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.code {
            Some(code) => write!(f, "[{code}] {}", self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for DbError {}

/// An error message with what differs between two runs of one bug abstracted: quoted
/// parts (names, values) and runs of digits. `column a2.c0_1 does not
/// exist` and `column a2.c0 does not exist` stay different; `relation
/// "t3" does not exist` and `relation "t1" does not exist` are one.
pub fn message_shape(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut chars = message.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                for d in chars.by_ref() {
                    if d == '"' {
                        break;
                    }
                }
                out.push_str("\"?\"");
            }
            d if d.is_ascii_digit() => {
                while chars.peek().is_some_and(|n| n.is_ascii_digit()) {
                    chars.next();
                }
                out.push('#');
            }
            other => out.push(other),
        }
    }
    out
}

impl DbError {
    /// Whether `other` is the same error: the same kind, code and message
    /// shape ([`message_shape`]). A syntax error or a missing table shares
    /// SQLite's generic code with many bugs, never their message.
    pub fn same_error(&self, other: &DbError) -> bool {
        self.kind == other.kind
            && self.code == other.code
            && message_shape(&self.message) == message_shape(&other.message)
    }
}

/// One open database.
pub trait Connection: Send {
    /// Runs a statement that returns no rows (DDL, DML, settings).
    fn execute(&mut self, sql: &str) -> Result<(), DbError>;
    /// Runs a query and fetches all its rows.
    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError>;
    /// Runs several queries in order, stopping at the first that fails
    /// (its error is the last result). One round trip where the connection
    /// can do that (a worker process); by default one query at a time.
    fn query_many(&mut self, sqls: &[&str]) -> Vec<Result<Vec<Row>, DbError>> {
        let mut out = Vec::with_capacity(sqls.len());
        for sql in sqls {
            let r = self.query(sql);
            let failed = r.is_err();
            out.push(r);
            if failed {
                break;
            }
        }
        out
    }
    /// Applies an optimizer configuration for the following statements.
    /// Providers whose knobs are SQL settings may run them here too.
    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        if setting.changes.is_empty() {
            Ok(())
        } else {
            Err(DbError::statement(
                None,
                "this connection has no optimizer knobs",
            ))
        }
    }
}

impl<C: Connection + ?Sized> Connection for Box<C> {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        (**self).execute(sql)
    }
    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        (**self).query(sql)
    }
    fn query_many(&mut self, sqls: &[&str]) -> Vec<Result<Vec<Row>, DbError>> {
        (**self).query_many(sqls)
    }
    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        (**self).set_knobs(setting)
    }
}
