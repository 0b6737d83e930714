//! A session on one generated database: prints statements in the
//! provider's dialect, runs them, sorts errors into expected and not, times
//! the DBMS, and keeps the statements that built the database so that a
//! finding can be reproduced from them alone.

use crate::ast::{Query, StatementKind};
use crate::connection::{Connection, DbError, FailureKind};
use crate::dialect::Dialect;
use crate::expected_errors::ExpectedErrors;
use crate::knobs::KnobSetting;
use crate::print::ToSql;
use crate::value::Row;
use std::io::Write;
use std::time::{Duration, Instant};

/// Why a statement run through a session did not give a result.
#[derive(Clone, Debug)]
pub enum ExecError {
    /// An error on the provider's expected list: skip, it says nothing.
    Expected(DbError),
    /// An error not on the list: a finding.
    Unexpected { sql: String, error: DbError },
    /// The connection broke (a crash or restart) or the DBMS hung (the
    /// error's kind says which): a finding, and the database must be
    /// abandoned.
    Lost { sql: String, error: DbError },
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Expected(e) => write!(f, "expected error: {e}"),
            ExecError::Unexpected { sql, error } => write!(f, "unexpected error {error} in: {sql}"),
            ExecError::Lost { sql, error } if error.kind == FailureKind::Hang => {
                write!(f, "the DBMS hung ({error}) in: {sql}")
            }
            ExecError::Lost { sql, error } => write!(f, "connection lost ({error}) in: {sql}"),
        }
    }
}

/// Counters a session keeps for the runner's statistics.
#[derive(Clone, Copy, Debug, Default)]
pub struct SessionStats {
    pub statements: u64,
    pub dbms_time: Duration,
}

/// Time inside the DBMS by statement shape ([`statement_shape`]): what a
/// run's time goes to, for `lancet bench`.
pub type ShapeTimes = std::collections::BTreeMap<String, (u64, Duration)>;

/// A coarse shape of a statement, cheap to compute: its kind and, for
/// queries, how many relations (aliased as lancet's generators alias
/// them) and subqueries it has and which clauses make it heavy (`SELECT 2
/// relations 1 subqueries GROUP BY`).
pub fn statement_shape(sql: &str) -> String {
    let upper = sql.to_ascii_uppercase();
    let kind = upper.split_whitespace().next().unwrap_or("").to_string();
    if kind != "SELECT" && kind != "WITH" {
        return kind;
    }
    let count = |w: &str| upper.matches(w).count();
    // Relations in FROM clauses, as lancet's generators alias them (`t0 AS
    // a0`, `t1 AS s3`, PQS's `t2 AS p1`): comma joins count as much as
    // JOINs.
    let relations = upper
        .match_indices(" AS ")
        .filter(|(i, _)| {
            let rest = &upper[i + 4..];
            (rest.starts_with('A') || rest.starts_with('S') || rest.starts_with('P'))
                && rest[1..].starts_with(|c: char| c.is_ascii_digit())
        })
        .count();
    let subqueries = count("SELECT ").saturating_sub(1 + count(" UNION "));
    let mut shape = format!("SELECT {relations} relations {subqueries} subqueries");
    for clause in [
        " UNION ",
        " GROUP BY ",
        " HAVING ",
        " DISTINCT ",
        " ORDER BY ",
        " OVER (",
    ] {
        if upper.contains(clause) {
            shape.push(' ');
            shape.push_str(clause.trim());
        }
    }
    shape
}

pub struct Session<'e> {
    conn: Box<dyn Connection>,
    dialect: Dialect,
    expected: &'e ExpectedErrors,
    setup: Vec<String>,
    /// The optimizer configuration in force.
    knobs: KnobSetting,
    log: Option<Box<dyn Write + Send>>,
    /// The first error writing the log (a full disk), kept to be reported.
    log_error: Option<String>,
    pub stats: SessionStats,
    /// Time by statement shape since the runner last took it, when the run
    /// profiles (`lancet bench`): `None` keeps the classification off the
    /// hot path of a fuzzing run.
    pub shapes: Option<ShapeTimes>,
    /// Rows already fetched for oracles ([`DataReader`]), by query text;
    /// forgotten when the data changes ([`Session::execute_sql`]).
    fetched: std::collections::HashMap<String, Vec<Row>>,
    /// The temporary tables [`Session::materialize`] made: name,
    /// statement and the knobs in force when it ran, in order.
    materialized: Vec<(String, String, KnobSetting)>,
    /// The twins [`Session::build`] could not build, with why: a check
    /// that needs one again is skipped at once.
    unbuilt: Vec<(String, DbError)>,
    /// The first statement that lost the connection, wherever it ran: a
    /// loss inside a step whose errors are not findings (reading plans)
    /// shows only at the next statement, which did not cause it.
    first_loss: Option<Loss>,
    /// The knobs in force when the last statement that failed ran: an
    /// unexpected error of a knob check's query is a finding only under
    /// them, and the check restores the defaults before it is reported.
    failure_knobs: KnobSetting,
    /// The planted fault applied to oracles' queries ([`crate::run_check`]).
    fault: Option<crate::fault::Fault>,
}

