//! The two databases a store can live in, behind one small interface:
//! statements with positional parameters (`$1`, `$2`, ... in the SQL text,
//! as PostgreSQL writes them; SQLite gets `?1`, `?2`), rows of plain values,
//! and transactions.

use anyhow::Context;
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use std::time::Duration;

/// A parameter or a column's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
}

impl Value {
    pub fn int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            Value::Float(f) => *f as i64,
            Value::Text(t) => t.parse().unwrap_or(0),
            Value::Null => 0,
        }
    }
    pub fn float(&self) -> f64 {
        match self {
            Value::Int(i) => *i as f64,
            Value::Float(f) => *f,
            Value::Text(t) => t.parse().unwrap_or(0.0),
            Value::Null => 0.0,
        }
    }
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(t) => Some(t),
            _ => None,
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_string())
    }
}
impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}
impl From<u64> for Value {
    fn from(i: u64) -> Value {
        Value::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}
impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(v: Option<T>) -> Value {
        v.map_or(Value::Null, Into::into)
    }
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(i) => i.to_sql(ty, out),
            Value::Float(f) => f.to_sql(ty, out),
            Value::Text(t) => t.to_sql(ty, out),
        }
    }
    fn accepts(ty: &Type) -> bool {
        // Every column of the store is BIGINT, DOUBLE PRECISION or TEXT.
        [Type::INT8, Type::FLOAT8, Type::TEXT].contains(ty)
    }
    to_sql_checked!();
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(i) => ValueRef::Integer(*i),
            Value::Float(f) => ValueRef::Real(*f),
            Value::Text(t) => ValueRef::Text(t.as_bytes()),
        }))
    }
}

/// A connection to the store's database.
pub enum Backend {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

/// How long a statement of the store may take on PostgreSQL, and how long
/// a writer waits for another's lock on SQLite.
pub const STATEMENT_LIMIT: Duration = Duration::from_secs(30);

impl Backend {
    pub fn sqlite(path: &std::path::Path) -> anyhow::Result<Backend> {
        let conn = rusqlite::Connection::open(path)
            .with_context(|| format!("cannot open the SQLite store {}", path.display()))?;
        conn.busy_timeout(STATEMENT_LIMIT)?;
        // WAL: shards on one machine write one file while a report reads it.
        conn.pragma_update(None, "journal_mode", "WAL")
            .with_context(|| format!("{} is not an SQLite database", path.display()))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Ok(Backend::Sqlite(conn))
    }

    pub fn postgres(config: postgres::Config) -> Result<Backend, postgres::Error> {
        let mut client = config.connect(postgres::NoTls)?;
        client.batch_execute(&format!(
            "SET statement_timeout = {}; SET lock_timeout = {}",
            STATEMENT_LIMIT.as_millis(),
            STATEMENT_LIMIT.as_millis()
        ))?;
        Ok(Backend::Postgres(Box::new(client)))
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, Backend::Postgres(_))
    }

    /// Runs statements without parameters or results (DDL, BEGIN).
    pub fn batch(&mut self, sql: &str) -> anyhow::Result<()> {
        match self {
            Backend::Sqlite(c) => c.execute_batch(sql)?,
            Backend::Postgres(c) => c.batch_execute(sql)?,
        }
        Ok(())
    }

    /// Runs one statement; returns the rows it changed.
    pub fn execute(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<u64> {
        Ok(match self {
            Backend::Sqlite(c) => {
                let sql = sqlite_params(sql);
                let mut stmt = c.prepare_cached(&sql)?;
                stmt.execute(rusqlite::params_from_iter(params.iter()))? as u64
            }
            Backend::Postgres(c) => {
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                c.execute(sql, &refs)?
            }
        })
    }

    /// Runs one query; returns its rows.
    pub fn query(&mut self, sql: &str, params: &[Value]) -> anyhow::Result<Vec<Vec<Value>>> {
        match self {
            Backend::Sqlite(c) => {
                let sql = sqlite_params(sql);
                let mut stmt = c.prepare_cached(&sql)?;
                let columns = stmt.column_count();
                let mut rows = stmt.query(rusqlite::params_from_iter(params.iter()))?;
                let mut out = Vec::new();
                while let Some(row) = rows.next()? {
                    let mut values = Vec::with_capacity(columns);
                    for i in 0..columns {
                        use rusqlite::types::ValueRef;
                        values.push(match row.get_ref(i)? {
                            ValueRef::Null => Value::Null,
                            ValueRef::Integer(i) => Value::Int(i),
                            ValueRef::Real(f) => Value::Float(f),
                            ValueRef::Text(t) | ValueRef::Blob(t) => {
                                Value::Text(String::from_utf8_lossy(t).into_owned())
                            }
                        });
                    }
                    out.push(values);
                }
                Ok(out)
            }
            Backend::Postgres(c) => {
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
                let rows = c.query(sql, &refs)?;
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    let mut values = Vec::with_capacity(row.len());
                    for (i, col) in row.columns().iter().enumerate() {
                        let ty = col.type_();
                        values.push(if *ty == Type::INT8 {
                            row.get::<_, Option<i64>>(i).map_or(Value::Null, Value::Int)
                        } else if *ty == Type::INT4 {
                            row.get::<_, Option<i32>>(i)
                                .map_or(Value::Null, |v| Value::Int(v.into()))
                        } else if *ty == Type::FLOAT8 {
                            row.get::<_, Option<f64>>(i)
                                .map_or(Value::Null, Value::Float)
                        } else {
                            row.get::<_, Option<String>>(i)
                                .map_or(Value::Null, Value::Text)
                        });
                    }
                    out.push(values);
                }
                Ok(out)
            }
        }
    }

    /// Starts a writing transaction (SQLite: takes the write lock now, so
    /// two writers queue instead of failing at their first write).
    pub fn begin(&mut self) -> anyhow::Result<()> {
        match self {
            Backend::Sqlite(_) => self.batch("BEGIN IMMEDIATE"),
            Backend::Postgres(_) => self.batch("BEGIN"),
        }
    }

    pub fn commit(&mut self) -> anyhow::Result<()> {
        self.batch("COMMIT")
    }

    /// Ends a failed transaction; a connection that broke needs nothing.
    pub fn rollback(&mut self) {
        let _ = self.batch("ROLLBACK");
    }
}

/// `$1` -> `?1`: the store's SQL holds no other `$`.
fn sqlite_params(sql: &str) -> String {
    sql.replace('$', "?")
}
