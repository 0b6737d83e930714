//! PQS's evaluator for the server providers: predicates over a small,
//! exactly understood subset, and their truth value on the pivot row,
//! computed here in three-valued logic.
//!
//! The subset: integer columns and literals with `+ - *` (every value and
//! result within [`Semantics::int_limit`], so no column type overflows),
//! text compared in byte order (each provider feeds only columns whose
//! collation orders so: PostgreSQL's "C", MySQL's `utf8mb4_bin` without
//! trailing blanks), boolean columns; comparisons, null-safe (in)equality,
//! BETWEEN, IN lists, IS [NOT] NULL, AND/OR/NOT. Anything else is declined:
//! the evaluator answers only where it is sure. A provider decides which
//! pivot columns and values it can read ([`PivotColumn`], [`V`]).

use lancet_core::ast::{
    BinaryOp, Expr, FromClause, Join, JoinConstraint, JoinKind, TableFactor, TypeName, UnaryOp,
};
use lancet_core::provider::{Scope, ScopeColumn, Truth};
use lancet_core::rng::Rng;
use lancet_core::value::Value;
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// What the evaluator knows about a pivot column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Text,
    Bool,
}

/// An evaluated value.
#[derive(Clone, Debug, PartialEq)]
pub enum V {
    Null,
    Int(i64),
    Text(String),
    Bool(bool),
}

/// Where the DBMS's semantics differ within the subset.
#[derive(Clone, Copy, Debug)]
pub struct Semantics {
    /// The largest magnitude of an integer operand or result (the range
    /// of the narrowest integer column type the provider generates).
    pub int_limit: i64,
}

/// A pivot column usable in predicates.
pub struct PivotColumn {
    pub expr: Expr,
    pub kind: Kind,
}

struct Gen<'a> {
    cols: &'a [(&'a PivotColumn, V)],
    semantics: Semantics,
}

pub(crate) const TEXTS: &[&str] = &["", "a", "A", "ab", "b", "abc", " a", "B10", "zz", "%"];

