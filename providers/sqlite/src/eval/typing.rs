//! The static properties SQLite gives an expression before running it: its
//! affinity (`sqlite3ExprAffinity`) and its collating sequence
//! (`sqlite3ExprCollSeq`), which decide how comparisons convert and order
//! their operands.
//!
//! Affinity: a column has its declared type's; `CAST(x AS T)` has T's;
//! `x COLLATE c` has x's; every other expression (literals, `+x`,
//! functions, CASE) has none. Collation: a `COLLATE` anywhere inside an
//! operand is "explicit" and wins (the leftmost one); otherwise a column
//! (also under CAST or unary `+`) brings its own, BINARY if it declares
//! none; anything else has none.

use super::collation::Collation;
use super::{decline, Evaluator, Result};
use crate::types::{self, Affinity};
use lancet_core::{Expr, UnaryOp};

/// SQLite's affinities, ordered as SQLite orders its affinity codes
/// (`None` is an expression without affinity).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Aff {
    None,
    Blob,
    Text,
    Numeric,
    Integer,
    Real,
}

impl Aff {
    pub fn of(a: Affinity) -> Aff {
        match a {
            Affinity::Integer => Aff::Integer,
            Affinity::Text => Aff::Text,
            Affinity::Blob => Aff::Blob,
            Affinity::Real => Aff::Real,
            Affinity::Numeric => Aff::Numeric,
        }
    }

    /// `sqlite3IsNumericAffinity`.
    pub fn is_numeric(self) -> bool {
        self >= Aff::Numeric
    }

    /// `sqlite3CompareAffinity`: the affinity a comparison of operands
    /// with these affinities applies. Two columns: numeric if either is,
    /// else none; one column: its affinity; neither: none.
    pub fn for_comparison(a: Aff, b: Aff) -> Aff {
        match (a, b) {
            (Aff::None, other) | (other, Aff::None) => other,
            (a, b) if a.is_numeric() || b.is_numeric() => Aff::Numeric,
            _ => Aff::Blob,
        }
    }
}

/// Whether `e` contains a COLLATE (SQLite's `EP_Collate` flag, which every
/// node inherits from its operands).
pub fn has_collate(e: &Expr) -> bool {
    matches!(e, Expr::Collate { .. }) || e.children().into_iter().any(has_collate)
}

/// The operands of `e` where SQLite's parse tree keeps them: `pLeft`,
/// `pRight` and the list `x.pList` (function arguments, LIKE's
/// `(pattern, subject, escape)`, CASE's WHEN/THEN/ELSE terms, IN's and
/// BETWEEN's right-hand sides). The collation search walks these.
fn parse_tree_operands(e: &Expr) -> (Option<&Expr>, Option<&Expr>, Vec<&Expr>) {
    match e {
        Expr::Unary { expr, .. }
        | Expr::IsNull { expr, .. }
        | Expr::IsBool { expr, .. }
        | Expr::Cast { expr, .. }
        | Expr::Collate { expr, .. } => (Some(expr), None, vec![]),
        Expr::Binary { left, right, .. } => (Some(left), Some(right), vec![]),
        Expr::Like {
            expr,
            pattern,
            escape,
            ..
        } => {
            let mut list = vec![&**pattern, &**expr];
            if let Some(esc) = escape {
                list.push(esc);
            }
            (None, None, list)
        }
        Expr::Between {
            expr, low, high, ..
        } => (Some(expr), None, vec![low, high]),
        Expr::InList { expr, list, .. } => (Some(expr), None, list.iter().collect()),
        Expr::Case {
            operand,
            branches,
            otherwise,
        } => {
            let mut list = vec![];
            for (w, t) in branches {
                list.push(w);
                list.push(t);
            }
            if let Some(o) = otherwise {
                list.push(o);
            }
            (operand.as_deref(), None, list)
        }
        Expr::Function { args, .. } => (None, None, args.iter().collect()),
        _ => (None, None, vec![]),
    }
}

impl Evaluator<'_> {
    /// `sqlite3ExprAffinity`.
    pub fn affinity(&self, e: &Expr) -> Result<Aff> {
        match e {
            Expr::Column(c) => Ok(self.column(c)?.affinity),
            Expr::Cast { ty, .. } => Ok(Aff::of(types::affinity(Some(ty)))),
            Expr::Collate { expr, .. } => self.affinity(expr),
            _ => Ok(Aff::None),
        }
    }

    /// `sqlite3ExprCollSeq`: the collation `e` carries, if any.
    pub fn collation(&self, e: &Expr) -> Result<Option<Collation>> {
        let mut p = e;
        loop {
            match p {
                Expr::Column(c) => return Ok(Some(self.column(c)?.collation)),
                Expr::Cast { expr, .. }
                | Expr::Unary {
                    op: UnaryOp::Plus,
                    expr,
                } => p = expr,
                Expr::Collate { collation, .. } => {
                    return match Collation::from_name(collation) {
                        Some(c) => Ok(Some(c)),
                        None => decline("unknown collation"),
                    }
                }
                _ if has_collate(p) => {
                    let (left, right, list) = parse_tree_operands(p);
                    match left {
                        Some(l) if has_collate(l) => p = l,
                        _ => match list.into_iter().find(|x| has_collate(x)).or(right) {
                            Some(next) => p = next,
                            None => return Ok(None),
                        },
                    }
                }
                _ => return Ok(None),
            }
        }
    }

    /// `sqlite3BinaryCompareCollSeq`: the collation a comparison of `left`
    /// with `right` uses.
    pub fn comparison_collation(&self, left: &Expr, right: &Expr) -> Result<Collation> {
        let coll = if has_collate(left) {
            self.collation(left)?
        } else if has_collate(right) {
            self.collation(right)?
        } else {
            match self.collation(left)? {
                Some(c) => Some(c),
                None => self.collation(right)?,
            }
        };
        Ok(coll.unwrap_or(Collation::Binary))
    }

    /// The collation a function that compares its arguments (min, max,
    /// nullif) uses: that of the first argument that has one.
    pub fn function_collation(&self, args: &[Expr]) -> Result<Collation> {
        for a in args {
            if let Some(c) = self.collation(a)? {
                return Ok(c);
            }
        }
        Ok(Collation::Binary)
    }
}
