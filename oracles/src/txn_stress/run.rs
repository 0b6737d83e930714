//! Runs a round: each session on a thread of its own sends its
//! transactions one after another, with no order between sessions but
//! the DBMS's, and keeps a log of what each statement returned; at the
//! end the table's rows are read. A conflict the level allows (per
//! [`Transactions::conflict`]) rolls the transaction back and is counted;
//! any other error stops the round and is its failure.

use super::planted::StressFault;
use super::round::{Round, Stmt, Txn, TABLE};
use crate::txn::sessions::pairs;
use lancet_core::txn::{Conflict, TransactionEnd, Transactions};
use lancet_core::{Connection, DbError, FailureKind, Value};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// Its COMMIT returned OK: its writes count.
    Committed,
    /// It ended with the ROLLBACK it was drawn with.
    RolledBack,
    /// A conflict the level allows ended it (lancet rolled it back).
    Conflict(Conflict),
    /// Its COMMIT did not answer (a lost connection, a time-out): it may
    /// or may not have committed, so the rows it wrote are open.
    Unknown,
    /// An error no level allows ended it before its COMMIT.
    Failed,
}

/// A whole-bank read a transaction made: the total it saw, and how many
/// rows (for `SELECT k, v`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TotalSeen {
    /// Its statement's index in the transaction's plan.
    pub stmt: usize,
    pub total: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<usize>,
}

/// One transaction as it ran: what each statement returned.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TxnLog {
    pub session: usize,
    /// Its place among the session's transactions.
    pub index: usize,
    /// Each statement sent and what it returned (`ok`, the rows, or the
    /// error).
    pub statements: Vec<(String, String)>,
    pub ending: Ending,
    /// The whole-bank reads it made, before which of its writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub totals: Vec<TotalSeen>,
    /// When it began and ended, in ms from the round's start.
    pub began_ms: u64,
    pub ended_ms: u64,
}

/// What one run of a round came to.
#[derive(Debug, Default)]
pub struct RoundRun {
    /// Every session's transactions, in each session's order.
    pub logs: Vec<Vec<TxnLog>>,
    /// An error no level allows: the session, its statement, the error.
    pub failure: Option<(usize, String, DbError)>,
    /// The rows after the round (empty when they could not be read).
    pub final_rows: Vec<(i64, i64)>,
    pub statements: u64,
}

impl RoundRun {
    /// How many transactions ended each way: committed, conflicts,
    /// unknown.
    pub fn counts(&self) -> (u64, u64, u64) {
        let mut c = (0, 0, 0);
        for log in self.logs.iter().flatten() {
            match log.ending {
                Ending::Committed => c.0 += 1,
                Ending::Conflict(_) => c.1 += 1,
                Ending::Unknown => c.2 += 1,
                Ending::RolledBack | Ending::Failed => {}
            }
        }
        c
    }
}

/// Everything a round's run needs besides its connections.
pub struct RoundSpec<'a> {
    pub tx: &'a dyn Transactions,
    pub round: &'a Round,
    pub fault: Option<StressFault>,
    /// How long the sessions may begin transactions.
    pub time_limit: Duration,
}

