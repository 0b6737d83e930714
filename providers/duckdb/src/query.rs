//! Query parts for the oracles: FROM clauses with DuckDB's joins whose
//! results are determined (comma, INNER, LEFT, RIGHT, FULL, CROSS,
//! NATURAL, ASOF and ASOF LEFT over a right side of its keys only; no
//! POSITIONAL, which depends on row order) and derived
//! tables (half as CTEs: inlined, MATERIALIZED or NOT MATERIALIZED; a
//! third with a window call whose value the window determines, a quarter
//! filtered by one with QUALIFY, some grouped with GROUP BY ALL), and the
//! exact forms of equality that collations make necessary. Typing,
//! predicates, expressions and PQS come from the server toolkit's
//! [`QueryCore`].

use crate::schema::DuckSchema;
use crate::types::Category;
use lancet_core::{DerivedForm, Expr, JoinKind, QueryGenerator, Rng, Scope};
use lancet_server::{ExactAggregates, JoinMenu, QueryCore};
use Category as C;

/// DuckDB's query generator.
pub struct DuckQueryGenerator {
    core: QueryCore<DuckSchema>,
}

/// The share of FROM clauses drawn from those that saw rows.
const REUSED_SHARE: f64 = 0.6;
/// The share of predicates widened by an OR with a selective comparison.
const WIDENED_SHARE: f64 = 0.4;

/// The joins: NATURAL never on CROSS or a comma.
/// DISTINCT in derived tables not over text, which may be under NOCASE,
/// nor intervals, equal in other spellings.
const JOINS: JoinMenu<Category> = JoinMenu {
    kinds: &[
        JoinKind::Inner,
        JoinKind::Inner,
        JoinKind::Left,
        JoinKind::Left,
        JoinKind::Right,
        JoinKind::Full,
        JoinKind::Cross,
        JoinKind::Comma,
    ],
    natural: |k| !matches!(k, JoinKind::Cross | JoinKind::Comma),
    exact: |c| !matches!(c, Category::Text | Category::Interval),
    // Half of the derived tables as CTEs, inlined or MATERIALIZED.
    forms: &[
        DerivedForm::Subquery,
        DerivedForm::Subquery,
        DerivedForm::Subquery,
        DerivedForm::Cte,
        DerivedForm::CteMaterialized,
        DerivedForm::CteNotMaterialized,
    ],
    windows: Some(&EXACT),
    wildcard_exclude: true,
    wildcard_replace: true,
    qualify: true,
    group_by_all: true,
    asof: Some(asof_key),
    positional: true,
};

/// ASOF join keys: ordered categories whose equal values are identical
/// (no text, which may be under NOCASE, no floats, whose `-0.0` equals
/// `0.0`, no intervals, no lists), so that right rows that tie are one
/// row (see `QueryCore::asof_join`).
fn asof_key(c: Category) -> bool {
    matches!(c, C::Int | C::Decimal | C::Date | C::Timestamp | C::Time)
}

/// DuckDB's exact aggregates, for derived tables' window calls: SUM of
/// integers (HUGEINT) and decimals (DECIMAL(38,s)), never of DOUBLE or
/// REAL; MIN and MAX neither over floats nor over intervals (`'1 month'`
/// equals `'30 days'`), text read under the binary collation (under
/// NOCASE `'a'` equals `'A'`: either could be the minimum).
const EXACT: ExactAggregates<Category> = ExactAggregates {
    count: Category::Int,
    summed: &[Category::Int, Category::Decimal],
    sum: |c| c,
    ordered: &[
        C::Int,
        C::Decimal,
        C::Text,
        C::Blob,
        C::Bool,
        C::Date,
        C::Timestamp,
        C::Time,
    ],
    exact: |c| Some(exact_form(c.expr.clone(), c.category)),
};

const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "bit_and",
    "bit_or",
    "bit_xor",
    "bool_and",
    "bool_or",
    "string_agg",
    "list",
    "any_value",
    "first",
    "last",
    "arg_min",
    "arg_max",
    "product",
    "stddev",
    "variance",
];

impl DuckQueryGenerator {
    pub fn new(schema: DuckSchema) -> DuckQueryGenerator {
        DuckQueryGenerator {
            core: QueryCore::new(schema),
        }
    }
}

impl QueryGenerator for DuckQueryGenerator {
    lancet_server::delegate_to_query_core!(
        reused: REUSED_SHARE,
        widened: WIDENED_SHARE,
        aggregates: AGGREGATES,
        joins: JOINS
    );

    fn literal_probe(&self, constant: &Expr) -> Option<Vec<Expr>> {
        crate::folding::literal_probe(constant)
    }

    fn literal_of(&self, probe: &[lancet_core::Value]) -> Option<Expr> {
        crate::folding::literal_of(probe)
    }

    fn twin_recipes(&self) -> Vec<String> {
        crate::twins::recipes(&self.core.schema)
    }

    fn twin_build(&self, recipe: &str, table: &str) -> Option<lancet_core::TwinBuild> {
        crate::twins::build(&self.core.schema, recipe, table)
    }

