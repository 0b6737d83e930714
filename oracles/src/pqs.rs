//! PQS (pivoted query synthesis): pick one row of each table (the pivot),
//! let the provider's evaluator compute a predicate's truth value on it,
//! rectify the predicate so it is TRUE there (`e`, `NOT e`, `e IS NULL`),
//! and check that the query's result contains the pivot row.
//!
//! The evaluator is the provider's (`QueryGenerator::pivot_predicate`);
//! providers without one simply produce no PQS cases.

use lancet_core::compare::values_equal;
use lancet_core::compare::RowDiff;
use lancet_core::value::format_row;
use lancet_core::{
    Case, DataReader, Disagreement, Expr, FromClause, JoinKind, Oracle, OracleQuery, Query,
    QueryGenerator, Rng, Row, Select, SelectItem, TableFactor, Truth, Verdict,
};
use rand::Rng as _;

pub struct Pqs;

const RELATION: &str = "the pivot row is in RS(SELECT ... WHERE rectified predicate)";

/// The factors of a comma-joined FROM clause, or `None` for any other join.
fn factors(from: &FromClause) -> Option<Vec<&TableFactor>> {
    let mut v = vec![&from.first];
    for j in &from.joins {
        if j.kind != JoinKind::Comma {
            return None;
        }
        v.push(&j.factor);
    }
    Some(v)
}

fn alias_of(factor: &TableFactor) -> Option<&str> {
    match factor {
        TableFactor::Table { alias, name, .. } => Some(alias.as_deref().unwrap_or(name)),
        TableFactor::Derived { alias, .. } => Some(alias),
    }
}

/// The columns of `scope` that belong to the factor aliased `alias`.
fn columns_of<'a>(scope: &'a lancet_core::Scope, alias: &str) -> Vec<&'a Expr> {
    scope
        .columns
        .iter()
        .map(|c| &c.expr)
        .filter(|e| matches!(e, Expr::Column(c) if c.table.as_deref() == Some(alias)))
        .collect()
}

fn rows_equal(a: &[lancet_core::Value], b: &[lancet_core::Value]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| values_equal(x, y))
}

impl Oracle for Pqs {
    fn name(&self) -> &'static str {
        "pqs"
    }

    fn description(&self) -> &'static str {
        "pivoted query synthesis: a row for which the predicate is TRUE must be in the result"
    }

    fn planted_fault(&self) -> lancet_core::fault::Fault {
        lancet_core::fault::Fault::EmptyResult { period: 5 }
    }

    fn generate(
        &self,
        rng: &mut Rng,
        generator: &mut dyn QueryGenerator,
        data: &mut dyn DataReader,
    ) -> Option<Case> {
        let (from, scope) = generator.pivot_tables(rng)?;
        let mut pivot: Row = Vec::with_capacity(scope.columns.len());
        for factor in factors(&from)? {
            let alias = alias_of(factor)?;
            let columns = columns_of(&scope, alias);
            let fetch = Select {
                items: columns
                    .iter()
                    .map(|&e| SelectItem::Expr {
                        expr: e.clone(),
                        alias: None,
                    })
                    .collect(),
                from: Some(FromClause {
                    first: factor.clone(),
                    joins: vec![],
                }),
                ..Select::default()
            };
            let mut rows = data.fetch(&Query::select(fetch)).ok()?;
            if rows.is_empty() {
                return None;
            }
            // Choose by position in a canonical order, not the DBMS's scan
            // order, so the choice depends on the data and the seed only.
            rows.sort_by_cached_key(|r| format_row(r));
            let chosen = rng.random_range(0..rows.len());
            pivot.extend(rows.swap_remove(chosen));
        }
        if pivot.len() != scope.columns.len() {
            return None;
        }
        let (expr, truth) = generator.pivot_predicate(rng, &scope, &pivot)?;
        let rectified = match truth {
            Truth::True => expr,
            Truth::False => Expr::not(expr),
            Truth::Null => Expr::is_null(expr),
        };
        Some(Case {
            query: Select {
                items: scope
                    .columns
                    .iter()
                    .map(|c| SelectItem::Expr {
                        expr: c.expr.clone(),
                        alias: None,
                    })
                    .collect(),
                from: Some(from),
                selection: Some(rectified.clone()),
                ..Select::default()
            },
            predicate: Some(rectified),
            pivot: Some(pivot),
        })
    }

    fn queries(&self, case: &Case) -> Vec<OracleQuery> {
        vec![OracleQuery {
            role: "pivot query".into(),
            query: Query::select(case.query.clone()),
        }]
    }

    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Verdict {
        let pivot = case.pivot.as_ref().expect("a pqs case has a pivot");
        if results[0].iter().any(|r| rows_equal(r, pivot)) {
            return Verdict::Agree { nonempty: true };
        }
        Verdict::Disagree(Disagreement {
            relation: RELATION.to_string(),
            row_counts: vec![results[0].len()],
            diff: RowDiff {
                only_in_first: vec![],
                only_in_second: vec![(pivot.clone(), 1)],
            },
        })
    }
}
