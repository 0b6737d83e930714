//! What a reduction candidate must still show to count: the same broken
//! relation in the same direction (and hidden by the same knob), the
//! same error code and message shape, or a crash; and the replays that
//! decide it on a fresh database.

use super::*;

/// What a candidate must show to count.
pub(super) enum Target<'o> {
    Logic {
        oracle: &'o dyn Oracle,
        relation: String,
        direction: Direction,
        /// A knob that, turned off alone, hides the original's
        /// disagreement: a candidate must stay hidden by it, or it shows
        /// another bug under the same relation.
        hiding_knob: Option<String>,
    },
    Error {
        code: Option<String>,
        /// The error message's shape ([`lancet_core::connection::message_shape`]): a candidate
        /// must fail with the same code *and* the same message, or it
        /// fails for another reason (a syntax error, a missing column).
        message: String,
    },
    Crash,
}

/// Which way a relation broke: which side has rows the other lacks, and for
/// two single values (NoREC's counts, aggregates) which one is larger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Direction {
    first_has_extra: bool,
    second_has_extra: bool,
    values: Option<CmpOrdering>,
}

impl Direction {
    pub fn of(diff: &RowDiff) -> Direction {
        let single = |side: &[(Vec<Value>, usize)]| match side {
            [(row, 1)] if row.len() == 1 => as_number(&row[0]),
            _ => None,
        };
        let values = match (single(&diff.only_in_first), single(&diff.only_in_second)) {
            (Some(a), Some(b)) => a.partial_cmp(&b),
            _ => None,
        };
        Direction {
            first_has_extra: !diff.only_in_first.is_empty(),
            second_has_extra: !diff.only_in_second.is_empty(),
            values,
        }
    }
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Real(r) => Some(*r),
        Value::Decimal(d) => d.parse().ok(),
        _ => None,
    }
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
            relation,
            direction,
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
            match run_check(session, oracle, case).ok()? {
                CheckOutcome::Disagreed {
                    disagreement: d,
                    queries,
                } if d.relation == *relation && Direction::of(&d.diff) == *direction => {
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
            let outcome = conn.query(statement);
            match (target, outcome) {
                (Target::Error { code, message }, Err(e)) => {
                    e.kind == FailureKind::Statement
                        && e.code == *code
                        && lancet_core::connection::message_shape(&e.message) == *message
                }
                (Target::Crash, Err(e)) => e.kind == FailureKind::ConnectionLost,
                _ => false,
            }
        })
        .unwrap_or(false)
    }
}

#[cfg(test)]
mod message_tests {
    use super::super::Reducer;
    use super::Target;
    use crate::databases::{Databases, RunToken};
    use lancet_core::connection::message_shape;
    use std::sync::Arc;

    /// SQLite gives one generic code (SQLITE_ERROR) for a missing column,
    /// a missing table and a syntax error: an error target must tell them
    /// apart by message, or reduction ends at `i2;`.
    #[test]
    fn an_error_target_rejects_statements_that_fail_otherwise() {
        let provider = Arc::new(lancet_sqlite::SqliteProvider::new().unwrap());
        let databases = Databases::new(provider, RunToken::new(), None);
        let reducer = Reducer::new(&databases);
        let setup = vec!["CREATE TABLE t0(c0)".to_string()];
        let target = Target::Error {
            code: Some("SQLITE_ERROR".into()),
            message: message_shape("no such column: c9"),
        };
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