/// A statement that lost the connection (or hung), with the knobs in
/// force when it ran.
#[derive(Clone, Debug)]
pub struct Loss {
    pub sql: String,
    pub knobs: KnobSetting,
    pub error: DbError,
}

impl<'e> Session<'e> {
    pub fn new(conn: Box<dyn Connection>, dialect: Dialect, expected: &'e ExpectedErrors) -> Self {
        Session {
            conn,
            dialect,
            expected,
            setup: Vec::new(),
            knobs: KnobSetting::default(),
            log: None,
            log_error: None,
            stats: SessionStats::default(),
            shapes: None,
            fetched: std::collections::HashMap::new(),
            materialized: Vec::new(),
            unbuilt: Vec::new(),
            first_loss: None,
            failure_knobs: KnobSetting::default(),
            fault: None,
        }
    }

    /// Plants `fault` in the results of the oracles' queries this session
    /// runs (`selftest`, and the replay of a finding made with one).
    pub fn with_fault(mut self, fault: Option<crate::fault::Fault>) -> Self {
        self.fault = fault;
        self
    }

    /// The planted fault, if there is one.
    pub fn fault(&self) -> Option<&crate::fault::Fault> {
        self.fault.as_ref()
    }

    /// The first statement of this session that lost the connection: the
    /// one a crash finding names, whatever statement reported the loss.
    pub fn first_loss(&self) -> Option<&Loss> {
        self.first_loss.as_ref()
    }

    /// The knobs in force when the last statement that failed ran (see
    /// the field's doc).
    pub fn failure_knobs(&self) -> &KnobSetting {
        &self.failure_knobs
    }

