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
    Case, CaseError, Disagreement, Expr, FromClause, GenerateContext, JoinKind, Oracle,
    OracleInputs, OracleQuery, Query, Row, Select, SelectItem, TableFactor, Truth, Verdict,
};
use rand::Rng as _;

/// The largest product of the pivot tables' row counts for most PQS
/// cases: the query scans that product, and a few large ones took most
/// of PQS's time (6 ms each for three tables, against 0.2 ms for two).
const CHEAP_PRODUCT: u64 = 5_000;

pub struct Pqs;

/// What PQS draws beside its rectified predicate: the pivot row, one value
/// per select item, which the query's result must contain.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PivotRow {
    pub pivot: Row,
}

impl OracleInputs for PivotRow {
    const KIND: &'static str = "pivot";
    const WHAT: &'static str = "pivot row";
}

const RELATION: &str =
    "the pivot row, which RS(SELECT ...) contains, is in RS(SELECT ... WHERE rectified predicate)";

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
    fn requires(&self) -> &'static [lancet_core::Feature] {
        &[lancet_core::Feature::PivotRows]
    }

    fn name(&self) -> &'static str {
        "pqs"
    }

    fn description(&self) -> &'static str {
        "pivoted query synthesis: a row for which the predicate is TRUE must be in the result"
    }

    fn case_depends_on_schema(&self) -> bool {
        true
    }

    fn planted_fault(&self) -> lancet_core::fault::Fault {
        std::sync::Arc::new(lancet_core::fault::EmptyResult { period: 5 })
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let data = &mut *cx.data;
        let (from, scope) = generator.pivot_tables(rng)?;
        let mut pivot: Row = Vec::with_capacity(scope.columns.len());
        let mut product: u64 = 1;
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
            product = product.saturating_mul(rows.len() as u64);
            // Choose by position in a canonical order, not the DBMS's scan
            // order, so the choice depends on the data and the seed only.
            rows.sort_by_cached_key(|r| format_row(r));
            let chosen = rng.random_range(0..rows.len());
            pivot.extend(rows.swap_remove(chosen));
        }
        if pivot.len() != scope.columns.len() {
            return None;
        }
        // The query scans the product of the tables: most cases stay below
        // a bound, a few go over on purpose (some bugs need big joins).
        if product > CHEAP_PRODUCT && !rng.random_bool(0.1) {
            return None;
        }
        let (expr, truth) = generator.pivot_predicate(rng, &scope, &pivot)?;
        let rectified = match truth {
            Truth::True => expr,
            Truth::False => Expr::not(expr),
            Truth::Null => Expr::is_null(expr),
        };
        Some(
            Case::with_predicate_of(
                self.name(),
                Select {
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
                rectified,
            )
            .and_inputs(PivotRow { pivot }),
        )
    }

    /// PQS cannot simplify its predicate freely: a simpler predicate need
    /// not be TRUE on the pivot, and only the provider's evaluator could
    /// tell. What keeps the relation by construction: a conjunct of a TRUE
    /// conjunction (`NOT` of a FALSE disjunction), and dropping a column or
    /// a whole table from both the select list and the pivot row.
    fn shrink(&self, case: &Case) -> Vec<Case> {
        let (Ok(inputs), Ok(predicate)) = (case.inputs::<PivotRow>(), case.predicate()) else {
            return vec![];
        };
        let pivot = &inputs.pivot;
        let mut out = Vec::new();
        let with_predicate = |p: Expr| Case {
            query: Select {
                selection: Some(p.clone()),
                ..case.query.clone()
            },
            ..case.with_predicate(p)
        };
        for p in true_parts(predicate) {
            out.push(with_predicate(p));
        }
        if let Some(from) = &case.query.from {
            if let Some(factors) = factors(from) {
                for (i, factor) in factors.iter().enumerate().filter(|_| factors.len() > 1) {
                    let Some(alias) = alias_of(factor) else {
                        continue;
                    };
                    let keep: Vec<bool> = case
                        .query
                        .items
                        .iter()
                        .map(|it| !matches!(it, SelectItem::Expr { expr: Expr::Column(c), .. } if c.table.as_deref() == Some(alias)))
                        .collect();
                    let mut rest: Vec<TableFactor> = factors.iter().map(|f| (*f).clone()).collect();
                    rest.remove(i);
                    let mut rest = rest.into_iter();
                    let first = rest.next().expect("more than one factor");
                    let from = FromClause {
                        first,
                        joins: rest
                            .map(|factor| lancet_core::Join {
                                kind: JoinKind::Comma,
                                factor,
                                constraint: lancet_core::JoinConstraint::None,
                            })
                            .collect(),
                    };
                    if let Some(c) = keep_columns(case, pivot, &keep) {
                        out.push(Case {
                            query: Select {
                                from: Some(from),
                                ..c.query
                            },
                            ..c
                        });
                    }
                }
            }
        }
        // Only columns the predicate does not read may go: its truth on the
        // pivot depends on exactly the values it reads, and the "all rows"
        // query must show a row with those values.
        let read = columns_read(predicate);
        for (i, it) in case.query.items.iter().enumerate() {
            if matches!(it, SelectItem::Expr { expr: Expr::Column(c), .. } if read.contains(c)) {
                continue;
            }
            let keep: Vec<bool> = (0..case.query.items.len()).map(|j| j != i).collect();
            out.extend(keep_columns(case, pivot, &keep));
        }
        out
    }

    fn wrong_by_relation(&self) -> Option<(&'static str, &'static str)> {
        Some((
            "pivot query",
            "lancet's evaluator computed that the pivot row satisfies the predicate, and the \
             query without WHERE shows the row is stored: the pivot query must return it",
        ))
    }

    /// The pivot query, and the same query without its WHERE: the second
    /// shows that the pivot row is in the tables at all, so a reproducer
    /// (or a reduced one, whose setup may have lost the row) proves the bug
    /// by itself.
    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        case.inputs::<PivotRow>()?;
        Ok(vec![
            OracleQuery::new("pivot query", Query::select(case.query.clone())),
            OracleQuery::new(
                "all rows",
                Query::select(Select {
                    selection: None,
                    ..case.query.clone()
                }),
            ),
        ])
    }

    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        let inputs = case.inputs::<PivotRow>()?;
        let pivot = &inputs.pivot;
        let [with_predicate, all_rows] = results else {
            return Err(case.unfit("PQS compares exactly two results"));
        };
        let contains = |rows: &[Row]| rows.iter().any(|r| rows_equal(r, pivot));
        // Without the row in the tables there is nothing to check; the row
        // must be there with identical values (1 is not 1.0: the predicate
        // may tell them apart).
        let identical = |rows: &[Row]| rows.contains(pivot);
        if contains(with_predicate) || !identical(all_rows) {
            return Ok(Verdict::Agree {
                nonempty: !with_predicate.is_empty(),
            });
        }
        Ok(Verdict::Disagree(Disagreement {
            relation: RELATION.to_string(),
            row_counts: vec![with_predicate.len(), all_rows.len()],
            diff: RowDiff {
                only_in_first: vec![],
                only_in_second: vec![(pivot.clone(), 1)],
                ..RowDiff::default()
            },
            timing: None,
        }))
    }
}

