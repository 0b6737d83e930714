//! List functions whose result is a scalar: a list built with
//! `list_value` from two or three expressions of one category, read back
//! as one value (its length, sum, least or greatest element, an element
//! by position, whether it holds a value). Lists are never a result: the
//! C API's row accessors cannot read them.
//!
//! Elements are integers, decimals, dates or booleans only: no text,
//! whose collations a list drops (`list_contains(list_value(s), 'a')` is
//! false for `s = 'A'` under NOCASE, where `s = 'a'` is true), no floats
//! or intervals, whose equal values print apart. What DuckDB 1.5.6 does
//! with NULLs (checked in the shell): `list_value` keeps them and `len`
//! counts them; `list_sum`, `list_min`, `list_max` and `list_distinct`
//! skip them (NULL for a list of NULLs); `list_contains` is NULL when the
//! value is NULL and false when the list holds only other values and
//! NULLs; `list_has_any` skips NULLs on both sides (never NULL);
//! `list_position` finds a NULL; `list_extract` is NULL past either end
//! and at 0, and counts from the end below 0.

use crate::expr::ExprGen;
use crate::schema::TypedColumn;
use crate::types::Category;
use lancet_core::{Expr, Rng};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// The categories a list's elements may be of.
const ELEMENTS: [Category; 4] = [
    Category::Int,
    Category::Decimal,
    Category::Date,
    Category::Bool,
];

/// `list_value(x, y[, z])` over fresh expressions of `category`.
fn list(
    g: &mut ExprGen<'_>,
    rng: &mut Rng,
    cols: &[TypedColumn],
    category: Category,
    d: u32,
) -> Expr {
    let n = rng.random_range(2..=3);
    g.call(rng, cols, "list_value", &vec![category; n], d)
}

/// A list function's scalar of `category`, or None where no list
/// function gives one: INTEGER (lengths, positions, and sums, least and
/// greatest elements and elements of integer lists), DECIMAL and DATE
/// (least, greatest and elements of lists of them; sums of decimals),
/// BOOLEAN (`list_contains`, `list_has_any`).
pub fn scalar(
    g: &mut ExprGen<'_>,
    rng: &mut Rng,
    cols: &[TypedColumn],
    category: Category,
    d: u32,
) -> Option<Expr> {
    let any = |rng: &mut Rng| *ELEMENTS.choose(rng).unwrap_or(&Category::Int);
    match category {
        Category::Int if rng.random_bool(0.4) => {
            let element = any(rng);
            let l = list(g, rng, cols, element, d);
            Some(match rng.random_range(0..3) {
                0 => Expr::func("len", vec![l]),
                1 => Expr::func("len", vec![Expr::func("list_distinct", vec![l])]),
                _ => {
                    let x = g.expr(rng, cols, element, d);
                    Expr::func("list_position", vec![l, x])
                }
            })
        }
        Category::Int | Category::Decimal | Category::Date => {
            let l = list(g, rng, cols, category, d);
            let sums = category != Category::Date;
            Some(match rng.random_range(0..4) {
                0 if sums => Expr::func("list_sum", vec![l]),
                0 | 1 => Expr::func("list_min", vec![l]),
                2 => Expr::func("list_max", vec![l]),
                _ => Expr::func("list_extract", vec![l, Expr::int(rng.random_range(-3..=3))]),
            })
        }
        Category::Bool => {
            let element = any(rng);
            let l = list(g, rng, cols, element, d);
            Some(if rng.random_bool(0.7) {
                let x = g.expr(rng, cols, element, d);
                Expr::func("list_contains", vec![l, x])
            } else {
                let other = list(g, rng, cols, element, d);
                Expr::func("list_has_any", vec![l, other])
            })
        }
        _ => None,
    }
}
