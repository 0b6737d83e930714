//! Aggregates and window calls whose value the set of rows (or the
//! window) alone determines, whatever order rows arrive in: what derived
//! tables may carry without making a check depend on the plan, in their
//! items or in a QUALIFY filter.

use crate::{ServerCategory, TypedColumn};
use lancet_core::{BinaryOp, Expr, OrderBy, Rng};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// What a provider's exact aggregates may read: which categories each
/// takes, what SUM returns, and how a column is read so that values that
/// compare equal print alike.
pub struct ExactAggregates<C: 'static> {
    /// The category of COUNT, RANK and DENSE_RANK.
    pub count: C,
    /// The categories SUM adds exactly (integers, decimals: never floats,
    /// whose sum depends on the order of the additions).
    pub summed: &'static [C],
    /// The category of SUM over a column of a category.
    pub sum: fn(C) -> C,
    /// The categories MIN and MAX take.
    pub ordered: &'static [C],
    /// A column as MIN, MAX and window keys read it (text under an exact
    /// collation, say); `None` where no form is exact.
    pub exact: fn(&TypedColumn<C>) -> Option<Expr>,
}

impl<C: ServerCategory> ExactAggregates<C> {
    /// MIN or MAX of a column of an ordered category, or (`sum`) SUM of an
    /// exact number: aggregates whose value the set of rows determines.
    /// With the name, the argument and the result's category.
    pub fn aggregate(
        &self,
        rng: &mut Rng,
        columns: &[TypedColumn<C>],
        sum: bool,
    ) -> Option<(&'static str, Expr, C)> {
        let want = if sum { self.summed } else { self.ordered };
        let fitting: Vec<&TypedColumn<C>> = columns
            .iter()
            .filter(|c| want.contains(&c.category))
            .collect();
        let c = *fitting.choose(rng)?;
        if sum {
            return Some(("sum", c.expr.clone(), (self.sum)(c.category)));
        }
        let name = if rng.random_bool(0.5) { "min" } else { "max" };
        Some((name, (self.exact)(c)?, c.category))
    }

    /// A window call over the columns of one relation whose value for a
    /// row the window alone determines: COUNT, MIN, MAX, SUM of exact
    /// numbers, RANK and DENSE_RANK, with the default frame (an ORDER BY
    /// frame takes in all peers of the row). Never ROW_NUMBER,
    /// FIRST_VALUE or a float SUM, whose values depend on that order.
    /// With its category.
    pub fn window_call(&self, rng: &mut Rng, columns: &[TypedColumn<C>]) -> Option<(Expr, C)> {
        let key = |rng: &mut Rng| -> Option<Expr> {
            // The first column for half: a table's key as a rule, and
            // Citus's distribution column, by which a partitioned window
            // is pushed down to the shards.
            let c = if rng.random_bool(0.5) {
                columns.first()
            } else {
                columns.choose(rng)
            }?;
            (self.exact)(c)
        };
        let partition_by: Vec<Expr> = (0..rng.random_range(0..=2))
            .filter_map(|_| key(rng))
            .collect();
        let mut order_by: Vec<OrderBy> = Vec::new();
        if rng.random_bool(0.5) {
            if let Some(e) = key(rng) {
                order_by.push(OrderBy {
                    expr: e,
                    descending: rng.random_bool(0.5),
                    nulls_first: None,
                });
            }
        }
        let (function, category) = match rng.random_range(0..6) {
            0 => (Expr::CountStar, self.count),
            1 => (
                Expr::func("count", vec![columns.choose(rng)?.expr.clone()]),
                self.count,
            ),
            2..=4 => {
                let sum = rng.random_range(0..3) == 2;
                let (name, arg, category) = self.aggregate(rng, columns, sum)?;
                (Expr::func(name, vec![arg]), category)
            }
            _ => {
                if order_by.is_empty() {
                    return None;
                }
                let name = if rng.random_bool(0.5) {
                    "rank"
                } else {
                    "dense_rank"
                };
                (Expr::func(name, vec![]), self.count)
            }
        };
        Some((
            Expr::Window {
                function: Box::new(function),
                partition_by,
                order_by,
            },
            category,
        ))
    }

    /// A QUALIFY filter whose kept rows the windows alone determine: a
    /// call of [`Self::window_call`] (never ROW_NUMBER, whose numbering of
    /// peers is arbitrary) compared with its own argument for MIN and MAX
    /// (the rows at the extreme of their window), a small count for
    /// COUNT, RANK, DENSE_RANK and integer sums, or `other`: an expression
    /// of the call's category over the row.
    pub fn qualify(
        &self,
        rng: &mut Rng,
        columns: &[TypedColumn<C>],
        other: impl FnOnce(&mut Rng, C) -> Expr,
    ) -> Option<Expr> {
        let (call, category) = self.window_call(rng, columns)?;
        let extreme_of = match &call {
            Expr::Window { function, .. } => match &**function {
                Expr::Function { name, args, .. } if name == "min" || name == "max" => {
                    args.first().cloned()
                }
                _ => None,
            },
            _ => None,
        };
        let bound = match extreme_of {
            Some(argument) if rng.random_bool(0.5) => argument,
            _ if category == self.count && rng.random_bool(0.7) => {
                Expr::int(rng.random_range(0..=3))
            }
            _ => other(rng, category),
        };
        let op = *BinaryOp::COMPARISONS.choose(rng)?;
        Some(Expr::binary(op, call, bound))
    }
}
