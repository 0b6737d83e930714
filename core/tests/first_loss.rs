//! A lost connection is named where it happened: a loss while plans are
//! read for a knob check (whose errors are no findings) shows only at the
//! next statement, and the session remembers the one that lost it, with
//! the knobs it ran under.

use lancet_core::{
    Connection, DataReader, DbError, Dialect, ExecError, ExpectedErrors, FailureKind, KnobSetting,
    Query, Row, Select, Session, SqlDialect, Value,
};
use lancet_testkit::standard::Standard;

/// The standard spellings, with plans read by `EXPLAIN `.
struct Explaining;

impl SqlDialect for Explaining {
    fn name(&self) -> &'static str {
        "explaining"
    }
    fn blob_literal(&self, hex: &str, out: &mut String) {
        Standard.blob_literal(hex, out)
    }
    fn real_literal(&self, r: f64, out: &mut String) {
        Standard.real_literal(r, out)
    }
    fn quotes_collation_names(&self) -> bool {
        Standard.quotes_collation_names()
    }
    fn null_safe_equal(&self) -> &'static str {
        Standard.null_safe_equal()
    }
    fn null_safe_not_equal(&self) -> Option<&'static str> {
        Standard.null_safe_not_equal()
    }
    fn regex_match(&self) -> &'static str {
        Standard.regex_match()
    }
    fn intersect_binds_tighter(&self) -> bool {
        Standard.intersect_binds_tighter()
    }
    fn comma_binds_looser_than_join(&self) -> bool {
        Standard.comma_binds_looser_than_join()
    }
    fn unlimited_limit(&self) -> Option<&'static str> {
        Standard.unlimited_limit()
    }
    fn explain_prefix(&self) -> Option<&'static str> {
        Some("EXPLAIN ")
    }
}

const EXPLAINING: Dialect = Dialect::new(&Explaining);

/// A server that crashes on an EXPLAIN under changed knobs; after that
/// every statement reports the lost connection.
#[derive(Default)]
struct CrashesOnExplainUnderKnobs {
    knobs: KnobSetting,
    dead: bool,
}

impl CrashesOnExplainUnderKnobs {
    fn lost() -> DbError {
        DbError {
            kind: FailureKind::ConnectionLost,
            code: None,
            message: "server closed the connection unexpectedly".into(),
        }
    }
}

impl Connection for CrashesOnExplainUnderKnobs {
    fn execute(&mut self, _sql: &str) -> Result<(), DbError> {
        if self.dead {
            return Err(Self::lost());
        }
        Ok(())
    }
    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        if self.dead || (sql.starts_with("EXPLAIN") && !self.knobs.is_default()) {
            self.dead = true;
            return Err(Self::lost());
        }
        Ok(vec![vec![Value::Text("Seq Scan".into())]])
    }
    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        if self.dead {
            return Err(Self::lost());
        }
        self.knobs = setting.clone();
        Ok(())
    }
}

/// A session on a server that crashes on an EXPLAIN under changed knobs.
fn crashing_session(expected: &ExpectedErrors) -> Session<'_> {
    Session::new(
        Box::new(CrashesOnExplainUnderKnobs::default()),
        EXPLAINING,
        expected,
    )
}

#[test]
fn a_loss_while_plans_are_read_is_the_statement_a_crash_names() {
    let expected = ExpectedErrors::default();
    let mut session = crashing_session(&expected);
    let query = Query::select(Select::default());
    let off = KnobSetting {
        changes: vec!["enable_hashjoin".into()],
    };
    let plans = session.plans(&query, &[KnobSetting::default(), off.clone()]);
    assert!(plans[0].is_some() && plans[1].is_none(), "{plans:?}");
    // The check's own query is where the loss shows.
    let shown = session.query_sql("SELECT 2").unwrap_err();
    assert!(matches!(shown, ExecError::Lost { ref sql, .. } if sql == "SELECT 2"));
    let loss = session.first_loss().expect("the loss is remembered");
    assert!(loss.sql.starts_with("EXPLAIN "), "{}", loss.sql);
    assert_eq!(loss.knobs, off);
    assert_eq!(loss.error.kind, FailureKind::ConnectionLost);
}

/// A query run in one round trip with others (`query_many`, as a knob
/// check runs its query under each configuration) that loses the
/// connection is remembered with the knobs it ran under: a crash under a
/// knob check's configuration replays with that configuration set.
#[test]
fn a_loss_in_one_round_trip_keeps_its_knobs() {
    let expected = ExpectedErrors::default();
    let mut session = crashing_session(&expected);
    let off = KnobSetting {
        changes: vec!["enable_hashjoin".into()],
    };
    session.set_knobs(&off).unwrap();
    let results = session.query_many(&["SELECT 1".into(), "EXPLAIN SELECT 2".into()]);
    assert!(results.last().is_some_and(Result::is_err), "{results:?}");
    let loss = session.first_loss().expect("the loss is remembered");
    assert_eq!(loss.sql, "EXPLAIN SELECT 2");
    assert_eq!(loss.knobs, off);
}
