//! Expression-level equivalences (EET-style): rewrites of a predicate that
//! keep its truth value under three-valued logic, and `c + 0` for an
//! integer column.

use lancet_core::ast::{BinaryOp, Expr, JoinConstraint, Select, SelectItem, UnaryOp};
use serde::{Deserialize, Serialize};

/// A truth-preserving rewrite of one predicate node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rewrite {
    /// `p` -> `NOT (NOT p)`
    DoubleNegation,
    /// `a AND b` <-> `NOT ((NOT a) OR (NOT b))`, and the same for OR.
    DeMorgan,
    /// `p` -> `CASE WHEN 1 = 1 THEN p END`
    CaseWrap,
    /// `p` -> `p AND p`
    Idempotence,
}

impl Rewrite {
    pub const ALL: [Rewrite; 4] = [
        Rewrite::DoubleNegation,
        Rewrite::DeMorgan,
        Rewrite::CaseWrap,
        Rewrite::Idempotence,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Rewrite::DoubleNegation => "double-negation",
            Rewrite::DeMorgan => "de-morgan",
            Rewrite::CaseWrap => "case-wrap",
            Rewrite::Idempotence => "idempotence",
        }
    }

    /// Whether the rewrite applies to `e`.
    pub fn applies_to(self, e: &Expr) -> bool {
        match self {
            Rewrite::DeMorgan => de_morgan(e).is_some(),
            _ => true,
        }
    }

    fn apply(self, e: &mut Expr) {
        let old = std::mem::replace(e, Expr::int(0));
        *e = match self {
            Rewrite::DoubleNegation => Expr::not(Expr::not(old)),
            Rewrite::DeMorgan => de_morgan(&old).unwrap_or(old),
            Rewrite::CaseWrap => Expr::Case {
                operand: None,
                branches: vec![(Expr::binary(BinaryOp::Eq, Expr::int(1), Expr::int(1)), old)],
                otherwise: None,
            },
            Rewrite::Idempotence => Expr::and(old.clone(), old),
        };
    }
}

fn de_morgan(e: &Expr) -> Option<Expr> {
    let flip = |op: BinaryOp| match op {
        BinaryOp::And => Some(BinaryOp::Or),
        BinaryOp::Or => Some(BinaryOp::And),
        _ => None,
    };
    match e {
        Expr::Binary { op, left, right } => {
            let other = flip(*op)?;
            Some(Expr::not(Expr::binary(
                other,
                Expr::not((**left).clone()),
                Expr::not((**right).clone()),
            )))
        }
        Expr::Unary {
            op: UnaryOp::Not,
            expr,
        } => match &**expr {
            Expr::Binary { op, left, right } => Some(Expr::binary(
                flip(*op)?,
                Expr::not((**left).clone()),
                Expr::not((**right).clone()),
            )),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `e` yields a truth value in every dialect (a comparison, a
/// connective, a test): only such nodes are rewritten, since MySQL reads
/// other values differently by context (an ENUM is its index as a
/// number, its text inside CASE).
pub fn yields_truth(e: &Expr) -> bool {
    match e {
        Expr::Binary { op, .. } => {
            op.is_comparison()
                || matches!(
                    op,
                    BinaryOp::And | BinaryOp::Or | BinaryOp::Xor | BinaryOp::RegexMatch
                )
        }
        Expr::Unary {
            op: UnaryOp::Not, ..
        } => true,
        Expr::IsNull { .. }
        | Expr::IsBool { .. }
        | Expr::Like { .. }
        | Expr::Between { .. }
        | Expr::InList { .. }
        | Expr::InSubquery { .. }
        | Expr::Exists { .. }
        | Expr::Quantified { .. }
        | Expr::QuantifiedSubquery { .. } => true,
        _ => false,
    }
}

/// The operands of a node that are read only as truth values.
fn truth_operands(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Binary {
            op: BinaryOp::And | BinaryOp::Or,
            left,
            right,
        } => vec![left, right],
        Expr::Unary {
            op: UnaryOp::Not,
            expr,
        } => vec![expr],
        _ => vec![],
    }
}

fn truth_operands_mut(e: &mut Expr) -> Vec<&mut Expr> {
    match e {
        Expr::Binary {
            op: BinaryOp::And | BinaryOp::Or,
            left,
            right,
        } => vec![left, right],
        Expr::Unary {
            op: UnaryOp::Not,
            expr,
        } => vec![expr],
        _ => vec![],
    }
}

/// The nodes of a WHERE condition that are read only as truth values and
/// yield one, in pre-order: the positions a [`Rewrite`] may take.
pub fn truth_nodes(e: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    fn walk<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
        if yields_truth(e) {
            out.push(e);
        }
        for c in truth_operands(e) {
            walk(c, out);
        }
    }
    walk(e, &mut out);
    out
}

pub(super) fn rewrite_where(s: &mut Select, node: usize, rewrite: Rewrite) -> Result<(), String> {
    /// `Some(applied)` once the `k`-th node is reached.
    fn walk(e: &mut Expr, k: &mut usize, rewrite: Rewrite) -> Option<bool> {
        if yields_truth(e) {
            if *k == 0 {
                if !rewrite.applies_to(e) {
                    return Some(false);
                }
                rewrite.apply(e);
                return Some(true);
            }
            *k -= 1;
        }
        truth_operands_mut(e)
            .into_iter()
            .find_map(|c| walk(c, k, rewrite))
    }
    let w = s.selection.as_mut().ok_or("no WHERE")?;
    let mut k = node;
    if walk(w, &mut k, rewrite) == Some(true) {
        Ok(())
    } else {
        Err(format!("no node {node} that {} fits", rewrite.name()))
    }
}

/// Replaces `column` by `(column + 0)` in every expression of the select
/// (not inside subqueries or derived tables, where the name may mean
/// another table).
pub(super) fn add_zero(s: &mut Select, column: &Expr) -> Result<(), String> {
    fn walk(e: &mut Expr, column: &Expr, n: &mut usize) {
        if e == column {
            *e = Expr::binary(BinaryOp::Add, column.clone(), Expr::int(0));
            *n += 1;
            return;
        }
        for c in e.children_mut() {
            walk(c, column, n);
        }
    }
    let mut n = 0;
    for expr in s.items.iter_mut().flat_map(SelectItem::exprs_mut) {
        walk(expr, column, &mut n);
    }
    for e in s
        .selection
        .iter_mut()
        .chain(s.group_by.iter_mut())
        .chain(s.having.iter_mut())
        .chain(s.qualify.iter_mut())
    {
        walk(e, column, &mut n);
    }
    if let Some(from) = &mut s.from {
        for j in &mut from.joins {
            if let JoinConstraint::On(e) = &mut j.constraint {
                walk(e, column, &mut n);
            }
        }
    }
    if n == 0 {
        Err("the column does not occur".into())
    } else {
        Ok(())
    }
}