    /// Text as VARCHAR under the binary collation: under NOCASE or
    /// NOACCENT `'a'` and `'A'` (or `'e'` and `'é'`) are equal, and
    /// DISTINCT, GROUP BY, MIN and MAX may return either. (The cast lets an
    /// ENUM, which takes no collation, through; its members are in byte
    /// order.) Intervals as text: `'1 month'` and `'30 days'` are equal.
    /// Other values that compare equal print alike or are normalized by
    /// the comparison (`1.5`, `1.50`).
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        match self.core.category_of(&expr) {
            Some(category) => exact_form(expr, category),
            None => expr,
        }
    }

    /// SUM and AVG over integers and decimals only: over DOUBLE their
    /// result depends on the order of the additions, which differs between
    /// plans (DuckDB documents floating-point aggregates as inexact).
    fn aggregate_argument(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        function: &str,
        proposed: Expr,
    ) -> Expr {
        let exact = [Category::Int, Category::Decimal];
        let takes: &[Category] = match function.to_ascii_uppercase().as_str() {
            "SUM" | "AVG" | "TOTAL" => &exact,
            _ => return proposed,
        };
        self.core
            .aggregate_argument(rng, scope, (takes, 1.0), proposed, Some(Expr::int(1)))
    }
}

/// An expression of a category in a form whose equal values print alike:
/// text as VARCHAR under the binary collation, intervals as text (see
/// [`DuckQueryGenerator::with_exact_equality`]).
fn exact_form(expr: Expr, category: Category) -> Expr {
    let varchar = |expr| Expr::Cast {
        expr: Box::new(expr),
        ty: lancet_core::TypeName("VARCHAR".into()),
    };
    match category {
        // '1 month' = '30 days': intervals compare normalized.
        Category::Interval => varchar(expr),
        Category::Text => Expr::Collate {
            expr: Box::new(varchar(expr)),
            collation: "binary".into(),
        },
        _ => expr,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::rng::database_rng;
    use lancet_server::TypedColumn;

    /// A column of each category, `d0.c0`, `d0.c1`, ...
    fn one_of_each() -> Vec<TypedColumn<Category>> {
        Category::ALL
            .iter()
            .enumerate()
            .map(|(i, c)| TypedColumn {
                expr: Expr::column(Some("d0"), &format!("c{i}")),
                category: *c,
            })
            .collect()
    }

    /// Every window call over columns of each category is one the window
    /// determines: no SUM, MIN or MAX over a float or an interval, no
    /// text argument or key outside the binary collation, no rank
    /// without an ORDER BY.
    #[test]
    fn window_calls_are_determined_by_their_window() {
        let columns = one_of_each();
        let inexact = |e: &Expr| {
            columns
                .iter()
                .any(|c| c.expr == *e && matches!(c.category, Category::Text | Category::Interval))
        };
        let mut rng = database_rng(1, 0, 0);
        let mut seen = 0;
        for _ in 0..2000 {
            let Some((call, _)) = EXACT.window_call(&mut rng, &columns) else {
                continue;
            };
            seen += 1;
            let Expr::Window {
                function,
                partition_by,
                order_by,
            } = &call
            else {
                panic!("not a window call: {call:?}");
            };
            assert!(!partition_by.iter().any(inexact), "{call:?}");
            assert!(!order_by.iter().any(|o| inexact(&o.expr)), "{call:?}");
            if let Expr::Function { name, args, .. } = &**function {
                if name == "rank" || name == "dense_rank" {
                    assert!(!order_by.is_empty(), "{call:?}");
                }
                if name != "count" {
                    for a in args {
                        let category = columns.iter().find(|c| c.expr == *a).map(|c| c.category);
                        assert!(
                            !matches!(
                                category,
                                Some(Category::Float | Category::Interval | Category::Text)
                            ),
                            "{call:?}"
                        );
                    }
                }
            }
        }
        assert!(seen > 500, "only {seen} window calls");
    }

    /// A QUALIFY filter compares one window call of
    /// [`ExactAggregates::window_call`] (never `row_number`) with a bound.
    #[test]
    fn qualify_filters_compare_a_determined_window_call() {
        let columns = one_of_each();
        let mut rng = database_rng(2, 0, 0);
        let mut seen = 0;
        for _ in 0..1000 {
            let Some(filter) = EXACT.qualify(&mut rng, &columns, |_, _| Expr::int(0)) else {
                continue;
            };
            seen += 1;
            let Expr::Binary { op, left, .. } = &filter else {
                panic!("not a comparison: {filter:?}");
            };
            assert!(op.is_comparison(), "{filter:?}");
            let Expr::Window { function, .. } = &**left else {
                panic!("not a window call: {filter:?}");
            };
            assert!(
                !matches!(&**function, Expr::Function { name, .. } if name == "row_number"),
                "{filter:?}"
            );
        }
        assert!(seen > 300, "only {seen} filters");
    }
}