    /// Writes every statement run (and errors, as comments) to `log`.
    pub fn with_log(mut self, log: Box<dyn Write + Send>) -> Self {
        self.log = Some(log);
        self
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The connection itself, bypassing the log and error classification:
    /// for text that is not lancet's own (a foreign reproducer).
    pub fn connection(&mut self) -> &mut dyn Connection {
        &mut *self.conn
    }

    /// Writes every statement run (and errors, as comments) to `log` from
    /// now on.
    pub fn set_log(&mut self, log: Box<dyn Write + Send>) {
        self.log = Some(log);
    }

    /// The statements that succeeded and shaped the database, in order.
    pub fn setup(&self) -> &[String] {
        &self.setup
    }

    /// Logs a statement before it runs, flushed, so that a statement that
    /// crashes the DBMS (or lancet with it) is in the log.
    fn log_statement(&mut self, sql: &str) {
        if let Some(log) = &mut self.log {
            if let Err(e) = writeln!(log, "{sql};").and_then(|()| log.flush()) {
                // The log stops here; the error is reported, not swallowed.
                self.log_error.get_or_insert_with(|| e.to_string());
                self.log = None;
            }
        }
    }

    /// Logs how a statement failed, after it ran.
    fn log_result(&mut self, result: Option<&DbError>) {
        if let Some(e) = result {
            self.log_comment(&format!("-- error: {}", e.to_string().replace('\n', " ")));
        }
    }

    fn classify(&self, kind: StatementKind, sql: String, error: DbError) -> ExecError {
        match error.kind {
            FailureKind::ConnectionLost | FailureKind::Hang => ExecError::Lost { sql, error },
            // A statement over the time limit says nothing about correctness:
            // it had no effect and its check is skipped, like an expected error.
            FailureKind::Timeout => ExecError::Expected(error),
            FailureKind::Statement if self.expected.is_expected(kind, &error) => {
                ExecError::Expected(error)
            }
            FailureKind::Statement => ExecError::Unexpected { sql, error },
        }
    }

    /// Runs a statement that changes the database, printed by its provider
    /// (DDL and DML are the provider's; see the crate docs). `Ok(true)` if
    /// it succeeded (it becomes part of the setup), `Ok(false)` if it
    /// failed with an expected error (it had no effect and is left out).
    pub fn execute_sql(&mut self, kind: StatementKind, sql: String) -> Result<bool, ExecError> {
        self.fetched.clear();
        let result = self.timed(&sql, |c| c.execute(&sql));
        match result {
            Ok(()) => {
                self.setup.push(sql);
                Ok(true)
            }
            Err(e) => match self.classify(kind, sql, e) {
                ExecError::Expected(_) => Ok(false),
                other => Err(other),
            },
        }
    }

    /// Runs `sql`, which stores a query's rows in temporary table `name`,
    /// unless this session did already under the knobs now in force: the
    /// table lives as long as the connection, and checks only read, so it
    /// stays right. Made under other knobs it is dropped and made again,
    /// since the bug a knob hides may sit in the materializing statement
    /// (a replay with that knob off must not read the rows the defaults
    /// made). Not part of the database's setup: the check that needs it
    /// runs it. Errors are judged as the query's.
    pub fn materialize(&mut self, name: &str, sql: &str) -> Result<(), ExecError> {
        if let Some(i) = self.materialized.iter().position(|(n, _, _)| n == name) {
            if self.materialized[i].2 == self.knobs {
                return Ok(());
            }
            let drop = format!("DROP TABLE {name}");
            if let Err(e) = self.timed(&drop, |c| c.execute(&drop)) {
                return Err(self.classify(StatementKind::Query, drop, e));
            }
            self.materialized.remove(i);
        }
        match self.timed(sql, |c| c.execute(sql)) {
            Ok(()) => {
                let knobs = self.knobs.clone();
                self.materialized
                    .push((name.to_string(), sql.to_string(), knobs));
                Ok(())
            }
            Err(e) => Err(self.classify(StatementKind::Query, sql.to_string(), e)),
        }
    }

    /// Runs `statements` and then the query `sql` in a transaction that
    /// is rolled back after it, and returns the query's rows (see
    /// [`crate::OracleQuery::rolled_back`]). Each statement's error is
    /// judged by its kind's expected errors, the query's as any query's. The ROLLBACK runs
    /// whatever failed; its own failure matters only when all else
    /// succeeded (after an error a DBMS may have ended the transaction).
    pub fn query_rolled_back(
        &mut self,
        statements: &[(StatementKind, String)],
        sql: &str,
    ) -> Result<Vec<Row>, ExecError> {
        let begin = crate::oracle_query::BEGIN;
        if let Err(e) = self.timed(begin, |c| c.execute(begin)) {
            return Err(self.classify(StatementKind::Query, begin.to_string(), e));
        }
        let mut result = Ok(Vec::new());
        for (kind, stmt) in statements {
            if let Err(error) = self.timed(stmt, |c| c.execute(stmt)) {
                // Judged as the provider lists its errors for the kind: an
                // error it does not expect of an UPDATE or DELETE (an
                // internal error, say) is a finding, as DQE reports them.
                result = Err(self.classify(*kind, stmt.clone(), error));
                break;
            }
        }
        if result.is_ok() {
            result = self.query_sql(sql);
        }
        let rollback = crate::oracle_query::ROLLBACK;
        match (result, self.timed(rollback, |c| c.execute(rollback))) {
            (result, Ok(())) | (result @ Err(_), Err(_)) => result,
            (Ok(_), Err(e)) => Err(self.classify(StatementKind::Query, rollback.to_string(), e)),
        }
    }

    /// Runs `statements`, which build table `name` (a twin), unless this
    /// session did already: the twin holds the rows the table held when it
    /// was built, and checks only read, whatever the knobs. A statement
    /// that fails with an error the provider expects of a CREATE TABLE or
    /// an INSERT leaves the check without its twin (the recipe did not fit
    /// the table's rows: NULL in a WITHOUT ROWID key), so the check says
    /// nothing; any other error is judged as a query's. What was built is
    /// dropped by the database's reset.
    pub fn build(&mut self, name: &str, statements: &[String]) -> Result<(), ExecError> {
        if self.materialized.iter().any(|(n, _, _)| n == name) {
            return Ok(());
        }
        if let Some((_, e)) = self.unbuilt.iter().find(|(n, _)| n == name) {
            return Err(ExecError::Expected(e.clone()));
        }
        for sql in statements {
            if let Err(e) = self.timed(sql, |c| c.execute(sql)) {
                // A build is a CREATE and a copy of the rows: an error is
                // expected where the provider expects it of either (NULL in
                // a WITHOUT ROWID key); any other (an extension's internal
                // error) is a finding, never a silent skip.
                let verdict = match self.classify(StatementKind::CreateTable, sql.clone(), e) {
                    ExecError::Unexpected { error, .. }
                        if self.expected.is_expected(StatementKind::Insert, &error) =>
                    {
                        ExecError::Expected(error)
                    }
                    other => other,
                };
                return Err(match verdict {
                    ExecError::Expected(e) => {
                        self.unbuilt.push((name.to_string(), e.clone()));
                        ExecError::Expected(e)
                    }
                    other => other,
                });
            }
        }
        self.materialized.push((
            name.to_string(),
            statements.join(";\n"),
            KnobSetting::default(),
        ));
        Ok(())
    }

    /// The statements [`Session::materialize`] ran, in order: a failure
    /// finding's reproducer needs them after the setup, since the failing
    /// query may read their tables.
    pub fn materializations(&self) -> impl Iterator<Item = &str> {
        self.materialized.iter().map(|(_, sql, _)| sql.as_str())
    }

    /// Runs `run` on the connection for `sql`: logged, timed and counted.
    fn timed<T>(
        &mut self,
        sql: &str,
        run: impl FnOnce(&mut dyn Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        self.log_statement(sql);
        let start = Instant::now();
        let result = run(&mut *self.conn);
        let took = start.elapsed();
        self.stats.dbms_time += took;
        self.note_shape(sql, took);
        self.stats.statements += 1;
        self.log_result(result.as_ref().err());
        if let Err(e) = &result {
            self.failure_knobs = self.knobs.clone();
            self.note_loss(sql, e);
        }
        result
    }

    /// Remembers the first statement that lost the connection, with the
    /// knobs it ran under: the crash's reproducer sets them first (the
    /// one round trip of [`Session::query_many`] included, or a crash
    /// under a knob check's configuration replays without it).
    fn note_loss(&mut self, sql: &str, e: &DbError) {
        if matches!(e.kind, FailureKind::ConnectionLost | FailureKind::Hang)
            && self.first_loss.is_none()
        {
            self.first_loss = Some(Loss {
                sql: sql.to_string(),
                knobs: self.knobs.clone(),
                error: e.clone(),
            });
        }
    }

    /// Runs a query and returns its rows.
    pub fn query(&mut self, query: &Query) -> Result<Vec<Row>, ExecError> {
        let sql = query.to_sql(self.dialect);
        self.query_sql(&sql)
    }

    /// Runs query text the caller printed itself.
    pub fn query_sql(&mut self, sql: &str) -> Result<Vec<Row>, ExecError> {
        let result = self.timed(sql, |c| c.query(sql));
        result.map_err(|e| self.classify(StatementKind::Query, sql.to_string(), e))
    }

    fn note_shape(&mut self, sql: &str, took: Duration) {
        let Some(shapes) = &mut self.shapes else {
            return;
        };
        let entry = shapes.entry(statement_shape(sql)).or_default();
        entry.0 += 1;
        entry.1 += took;
    }

    /// Runs several queries in one go ([`Connection::query_many`]: one
    /// round trip where the connection allows), stopping at the first that
    /// fails, whose error is the last result. All are logged before they
    /// run.
    pub fn query_many(&mut self, sqls: &[String]) -> Vec<Result<Vec<Row>, ExecError>> {
        for sql in sqls {
            self.log_statement(sql);
        }
        let refs: Vec<&str> = sqls.iter().map(String::as_str).collect();
        let start = Instant::now();
        let results = self.conn.query_many(&refs);
        let took = start.elapsed();
        self.stats.dbms_time += took;
        if self.shapes.is_some() {
            // One round trip: its time is shared among the queries that ran.
            let share = took / (results.len().max(1) as u32);
            for sql in sqls.iter().take(results.len()) {
                self.note_shape(sql, share);
            }
        }
        self.stats.statements += results.len() as u64;
        let ran = results.len();
        results
            .into_iter()
            .zip(sqls)
            .map(|(r, sql)| {
                r.map_err(|e| {
                    self.failure_knobs = self.knobs.clone();
                    self.note_loss(sql, &e);
                    self.log_comment(&format!(
                        "-- error: {} (in the query {ran} of {} above; those after it did not run)",
                        e.to_string().replace('\n', " "),
                        sqls.len()
                    ));
                    self.classify(StatementKind::Query, sql.clone(), e)
                })
            })
            .collect()
    }

    /// Applies an optimizer configuration for the queries that follow,
    /// if it is not the one in force. Logged as a comment: the statement
    /// log is SQL, and some DBMSs set knobs outside SQL.
    pub fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), ExecError> {
        if *setting == self.knobs {
            return Ok(());
        }
        let what = format!("-- knobs: {}", setting.describe());
        self.log_comment(&what);
        match self.conn.set_knobs(setting) {
            Ok(()) => {
                self.knobs = setting.clone();
                Ok(())
            }
            Err(error) => Err(match error.kind {
                FailureKind::ConnectionLost | FailureKind::Hang => {
                    ExecError::Lost { sql: what, error }
                }
                // A combination the DBMS refuses (MariaDB wants one of
                // two subquery strategies on): the check is skipped.
                _ if self.expected.is_expected(StatementKind::Setting, &error) => {
                    ExecError::Expected(error)
                }
                _ => ExecError::Unexpected { sql: what, error },
            }),
        }
    }

    fn log_comment(&mut self, line: &str) {
        if let Some(log) = &mut self.log {
            if let Err(e) = writeln!(log, "{line}") {
                self.log_error.get_or_insert_with(|| e.to_string());
                self.log = None;
            }
        }
    }

    /// Flushes the statement log, if any.
    pub fn flush_log(&mut self) {
        if let Some(log) = &mut self.log {
            if let Err(e) = log.flush() {
                self.log_error.get_or_insert_with(|| e.to_string());
                self.log = None;
            }
        }
    }

    /// Why the statement log could not be written, if it could not.
    pub fn log_error(&self) -> Option<&str> {
        self.log_error.as_deref()
    }
}

/// Read access to the database under test, for oracles that look at its
/// data (PQS picks a pivot row). Queries run here are logged and counted
/// like any other.
pub trait DataReader {
    fn fetch(&mut self, query: &Query) -> Result<Vec<Row>, ExecError>;
    /// The signatures of `query`'s plans under each of `settings`
    /// ([`crate::plans`]), read in a row; None where the dialect reads no
    /// plans or EXPLAIN fails. The knobs in force before are restored.
    fn plans(&mut self, _query: &Query, settings: &[KnobSetting]) -> Vec<Option<String>> {
        vec![None; settings.len()]
    }
}

impl DataReader for Session<'_> {
    /// Checks only read, so a database's data stays as populated: the rows
    /// of a fetch are kept and served again for the same query (PQS reads
    /// its tables for every pivot row).
    fn fetch(&mut self, query: &Query) -> Result<Vec<Row>, ExecError> {
        let sql = query.to_sql(self.dialect);
        if let Some(rows) = self.fetched.get(&sql) {
            return Ok(rows.clone());
        }
        let rows = self.query_sql(&sql)?;
        self.fetched.insert(sql, rows.clone());
        Ok(rows)
    }

