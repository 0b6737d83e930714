//! Maps from integers to integers, [`MAP`](crate::nested::MAP) (its
//! literals in [`crate::nested`]): columns, literals
//! (`CAST(map(list_value(1, 3), list_value(2, NULL)) AS MAP(INTEGER,
//! BIGINT))`), maps of constant keys and integer values computed over the
//! row, and what reads a map back: its size, its keys and its values as
//! integer lists, whether it holds a key.
//!
//! DuckDB stores a map as the list of its entries in the order they were
//! given, and compares, orders, groups and prints it as that list
//! (`MAP {1: 2, 3: 4} = MAP {3: 4, 1: 2}` is false, a NULL value equal to
//! a NULL; checked in the shell and on 1.3.2 and 1.4.4, which agree), so
//! a map is a nested value like a list: compared only by (in)equality and
//! read as text (`{1=2, 3=NULL}`, see the connection). Keys are distinct
//! non-NULL constants: a NULL or repeated key is an error ("Map keys can
//! not be NULL", "Map keys must be unique"), and the generator writes
//! none. No `m[k]`, whose result changed from a list to a value between
//! releases, and no `map_concat`, whose order of entries is the
//! release's choice.

use crate::nested::{cast_map, keys, KEYS};
use crate::schema::{ExprGen, TypedColumn};
use crate::types::Category;
use lancet_core::{Expr, Rng, TypeName};
use rand::Rng as _;

/// A map expression that is not a leaf: one or two constant keys whose
/// values are integer expressions over the row (a value too wide for
/// BIGINT is a Conversion error, expected).
pub fn expr(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &[TypedColumn], d: u32) -> Expr {
    let n = rng.random_range(1..=2);
    let keys = keys(rng, n);
    let values = (0..n)
        .map(|_| g.expr(rng, cols, Category::Int, d))
        .collect();
    cast_map(keys, values)
}

/// What reads a map back as a value of `category`, or None where nothing
/// does: INTEGER (`cardinality`, as BIGINT: it is UBIGINT, which mixed
/// with signed integers changes their arithmetic), integer lists
/// (`map_keys`, `map_values`), BOOLEAN (`map_contains` of a key).
pub fn scalar(
    g: &mut ExprGen<'_>,
    rng: &mut Rng,
    cols: &[TypedColumn],
    category: Category,
    d: u32,
) -> Option<Expr> {
    let map = |g: &mut ExprGen<'_>, rng: &mut Rng| g.expr(rng, cols, Category::Map, d);
    match category {
        Category::Int => Some(Expr::Cast {
            expr: Box::new(Expr::func("cardinality", vec![map(g, rng)])),
            ty: TypeName("BIGINT".into()),
        }),
        Category::List => {
            let name = if rng.random_bool(0.5) {
                "map_keys"
            } else {
                "map_values"
            };
            Some(Expr::func(name, vec![map(g, rng)]))
        }
        Category::Bool => {
            let m = map(g, rng);
            let key = if rng.random_bool(0.7) {
                Expr::int(KEYS[rng.random_range(0..KEYS.len())])
            } else {
                g.expr(rng, cols, Category::Int, d)
            };
            Some(Expr::func("map_contains", vec![m, key]))
        }
        _ => None,
    }
}
