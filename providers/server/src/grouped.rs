//! The body of a derived table grouped with GROUP BY ALL (DuckDB): keys
//! read in their exact forms and aggregates whose value the group alone
//! determines, so that the table's rows do not depend on the plan.

use crate::{Cols, ExactAggregates, QueryCore, ServerSchema, TypedColumn};
use lancet_core::{BinaryOp, Expr, Rng, SelectItem};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// A grouped derived table's items, their columns under its alias, its
/// WHERE and its HAVING.
pub(crate) type Grouped<C> = (
    Vec<SelectItem>,
    Vec<TypedColumn<C>>,
    Option<Expr>,
    Option<Expr>,
);

impl<S: ServerSchema, F: Clone + Default> QueryCore<S, F> {
    /// `SELECT k AS c0, ..., agg AS cN FROM t [WHERE p] GROUP BY ALL
    /// [HAVING COUNT(*) op n]` over the columns `inner`: one or two keys
    /// of the categories `exact` orders (never floats, whose `-0.0` and
    /// `0.0` group together and print apart, nor intervals, `'1 month'`
    /// and `'30 days'`), a column or an expression, read in the exact
    /// form (text under the binary collation: under NOCASE a group of
    /// `'a'` and `'A'` would show either); then one or two of COUNT(*),
    /// `count(x)`, MIN/MAX and SUM of exact numbers
    /// ([`ExactAggregates::aggregate`]). GROUP BY ALL groups by every item
    /// without an aggregate: the keys.
    pub(crate) fn grouped(
        &mut self,
        rng: &mut Rng,
        inner: &Cols<S>,
        alias: &str,
        exact: &ExactAggregates<S::Category>,
    ) -> Grouped<S::Category> {
        let mut items: Vec<(Expr, S::Category)> = Vec::new();
        self.with_gen(false, |g, _| {
            let keyed: Vec<&TypedColumn<S::Category>> = inner
                .iter()
                .filter(|c| exact.ordered.contains(&c.category))
                .collect();
            for _ in 0..rng.random_range(1..=2) {
                let key = match keyed.choose(rng) {
                    Some(&c) if rng.random_bool(0.7) => c.clone(),
                    _ => {
                        let category = *exact.ordered.choose(rng).unwrap_or(&exact.count);
                        TypedColumn {
                            expr: g.expr(rng, inner, category, 1),
                            category,
                        }
                    }
                };
                if let Some(e) = (exact.exact)(&key) {
                    items.push((e, key.category));
                }
            }
        });
        for _ in 0..rng.random_range(1..=2) {
            let aggregate = match rng.random_range(0..4) {
                0 => None,
                1 => inner
                    .choose(rng)
                    .map(|c| (Expr::func("count", vec![c.expr.clone()]), exact.count)),
                _ => {
                    let sum = rng.random_range(0..3) == 2;
                    exact
                        .aggregate(rng, inner, sum)
                        .map(|(name, arg, category)| (Expr::func(name, vec![arg]), category))
                }
            };
            items.push(aggregate.unwrap_or((Expr::CountStar, exact.count)));
        }
        let selection = self.with_gen(true, |g, _| {
            rng.random_bool(0.5).then(|| g.predicate(rng, inner, 1))
        });
        let having = rng.random_bool(0.3).then(|| {
            let op = *BinaryOp::COMPARISONS.choose(rng).unwrap_or(&BinaryOp::Gt);
            Expr::binary(op, Expr::CountStar, Expr::int(rng.random_range(0..=3)))
        });
        let (items, cols) = items
            .into_iter()
            .enumerate()
            .map(|(i, (expr, category))| {
                let name = format!("c{i}");
                let column = TypedColumn {
                    expr: Expr::column(Some(alias), &name),
                    category,
                };
                let item = SelectItem::Expr {
                    expr,
                    alias: Some(name),
                };
                (item, column)
            })
            .unzip();
        (items, cols, selection, having)
    }
}
