//! NoREC: `SELECT COUNT(*) FROM f WHERE p` lets the planner use indexes and
//! rewrites; `SELECT SUM(CASE WHEN p THEN 1 ELSE 0 END) FROM f` evaluates p
//! on every row and cannot be optimized the same way. The counts must be
//! equal. `f` may contain joins.

use lancet_core::compare::RowDiff;
use lancet_core::{
    Case, CaseError, Disagreement, Expr, GenerateContext, Oracle, OracleQuery, Query, Row, Select,
    SelectItem, Value, Verdict,
};
use lancet_core::{CasePolicy, ItemPolicy};

pub struct NoRec;

const RELATION: &str =
    "COUNT(*) of SELECT ... WHERE p = SUM(CASE WHEN p THEN 1 ELSE 0 END) over the unfiltered rows";

/// A count from a one-row, one-column result; SUM over no rows is NULL, which counts as 0.
fn count_of(rows: &[Row]) -> Option<i64> {
    match rows {
        [row] => match row.as_slice() {
            [Value::Null] => Some(0),
            [Value::Integer(i)] => Some(*i),
            [Value::Decimal(d)] => d.parse().ok(),
            [Value::Real(r)] if r.fract() == 0.0 => Some(*r as i64),
            _ => None,
        },
        _ => None,
    }
}

impl Oracle for NoRec {
    fn name(&self) -> &'static str {
        "norec"
    }

    fn description(&self) -> &'static str {
        "non-optimizing reference engine: COUNT(*) WHERE p equals SUM(CASE WHEN p THEN 1 ELSE 0 END)"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (from, scope) = generator.from_clause(rng);
        let predicate = generator.predicate(rng, &scope);
        Some(Case::with_predicate_of(
            self.name(),
            Select {
                from: Some(from),
                ..Select::default()
            },
            predicate,
        ))
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy {
            // NoREC builds both queries without the base WHERE.
            selection: false,
            ..CasePolicy::with_items(ItemPolicy::Fixed)
        })
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let p = case.predicate()?.clone();
        let optimized = Select {
            items: vec![SelectItem::Expr {
                expr: Expr::CountStar,
                alias: None,
            }],
            selection: Some(p.clone()),
            ..case.query.clone()
        };
        let flag = Expr::Case {
            operand: None,
            branches: vec![(p, Expr::int(1))],
            otherwise: Some(Box::new(Expr::int(0))),
        };
        let reference = Select {
            items: vec![SelectItem::Expr {
                expr: Expr::func("SUM", vec![flag]),
                alias: None,
            }],
            selection: None,
            ..case.query.clone()
        };
        Ok(vec![
            OracleQuery::new("optimized", Query::select(optimized)),
            OracleQuery::new("reference", Query::select(reference)),
        ])
    }

    fn planted_fault(&self) -> lancet_core::fault::Fault {
        std::sync::Arc::new(Miscount { period: 3 })
    }

    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        let [optimized, reference] = results else {
            return Err(case.unfit("NoREC compares exactly two results"));
        };
        let (a, b) = (count_of(optimized), count_of(reference));
        if a.is_some() && a == b {
            return Ok(Verdict::Agree {
                nonempty: a.unwrap_or(0) > 0,
            });
        }
        Ok(Verdict::Disagree(Disagreement {
            relation: RELATION.to_string(),
            row_counts: vec![optimized.len(), reference.len()],
            diff: RowDiff {
                only_in_first: optimized.iter().map(|r| (r.clone(), 1)).collect(),
                only_in_second: reference.iter().map(|r| (r.clone(), 1)).collect(),
                ..RowDiff::default()
            },
            timing: None,
        }))
    }
}

/// Adds one to the count of one query in `period` among those that count
/// rows under a WHERE (`SELECT COUNT(*) FROM ... WHERE p`): the fault of an
/// optimized filter that NoREC's unoptimized count does not share.
#[derive(Debug)]
pub struct Miscount {
    pub period: u64,
}

impl lancet_core::fault::PlantedFault for Miscount {
    fn name(&self) -> &'static str {
        "miscount"
    }
    fn perturb(
        &self,
        q: &lancet_core::fault::FaultedQuery<'_>,
        r: &mut lancet_core::fault::FaultedResult<'_>,
    ) {
        let lancet_core::SetExpr::Select(select) = &q.query.query.body else {
            return;
        };
        let counts = matches!(
            &select.items[..],
            [lancet_core::SelectItem::Expr {
                expr: Expr::CountStar,
                ..
            }]
        );
        if counts && select.selection.is_some() && select.group_by.is_empty() && q.hit(self.period)
        {
            if let Some(lancet_core::Value::Integer(n)) =
                r.rows.first_mut().and_then(|row| row.first_mut())
            {
                *n += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{FromClause, ToSql};
    use lancet_testkit::standard::STANDARD;

    fn case() -> Case {
        Case::with_predicate_of(
            "norec",
            Select {
                from: Some(FromClause::table("t0", None)),
                ..Select::default()
            },
            Expr::column(None, "c0"),
        )
    }

    #[test]
    fn builds_the_optimized_and_reference_counts() {
        let qs = NoRec.queries(&case()).unwrap();
        assert_eq!(
            qs[0].query.to_sql(STANDARD),
            "SELECT COUNT(*) FROM t0 WHERE c0"
        );
        assert_eq!(
            qs[1].query.to_sql(STANDARD),
            "SELECT SUM(CASE WHEN c0 THEN 1 ELSE 0 END) FROM t0"
        );
    }

    #[test]
    fn sum_over_no_rows_counts_as_zero() {
        let one = |v: Value| vec![vec![v]];
        let c = case();
        assert_eq!(
            NoRec.compare(&c, &[one(Value::Integer(0)), one(Value::Null)]),
            Ok(Verdict::Agree { nonempty: false })
        );
        assert_eq!(
            NoRec.compare(&c, &[one(Value::Integer(3)), one(Value::Integer(3))]),
            Ok(Verdict::Agree { nonempty: true })
        );
        assert!(matches!(
            NoRec.compare(&c, &[one(Value::Integer(3)), one(Value::Integer(2))]),
            Ok(Verdict::Disagree(_))
        ));
    }
}
