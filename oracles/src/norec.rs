//! NoREC: `SELECT COUNT(*) FROM f WHERE p` lets the planner use indexes and
//! rewrites; `SELECT SUM(CASE WHEN p THEN 1 ELSE 0 END) FROM f` evaluates p
//! on every row and cannot be optimized the same way. The counts must be
//! equal. `f` may contain joins.

use lancet_core::compare::RowDiff;
use lancet_core::shrink::{CasePolicy, ItemPolicy};
use lancet_core::{
    Case, DataReader, Disagreement, Expr, Oracle, OracleQuery, Query, QueryGenerator, Rng, Row,
    Select, SelectItem, Value, Verdict,
};

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

    fn generate(
        &self,
        rng: &mut Rng,
        generator: &mut dyn QueryGenerator,
        _data: &mut dyn DataReader,
    ) -> Option<Case> {
        let (from, scope) = generator.from_clause(rng);
        let predicate = generator.predicate(rng, &scope);
        Some(Case {
            query: Select {
                from: Some(from),
                ..Select::default()
            },
            predicate: Some(predicate),
            pivot: None,
        })
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy {
            // NoREC builds both queries without the base WHERE.
            selection: false,
            ..CasePolicy::with_items(ItemPolicy::Fixed)
        })
    }

    fn queries(&self, case: &Case) -> Vec<OracleQuery> {
        let p = case
            .predicate
            .clone()
            .expect("a norec case has a predicate");
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
        vec![
            OracleQuery {
                role: "optimized".into(),
                query: Query::select(optimized),
            },
            OracleQuery {
                role: "reference".into(),
                query: Query::select(reference),
            },
        ]
    }

    fn planted_fault(&self) -> lancet_core::fault::Fault {
        lancet_core::fault::Fault::Miscount { period: 3 }
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Verdict {
        let (a, b) = (count_of(&results[0]), count_of(&results[1]));
        if a.is_some() && a == b {
            return Verdict::Agree {
                nonempty: a.unwrap_or(0) > 0,
            };
        }
        Verdict::Disagree(Disagreement {
            relation: RELATION.to_string(),
            row_counts: vec![results[0].len(), results[1].len()],
            diff: RowDiff {
                only_in_first: results[0].iter().map(|r| (r.clone(), 1)).collect(),
                only_in_second: results[1].iter().map(|r| (r.clone(), 1)).collect(),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{FromClause, TableFactor, ToSql};
    use lancet_testkit::standard::STANDARD;

    fn case() -> Case {
        Case {
            query: Select {
                from: Some(FromClause {
                    first: TableFactor::Table {
                        name: "t0".into(),
                        alias: None,
                        indexed_by: None,
                    },
                    joins: vec![],
                }),
                ..Select::default()
            },
            predicate: Some(Expr::column(None, "c0")),
            pivot: None,
        }
    }

    #[test]
    fn builds_the_optimized_and_reference_counts() {
        let qs = NoRec.queries(&case());
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
            Verdict::Agree { nonempty: false }
        );
        assert_eq!(
            NoRec.compare(&c, &[one(Value::Integer(3)), one(Value::Integer(3))]),
            Verdict::Agree { nonempty: true }
        );
        assert!(matches!(
            NoRec.compare(&c, &[one(Value::Integer(3)), one(Value::Integer(2))]),
            Verdict::Disagree(_)
        ));
    }
}
