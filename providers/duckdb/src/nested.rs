//! The values of DuckDB's nested types as columns store them: the one
//! struct type and the one map type every column and expression of them
//! has, and the literals of lists, structs and maps. The expressions over
//! them are in [`crate::lists`], [`crate::structs`] and [`crate::maps`];
//! the column types ([`crate::types`]) read only this.

use lancet_core::{Expr, Rng, TypeName, Value};
use rand::seq::SliceRandom;
use rand::Rng as _;

/// An integer list literal: zero to three small integers or NULLs, cast
/// so that an empty list or one of NULLs is typed.
pub fn list_literal(rng: &mut Rng) -> Expr {
    let n = rng.random_range(0..=3);
    let elements = (0..n)
        .map(|_| match rng.random_range(0..8) {
            0 => Expr::Literal(Value::Null),
            _ => Expr::int(rng.random_range(-2..=3)),
        })
        .collect();
    Expr::Cast {
        expr: Box::new(Expr::func("list_value", elements)),
        ty: TypeName("INTEGER[]".into()),
    }
}

/// The struct type every struct column and expression has.
pub const STRUCT: &str = "STRUCT(a INTEGER, b BIGINT)";

/// `CAST(row(x, y) AS STRUCT(...))`.
pub fn cast_row(a: Expr, b: Expr) -> Expr {
    Expr::Cast {
        expr: Box::new(Expr::func("row", vec![a, b])),
        ty: TypeName(STRUCT.into()),
    }
}

/// A struct literal: small integers or NULLs in its fields.
pub fn struct_literal(rng: &mut Rng) -> Expr {
    let field = |rng: &mut Rng| match rng.random_range(0..6) {
        0 => Expr::Literal(Value::Null),
        _ => Expr::int(rng.random_range(-2..=3)),
    };
    let a = field(rng);
    let b = field(rng);
    cast_row(a, b)
}

/// The map type every map column and expression has.
pub const MAP: &str = "MAP(INTEGER, BIGINT)";

/// The keys maps draw from: small, so that maps share some.
pub const KEYS: [i64; 5] = [-1, 0, 1, 2, 3];

/// `n` distinct keys, in a random order (the order is part of the map).
pub fn keys(rng: &mut Rng, n: usize) -> Vec<Expr> {
    let mut keys = KEYS.to_vec();
    keys.shuffle(rng);
    keys.into_iter().take(n).map(Expr::int).collect()
}

/// `CAST(map(list_value(keys), list_value(values)) AS MAP(...))`; with no
/// entries `CAST(map() AS MAP(...))`.
pub fn cast_map(keys: Vec<Expr>, values: Vec<Expr>) -> Expr {
    let map = if keys.is_empty() {
        Expr::func("map", Vec::new())
    } else {
        Expr::func(
            "map",
            vec![
                Expr::func("list_value", keys),
                Expr::func("list_value", values),
            ],
        )
    };
    Expr::Cast {
        expr: Box::new(map),
        ty: TypeName(MAP.into()),
    }
}

/// A map literal: zero to three entries of small integers or NULLs.
pub fn map_literal(rng: &mut Rng) -> Expr {
    let n = rng.random_range(0..=3);
    let keys = keys(rng, n);
    let values = (0..n)
        .map(|_| match rng.random_range(0..6) {
            0 => Expr::Literal(Value::Null),
            _ => Expr::int(rng.random_range(-2..=3)),
        })
        .collect();
    cast_map(keys, values)
}
