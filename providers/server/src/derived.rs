//! Derived tables of one relation: listed items (a window call among
//! them for some), every column but some (`* EXCLUDE`) or with some
//! computed (`* REPLACE`), or groups (GROUP BY ALL), with the clauses the
//! provider's [`JoinMenu`] allows.

use crate::factors::{derived_factor, one_table_from};
use crate::{CategoryOf, Cols, JoinMenu, QueryCore};
use crate::{ServerCategory, ServerSchema, ServerTable, TypedColumn};
use lancet_core::{Expr, Rng, Select, SelectItem, TableFactor};
use rand::seq::IndexedRandom;
use rand::Rng as _;

impl<S: ServerSchema, F: Clone + Default> QueryCore<S, F> {
    /// `(SELECT [DISTINCT] x AS c0, ... FROM t [WHERE p]) AS alias` over a
    /// random relation, and its columns under `alias`. DISTINCT (for a
    /// fifth) only where the menu's `exact` holds for every item's
    /// category: DISTINCT keeps an arbitrary one of values that compare
    /// equal but differ (text under a case-blind collation), which no
    /// check could rely on. With the menu's `windows`, a third carry a
    /// window call of [`crate::ExactAggregates::window_call`]. As the menu
    /// allows, some are `SELECT * EXCLUDE (...)` (`wildcard_exclude`) or
    /// `SELECT * REPLACE (...)` (`wildcard_replace`) instead, some are
    /// grouped (`group_by_all`, [`QueryCore::grouped`]), and a quarter of
    /// those not grouped filter by a window call (`qualify`,
    /// [`crate::ExactAggregates::qualify`]).
    pub fn derived(
        &mut self,
        rng: &mut Rng,
        alias: &str,
        menu: &JoinMenu<S::Category>,
    ) -> (TableFactor, Vec<TypedColumn<S::Category>>) {
        let table = self.schema.parts().0.choose(rng).cloned();
        let inner_alias = format!("d{}", self.next_alias);
        self.next_alias += 1;
        let inner = table
            .as_ref()
            .map(|t| t.typed_columns(&inner_alias))
            .unwrap_or_default();
        let wildcard = match &table {
            Some(t) if menu.wildcard_exclude && rng.random_bool(0.15) => excluding(rng, t, alias),
            Some(t) if menu.wildcard_replace && rng.random_bool(0.1) => {
                self.replacing(rng, t, &inner, alias)
            }
            _ => None,
        };
        let mut grouped = false;
        let (items, cols, selection, having) = match wildcard {
            Some((item, cols)) => {
                let selection = self.with_gen(true, |g, _| {
                    rng.random_bool(0.5).then(|| g.predicate(rng, &inner, 1))
                });
                (vec![item], cols, selection, None)
            }
            None => match menu.windows {
                Some(exact) if menu.group_by_all && !inner.is_empty() && rng.random_bool(0.15) => {
                    grouped = true;
                    self.grouped(rng, &inner, alias, exact)
                }
                _ => {
                    let (items, cols, selection) = self.listed(rng, &inner, alias, menu);
                    (items, cols, selection, None)
                }
            },
        };
        // DuckDB 1.5 refuses QUALIFY with GROUP BY ALL ("not supported yet").
        let qualify = match menu.windows {
            Some(windows) if menu.qualify && !grouped && rng.random_bool(0.25) => {
                self.with_gen(false, |g, _| {
                    windows.qualify(rng, &inner, |rng, category| {
                        g.expr(rng, &inner, category, 1)
                    })
                })
            }
            _ => None,
        };
        let select = Select {
            distinct: rng.random_bool(0.2) && cols.iter().all(|c| (menu.exact)(c.category)),
            items,
            from: table.map(|t| one_table_from(t.name(), &inner_alias)),
            selection,
            group_by_all: grouped,
            having,
            qualify,
            ..Select::default()
        };
        (derived_factor(select, alias), cols)
    }

