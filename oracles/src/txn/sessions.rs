//! The sessions of one database: a thread per session that runs on its
//! connection what the driver sends, so that a statement waiting for a
//! lock holds up only its own session.

use crossbeam_channel::{bounded, Receiver, Sender};
use lancet_core::txn::Transactions;
use lancet_core::{Connection, DbError, Value};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub(crate) type Reply = Result<Option<Vec<Vec<Value>>>, DbError>;

/// A session's thread: it runs what it is sent on its connection.
pub(crate) struct SessionThread {
    send: Sender<(String, bool)>,
    pub(crate) recv: Receiver<Reply>,
    handle: Option<JoinHandle<()>>,
}

impl SessionThread {
    fn start(mut conn: Box<dyn Connection>) -> SessionThread {
        let (send, commands) = bounded::<(String, bool)>(1);
        let (replies, recv) = bounded::<Reply>(1);
        let handle = std::thread::spawn(move || {
            for (sql, is_query) in commands {
                let reply = if is_query {
                    conn.query(&sql).map(Some)
                } else {
                    conn.execute(&sql).map(|()| None)
                };
                if replies.send(reply).is_err() {
                    break;
                }
            }
        });
        SessionThread {
            send,
            recv,
            handle: Some(handle),
        }
    }

    pub(crate) fn run(&self, sql: &str, is_query: bool) -> bool {
        self.send.send((sql.to_string(), is_query)).is_ok()
    }
}

impl Drop for SessionThread {
    fn drop(&mut self) {
        // Closing the command channel ends the thread once its statement
        // returns, and the thread closes its connection: waited for a
        // while, so that the database can be dropped next, but not
        // joined, so that a stuck DBMS cannot stick lancet (a statement
        // still waiting ends with its connection's time limit).
        let (dead, _) = bounded(1);
        self.send = dead;
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.recv.recv_deadline(deadline).is_ok() {}
        if self.handle.as_ref().is_some_and(|h| h.is_finished()) {
            if let Some(h) = self.handle.take() {
                let _ = h.join();
            }
        }
    }
}

/// The sessions a database keeps for its schedules.
pub struct Sessions {
    pub(crate) threads: Vec<SessionThread>,
    /// The schedule tables made in this database: name, and its shape
    /// (a table of another shape is made again).
    pub(crate) tables: std::sync::Mutex<std::collections::HashMap<String, TableShape>>,
}

impl Sessions {
    /// Opens `n` sessions with `open` and runs the DBMS's session setup.
    pub fn open(
        tx: &dyn Transactions,
        n: usize,
        mut open: impl FnMut() -> anyhow::Result<Box<dyn Connection>>,
    ) -> anyhow::Result<Sessions> {
        let mut threads = Vec::with_capacity(n);
        for _ in 0..n {
            let mut conn = open()?;
            for sql in tx.session_setup() {
                conn.execute(&sql)
                    .map_err(|e| anyhow::anyhow!("session setup `{sql}` failed: {e}"))?;
            }
            threads.push(SessionThread::start(conn));
        }
        Ok(Sessions {
            threads,
            tables: Default::default(),
        })
    }

    /// Ends every session's thread and closes its connection.
    pub fn close(&mut self) {
        self.threads.clear();
    }
}

/// Runs a statement on a connection and waits for it: the setup, the
/// final read, a planted fault's side connection.
pub(crate) fn run_now(conn: &mut dyn Connection, sql: &str, is_query: bool) -> Reply {
    if is_query {
        conn.query(sql).map(Some)
    } else {
        conn.execute(sql).map(|()| None)
    }
}

/// Rows of `(k, v)` from a result, or why they are not.
pub fn pairs(rows: &[Vec<Value>]) -> Result<Vec<(i64, i64)>, String> {
    let int = |v: &Value| match v {
        Value::Integer(i) => Some(*i),
        Value::Null => Some(super::schedule::NULL_V),
        Value::Decimal(s) | Value::Text(s) => s.parse().ok(),
        _ => None,
    };
    rows.iter()
        .map(|r| match r.as_slice() {
            [k, v] => int(k)
                .zip(int(v))
                .ok_or_else(|| format!("not two integers: {r:?}")),
            _ => Err(format!("not two columns: {r:?}")),
        })
        .collect()
}

/// How a schedule's table was made: its index on `v` and its placement.
pub(crate) type TableShape = (lancet_core::txn::IndexV, Option<String>);
