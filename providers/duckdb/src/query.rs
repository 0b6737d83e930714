//! Query parts for the oracles: FROM clauses with DuckDB's joins whose
//! results are determined (comma, INNER, LEFT, RIGHT, FULL, CROSS,
//! NATURAL; no ASOF or POSITIONAL, which depend on row order) and derived
//! tables (half as CTEs: inlined, MATERIALIZED or NOT MATERIALIZED), and
//! the exact forms of equality that collations make necessary. Typing, predicates, expressions and PQS come from the
//! server toolkit's [`QueryCore`].

use crate::schema::DuckSchema;
use crate::types::Category;
use lancet_core::{DerivedForm, Expr, JoinKind, QueryGenerator, Rng, Scope};
use lancet_server::{JoinMenu, QueryCore};

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

    /// Text as VARCHAR under the binary collation: under NOCASE or
    /// NOACCENT `'a'` and `'A'` (or `'e'` and `'é'`) are equal, and
    /// DISTINCT, GROUP BY, MIN and MAX may return either. (The cast lets an
    /// ENUM, which takes no collation, through; its members are in byte
    /// order.) Intervals as text: `'1 month'` and `'30 days'` are equal.
    /// Other values that compare equal print alike or are normalized by
    /// the comparison (`1.5`, `1.50`).
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        match self.core.category_of(&expr) {
            // '1 month' = '30 days': intervals compare normalized.
            Some(Category::Interval) => Expr::Cast {
                expr: Box::new(expr),
                ty: lancet_core::TypeName("VARCHAR".into()),
            },
            Some(Category::Text) => Expr::Collate {
                expr: Box::new(Expr::Cast {
                    expr: Box::new(expr),
                    ty: lancet_core::TypeName("VARCHAR".into()),
                }),
                collation: "binary".into(),
            },
            _ => expr,
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
