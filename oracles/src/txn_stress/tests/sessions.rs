//! A round's sessions on connections that answer as a script says: how a
//! transaction ends (a conflict rolled back, a COMMIT that did not
//! answer), what the log keeps, and the planted fault's write never
//! sent.

use super::{pg_rc, txn_counters};
use crate::txn_stress::invariant::judge;
use crate::txn_stress::planted::StressFault;
use crate::txn_stress::round::{Round, TABLE};
use crate::txn_stress::run::{run_round, Ending, RoundRun, RoundSpec};
use lancet_core::txn::{Conflict, IsolationLevel, LevelRules, Transactions};
use lancet_core::{Connection, DbError, FailureKind, OwnedDatabase, Row, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A DBMS with one level whose only conflict is error `40001`.
struct Scripted;

impl Transactions for Scripted {
    fn levels(&self) -> Vec<LevelRules> {
        vec![pg_rc()]
    }
    fn begin(&self, _level: IsolationLevel, _mode: Option<&str>) -> Vec<String> {
        vec!["BEGIN".into()]
    }
    fn create_table(
        &self,
        name: &str,
        _index: lancet_core::txn::IndexV,
        _placement: Option<&str>,
    ) -> Vec<String> {
        vec![format!("CREATE TABLE {name} (k int, v int)")]
    }
    fn conflict(&self, error: &DbError) -> Option<Conflict> {
        (error.code.as_deref() == Some("40001")).then_some(Conflict::Serialization)
    }
    fn open_session(&self, _db: &OwnedDatabase) -> anyhow::Result<Box<dyn Connection>> {
        anyhow::bail!("scripted sessions only")
    }
    fn client_command(&self) -> String {
        "client {file}".into()
    }
}

/// A connection that fails the statements starting with a prefix of
/// `fail` with its error, answers `rows` to every query, and records
/// what it was sent in `sent`.
struct Answers {
    fail: Vec<(&'static str, DbError)>,
    rows: Vec<Row>,
    sent: Arc<Mutex<Vec<String>>>,
}

impl Connection for Answers {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.sent.lock().unwrap().push(sql.to_string());
        match self.fail.iter().find(|(p, _)| sql.starts_with(p)) {
            Some((_, e)) => Err(e.clone()),
            None => Ok(()),
        }
    }
    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        self.execute(sql).map(|()| self.rows.clone())
    }
}

fn answers(
    fail: Vec<(&'static str, DbError)>,
    rows: &[(i64, i64)],
) -> (Answers, Arc<Mutex<Vec<String>>>) {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let rows = rows
        .iter()
        .map(|(k, v)| vec![Value::Integer(*k), Value::Integer(*v)])
        .collect();
    (
        Answers {
            fail,
            rows,
            sent: sent.clone(),
        },
        sent,
    )
}

/// Runs `round` with its one session answering as `fail` says and the
/// table reading `after` at the end.
fn run(
    round: &Round,
    fault: Option<StressFault>,
    fail: Vec<(&'static str, DbError)>,
    after: &[(i64, i64)],
) -> (RoundRun, Vec<String>) {
    let (session, sent) = answers(fail, &[]);
    let (mut observer, _) = answers(Vec::new(), after);
    let mut sessions: Vec<Box<dyn Connection>> = vec![Box::new(session)];
    let spec = RoundSpec {
        tx: &Scripted,
        round,
        fault,
        time_limit: Duration::from_secs(10),
    };
    let run = run_round(&spec, &mut observer, &mut sessions, &mut None).unwrap();
    let sent = sent.lock().unwrap().clone();
    (run, sent)
}

#[test]
fn a_commit_that_does_not_answer_leaves_its_counter_open() {
    let round = txn_counters(1);
    let timeout = DbError {
        kind: FailureKind::Timeout,
        code: None,
        message: "statement time limit".into(),
    };
    let (ran, sent) = run(&round, None, vec![("COMMIT", timeout)], &[(1, 0)]);
    assert_eq!(ran.logs[0][0].ending, Ending::Unknown);
    assert!(ran.failure.is_none(), "{:?}", ran.failure);
    assert!(judge(&round, &pg_rc(), &ran).is_empty());
    assert!(
        sent.ends_with(&["COMMIT".into(), "ROLLBACK".into(), "ROLLBACK".into()]),
        "{sent:?}"
    );
    // Answered, the same COMMIT counts, and the counter must show it.
    let (ran, _) = run(&round, None, Vec::new(), &[(1, 0)]);
    assert_eq!(ran.logs[0][0].ending, Ending::Committed);
    assert_eq!(judge(&round, &pg_rc(), &ran).len(), 1);
}

#[test]
fn a_conflict_rolls_back_and_another_error_stops_the_round() {
    let round = txn_counters(2);
    let conflict = DbError::statement(Some("40001".into()), "could not serialize");
    let (ran, sent) = run(&round, None, vec![("UPDATE", conflict)], &[(1, 0)]);
    assert_eq!(ran.logs[0].len(), 2);
    assert!(ran.logs[0]
        .iter()
        .all(|l| l.ending == Ending::Conflict(Conflict::Serialization)));
    assert_eq!(
        sent.iter().filter(|s| *s == "ROLLBACK").count(),
        3,
        "{sent:?}"
    );
    assert!(judge(&round, &pg_rc(), &ran).is_empty());
    let other = DbError::statement(Some("XX000".into()), "internal error");
    let (ran, _) = run(&round, None, vec![("UPDATE", other)], &[(1, 0)]);
    assert_eq!(ran.logs[0].len(), 1, "the session stopped at its failure");
    let (_, sql, e) = ran.failure.unwrap();
    assert!(sql.starts_with(&format!("UPDATE {TABLE}")), "{sql}");
    assert_eq!(e.code.as_deref(), Some("XX000"));
}

#[test]
fn the_planted_fault_keeps_the_write_from_the_dbms_and_says_so_in_the_log() {
    let round = txn_counters(1);
    let (ran, sent) = run(
        &round,
        Some(StressFault::DroppedWrite),
        Vec::new(),
        &[(1, 0)],
    );
    assert!(!sent.iter().any(|s| s.starts_with("UPDATE")), "{sent:?}");
    let log = &ran.logs[0][0];
    assert_eq!(log.ending, Ending::Committed);
    assert!(log
        .statements
        .iter()
        .any(|(_, r)| r.starts_with("not sent")));
    assert_eq!(judge(&round, &pg_rc(), &ran).len(), 1);
}
