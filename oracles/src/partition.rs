//! Ternary logic partitioning: every predicate is TRUE, FALSE or NULL on a
//! row, so `WHERE p`, `WHERE NOT p` and `WHERE p IS NULL` split any result
//! into three disjoint parts. Shared by every TLP variant.

use lancet_core::{Expr, Select};

/// The three partitioning predicates of `p`: `p`, `NOT p`, `p IS NULL`.
pub fn partition_predicates(p: &Expr) -> [Expr; 3] {
    [p.clone(), Expr::not(p.clone()), Expr::is_null(p.clone())]
}

/// `base` restricted to the rows where `part` holds, keeping the base's
/// own WHERE clause: `WHERE (w) AND (part)`.
pub fn restrict(base: &Select, part: Expr) -> Select {
    let mut s = base.clone();
    s.selection = Some(match s.selection.take() {
        Some(w) => Expr::and(w, part),
        None => part,
    });
    s
}

/// The three partitions of `base` on `p`, in the order p, NOT p, p IS NULL.
pub fn partitions(base: &Select, p: &Expr) -> Vec<Select> {
    partition_predicates(p)
        .into_iter()
        .map(|part| restrict(base, part))
        .collect()
}