    fn plans(&mut self, query: &Query, settings: &[KnobSetting]) -> Vec<Option<String>> {
        let Some(prefix) = self.dialect.rules().explain_prefix() else {
            return vec![None; settings.len()];
        };
        let before = self.knobs.clone();
        let sql = format!("{prefix}{}", query.to_sql(self.dialect));
        let plans = settings
            .iter()
            .map(|knobs| match self.set_knobs(knobs) {
                Ok(()) => self
                    .query_sql(&sql)
                    .ok()
                    .map(|rows| crate::plans::plan_signature(&rows)),
                Err(_) => None,
            })
            .collect();
        // A failure to restore shows at the check's own set_knobs.
        let _ = self.set_knobs(&before);
        plans
    }
}

#[cfg(test)]
mod shape_tests {
    use super::statement_shape;

    #[test]
    fn shapes_count_joins_and_subqueries_and_name_heavy_clauses() {
        assert_eq!(statement_shape("INSERT INTO t0 VALUES (1)"), "INSERT");
        assert_eq!(
            statement_shape("SELECT a0.c0 FROM t0 AS a0 JOIN t1 AS a1 ON a0.c0 = a1.c0, t2 AS a2 WHERE a0.c0 IN (SELECT c0 FROM t2) GROUP BY a0.c0"),
            "SELECT 3 relations 1 subqueries GROUP BY"
        );
        assert_eq!(
            statement_shape("SELECT c0 FROM t0 UNION ALL SELECT c0 FROM t1"),
            "SELECT 0 relations 0 subqueries UNION"
        );
    }
}
