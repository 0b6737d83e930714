//! Structs of two integer fields, [`STRUCT`](crate::nested::STRUCT) (its
//! literals in [`crate::nested`]): columns, literals
//! (`CAST(row(1, NULL) AS STRUCT(a INTEGER, b BIGINT))`), structs built
//! from two integer expressions, and `struct_extract(s, 'a')` back to an
//! integer. DuckDB compares, orders and groups them field by field (a
//! NULL field equal to a NULL: `row(1, NULL) = row(1, NULL)` is true,
//! checked in the shell), and equal structs print alike, so results read
//! them as text (`{'a': 1, 'b': NULL}`, see the connection). One shape
//! for every struct, so that any two compare and any cast fits.

use crate::nested::cast_row;
use crate::schema::{ExprGen, TypedColumn};
use crate::types::Category;
use lancet_core::{Expr, Rng, Value};
use rand::Rng as _;

/// A struct expression that is not a leaf: one built from two integer
/// expressions (a value too wide for the field is a Conversion error,
/// expected).
pub fn expr(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &[TypedColumn], d: u32) -> Expr {
    let a = g.expr(rng, cols, Category::Int, d);
    let b = g.expr(rng, cols, Category::Int, d);
    cast_row(a, b)
}

/// `struct_extract(s, 'a' | 'b')` of a struct expression: an integer.
pub fn field(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &[TypedColumn], d: u32) -> Expr {
    let s = g.expr(rng, cols, Category::Struct, d);
    let name = if rng.random_bool(0.5) { "a" } else { "b" };
    Expr::func(
        "struct_extract",
        vec![s, Expr::Literal(Value::Text(name.into()))],
    )
}