impl Gen<'_> {
    fn col(&self, rng: &mut Rng, kind: Kind) -> Option<(Expr, V)> {
        let matching: Vec<&(&PivotColumn, V)> =
            self.cols.iter().filter(|(c, _)| c.kind == kind).collect();
        matching
            .choose(rng)
            .map(|(c, v)| (c.expr.clone(), v.clone()))
    }

    fn int(&self, rng: &mut Rng, depth: u32) -> Option<(Expr, V)> {
        if depth == 0 || rng.random_bool(0.4) {
            if rng.random_bool(0.7) {
                if let Some(c) = self.col(rng, Kind::Int) {
                    return Some(c);
                }
            }
            let i = rng.random_range(-10..=10);
            return Some((Expr::int(i), V::Int(i)));
        }
        let (l, lv) = self.int(rng, depth - 1)?;
        let (r, rv) = self.int(rng, depth - 1)?;
        let op = *[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul].choose(rng)?;
        let v = match (&lv, &rv) {
            (V::Int(a), V::Int(b)) => {
                let x = match op {
                    BinaryOp::Add => a.checked_add(*b)?,
                    BinaryOp::Sub => a.checked_sub(*b)?,
                    _ => a.checked_mul(*b)?,
                };
                // Within the limit, no integer column type overflows.
                let limit = self.semantics.int_limit;
                if x.abs() > limit || a.abs() > limit || b.abs() > limit {
                    return None;
                }
                V::Int(x)
            }
            _ => V::Null,
        };
        Some((Expr::binary(op, l, r), v))
    }

    fn text(&self, rng: &mut Rng) -> Option<(Expr, V)> {
        if rng.random_bool(0.7) {
            if let Some(c) = self.col(rng, Kind::Text) {
                return Some(c);
            }
        }
        let t = TEXTS.choose(rng)?.to_string();
        Some((Expr::Literal(Value::Text(t.clone())), V::Text(t)))
    }

    fn operand(&self, rng: &mut Rng, kind: Kind, depth: u32) -> Option<(Expr, V)> {
        match kind {
            Kind::Int => self.int(rng, depth),
            Kind::Text => self.text(rng),
            Kind::Bool => self.predicate(rng, depth),
        }
    }

    fn predicate(&self, rng: &mut Rng, depth: u32) -> Option<(Expr, V)> {
        let kind = *[Kind::Int, Kind::Int, Kind::Text].choose(rng)?;
        if depth == 0 {
            if rng.random_bool(0.3) {
                if let Some(c) = self.col(rng, Kind::Bool) {
                    return Some(c);
                }
            }
            return self.comparison(rng, kind, 0);
        }
        let d = depth - 1;
        match rng.random_range(0..10) {
            0..3 => self.comparison(rng, kind, d),
            3 | 4 => {
                let (l, lv) = self.predicate(rng, d)?;
                let (r, rv) = self.predicate(rng, d)?;
                let and = rng.random_bool(0.5);
                let v = logic(and, &lv, &rv);
                let op = if and { BinaryOp::And } else { BinaryOp::Or };
                Some((Expr::binary(op, l, r), v))
            }
            5 => {
                let (e, v) = self.predicate(rng, d)?;
                let v = match v {
                    V::Bool(b) => V::Bool(!b),
                    other => other,
                };
                Some((Expr::unary(UnaryOp::Not, e), v))
            }
            6 => {
                let (e, v) = self.operand(rng, kind, d)?;
                let negated = rng.random_bool(0.5);
                Some((
                    Expr::IsNull {
                        expr: Box::new(e),
                        negated,
                    },
                    V::Bool((v == V::Null) != negated),
                ))
            }
            7 => {
                let (x, xv) = self.operand(rng, kind, d)?;
                let (lo, lov) = self.operand(rng, kind, d)?;
                let (hi, hiv) = self.operand(rng, kind, d)?;
                let ge = compare(BinaryOp::GtEq, &xv, &lov)?;
                let le = compare(BinaryOp::LtEq, &xv, &hiv)?;
                let negated = rng.random_bool(0.3);
                let mut v = logic(true, &ge, &le);
                if negated {
                    v = not(v);
                }
                Some((
                    Expr::Between {
                        expr: Box::new(x),
                        low: Box::new(lo),
                        high: Box::new(hi),
                        negated,
                        symmetric: false,
                    },
                    v,
                ))
            }
            8 => {
                let (x, xv) = self.operand(rng, kind, d)?;
                let n = rng.random_range(1..=3);
                let mut list = Vec::new();
                // x IN (a, b) is x = a OR x = b.
                let mut v = V::Bool(false);
                for _ in 0..n {
                    let (e, ev) = self.operand(rng, kind, 0)?;
                    v = logic(false, &v, &compare(BinaryOp::Eq, &xv, &ev)?);
                    list.push(e);
                }
                let negated = rng.random_bool(0.3);
                Some((
                    Expr::InList {
                        expr: Box::new(x),
                        list,
                        negated,
                    },
                    if negated { not(v) } else { v },
                ))
            }
            _ => self.comparison(rng, kind, d),
        }
    }

    fn comparison(&self, rng: &mut Rng, kind: Kind, d: u32) -> Option<(Expr, V)> {
        let (l, lv) = self.operand(rng, kind, d)?;
        let (r, rv) = self.operand(rng, kind, d)?;
        let op = *BinaryOp::COMPARISONS.choose(rng)?;
        let v = compare(op, &lv, &rv)?;
        Some((Expr::binary(op, l, r), v))
    }
}

fn not(v: V) -> V {
    match v {
        V::Bool(b) => V::Bool(!b),
        other => other,
    }
}

/// AND (`and`) or OR in three-valued logic.
fn logic(and: bool, l: &V, r: &V) -> V {
    let b = |v: &V| match v {
        V::Bool(b) => Some(*b),
        _ => None,
    };
    match (b(l), b(r), and) {
        (Some(false), _, true) | (_, Some(false), true) => V::Bool(false),
        (Some(true), Some(true), true) => V::Bool(true),
        (Some(true), _, false) | (_, Some(true), false) => V::Bool(true),
        (Some(false), Some(false), false) => V::Bool(false),
        _ => V::Null,
    }
}