/// Parts of a predicate that are TRUE wherever it is: the conjuncts of
/// `a AND b`, and `NOT a`, `NOT b` for `NOT (a OR b)`.
fn true_parts(p: &Expr) -> Vec<Expr> {
    use lancet_core::{BinaryOp, UnaryOp};
    match p {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
        } => vec![(**left).clone(), (**right).clone()],
        Expr::Unary {
            op: UnaryOp::Not,
            expr,
        } => match &**expr {
            Expr::Binary {
                op: BinaryOp::Or,
                left,
                right,
            } => vec![Expr::not((**left).clone()), Expr::not((**right).clone())],
            _ => vec![],
        },
        _ => vec![],
    }
}

/// The case with only the select items (and pivot values) marked `keep`;
/// `None` if that keeps none or all of them.
fn keep_columns(case: &Case, pivot: &Row, keep: &[bool]) -> Option<Case> {
    let kept = keep.iter().filter(|k| **k).count();
    if kept == 0 || kept == keep.len() || pivot.len() != keep.len() {
        return None;
    }
    let pick = |i: usize| keep[i];
    let pivot: Row = pivot
        .iter()
        .enumerate()
        .filter(|(i, _)| pick(*i))
        .map(|(_, v)| v.clone())
        .collect();
    case.predicate().ok()?;
    Some(Case {
        query: Select {
            items: case
                .query
                .items
                .iter()
                .enumerate()
                .filter(|(i, _)| pick(*i))
                .map(|(_, it)| it.clone())
                .collect(),
            ..case.query.clone()
        },
        ..case.with_inputs(PivotRow { pivot })
    })
}

/// The columns an expression reads (PQS predicates have no subqueries).
fn columns_read(e: &Expr) -> Vec<lancet_core::ColumnRef> {
    let mut out = Vec::new();
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        if let Expr::Column(c) = x {
            out.push(c.clone());
        }
        stack.extend(x.children());
    }
    out
}