/// Sets the table up through `observer`, runs the round on the first of
/// `sessions` (one per round session), and reads the rows. `made` is the
/// shape the table was last made in on this database (made again when it
/// differs). Errors are the setup's.
pub fn run_round(
    spec: &RoundSpec<'_>,
    observer: &mut dyn Connection,
    sessions: &mut [Box<dyn Connection>],
    made: &mut Option<(bool, Option<String>)>,
) -> anyhow::Result<RoundRun> {
    let round = spec.round;
    anyhow::ensure!(
        sessions.len() >= round.sessions.len(),
        "the round has {} sessions, the database {}",
        round.sessions.len(),
        sessions.len()
    );
    set_up(spec, observer, made)?;
    // Each session reads the table once before the round, alone: a
    // session whose cached schema predates the table, and which first
    // meets it while another session commits, cannot check that cache
    // (SQLite's schema check needs a read lock, and a session waits for
    // none: `busy_timeout = 0`), and its statement fails with "no such
    // table" (seen with lancet: 1 run in 3 of tests/txn_stress.rs).
    for conn in sessions.iter_mut().take(round.sessions.len()) {
        conn.query(&format!("SELECT count(*) FROM {TABLE}"))
            .map_err(|e| anyhow::anyhow!("a session's first read of the table failed: {e}"))?;
    }
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let deadline = started + spec.time_limit;
    let runs: Vec<SessionRun> = std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .iter_mut()
            .zip(&round.sessions)
            .enumerate()
            .map(|(s, (conn, txns))| {
                let session = SessionDriver {
                    spec,
                    session: s,
                    stop: &stop,
                    started,
                    deadline,
                };
                scope.spawn(move || session.run(&mut **conn, txns))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut out = RoundRun::default();
    for (s, run) in runs.into_iter().enumerate() {
        out.statements += run.statements;
        if out.failure.is_none() {
            out.failure = run.failure.map(|(sql, e)| (s, sql, e));
        }
        out.logs.push(run.logs);
    }
    // Whatever a failure left open goes, so that the rows can be read.
    for conn in sessions.iter_mut().take(round.sessions.len()) {
        let _ = conn.execute(&spec.tx.end(TransactionEnd::Rollback));
    }
    match observer.query(&format!("SELECT k, v FROM {TABLE} ORDER BY k")) {
        Ok(rows) => match pairs(&rows) {
            Ok(rows) => out.final_rows = rows,
            Err(why) => {
                out.failure.get_or_insert((
                    0,
                    "the final read".into(),
                    DbError::statement(None, why),
                ));
            }
        },
        Err(e) => {
            out.failure.get_or_insert((0, "the final read".into(), e));
        }
    }
    Ok(out)
}

/// Makes the table (again, where its shape changed) or empties it, and
/// fills it with the round's rows.
fn set_up(
    spec: &RoundSpec<'_>,
    observer: &mut dyn Connection,
    made: &mut Option<(bool, Option<String>)>,
) -> anyhow::Result<()> {
    let round = spec.round;
    let shape = (round.index_v, round.placement.clone());
    let mut statements = Vec::new();
    if made.as_ref() == Some(&shape) {
        statements.push(format!("DELETE FROM {TABLE}"));
    } else {
        statements.push(format!("DROP TABLE IF EXISTS {TABLE}"));
        statements.extend(spec.tx.create_table(
            TABLE,
            lancet_core::txn::IndexV::of(round.index_v, false, false),
            round.placement.as_deref(),
        ));
    }
    *made = None;
    statements.extend(round.fill_sql());
    for sql in &statements {
        observer
            .execute(sql)
            .map_err(|e| anyhow::anyhow!("setting up the round's table: `{sql}` failed: {e}"))?;
    }
    *made = Some(shape);
    Ok(())
}

/// One session's part of a round.
struct SessionDriver<'r, 'a> {
    spec: &'r RoundSpec<'a>,
    session: usize,
    /// Set by the session that failed: the others begin nothing more.
    stop: &'r AtomicBool,
    started: Instant,
    deadline: Instant,
}

/// What one session did.
#[derive(Default)]
struct SessionRun {
    logs: Vec<TxnLog>,
    failure: Option<(String, DbError)>,
    statements: u64,
}

/// How a statement of a transaction went.
enum Sent {
    Ok(Option<Vec<Vec<Value>>>),
    /// A conflict the level allows.
    Conflict(Conflict),
    /// It ran past the session's time limit: a wait for a lock (a lock
    /// time-out), or a COMMIT whose outcome is unknown.
    TimedOut,
    /// Any other error: the round's failure.
    Failed(DbError),
}

impl SessionDriver<'_, '_> {
    fn ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    fn run(&self, conn: &mut dyn Connection, txns: &[Txn]) -> SessionRun {
        let mut out = SessionRun::default();
        for (index, txn) in txns.iter().enumerate() {
            if Instant::now() >= self.deadline || self.stop.load(Ordering::SeqCst) {
                break;
            }
            let mut log = TxnLog {
                session: self.session,
                index,
                statements: Vec::new(),
                ending: Ending::Failed,
                totals: Vec::new(),
                began_ms: self.ms(),
                ended_ms: 0,
            };
            let failure = self.transaction(conn, txn, &mut log, &mut out.statements);
            log.ended_ms = self.ms();
            out.logs.push(log);
            if let Some(f) = failure {
                self.stop.store(true, Ordering::SeqCst);
                out.failure = Some(f);
                break;
            }
        }
        out
    }

    /// Sends one statement and logs it.
    fn send(
        &self,
        conn: &mut dyn Connection,
        sql: String,
        is_query: bool,
        log: &mut TxnLog,
        count: &mut u64,
    ) -> Sent {
        *count += 1;
        let reply = if is_query {
            conn.query(&sql).map(Some)
        } else {
            conn.execute(&sql).map(|()| None)
        };
        let (shown, sent) = match reply {
            Ok(rows) => (
                rows.as_ref().map_or("ok".to_string(), |r| show_rows(r)),
                Sent::Ok(rows),
            ),
            Err(e) => match self.spec.tx.conflict(&e) {
                // A statement runs past the session's time limit only
                // while it waits for a lock (as the transaction oracle's
                // driver takes it).
                _ if e.kind == FailureKind::Timeout => (format!("timed out: {e}"), Sent::TimedOut),
                Some(c) if e.kind == FailureKind::Statement => {
                    (format!("{c:?}: {e}"), Sent::Conflict(c))
                }
                _ => (format!("error: {e}"), Sent::Failed(e)),
            },
        };
        log.statements.push((sql, shown));
        sent
    }

    /// Runs one transaction into `log`; the round's failure if it has
    /// one.
    fn transaction(
        &self,
        conn: &mut dyn Connection,
        txn: &Txn,
        log: &mut TxnLog,
        count: &mut u64,
    ) -> Option<(String, DbError)> {
        let tx = self.spec.tx;
        let round = self.spec.round;
        // The round's settings, once per session before its first BEGIN
        // (in its log, so that the reproducer sets them too).
        if log.index == 0 {
            for (name, value) in &round.settings {
                let sql = tx.setting_sql(name, value);
                if let Sent::Failed(e) = self.send(conn, sql.clone(), false, log, count) {
                    return Some((sql, e));
                }
            }
        }
        // A BEGIN that failed started nothing to roll back.
        for sql in tx.begin(round.level, round.mode.as_deref()) {
            match self.send(conn, sql.clone(), false, log, count) {
                Sent::Ok(_) => {}
                Sent::Conflict(c) => {
                    log.ending = Ending::Conflict(c);
                    return None;
                }
                Sent::TimedOut => {
                    log.ending = Ending::Conflict(Conflict::LockTimeout);
                    return self.roll_back(conn, log, count);
                }
                Sent::Failed(e) => return Some((sql, e)),
            }
        }
        let dropped = self
            .spec
            .fault
            .and_then(|f| f.dropped_write(self.session, txn));
        for (i, stmt) in txn.stmts.iter().enumerate() {
            match self.statement(conn, i, *stmt, dropped == Some(i), log, count) {
                Ok(true) => {}
                Ok(false) => return self.roll_back(conn, log, count),
                Err(failure) => {
                    let _ = self.roll_back(conn, log, count);
                    log.ending = Ending::Failed;
                    return Some(failure);
                }
            }
        }
        let end = if txn.commit {
            TransactionEnd::Commit
        } else {
            TransactionEnd::Rollback
        };
        let sql = tx.end(end);
        match self.send(conn, sql.clone(), false, log, count) {
            Sent::Ok(_) if txn.commit => log.ending = Ending::Committed,
            Sent::Ok(_) => log.ending = Ending::RolledBack,
            Sent::Conflict(_) | Sent::TimedOut if !txn.commit => {
                return Some((sql, conflict_error(log)));
            }
            // A COMMIT that ran out of time may have committed.
            Sent::TimedOut => {
                log.ending = Ending::Unknown;
                return self.roll_back(conn, log, count);
            }
            Sent::Conflict(c) => {
                let failure = self.roll_back(conn, log, count);
                log.ending = Ending::Conflict(c);
                return failure;
            }
            Sent::Failed(e) => {
                log.ending = Ending::Unknown;
                return Some((sql, e));
            }
        }
        None
    }

    /// Runs statement `i` of a transaction: `Ok(false)` where a conflict
    /// ended it (its ending is set), `Err` on a failure. `dropped`: the
    /// planted fault keeps its write from being sent.
    fn statement(
        &self,
        conn: &mut dyn Connection,
        i: usize,
        stmt: Stmt,
        dropped: bool,
        log: &mut TxnLog,
        count: &mut u64,
    ) -> Result<bool, (String, DbError)> {
        let mut read = 0;
        if let Some(sql) = stmt.read_sql() {
            let rows = match self.send(conn, sql.clone(), true, log, count) {
                Sent::Ok(rows) => rows.unwrap_or_default(),
                Sent::Conflict(c) => {
                    log.ending = Ending::Conflict(c);
                    return Ok(false);
                }
                Sent::TimedOut => {
                    log.ending = Ending::Conflict(Conflict::LockTimeout);
                    return Ok(false);
                }
                Sent::Failed(e) => return Err((sql, e)),
            };
            match read_value(stmt, &rows) {
                Ok(Some(seen)) => log.totals.push(TotalSeen { stmt: i, ..seen }),
                Ok(None) => read = single_value(&rows).unwrap_or_default(),
                Err(why) => return Err((sql, DbError::statement(None, why))),
            }
        }
        let Some(sql) = stmt.write_sql(read) else {
            return Ok(true);
        };
        if dropped {
            log.statements
                .push((sql, "not sent (planted fault), taken as ok".into()));
            return Ok(true);
        }
        match self.send(conn, sql.clone(), false, log, count) {
            Sent::Ok(_) => Ok(true),
            Sent::Conflict(c) => {
                log.ending = Ending::Conflict(c);
                Ok(false)
            }
            Sent::TimedOut => {
                log.ending = Ending::Conflict(Conflict::LockTimeout);
                Ok(false)
            }
            Sent::Failed(e) => Err((sql, e)),
        }
    }

    /// Rolls back after a conflict (its ending is already set): a
    /// ROLLBACK that fails is the round's failure.
    fn roll_back(
        &self,
        conn: &mut dyn Connection,
        log: &mut TxnLog,
        count: &mut u64,
    ) -> Option<(String, DbError)> {
        let ending = log.ending;
        let sql = self.spec.tx.end(TransactionEnd::Rollback);
        let sent = self.send(conn, sql.clone(), false, log, count);
        log.ending = ending;
        match sent {
            Sent::Ok(_) => None,
            Sent::Conflict(_) | Sent::TimedOut => Some((sql, conflict_error(log))),
            Sent::Failed(e) => Some((sql, e)),
        }
    }
}

/// A conflict where none can be (a ROLLBACK's), as an error: the
/// message the log shows.
fn conflict_error(log: &TxnLog) -> DbError {
    let shown = log
        .statements
        .last()
        .map(|(_, r)| r.clone())
        .unwrap_or_default();
    DbError::statement(None, shown)
}

/// What a read returned: a whole-bank read's total (`Some`), or `None`
/// for a read of one row (its value, [`single_value`]).
fn read_value(stmt: Stmt, rows: &[Vec<Value>]) -> Result<Option<TotalSeen>, String> {
    match stmt {
        Stmt::ReadSum => Ok(Some(TotalSeen {
            stmt: 0,
            total: single_value(rows)?,
            rows: None,
        })),
        Stmt::ReadAll => {
            let rows = pairs(rows)?;
            Ok(Some(TotalSeen {
                stmt: 0,
                total: rows.iter().map(|(_, v)| v).sum(),
                rows: Some(rows.len()),
            }))
        }
        Stmt::ReadThenSet { .. } => single_value(rows).map(|_| None),
        Stmt::Add { .. } => Ok(None),
    }
}

/// The one integer of a one-row, one-column result.
fn single_value(rows: &[Vec<Value>]) -> Result<i64, String> {
    match rows {
        [row] => match row.as_slice() {
            [Value::Integer(i)] => Ok(*i),
            [Value::Decimal(s) | Value::Text(s)] => {
                s.parse().map_err(|_| format!("not an integer: {row:?}"))
            }
            _ => Err(format!("not one integer: {row:?}")),
        },
        _ => Err(format!("{} rows where one was expected", rows.len())),
    }
}

/// Rows as the log shows them.
fn show_rows(rows: &[Vec<Value>]) -> String {
    match pairs(rows) {
        Ok(pairs) => crate::txn::model::show(&pairs),
        Err(_) => match single_value(rows) {
            Ok(v) => v.to_string(),
            Err(_) => format!("{rows:?}"),
        },
    }
}
