//! Derived tables: a subquery over one relation in FROM, written in place,
//! LATERAL, or as a common table expression, carrying window calls whose
//! values the window alone determines.

use super::*;

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
            .schema
            .relations
            .iter()
            .filter(|t| !t.placement.is_distributed())
            .collect();
        let table = match local.choose(rng) {
            Some(t) if self.schema.has_distributed() && rng.random_bool(0.9) => (*t).clone(),
            _ => self.schema.relations.choose(rng)?.clone(),
        };
        let inner_alias = format!("l{}", self.next_alias);
        self.next_alias += 1;
        let inner = table.typed_columns(&inner_alias);
        let mut visible = inner.clone();
        if lateral {
            visible.extend(outer.iter().cloned());
        }
        let mut g = ExprGen::new(&self.schema, false);
        g.next_alias = self.next_alias + 1000;
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
        let selection = rng.random_bool(0.5).then(|| g.predicate(rng, &visible, 1));
        let query = Query::select(Select {
            items,
            from: Some(FromClause {
                first: TableFactor::Table {
                    name: table.name.clone(),
                    alias: Some(inner_alias),
                    indexed_by: None,
                },
                joins: vec![],
            }),
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
    let fitting = |want: &[Category]| -> Vec<&TypedColumn> {
        columns
            .iter()
            .filter(|c| want.contains(&c.category))
            .collect()
    };
    let (function, category) = match rng.random_range(0..6) {
        0 => (Expr::CountStar, Category::Int),
        1 => (
            Expr::func("count", vec![columns.choose(rng)?.expr.clone()]),
            Category::Int,
        ),
        2 | 3 => {
            let c = *fitting(&[
                Category::Int,
                Category::Numeric,
                Category::Float,
                Category::Text,
                Category::Date,
            ])
            .choose(rng)?;
            let arg = match c.category {
                Category::Text => exact_text(c.expr.clone()),
                _ => c.expr.clone(),
            };
            let name = if rng.random_bool(0.5) { "min" } else { "max" };
            (Expr::func(name, vec![arg]), c.category)
        }
        4 => {
            let c = *fitting(&[Category::Int, Category::Numeric]).choose(rng)?;
            (Expr::func("sum", vec![c.expr.clone()]), Category::Numeric)
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
