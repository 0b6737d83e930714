//! One judgment of "does it still fail the same way?", for every kind of
//! finding, used by confirmation on a fresh database, `lancet replay`
//! and the reducer. They differ only in how close is close enough:
//! confirmation asks for [`Judgment::Exactly`] (the same rows differ, the
//! same error), the reducer for [`Judgment::SameBug`] or better (as the
//! setup shrinks the rows change, but the relation must break in the same
//! direction), and `replay` reports which of the two it saw.

use crate::findings::{Finding, FindingKind};
use lancet_core::compare::{same_diff, RowDiff};
use lancet_core::{CheckOutcome, DbError, FailureKind, Value};
use std::cmp::Ordering as CmpOrdering;

/// What a finding showed: what a replay must show again.
#[derive(Clone, Debug)]
pub enum Symptom {
    /// A broken relation (logic and performance findings).
    Relation {
        relation: String,
        diff: Option<RowDiff>,
        direction: Option<Direction>,
    },
    /// An unexpected error: the same kind, code and message shape.
    Error(DbError),
    /// The connection was lost (a crash of the server or the engine).
    Crash,
    /// The statement did not end within its limit.
    Hang,
}

/// How a replay compares with what the finding showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgment {
    /// Exactly as recorded: the same rows differ, the same error.
    Exactly(String),
    /// The same bug, shown otherwise: the relation breaks the same way
    /// with other rows (what a reduced setup shows).
    SameBug(String),
    /// It fails, but not the same way (another relation or direction,
    /// another error): another problem, not this finding.
    Other(String),
    /// It does not fail.
    Passes(String),
}

impl Judgment {
    /// Whether the replay shows the finding's bug (exactly or otherwise).
    pub fn same_bug(&self) -> bool {
        matches!(self, Judgment::Exactly(_) | Judgment::SameBug(_))
    }
}

impl Symptom {
    /// What `finding` showed.
    pub fn of(finding: &Finding) -> Symptom {
        match finding.kind {
            FindingKind::Logic | FindingKind::Performance => Symptom::Relation {
                relation: finding.relation.clone().unwrap_or_default(),
                direction: finding.diff.as_ref().map(Direction::of),
                diff: finding.diff.clone(),
            },
            FindingKind::UnexpectedError => Symptom::Error(
                finding
                    .error
                    .clone()
                    .unwrap_or_else(|| DbError::statement(None, String::new())),
            ),
            FindingKind::Crash => Symptom::Crash,
            FindingKind::Hang => Symptom::Hang,
        }
    }

    /// Judges a check's outcome against a broken relation. `None` when the
    /// check said nothing (a query failed, or met an expected error): the
    /// caller says why.
    pub fn judge_check(&self, outcome: &CheckOutcome, counts: &str) -> Option<Judgment> {
        let Symptom::Relation {
            relation,
            diff,
            direction,
        } = self
        else {
            return None;
        };
        match outcome {
            CheckOutcome::Disagreed { disagreement, .. } => {
                let why = format!("{} ({counts} rows)", disagreement.relation);
                Some(if disagreement.relation != *relation {
                    Judgment::Other(why)
                } else if diff
                    .as_ref()
                    .is_some_and(|d| same_diff(d, &disagreement.diff))
                {
                    Judgment::Exactly(why)
                } else if *direction == Some(Direction::of(&disagreement.diff)) {
                    Judgment::SameBug(why)
                } else {
                    Judgment::Other(why)
                })
            }
            CheckOutcome::Agreed { .. } => Some(Judgment::Passes(format!(
                "the relation holds ({counts} rows)"
            ))),
            CheckOutcome::Skipped(_) | CheckOutcome::Failed(_) => None,
        }
    }

    /// Judges the result of a failing statement against an error, crash or
    /// hang.
    pub fn judge_statement<T>(&self, result: &Result<T, DbError>) -> Judgment {
        match (self, result) {
            (Symptom::Relation { .. }, _) => {
                Judgment::Other("a broken relation is judged on its check".into())
            }
            (Symptom::Hang, Err(e)) if e.kind == FailureKind::Hang => {
                Judgment::Exactly(format!("the DBMS hangs again: {e}"))
            }
            (Symptom::Hang, Err(e)) => {
                Judgment::Passes(format!("no hang; the statement ends with {e}"))
            }
            (Symptom::Hang, Ok(_)) => {
                Judgment::Passes("no hang; the statement succeeds now".into())
            }
            (Symptom::Crash, Err(e)) if e.kind == FailureKind::ConnectionLost => {
                Judgment::Exactly(format!("the connection is lost again: {e}"))
            }
            (Symptom::Crash, Err(e)) => {
                Judgment::Passes(format!("no crash; the statement fails with {e}"))
            }
            (Symptom::Crash, Ok(_)) => {
                Judgment::Passes("no crash; the statement succeeds now".into())
            }
            // The recorded error, not any error: a statement that now fails
            // otherwise (a syntax error, a missing table) shows another
            // problem, and the recorded bug is gone.
            (Symptom::Error(expected), Err(e)) if expected.same_error(e) => {
                Judgment::Exactly(format!("fails again: {e}"))
            }
            (Symptom::Error(expected), Err(e)) => Judgment::Passes(format!(
                "fails with another error now: {e} (recorded: {expected})"
            )),
            (Symptom::Error(_), Ok(_)) => Judgment::Passes("the statement succeeds now".into()),
        }
    }
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
