//! The equivalent expression transformations (after EET, OSDI'24): each
//! replaces an expression `e` by one that has the same value on every
//! row or group, so the query's result does not change. Their
//! preconditions are in docs/oracles.md (*eet*); [`Transformation::apply`]
//! checks those that the expression alone shows, and the draw
//! (`draw.rs`) those that depend on the dialect and the position.

use crate::transform::rewrite::yields_truth;
use lancet_core::ast::{BinaryOp, Expr, Query, Select, SelectItem};
use lancet_core::Value;
use serde::{Deserialize, Serialize};

/// A transformation of one expression `e`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Transformation {
    /// `CASE WHEN p THEN e ELSE e END`, any predicate `p`.
    SameArms { predicate: Expr },
    /// `CASE WHEN t THEN e END`, `t` always TRUE.
    TrueBranch { tautology: Expr },
    /// `CASE WHEN f THEN NULL ELSE e END`, `f` never TRUE.
    FalseBranch { contradiction: Expr },
    /// `CASE WHEN e IS NULL THEN NULL ELSE e END`.
    NullBranch,
    /// `(SELECT e)`.
    ScalarSubquery,
    /// Truth-valued `e` → `e AND t`, `t` always TRUE.
    AndTrue { tautology: Expr },
    /// Truth-valued `e` → `e OR f`, `f` always FALSE.
    OrFalse { contradiction: Expr },
    /// Truth-valued `e` → `NOT (NOT e)`.
    DoubleNegation,
    /// Integer `e` → `e + 0`.
    AddZero,
    /// Integer `e` → `e * 1`.
    TimesOne,
}

impl Transformation {
    /// The name reports give the transformation.
    pub fn name(&self) -> &'static str {
        match self {
            Transformation::SameArms { .. } => "same-arms",
            Transformation::TrueBranch { .. } => "true-branch",
            Transformation::FalseBranch { .. } => "false-branch",
            Transformation::NullBranch => "null-branch",
            Transformation::ScalarSubquery => "scalar-subquery",
            Transformation::AndTrue { .. } => "and-true",
            Transformation::OrFalse { .. } => "or-false",
            Transformation::DoubleNegation => "double-negation",
            Transformation::AddZero => "add-zero",
            Transformation::TimesOne => "times-one",
        }
    }

    /// Whether it reads `e` as a truth value (then `e` must yield one).
    pub fn needs_truth(&self) -> bool {
        matches!(
            self,
            Transformation::AndTrue { .. }
                | Transformation::OrFalse { .. }
                | Transformation::DoubleNegation
        )
    }

    /// `e` transformed, or why not: a literal is never transformed (its
    /// type may come from its context), a truth transformation needs a
    /// truth value, a scalar subquery no aggregate or window call of its
    /// query, and the conditions must have their forms.
    pub fn apply(&self, e: Expr) -> Result<Expr, String> {
        if matches!(e, Expr::Literal(_)) {
            return Err("a literal".into());
        }
        if self.needs_truth() && !yields_truth(&e) {
            return Err(format!("{} needs a truth value", self.name()));
        }
        let case = |branches, otherwise: Option<Expr>| Expr::Case {
            operand: None,
            branches,
            otherwise: otherwise.map(Box::new),
        };
        Ok(match self {
            Transformation::SameArms { predicate } => {
                case(vec![(predicate.clone(), e.clone())], Some(e))
            }
            Transformation::TrueBranch { tautology } => {
                always(tautology, true)?;
                case(vec![(tautology.clone(), e)], None)
            }
            Transformation::FalseBranch { contradiction } => {
                always(contradiction, false)?;
                case(vec![(contradiction.clone(), null())], Some(e))
            }
            Transformation::NullBranch => case(vec![(Expr::is_null(e.clone()), null())], Some(e)),
            Transformation::ScalarSubquery => {
                if e.any(&|x| {
                    matches!(x, Expr::CountStar | Expr::Window { .. })
                        || matches!(x, Expr::Function { name, .. } if is_common_aggregate(name))
                }) {
                    return Err("an aggregate or window call".into());
                }
                Expr::Subquery(Box::new(Query::select(Select {
                    items: vec![SelectItem::Expr {
                        expr: e,
                        alias: None,
                    }],
                    ..Select::default()
                })))
            }
            Transformation::AndTrue { tautology } => {
                always(tautology, true)?;
                Expr::and(e, tautology.clone())
            }
            Transformation::OrFalse { contradiction } => {
                always(contradiction, false)?;
                Expr::binary(BinaryOp::Or, e, contradiction.clone())
            }
            Transformation::DoubleNegation => Expr::not(Expr::not(e)),
            Transformation::AddZero => Expr::binary(BinaryOp::Add, e, Expr::int(0)),
            Transformation::TimesOne => Expr::binary(BinaryOp::Mul, e, Expr::int(1)),
        })
    }
}

