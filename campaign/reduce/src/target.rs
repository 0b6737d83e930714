//! What a reduction candidate must still show to count (the judgment of
//! [`lancet_findings::judge`]: the same broken relation in the same direction, and
//! hidden by the same knob; the same error; a crash), and the replays that
//! decide it on a fresh database.

use super::*;
use lancet_findings::judge::Symptom;

/// What a candidate must show to count: the finding's [`Symptom`], judged
/// as every replay judges it ([`lancet_findings::judge`]), at the same bug or closer.
pub(super) enum Target<'o> {
    Logic {
        oracle: &'o dyn Oracle,
        symptom: Symptom,
        /// A knob that, turned off alone, hides the original's
        /// disagreement: a candidate must stay hidden by it, or it shows
        /// another bug under the same relation.
        hiding_knob: Option<String>,
    },
    /// An error (the same kind, code and message shape: SQLite's one code
    /// for a syntax error and many bugs is told apart by the message) or
    /// a crash, of the statement run under the knobs it failed under (a
    /// knob check's query: the defaults may not fail).
    Failure(Symptom, lancet_core::KnobSetting),
}

/// What a logic candidate showed when it counted.
pub(super) struct Shown {
    pub(super) queries: Vec<FoundQuery>,
    pub(super) disagreement: Disagreement,
}

impl Reducer<'_> {
    /// Whether a candidate still shows the finding.
    pub(super) fn holds(
        &self,
        setup: &[String],
        case: Option<&Case>,
        statement: Option<&str>,
        target: &Target,
    ) -> bool {
        match (target, case) {
            (Target::Logic { oracle, .. }, Some(c)) => {
                self.logic(setup, *oracle, c, target).is_some()
            }
            _ => self.fails(setup, statement.unwrap_or_default(), target),
        }
    }

    /// Replays a logic candidate: every setup statement must succeed, every
    /// query run, and the relation break the same way.
    pub(super) fn logic(
        &self,
        setup: &[String],
        oracle: &dyn Oracle,
        case: &Case,
        target: &Target,
    ) -> Option<Shown> {
        let Target::Logic {
            symptom,
            hiding_knob,
            ..
        } = target
        else {
            return None;
        };
        let provider = self.databases.provider();
        let setup = self.full_setup(setup);
        self.on_fresh_database(|session| {
            for stmt in &setup {
                session.connection().execute(stmt).ok()?;
            }
            let outcome = run_check(session, oracle, case).ok()?;
            if !symptom
                .judge_check(&outcome, "")
                .is_some_and(|j| j.same_bug())
            {
                return None;
            }
            match outcome {
                CheckOutcome::Disagreed {
                    disagreement: d,
                    queries,
                } => {
                    if let Some(knob) = hiding_knob {
                        let off = lancet_core::KnobSetting::with(&[knob.as_str()]);
                        match run_check_with_knobs_off(session, oracle, case, &off).ok()? {
                            CheckOutcome::Agreed { .. } => {}
                            _ => return None,
                        }
                    }
                    Some(Shown {
                        queries: found_queries(provider, &queries),
                        disagreement: d,
                    })
                }
                _ => None,
            }
        })
        .flatten()
    }

    /// Replays an error or crash candidate.
    pub(super) fn fails(&self, setup: &[String], statement: &str, target: &Target) -> bool {
        let setup = self.full_setup(setup);
        self.on_fresh_database(|session| {
            let conn = session.connection();
            for stmt in &setup {
                if conn.execute(stmt).is_err() {
                    return false;
                }
            }
            match target {
                Target::Failure(symptom, knobs) => {
                    if !knobs.is_default() && conn.set_knobs(knobs).is_err() {
                        return false;
                    }
                    symptom.judge_statement(&conn.query(statement)).same_bug()
                }
                Target::Logic { .. } => false,
            }
        })
        .unwrap_or(false)
    }
}

#[cfg(test)]
mod message_tests {
    use super::super::Reducer;
    use super::Target;
    use lancet_core::connection::message_shape;
    use lancet_core::DbError;
    use lancet_databases::databases::{Databases, RunToken};
    use lancet_findings::judge::Symptom;
    use std::sync::Arc;

    /// SQLite gives one generic code (SQLITE_ERROR) for a missing column,
    /// a missing table and a syntax error: an error target must tell them
    /// apart by message, or reduction ends at `i2;`.
    #[test]
    fn an_error_target_rejects_statements_that_fail_otherwise() {
        let provider = Arc::new(lancet_sqlite::SqliteProvider::new().unwrap());
        let databases = Databases::new(provider, RunToken::new(), None);
        let reducer = Reducer::new(&databases, &crate::fixture::CATALOG);
        let setup = vec!["CREATE TABLE t0(c0)".to_string()];
        let target = Target::Failure(
            Symptom::Error(DbError::statement(
                Some("SQLITE_ERROR".into()),
                "no such column: c9",
            )),
            lancet_core::KnobSetting::default(),
        );
        assert!(reducer.fails(&setup, "SELECT c9 FROM t0", &target));
        assert!(reducer.fails(&setup, "SELECT c7 FROM t0", &target));
        assert!(!reducer.fails(&setup, "SELECT c9 FROM", &target));
        assert!(!reducer.fails(&setup, "i2", &target));
        assert!(!reducer.fails(&setup, "SELECT c0 FROM t9", &target));
        assert!(!reducer.fails(&setup, "SELECT c0 FROM t0", &target));
    }

    #[test]
    fn shapes_keep_what_tells_errors_apart() {
        assert_eq!(
            message_shape("relation \"t3\" does not exist"),
            message_shape("relation \"t1\" does not exist")
        );
        assert_ne!(
            message_shape("column a2.c0_1 does not exist"),
            message_shape("column a2.c0 does not exist")
        );
        assert_eq!(
            message_shape("value too long for type character(4)"),
            message_shape("value too long for type character(2)")
        );
        assert_ne!(
            message_shape("division by zero"),
            message_shape("syntax error at or near \"i2\"")
        );
    }
}
