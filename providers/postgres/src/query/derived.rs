//! Derived tables: a subquery over one relation in FROM, written in place,
//! LATERAL, or as a common table expression, carrying window calls whose
//! values the window alone determines.

use super::*;
use crate::expr::ExprGen;

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
            if let Some((window, category)) = window_call(rng, &inner) {
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
        1 => exact_aggregate(rng, columns, false)?,
        _ => exact_aggregate(rng, columns, true)?,
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

/// MIN or MAX of a column of an ordered category, or (`sum`) SUM of an
/// exact number: aggregates whose value the set of rows determines. With
/// the name, the argument and the result's category.
fn exact_aggregate(
    rng: &mut Rng,
    columns: &[TypedColumn],
    sum: bool,
) -> Option<(&'static str, Expr, Category)> {
    let want: &[Category] = if sum {
        &[Category::Int, Category::Numeric]
    } else {
        &[
            Category::Int,
            Category::Numeric,
            Category::Float,
            Category::Text,
            Category::Date,
        ]
    };
    let fitting: Vec<&TypedColumn> = columns
        .iter()
        .filter(|c| want.contains(&c.category))
        .collect();
    let c = *fitting.choose(rng)?;
    if sum {
        return Some(("sum", c.expr.clone(), Category::Numeric));
    }
    let name = if rng.random_bool(0.5) { "min" } else { "max" };
    Some((name, exact_column(c), c.category))
}

/// A window call over the columns of one relation whose value for a row
/// the window alone determines, whatever order rows arrive in: COUNT, MIN,
/// MAX (text read as `text`, so that equal char(n) values print alike),
/// SUM of exact numbers, RANK and DENSE_RANK, with the default frame (an
/// ORDER BY frame takes in all peers of the row). Never ROW_NUMBER, FIRST_VALUE
/// or a float SUM, whose values depend on that order. With its category.
fn window_call(rng: &mut Rng, columns: &[TypedColumn]) -> Option<(Expr, Category)> {
    let key = |rng: &mut Rng| -> Option<Expr> {
        // The first column is the distribution column of a distributed
        // table: a window partitioned by it is pushed down to the shards,
        // others are planned on the coordinator.
        let c = if rng.random_bool(0.5) {
            columns.first()
        } else {
            columns.choose(rng)
        }?;
        Some(match c.category {
            Category::Text => exact_text(c.expr.clone()),
            _ => c.expr.clone(),
        })
    };
    let partition_by: Vec<Expr> = (0..rng.random_range(0..=2))
        .filter_map(|_| key(rng))
        .collect();
    let mut order_by: Vec<lancet_core::OrderBy> = Vec::new();
    if rng.random_bool(0.5) {
        if let Some(e) = key(rng) {
            order_by.push(lancet_core::OrderBy {
                expr: e,
                descending: rng.random_bool(0.5),
                nulls_first: None,
            });
        }
    }
    let (function, category) = match rng.random_range(0..6) {
        0 => (Expr::CountStar, Category::Int),
        1 => (
            Expr::func("count", vec![columns.choose(rng)?.expr.clone()]),
            Category::Int,
        ),
        2..=4 => {
            let sum = rng.random_range(0..3) == 2;
            let (name, arg, category) = exact_aggregate(rng, columns, sum)?;
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
            (Expr::func(name, vec![]), Category::Int)
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
