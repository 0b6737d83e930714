//! Query parts for the oracles: FROM clauses with every join MySQL has
//! (comma, INNER, LEFT, RIGHT, CROSS, NATURAL, STRAIGHT_JOIN; no FULL) and
//! derived tables, and the exact forms of equality that collations make
//! necessary. Typing, predicates, expressions and PQS come from the
//! server toolkit's [`QueryCore`].

use crate::schema::MySchema;
use crate::types::Category;
use lancet_core::{DerivedForm, Expr, JoinKind, QueryGenerator, Rng, Scope, TypeName};
use lancet_server::{JoinMenu, QueryCore};

/// MySQL's and MariaDB's query generator.
pub struct MyQueryGenerator {
    core: QueryCore<MySchema>,
}

/// The share of FROM clauses drawn from those that saw rows.
const REUSED_SHARE: f64 = 0.6;
/// The share of predicates widened by an OR with a selective comparison.
const WIDENED_SHARE: f64 = 0.4;

/// The joins (MySQL has no FULL).
const JOINS: JoinMenu<Category> = JoinMenu {
    kinds: &[
        JoinKind::Inner,
        JoinKind::Inner,
        JoinKind::Left,
        JoinKind::Left,
        JoinKind::Right,
        JoinKind::Cross,
        JoinKind::Comma,
        JoinKind::Straight,
    ],
    natural: |k| matches!(k, JoinKind::Inner | JoinKind::Left | JoinKind::Right),
    exact: identical_when_equal,
    forms: &[DerivedForm::Subquery],
    windows: None,
    wildcard_exclude: false,
    wildcard_replace: false,
    qualify: false,
    group_by_all: false,
    asof: None,
    positional: false,
};

/// Whether values of category `c` that compare equal are identical, so
/// that DISTINCT, GROUP BY, MIN and MAX return what every plan returns:
/// numbers and BLOBs (equal numbers that print differently are equal to
/// the result comparison too), not text (under a case-insensitive or PAD
/// SPACE collation `'a'`, `'A'` and `'a '` are equal) nor dates. Another
/// plan or storage (an index dropped, a twin's engine) returns another of
/// equal values: a derived table's DISTINCT is drawn only where this
/// holds, and [`QueryGenerator::with_exact_equality`] reads the others as
/// bytes.
fn identical_when_equal(c: Category) -> bool {
    !matches!(c, Category::Text | Category::Date)
}

const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "bit_and",
    "bit_or",
    "bit_xor",
    "group_concat",
    "std",
    "stddev",
    "variance",
];

impl MyQueryGenerator {
    pub fn new(schema: MySchema) -> MyQueryGenerator {
        MyQueryGenerator {
            core: QueryCore::new(schema),
        }
    }
}

impl QueryGenerator for MyQueryGenerator {
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

    /// Only InnoDB tables undo DML on ROLLBACK.
    fn rolls_back_dml(&self, table: &str) -> bool {
        self.core
            .schema
            .relations
            .iter()
            .any(|t| t.name == table && t.transactional)
    }

    fn twin_recipes(&self) -> Vec<String> {
        crate::twins::recipes(&self.core.schema)
    }

    fn twin_build(&self, recipe: &str, table: &str) -> Option<lancet_core::TwinBuild> {
        crate::twins::build(&self.core.schema, recipe, table)
    }

    /// What is not [`identical_when_equal`] (or of no known category) is
    /// read as its bytes.
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        match self.core.category_of(&expr) {
            Some(c) if identical_when_equal(c) => expr,
            _ => Expr::Cast {
                expr: Box::new(expr),
                ty: TypeName("BINARY".into()),
            },
        }
    }

    /// MySQL's SUM and AVG read text as numbers (with warnings); a text
    /// argument is replaced by a number column (or `1`), so that sums
    /// stay exact where they can.
    fn aggregate_argument(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        function: &str,
        proposed: Expr,
    ) -> Expr {
        if !matches!(
            function.to_ascii_uppercase().as_str(),
            "SUM" | "AVG" | "TOTAL"
        ) {
            return proposed;
        }
        let exact = [Category::Int, Category::Decimal];
        self.core
            .aggregate_argument(rng, scope, (&exact, 1.0), proposed, Some(Expr::int(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A derived table's DISTINCT returns an arbitrary one of equal
    /// values, so it is drawn only over categories whose equal values are
    /// identical: not text (`'a'`, `'A'` and `'a '` under a case-blind or
    /// PAD SPACE collation; a twins check's engine twin returned `'A'` where
    /// the table returned `'a'`) and not dates.
    #[test]
    fn derived_distinct_only_over_categories_whose_equal_values_are_identical() {
        for c in Category::ALL {
            let exact = (JOINS.exact)(c);
            assert_eq!(
                exact,
                !matches!(c, Category::Text | Category::Date),
                "{c:?}"
            );
        }
    }
}
