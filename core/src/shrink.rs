//! One-step simplifications of an oracle's inputs, for the reducer.
//!
//! The reducer never edits the queries an oracle compares; it simplifies
//! the oracle's [`Case`] and lets the oracle rebuild its queries, so the
//! relation holds by construction for every candidate. Each oracle says
//! which parts of its case may change ([`CasePolicy`]), because some parts
//! carry the oracle's own invariants: the select list of a grouped query
//! must stay in step with its GROUP BY, and a `COLLATE BINARY` that makes
//! equal values identical must stay where the oracle put it.
//!
//! Rules that hold for every oracle:
//! - a `COLLATE` node is never replaced by its operand (the collation may
//!   be what makes DISTINCT, GROUP BY, MIN or MAX deterministic), though
//!   the operand itself may be simplified;
//! - an aggregate call is never replaced by its argument (a bare column in
//!   a grouped query takes the value of an arbitrary row), nor `+x` by `x`
//!   (in SQLite `+x` has no affinity, `x` may have one);
//! - ORDER BY, LIMIT and the select lists of subqueries are never touched
//!   (a scalar subquery's total order must stay total); only their WHERE
//!   may be simplified.

use crate::ast::{Expr, JoinConstraint, Query, Select, SelectItem, SetExpr};
use crate::case::{Case, CasePolicy, ItemPolicy};
use crate::value::Value;

/// Functions that aggregate in some dialect. Conservative: `MIN` and `MAX`
/// are scalar in SQLite with two arguments, but are never unwrapped either.
const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "total",
    "group_concat",
    "string_agg",
    "bool_and",
    "bool_or",
    "every",
    "array_agg",
    "bit_and",
    "bit_or",
    "bit_xor",
    "stddev",
    "variance",
    "json_group_array",
    "json_group_object",
];

fn is_aggregate(expr: &Expr) -> bool {
    match expr {
        Expr::CountStar => true,
        Expr::Function { name, .. } => AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name)),
        _ => false,
    }
}

/// Simpler literals to try in place of `v`, simplest first.
fn literal_variants(v: &Value) -> Vec<Value> {
    match v {
        Value::Null => vec![],
        Value::Integer(0) => vec![Value::Null],
        Value::Integer(1) => vec![Value::Integer(0)],
        Value::Integer(n) => {
            let mut out = vec![Value::Integer(0), Value::Integer(1)];
            if n.unsigned_abs() >= 10 {
                out.push(Value::Integer(n / 10));
            }
            out
        }
        Value::Real(r) => {
            let mut out = vec![Value::Integer(0), Value::Integer(1)];
            let t = r.trunc();
            if t != *r && t.abs() < 1e15 {
                out.push(Value::Integer(t as i64));
            }
            out
        }
        Value::Text(s) if s.is_empty() => vec![Value::Null],
        Value::Text(s) => {
            let mut out = vec![Value::Text(String::new())];
            let chars: Vec<char> = s.chars().collect();
            if chars.len() > 1 {
                out.push(Value::Text(chars[..chars.len() / 2].iter().collect()));
                out.push(Value::Text(chars[chars.len() / 2..].iter().collect()));
            }
            out
        }
        Value::Blob(b) if b.is_empty() => vec![Value::Null],
        Value::Blob(b) => vec![Value::Blob(vec![]), Value::Blob(b[..b.len() / 2].to_vec())],
        Value::Boolean(true) => vec![Value::Boolean(false)],
        Value::Boolean(false) => vec![Value::Null],
        Value::Decimal(d) if d == "0" => vec![Value::Null],
        Value::Decimal(_) => vec![Value::Decimal("0".into()), Value::Decimal("1".into())],
    }
}

/// Every expression one simplification step away from `e`, the biggest
/// simplifications (closest to the root) first.
pub fn expr_variants(e: &Expr) -> Vec<Expr> {
    let mut out = Vec::new();
    // Replace the whole expression.
    if let Expr::Literal(v) = e {
        out.extend(literal_variants(v).into_iter().map(Expr::Literal));
    } else {
        // `+c` stays: the stepwise oracle reads materialized columns so,
        // and a bare `c` would compare by another affinity in SQLite.
        let unary_plus = matches!(
            e,
            Expr::Unary {
                op: crate::ast::UnaryOp::Plus,
                ..
            }
        );
        if !matches!(e, Expr::Collate { .. }) && !is_aggregate(e) && !unary_plus {
            out.extend(e.children().into_iter().cloned());
        }
        out.push(Expr::Literal(Value::Null));
        out.push(Expr::int(0));
        out.push(Expr::int(1));
    }
    // Shorten lists.
    match e {
        Expr::InList { list, .. } if list.len() > 1 => {
            for i in 0..list.len() {
                let mut c = e.clone();
                if let Expr::InList { list, .. } = &mut c {
                    list.remove(i);
                }
                out.push(c);
            }
        }
        Expr::Case {
            branches,
            otherwise,
            ..
        } => {
            if branches.len() > 1 {
                for i in 0..branches.len() {
                    let mut c = e.clone();
                    if let Expr::Case { branches, .. } = &mut c {
                        branches.remove(i);
                    }
                    out.push(c);
                }
            }
            if otherwise.is_some() {
                let mut c = e.clone();
                if let Expr::Case { otherwise, .. } = &mut c {
                    *otherwise = None;
                }
                out.push(c);
            }
        }
        Expr::Exists { query, .. }
        | Expr::InSubquery { query, .. }
        | Expr::QuantifiedSubquery { query, .. }
        | Expr::Subquery(query) => {
            for q in subquery_where_variants(query) {
                let mut c = e.clone();
                match &mut c {
                    Expr::Exists { query, .. }
                    | Expr::InSubquery { query, .. }
                    | Expr::QuantifiedSubquery { query, .. }
                    | Expr::Subquery(query) => **query = q,
                    _ => unreachable!("the same variant was cloned"),
                }
                out.push(c);
            }
        }
        _ => {}
    }
    // Simplify one child.
    let n = e.children().len();
    for i in 0..n {
        let child_variants = expr_variants(e.children()[i]);
        for v in child_variants {
            let mut c = e.clone();
            *c.children_mut()[i] = v;
            out.push(c);
        }
    }
    out.retain(|c| c != e);
    out
}