    /// `* REPLACE (e AS c, ...)` over `table`, whose columns are `inner`:
    /// one or two of them replaced by an expression of their category over
    /// the row, and every column under `alias` by its own name.
    fn replacing(
        &mut self,
        rng: &mut Rng,
        table: &S::Table,
        inner: &Cols<S>,
        alias: &str,
    ) -> Option<(SelectItem, Vec<TypedColumn<S::Category>>)> {
        let names: Vec<&str> = table.columns().iter().map(|(n, _)| n.as_str()).collect();
        if names.is_empty() {
            return None;
        }
        let count = rng.random_range(1..=names.len().min(2));
        let mut chosen: Vec<usize> = rand::seq::index::sample(rng, names.len(), count).into_vec();
        chosen.sort_unstable();
        let replaced = self.with_gen(false, |g, _| {
            chosen
                .iter()
                .filter_map(|&i| {
                    let category = inner.get(i)?.category;
                    Some((g.expr(rng, inner, category, 1), names[i].to_string()))
                })
                .collect()
        });
        Some((
            SelectItem::WildcardReplacing(replaced),
            table.typed_columns(alias),
        ))
    }

    /// The items of a derived table over the columns `inner` of its
    /// relation, aliased `c0`, `c1`, ... (one a window call, with the
    /// menu's `windows`), their columns under `alias`, and a WHERE.
    fn listed(
        &mut self,
        rng: &mut Rng,
        inner: &Cols<S>,
        alias: &str,
        menu: &JoinMenu<S::Category>,
    ) -> (Vec<SelectItem>, Vec<TypedColumn<S::Category>>, Option<Expr>) {
        let (items, cols, selection) = self.with_gen(true, |g, _| {
            let n = rng.random_range(1..=3);
            let mut items = Vec::new();
            let mut cols = Vec::new();
            for i in 0..n {
                let (e, category) = match inner.choose(rng) {
                    Some(c) if rng.random_bool(0.7) => (c.expr.clone(), c.category),
                    _ => {
                        let category = *S::Category::CATEGORIES
                            .choose(rng)
                            .unwrap_or(&S::Category::CATEGORIES[0]);
                        (g.expr(rng, inner, category, 1), category)
                    }
                };
                items.push(SelectItem::Expr {
                    expr: e,
                    alias: Some(format!("c{i}")),
                });
                cols.push(TypedColumn {
                    expr: Expr::column(Some(alias), &format!("c{i}")),
                    category,
                });
            }
            let selection = rng.random_bool(0.5).then(|| g.predicate(rng, inner, 1));
            (items, cols, selection)
        });
        let (mut items, mut cols) = (items, cols);
        if let Some(windows) = menu.windows.filter(|_| rng.random_bool(0.35)) {
            if let Some((call, category)) = windows.window_call(rng, inner) {
                let name = format!("c{}", items.len());
                items.push(SelectItem::Expr {
                    expr: call,
                    alias: Some(name.clone()),
                });
                cols.push(TypedColumn {
                    expr: Expr::column(Some(alias), &name),
                    category,
                });
            }
        }
        (items, cols, selection)
    }
}

/// `* EXCLUDE (...)` over `table` (the dialect's
/// [`lancet_core::SqlDialect::wildcard_exclude`]): some of its columns
/// left out, never the first, and those kept under `alias`. Every
/// relation's first column has one name (`c0`), which a NATURAL join then
/// always finds on both sides, as it does with listed items (`c0`, ...).
fn excluding<T: ServerTable>(
    rng: &mut Rng,
    table: &T,
    alias: &str,
) -> Option<(SelectItem, Vec<TypedColumn<CategoryOf<T>>>)> {
    let names: Vec<&str> = table.columns().iter().map(|(n, _)| n.as_str()).collect();
    if names.len() < 2 {
        return None;
    }
    let count = rng.random_range(1..names.len());
    let left_out: Vec<usize> = rand::seq::index::sample(rng, names.len() - 1, count)
        .into_iter()
        .map(|i| i + 1)
        .collect();
    let kept = table
        .typed_columns(alias)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !left_out.contains(i))
        .map(|(_, c)| c)
        .collect();
    let mut excluded: Vec<String> = left_out.iter().map(|&i| names[i].to_string()).collect();
    excluded.sort();
    Some((SelectItem::WildcardExcluding(excluded), kept))
}
