//! A grouped query read as its first rows in a total order, and the
//! ORDER BY positions of eet: the sort keys of the transformed query may
//! be its items' expressions, transformed, where the original sorts by
//! position.

use super::draw::{draw, Position};
use super::sites::{Phase, Site};
use super::transformation::Transformation;
use lancet_core::{Expr, GenerateContext, OrderBy, Query, Scope, Select};
use serde::{Deserialize, Serialize};

/// `ORDER BY 1, 2, ... LIMIT n` over every item of a grouped query: its
/// groups are distinct in their keys, which the select list holds, so
/// no two rows tie and the first `n` are determined. The positions name
/// the items as transformed, so the sort reads eet's expressions too.
/// The transformed query sorts by `by[i]` of item `i + 1`'s expression
/// where one is given: the same values in the same type, so the same
/// order (see [`draw_keys`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Top {
    pub limit: i64,
    pub descending: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by: Vec<Option<Transformation>>,
}

impl Top {
    /// `s` (a grouped select, as drawn or transformed) sorted by every
    /// item and cut to the limit, or why not: only a grouped query's rows
    /// are distinct in what it selects. The `transformed` query sorts by
    /// the transformed expressions of [`Top::by`].
    fn apply(&self, s: Select, transformed: bool) -> Result<Query, String> {
        if s.group_by.is_empty() || s.distinct || s.items.iter().any(|i| i.is_wildcard()) {
            return Err("a total order needs a grouped select list of expressions".into());
        }
        let mut keys = Vec::with_capacity(s.items.len());
        for (i, item) in s.items.iter().enumerate() {
            let by = self.by.get(i).and_then(Option::as_ref);
            let key = match (transformed, by, item.exprs().first()) {
                (true, Some(t), Some(e)) => t.apply((*e).clone())?,
                _ => Expr::int(i as i64 + 1),
            };
            keys.push(OrderBy {
                expr: key,
                descending: self.descending,
                nulls_first: None,
            });
        }
        let mut q = Query::select(s);
        q.order_by = keys;
        q.limit = Some(Expr::int(self.limit));
        Ok(q)
    }

    /// The transformed sort keys, for the report: `order-by <name> at
    /// <item>`.
    pub fn names(&self) -> Vec<String> {
        self.by
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                t.as_ref()
                    .map(|t| format!("order-by {} at {}", t.name(), i + 1))
            })
            .collect()
    }
}

/// The query `s` is read as: with its first rows only where the case
/// draws them; the `transformed` one with its transformed sort keys.
pub fn as_query(s: Select, top: Option<&Top>, transformed: bool) -> Result<Query, String> {
    match top {
        Some(top) => top.apply(s, transformed),
        None => Ok(Query::select(s)),
    }
}

/// For each item of the grouped select `s` (as transformed), half the
/// time a transformation of its expression as an ORDER BY key. A key is
/// a grouped position: only constants are added (an item reads grouped
/// expressions and aggregates, which an ORDER BY of the same query may
/// read), and wrapping keeps the type where the dialect says so, so the
/// values sort alike (SQLite's CASE drops a column's collation).
pub fn draw_keys(
    cx: &mut GenerateContext<'_>,
    s: &Select,
    scope: &Scope,
) -> Vec<Option<Transformation>> {
    use rand::Rng as _;
    let site = Site {
        phase: Phase::Grouped,
        outer: true,
        in_aggregate: false,
        on_join: None,
    };
    let mut by = Vec::with_capacity(s.items.len());
    for item in &s.items {
        let drawn = match item.exprs().first() {
            Some(e) if cx.rng.random_bool(0.5) => {
                let pos = Position {
                    node: e,
                    site,
                    from: s.from.as_ref(),
                    scope,
                };
                draw(cx, &pos).filter(|t| t.apply((*e).clone()).is_ok())
            }
            _ => None,
        };
        by.push(drawn);
    }
    while by.last().is_some_and(Option::is_none) {
        by.pop();
    }
    by
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::ast::{FromClause, SelectItem};

    #[test]
    fn only_the_transformed_query_sorts_by_transformed_items() {
        let count = Expr::CountStar;
        let key = Expr::column(Some("a0"), "c0");
        let s = Select {
            items: [key.clone(), count.clone()]
                .into_iter()
                .map(|expr| SelectItem::Expr { expr, alias: None })
                .collect(),
            from: Some(FromClause::table("t0", Some("a0"))),
            group_by: vec![key],
            ..Select::default()
        };
        let top = Top {
            limit: 2,
            descending: false,
            by: vec![None, Some(Transformation::NullBranch)],
        };
        let sort = |q: Query| q.order_by.into_iter().map(|o| o.expr).collect::<Vec<_>>();
        let original = sort(as_query(s.clone(), Some(&top), false).unwrap());
        assert_eq!(original, vec![Expr::int(1), Expr::int(2)]);
        let transformed = sort(as_query(s, Some(&top), true).unwrap());
        assert_eq!(transformed[0], Expr::int(1));
        assert_eq!(
            transformed[1],
            Transformation::NullBranch.apply(count).unwrap()
        );
        assert_eq!(top.names(), vec!["order-by null-branch at 2".to_string()]);
    }
}