/// A subquery with its WHERE dropped or simplified (only when its body is
/// one SELECT); nothing else in it changes.
fn subquery_where_variants(query: &Query) -> Vec<Query> {
    let SetExpr::Select(select) = &query.body else {
        return vec![];
    };
    let Some(w) = &select.selection else {
        return vec![];
    };
    let mut wheres = vec![None];
    wheres.extend(expr_variants(w).into_iter().map(Some));
    wheres
        .into_iter()
        .map(|w| {
            let mut q = query.clone();
            if let SetExpr::Select(s) = &mut q.body {
                s.selection = w;
            }
            q
        })
        .collect()
}

/// Every select one step simpler than `s` under `policy`.
pub fn select_variants(s: &Select, policy: &CasePolicy) -> Vec<Select> {
    let mut out = Vec::new();
    if policy.joins {
        if let Some(from) = &s.from {
            for i in 0..from.joins.len() {
                let mut c = s.clone();
                if let Some(f) = &mut c.from {
                    f.joins.remove(i);
                }
                out.push(c);
            }
        }
    }
    if policy.selection {
        if let Some(w) = &s.selection {
            out.push(Select {
                selection: None,
                ..s.clone()
            });
            for v in expr_variants(w) {
                out.push(Select {
                    selection: Some(v),
                    ..s.clone()
                });
            }
        }
    }
    match policy.items {
        ItemPolicy::Free => {
            if s.items.len() > 1 {
                for i in 0..s.items.len() {
                    let mut c = s.clone();
                    c.items.remove(i);
                    out.push(c);
                }
            }
            for i in 0..s.items.len() {
                if let SelectItem::Expr { expr, .. } = &s.items[i] {
                    for v in expr_variants(expr) {
                        let mut c = s.clone();
                        if let SelectItem::Expr { expr, .. } = &mut c.items[i] {
                            *expr = v;
                        }
                        out.push(c);
                    }
                }
            }
        }
        ItemPolicy::ArgumentsOnly => {
            for i in 0..s.items.len() {
                let SelectItem::Expr {
                    expr: Expr::Function { args, .. },
                    ..
                } = &s.items[i]
                else {
                    continue;
                };
                for (j, arg) in args.iter().enumerate() {
                    for v in expr_variants(arg) {
                        let mut c = s.clone();
                        if let SelectItem::Expr {
                            expr: Expr::Function { args, .. },
                            ..
                        } = &mut c.items[i]
                        {
                            args[j] = v;
                        }
                        out.push(c);
                    }
                }
            }
        }
        ItemPolicy::Fixed => {}
    }
    if policy.joins {
        if let Some(from) = &s.from {
            for (i, join) in from.joins.iter().enumerate() {
                if let JoinConstraint::On(on) = &join.constraint {
                    for v in expr_variants(on) {
                        let mut c = s.clone();
                        if let Some(f) = &mut c.from {
                            f.joins[i].constraint = JoinConstraint::On(v);
                        }
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// Every case one step simpler than `case` under `policy`: the base query's
/// simplifications first (dropping joins shrinks most), then the predicate's.
pub fn case_variants(case: &Case, policy: &CasePolicy) -> Vec<Case> {
    let mut out: Vec<Case> = select_variants(&case.query, policy)
        .into_iter()
        .map(|query| Case {
            query,
            ..case.clone()
        })
        .collect();
    if policy.predicate {
        if let Ok(p) = case.predicate() {
            out.extend(expr_variants(p).into_iter().map(|p| case.with_predicate(p)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ast::BinaryOp;

    #[test]
    fn collate_and_aggregates_are_never_unwrapped() {
        let col = Expr::column(Some("t0"), "c0");
        let collated = Expr::Collate {
            expr: Box::new(col.clone()),
            collation: "BINARY".into(),
        };
        assert!(!expr_variants(&collated).contains(&col));
        let max = Expr::func("MAX", vec![col.clone()]);
        assert!(!expr_variants(&max).contains(&col));
        // The operand of a COLLATE may still be simplified.
        let inner = Expr::Collate {
            expr: Box::new(Expr::binary(BinaryOp::Add, col.clone(), Expr::int(5))),
            collation: "BINARY".into(),
        };
        assert!(expr_variants(&inner).iter().any(|v| *v
            == Expr::Collate {
                expr: Box::new(col.clone()),
                collation: "BINARY".into()
            }));
    }

    #[test]
    fn children_come_before_literals_and_variants_differ() {
        let e = Expr::and(Expr::column(None, "c0"), Expr::int(42));
        let v = expr_variants(&e);
        assert_eq!(v[0], Expr::column(None, "c0"));
        assert!(v.contains(&Expr::and(Expr::column(None, "c0"), Expr::int(4))));
        assert!(!v.contains(&e));
    }
}