fn compare(op: BinaryOp, l: &V, r: &V) -> Option<V> {
    use std::cmp::Ordering;
    let null_safe = matches!(op, BinaryOp::IsDistinctFrom | BinaryOp::IsNotDistinctFrom);
    if *l == V::Null || *r == V::Null {
        if !null_safe {
            return Some(V::Null);
        }
        let same = *l == V::Null && *r == V::Null;
        return Some(V::Bool(same == (op == BinaryOp::IsNotDistinctFrom)));
    }
    let ord: Ordering = match (l, r) {
        (V::Int(a), V::Int(b)) => a.cmp(b),
        // The "C" collation: byte order.
        (V::Text(a), V::Text(b)) => a.as_bytes().cmp(b.as_bytes()),
        (V::Bool(a), V::Bool(b)) => a.cmp(b),
        _ => return None,
    };
    Some(V::Bool(match op {
        BinaryOp::Eq | BinaryOp::IsNotDistinctFrom => ord == Ordering::Equal,
        BinaryOp::NotEq | BinaryOp::IsDistinctFrom => ord != Ordering::Equal,
        BinaryOp::Lt => ord == Ordering::Less,
        BinaryOp::LtEq => ord != Ordering::Greater,
        BinaryOp::Gt => ord == Ordering::Greater,
        BinaryOp::GtEq => ord != Ordering::Less,
        _ => return None,
    }))
}

/// A table for [`pivot_from`]: its name, and each column's name, type and
/// evaluator kind (`None`: not understood).
pub type PivotTable = (String, Vec<(String, TypeName, Option<Kind>)>);

/// The pivot tables of [`lancet_core::QueryGenerator::pivot_tables`]: `tables`
/// (name, and each column's name, type and evaluator kind) joined by
/// commas as `p0, p1, ...`; the scope lists every column as `pI.column`,
/// and the evaluator's view of each (`None`: not understood).
pub fn pivot_from(tables: &[PivotTable]) -> Option<(FromClause, Scope, Vec<Option<PivotColumn>>)> {
    let mut factors = Vec::new();
    let mut columns = Vec::new();
    let mut pivot_columns = Vec::new();
    for (i, (name, cols)) in tables.iter().enumerate() {
        let alias = format!("p{i}");
        factors.push(TableFactor::Table {
            name: name.clone(),
            alias: Some(alias.clone()),
            indexed_by: None,
        });
        for (column, ty, kind) in cols {
            let expr = Expr::column(Some(&alias), column);
            columns.push(ScopeColumn {
                expr: expr.clone(),
                ty: Some(ty.clone()),
            });
            pivot_columns.push(kind.map(|kind| PivotColumn { expr, kind }));
        }
    }
    let mut factors = factors.into_iter();
    let first = factors.next()?;
    let from = FromClause {
        first,
        joins: factors
            .map(|factor| Join {
                kind: JoinKind::Comma,
                factor,
                constraint: JoinConstraint::None,
            })
            .collect(),
    };
    Some((from, Scope { columns }, pivot_columns))
}

/// A predicate over the pivot columns the evaluator understands, with
/// `read` turning each pivot value into the evaluator's (`None`: not
/// sure, the column is left out), and its truth on the pivot; `None`
/// where the evaluator declines.
pub fn predicate_on_pivot(
    rng: &mut Rng,
    semantics: Semantics,
    columns: &[Option<PivotColumn>],
    pivot: &[Value],
    read: fn(Kind, &Value) -> Option<V>,
) -> Option<(Expr, Truth)> {
    let cols: Vec<(&PivotColumn, V)> = columns
        .iter()
        .zip(pivot)
        .filter_map(|(c, v)| {
            let c = c.as_ref()?;
            Some((c, read(c.kind, v)?))
        })
        .collect();
    pivot_predicate(rng, semantics, &cols)
}

/// A predicate over the pivot columns (each with its value on the pivot
/// row) and its truth on the pivot; `None` where the evaluator declines.
pub fn pivot_predicate(
    rng: &mut Rng,
    semantics: Semantics,
    cols: &[(&PivotColumn, V)],
) -> Option<(Expr, Truth)> {
    let g = Gen { cols, semantics };
    let (e, v) = g.predicate(rng, 3)?;
    let truth = match v {
        V::Bool(true) => Truth::True,
        V::Bool(false) => Truth::False,
        V::Null => Truth::Null,
        _ => return None,
    };
    Some((e, truth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_valued_logic() {
        assert_eq!(logic(true, &V::Null, &V::Bool(false)), V::Bool(false));
        assert_eq!(logic(false, &V::Null, &V::Bool(true)), V::Bool(true));
        assert_eq!(logic(true, &V::Null, &V::Bool(true)), V::Null);
        assert_eq!(
            compare(BinaryOp::IsNotDistinctFrom, &V::Null, &V::Null),
            Some(V::Bool(true))
        );
        assert_eq!(
            compare(BinaryOp::Lt, &V::Text("B".into()), &V::Text("a".into())),
            Some(V::Bool(true))
        );
    }
}
