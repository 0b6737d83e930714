//! Ternary logic partitioning: every predicate is TRUE, FALSE or NULL on a
//! row (or group), so `p`, `NOT p` and `p IS NULL` split any result into
//! three disjoint parts. Shared by every TLP variant.

use lancet_core::compare::{multiset_diff, set_diff, RowDiff};
use lancet_core::{
    Case, CaseError, Disagreement, Expr, FromClause, JoinConstraint, OracleQuery, Query,
    QueryGenerator, Rng, Row, Scope, Select, SelectItem, SetOperator, Verdict,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// The three partitioning predicates of `p`: `p`, `NOT p`, `p IS NULL`.
pub fn partition_predicates(p: &Expr) -> [Expr; 3] {
    [p.clone(), Expr::not(p.clone()), Expr::is_null(p.clone())]
}

fn conjoin(existing: Option<Expr>, part: Expr) -> Expr {
    match existing {
        Some(w) => Expr::and(w, part),
        None => part,
    }
}

/// The three partitions of `base` on `p` in its WHERE clause, keeping the
/// base's own WHERE: `WHERE (w) AND (part)`.
pub fn where_partitions(base: &Select, p: &Expr) -> Vec<Select> {
    partition_predicates(p)
        .into_iter()
        .map(|part| {
            let mut s = base.clone();
            s.selection = Some(conjoin(s.selection.take(), part));
            s
        })
        .collect()
}

/// The three partitions of a grouped `base` on `p` in its HAVING clause.
pub fn having_partitions(base: &Select, p: &Expr) -> Vec<Select> {
    partition_predicates(p)
        .into_iter()
        .map(|part| {
            let mut s = base.clone();
            s.having = Some(conjoin(s.having.take(), part));
            s
        })
        .collect()
}

/// Whether `*` over this FROM is safe: USING/NATURAL joins merge columns in
/// dialect-specific ways (SQLite rejects some as ambiguous).
pub fn wildcard_is_safe(from: &FromClause) -> bool {
    !from.joins.iter().any(|j| {
        matches!(
            j.constraint,
            JoinConstraint::Using(_) | JoinConstraint::Natural
        )
    })
}

pub fn item(expr: Expr) -> SelectItem {
    SelectItem::Expr { expr, alias: None }
}

/// Up to `max` distinct columns of the scope, in scope order (at least one
/// if the scope has any).
pub fn some_columns(rng: &mut Rng, scope: &Scope, max: usize) -> Vec<Expr> {
    let n = rng.random_range(1..=max.min(scope.columns.len()).max(1));
    let mut picked: Vec<usize> = (0..scope.columns.len())
        .collect::<Vec<_>>()
        .choose_multiple(rng, n)
        .copied()
        .collect();
    picked.sort_unstable();
    picked
        .into_iter()
        .map(|i| scope.columns[i].expr.clone())
        .collect()
}

/// An optional WHERE for a base query (a quarter of the time).
pub fn base_where(
    rng: &mut Rng,
    generator: &mut dyn QueryGenerator,
    scope: &Scope,
) -> Option<Expr> {
    rng.random_bool(0.25)
        .then(|| generator.predicate(rng, scope))
}

/// The two queries of a TLP check: the case's base query, and its three
/// partitions on the case's predicate (made by `partition`) combined with
/// `op`. `oracle` must be the oracle that drew the case.
pub fn original_and_partitioned(
    oracle: &str,
    case: &Case,
    partition: fn(&Select, &Expr) -> Vec<Select>,
    op: SetOperator,
) -> Result<Vec<OracleQuery>, CaseError> {
    case.check_oracle(oracle)?;
    let p = case.predicate()?;
    Ok(vec![
        OracleQuery::new("original", Query::select(case.query.clone())),
        OracleQuery::new(
            "partitioned",
            Query::set_operation(op, partition(&case.query, p)),
        ),
    ])
}

/// Compares the first two results as multisets of whole rows.
pub fn multiset_verdict(relation: &str, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
    let [a, b, ..] = results else {
        return Err(too_few_results(relation));
    };
    Ok(verdict_from_diff(relation, results, multiset_diff(a, b)))
}

/// Compares the first two results as sets of whole rows.
pub fn set_verdict(relation: &str, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
    let [a, b, ..] = results else {
        return Err(too_few_results(relation));
    };
    Ok(verdict_from_diff(relation, results, set_diff(a, b)))
}

fn too_few_results(relation: &str) -> CaseError {
    CaseError::Unfit {
        oracle: String::new(),
        why: format!("fewer than two results to compare under {relation}"),
    }
}

/// The verdict of a two-query check from the diff of its results: agree if
/// nothing differs, else the broken relation with both row counts.
pub fn verdict_from_diff(relation: &str, results: &[Vec<Row>], diff: RowDiff) -> Verdict {
    if diff.is_empty() {
        Verdict::Agree {
            nonempty: !results[0].is_empty(),
        }
    } else {
        Verdict::Disagree(Disagreement {
            relation: relation.to_string(),
            row_counts: vec![results[0].len(), results[1].len()],
            diff,
            timing: None,
        })
    }
}

/// A grouped select list in exact forms: up to two columns' exact group
/// keys, a count, and MIN or MAX of a column; with the GROUP BY keys.
/// Exact forms, because a DBMS may return any one of several equal values
/// of a group (`'a'` or `'A'` under NOCASE), and the plan decides which.
pub(crate) fn exact_groups(
    rng: &mut Rng,
    generator: &mut dyn QueryGenerator,
    scope: &Scope,
    columns: Vec<Expr>,
) -> Option<(Vec<SelectItem>, Vec<Expr>)> {
    let keys: Vec<Expr> = columns
        .into_iter()
        .take(2)
        .flat_map(|c| generator.exact_group_keys(c))
        .collect();
    let mut items = keys.clone();
    items.push(Expr::CountStar);
    if let Some(c) = scope.columns.choose(rng) {
        let name = *["MIN", "MAX"].choose(rng)?;
        let arg = generator.aggregate_argument(rng, scope, name, c.expr.clone());
        items.push(Expr::func(name, vec![generator.with_exact_equality(arg)]));
    }
    Some((items.into_iter().map(item).collect(), keys))
}