fn null() -> Expr {
    Expr::lit(Value::Null)
}

/// Aggregate names most dialects share: a scalar subquery over one of
/// them would aggregate a single row (the draw asks the generator, which
/// knows its dialect's; this is the replay's own check).
pub fn is_common_aggregate(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "count" | "sum" | "avg" | "min" | "max" | "total" | "group_concat" | "string_agg"
    )
}

/// A condition always TRUE (`value`) or never TRUE (`!value`) whatever
/// its operand: EET's `q OR NOT q OR q IS NULL` and `q AND NOT q AND q IS
/// NOT NULL` (the latter FALSE, never NULL), or a comparison of two
/// integer literals.
pub fn condition(q: Option<Expr>, value: bool, a: i64, b: i64) -> Expr {
    match q {
        Some(q) if value => Expr::binary(
            BinaryOp::Or,
            Expr::binary(BinaryOp::Or, q.clone(), Expr::not(q.clone())),
            Expr::is_null(q),
        ),
        Some(q) => Expr::and(
            Expr::and(q.clone(), Expr::not(q.clone())),
            Expr::IsNull {
                expr: Box::new(q),
                negated: true,
            },
        ),
        None => {
            let op = match (value, a == b) {
                (true, true) | (false, false) => BinaryOp::Eq,
                (true, false) | (false, true) => BinaryOp::NotEq,
            };
            Expr::binary(op, Expr::int(a), Expr::int(b))
        }
    }
}

/// Checks that `c` has one of [`condition`]'s forms for `value`.
fn always(c: &Expr, value: bool) -> Result<(), String> {
    let fits = match c {
        Expr::Binary { op, left, right } => match (&**left, &**right) {
            (Expr::Literal(Value::Integer(a)), Expr::Literal(Value::Integer(b))) => {
                *c == condition(None, value, *a, *b) && matches!(op, BinaryOp::Eq | BinaryOp::NotEq)
            }
            (Expr::Binary { left: q, .. }, _) => *c == condition(Some((**q).clone()), value, 0, 0),
            _ => false,
        },
        _ => false,
    };
    if fits {
        Ok(())
    } else {
        Err(format!("not a condition always {}", value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_are_recognised() {
        let q = Expr::binary(BinaryOp::Lt, Expr::column(None, "c0"), Expr::int(3));
        for value in [true, false] {
            assert!(always(&condition(Some(q.clone()), value, 0, 0), value).is_ok());
            assert!(always(&condition(Some(q.clone()), value, 0, 0), !value).is_err());
            assert!(always(&condition(None, value, 2, 2), value).is_ok());
            assert!(always(&condition(None, value, 1, 2), value).is_ok());
            assert!(always(&condition(None, value, 1, 2), !value).is_err());
        }
    }

    #[test]
    fn truth_transformations_need_truth_values() {
        let c = Expr::column(None, "c0");
        assert!(Transformation::DoubleNegation.apply(c.clone()).is_err());
        assert!(Transformation::NullBranch.apply(Expr::int(1)).is_err());
        assert!(Transformation::ScalarSubquery
            .apply(Expr::CountStar)
            .is_err());
        assert!(Transformation::AddZero.apply(c).is_ok());
    }
}
