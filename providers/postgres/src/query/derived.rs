//! Derived tables: a subquery over one relation in FROM, written in place,
//! LATERAL, or as a common table expression, carrying window calls whose
//! values the window alone determines.

use super::*;
use crate::schema::ExprGen;
use lancet_server::ExactAggregates;

impl PgQueryGenerator {
    /// A derived table over one relation, lateral (reading `outer`) or not.
    pub(super) fn derived(
        &mut self,
        rng: &mut Rng,
        alias: &str,
        outer: &[TypedColumn],
        lateral: bool,
    ) -> Option<(TableFactor, Vec<TypedColumn>)> {
        // Citus joins a derived table over a distributed one to little
        // else: mostly over the others there.
        let local: Vec<&crate::schema::PgTable> = self
            .core
            .schema
            .relations
            .iter()
            .filter(|t| !t.placement.is_distributed())
            .collect();
        let table = match local.choose(rng) {
            Some(t) if self.core.schema.has_distributed() && rng.random_bool(0.9) => (*t).clone(),
            _ => self.core.schema.relations.choose(rng)?.clone(),
        };
        let inner_alias = format!("l{}", self.core.next_alias);
        self.core.next_alias += 1;
        let inner = table.typed_columns(&inner_alias);
        let mut visible = inner.clone();
        if lateral {
            visible.extend(outer.iter().cloned());
        }
        let mut g = ExprGen::new(&self.core.schema, false);
        g.next_alias = self.core.next_alias + 1000;
        let n = rng.random_range(1..=2);
        let mut items = Vec::new();
        let mut cols = Vec::new();
        for k in 0..n {
            let cat = match inner.choose(rng) {
                Some(c) if rng.random_bool(0.5) => c.category,
                _ => *[Category::Int, Category::Text, Category::Bool]
                    .choose(rng)
                    .unwrap_or(&Category::Int),
            };
            let e = g.expr(rng, &visible, cat, 2);
            items.push(SelectItem::Expr {
                expr: e,
                alias: Some(format!("c{k}")),
            });
            cols.push(TypedColumn {
                expr: Expr::column(Some(alias), &format!("c{k}")),
                category: cat,
            });
        }
        if !lateral && rng.random_bool(0.35) {
            if let Some((window, category)) = EXACT.window_call(rng, &inner) {
                let k = items.len();
                items.push(SelectItem::Expr {
                    expr: window,
                    alias: Some(format!("c{k}")),
                });
                cols.push(TypedColumn {
                    expr: Expr::column(Some(alias), &format!("c{k}")),
                    category,
                });
            }
        }
        // A grouped derived table with an aggregate over DISTINCT values:
        // the presorted aggregates of PostgreSQL 16
        // (`enable_presorted_aggregate`) and the reordering of GROUP BY
        // keys of 17 plan these. Not beside distributed tables: Citus 13.2
        // refuses many joins of a grouped subquery (skipped checks rose
        // past the suite's 15% bound).
        let mut group_by = Vec::new();
        if !lateral && !self.core.schema.has_distributed() && rng.random_bool(0.2) {
            if let Some((key, grouped_items, grouped_cols)) = grouped(rng, &inner, alias) {
                items = grouped_items;
                cols = grouped_cols;
                group_by.push(key);
            }
        }
        let selection = rng.random_bool(0.5).then(|| g.predicate(rng, &visible, 1));
        let query = Query::select(Select {
            group_by,
            items,
            from: Some(one_table_from(&table.name, &inner_alias)),
            selection,
            ..Select::default()
        });
        Some((
            TableFactor::Derived {
                query: Box::new(query),
                alias: alias.to_string(),
                lateral,
                form: if lateral {
                    DerivedForm::Subquery
                } else {
                    *[
                        DerivedForm::Subquery,
                        DerivedForm::Subquery,
                        DerivedForm::Cte,
                        DerivedForm::CteMaterialized,
                        DerivedForm::CteNotMaterialized,
                    ]
                    .choose(rng)
                    .unwrap_or(&DerivedForm::Subquery)
                },
            },
            cols,
        ))
    }
}

/// The items and columns of a grouped derived table over `inner`,
/// `SELECT key AS c0, agg(DISTINCT x) AS c1`, and its grouping key.
fn grouped(
    rng: &mut Rng,
    inner: &[TypedColumn],
    alias: &str,
) -> Option<(Expr, Vec<SelectItem>, Vec<TypedColumn>)> {
    let (key, aggregate, category) = distinct_aggregate(rng, inner)?;
    let key_category = inner
        .iter()
        .find(|c| c.expr == key || exact_text(c.expr.clone()) == key)
        .map_or(Category::Int, |c| c.category);
    let items = vec![
        SelectItem::Expr {
            expr: key.clone(),
            alias: Some("c0".into()),
        },
        SelectItem::Expr {
            expr: aggregate,
            alias: Some("c1".into()),
        },
    ];
    let cols = vec![
        TypedColumn {
            expr: Expr::column(Some(alias), "c0"),
            category: key_category,
        },
        TypedColumn {
            expr: Expr::column(Some(alias), "c1"),
            category,
        },
    ];
    Some((key, items, cols))
}

/// A grouping key and an aggregate over the DISTINCT values of a column
/// of one relation, whose value each group determines: COUNT, MIN, MAX
/// (text read as `text`, so that equal char(n) values print alike) or
/// SUM of exact numbers. With the aggregate's category.
fn distinct_aggregate(rng: &mut Rng, columns: &[TypedColumn]) -> Option<(Expr, Expr, Category)> {
    let key = exact_column(columns.choose(rng)?);
    let (name, arg, category) = match rng.random_range(0..3) {
        0 => ("count", exact_column(columns.choose(rng)?), Category::Int),
        1 => EXACT.aggregate(rng, columns, false)?,
        _ => EXACT.aggregate(rng, columns, true)?,
    };
    let aggregate = Expr::Function {
        name: name.to_string(),
        args: vec![arg],
        distinct: true,
    };
    Some((key, aggregate, category))
}

/// A column as aggregates must read it: text as `text`, so that equal
/// char(n) values print alike.
fn exact_column(c: &TypedColumn) -> Expr {
    match c.category {
        Category::Text => exact_text(c.expr.clone()),
        _ => c.expr.clone(),
    }
}

/// PostgreSQL's exact aggregates: SUM of integers and numerics (numeric),
/// MIN and MAX of ordered categories, text read as `text` (see
/// [`exact_column`]).
const EXACT: ExactAggregates<Category> = ExactAggregates {
    count: Category::Int,
    summed: &[Category::Int, Category::Numeric],
    sum: |_| Category::Numeric,
    ordered: &[
        Category::Int,
        Category::Numeric,
        Category::Float,
        Category::Text,
        Category::Date,
    ],
    exact: |c| Some(exact_column(c)),
};
