//! Lists: integer list columns and expressions (the `List` category), and
//! list functions whose result is a scalar: a list built with
//! `list_value` from two or three expressions of one category (or an
//! integer list expression), read back as one value (its length, sum,
//! least or greatest element, an element by position, whether it holds a
//! value).
//!
//! An integer list is a value of its own: a column (`INTEGER[]`,
//! `BIGINT[]`), a literal (`CAST(list_value(1, NULL) AS INTEGER[])`), or
//! `list_concat`, `list_append`, `list_prepend`, `list_sort`,
//! `list_reverse_sort`, `list_reverse`, `list_slice` and
//! `list_sort(list_distinct(..))` of lists (never `list_distinct` alone,
//! whose order DuckDB leaves open). DuckDB compares, orders, groups and
//! prints them element by element, and equal integer lists print alike,
//! so results read them as text (`[1, NULL, 3]`, see the connection).
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

use crate::schema::{ExprGen, TypedColumn};
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

/// A list of `category`'s values: `list_value(x, y[, z])` over fresh
/// expressions of it, or for integers as often an integer list
/// expression (a column among them).
fn list(
    g: &mut ExprGen<'_>,
    rng: &mut Rng,
    cols: &[TypedColumn],
    category: Category,
    d: u32,
) -> Expr {
    if category == Category::Int && rng.random_bool(0.5) {
        return g.expr(rng, cols, Category::List, d);
    }
    let n = rng.random_range(2..=3);
    g.call(rng, cols, "list_value", &vec![category; n], d)
}

/// An integer list expression that is not a leaf (see the module's doc).
pub fn expr(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &[TypedColumn], d: u32) -> Expr {
    const LIST: Category = Category::List;
    let small = |rng: &mut Rng| Expr::int(rng.random_range(-3..=3));
    match rng.random_range(0..8) {
        0 => g.call(rng, cols, "list_concat", &[LIST, LIST], d),
        1 => g.call(rng, cols, "list_append", &[LIST, Category::Int], d),
        2 => g.call(rng, cols, "list_prepend", &[Category::Int, LIST], d),
        3 => {
            let name = *["list_sort", "list_reverse_sort", "list_reverse"]
                .choose(rng)
                .unwrap_or(&"list_sort");
            g.call(rng, cols, name, &[LIST], d)
        }
        4 => {
            let l = g.expr(rng, cols, LIST, d);
            Expr::func("list_slice", vec![l, small(rng), small(rng)])
        }
        5 => {
            let l = g.expr(rng, cols, LIST, d);
            Expr::func("list_sort", vec![Expr::func("list_distinct", vec![l])])
        }
        _ => {
            let n = rng.random_range(1..=3);
            g.call(rng, cols, "list_value", &vec![Category::Int; n], d)
        }
    }
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
