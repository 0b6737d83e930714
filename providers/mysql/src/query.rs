//! Query parts for the oracles: FROM clauses with every join MySQL has
//! (comma, INNER, LEFT, RIGHT, CROSS, NATURAL, STRAIGHT_JOIN; no FULL) and
//! derived tables, and the exact forms of equality that collations make
//! necessary. Typing, predicates, expressions and PQS come from the
//! server toolkit's [`QueryCore`].

use crate::expr::any_category;
use crate::schema::{MySchema, TypedColumn};
use crate::types::Category;
use lancet_core::{
    DerivedForm, Expr, FromClause, Join, JoinConstraint, JoinKind, Query, QueryGenerator, Rng,
    Scope, Select, SelectItem, TableFactor, Truth, TypeName, Value,
};
use lancet_server::{one_table_from, table_factor, QueryCore};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// MySQL's and MariaDB's query generator.
pub struct MyQueryGenerator {
    core: QueryCore<MySchema>,
}

/// The share of FROM clauses drawn from those that saw rows.
const REUSED_SHARE: f64 = 0.6;
/// The share of predicates widened by an OR with a selective comparison.
const WIDENED_SHARE: f64 = 0.4;

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

    /// A first table and up to two joined ones (a derived table for 15%).
    fn build_from_clause(&mut self, rng: &mut Rng) -> (FromClause, Vec<TypedColumn>) {
        let Some(first) = self.core.schema.relations.choose(rng).cloned() else {
            // No table could be created: a one-row derived table.
            return QueryCore::<MySchema>::constant_from();
        };
        let mut cols = first.typed_columns("a0");
        let first = table_factor(&first.name, "a0");
        let mut joins = Vec::new();
        for j in 1..=QueryCore::<MySchema>::join_count(rng) {
            let alias = format!("a{j}");
            let (factor, new_cols) = if rng.random_bool(0.15) {
                self.derived(rng, &alias)
            } else {
                let Some(t) = self.core.schema.relations.choose(rng) else {
                    continue;
                };
                (table_factor(&t.name, &alias), t.typed_columns(&alias))
            };
            let kind = *[
                JoinKind::Inner,
                JoinKind::Inner,
                JoinKind::Left,
                JoinKind::Left,
                JoinKind::Right,
                JoinKind::Cross,
                JoinKind::Comma,
                JoinKind::Straight,
            ]
            .choose(rng)
            .unwrap_or(&JoinKind::Inner);
            // NATURAL only on the first join: after two tables, the left
            // side may hold two columns of one name, which MySQL refuses
            // as ambiguous. Columns are always qualified, so the merged
            // column is never named bare.
            let natural = j == 1
                && matches!(kind, JoinKind::Inner | JoinKind::Left | JoinKind::Right)
                && rng.random_bool(0.1);
            let constraint = match kind {
                JoinKind::Cross | JoinKind::Comma => JoinConstraint::None,
                _ if natural => JoinConstraint::Natural,
                _ => JoinConstraint::On(self.core.join_condition(rng, (&cols, &new_cols), 0.0)),
            };
            joins.push(Join {
                kind,
                factor,
                constraint,
            });
            cols.extend(new_cols);
        }
        (FromClause { first, joins }, cols)
    }

    /// `(SELECT [DISTINCT] x AS c0, ... FROM t [WHERE p]) AS alias`.
    fn derived(&mut self, rng: &mut Rng, alias: &str) -> (TableFactor, Vec<TypedColumn>) {
        let table = self.core.schema.relations.choose(rng).cloned();
        let inner_alias = format!("d{}", self.core.next_alias);
        self.core.next_alias += 1;
        let inner = table
            .as_ref()
            .map(|t| t.typed_columns(&inner_alias))
            .unwrap_or_default();
        let (items, cols, selection) = self.core.with_gen(true, |g, _| {
            let n = rng.random_range(1..=3);
            let mut items = Vec::new();
            let mut cols = Vec::new();
            for i in 0..n {
                let (e, category) = match inner.choose(rng) {
                    Some(c) if rng.random_bool(0.7) => (c.expr.clone(), c.category),
                    _ => {
                        let category = any_category(rng);
                        (g.expr(rng, &inner, category, 1), category)
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
            let selection = rng.random_bool(0.5).then(|| g.predicate(rng, &inner, 1));
            (items, cols, selection)
        });
        let select = Select {
            distinct: rng.random_bool(0.2),
            items,
            from: table.map(|t| one_table_from(&t.name, &inner_alias)),
            selection,
            ..Select::default()
        };
        let factor = TableFactor::Derived {
            query: Box::new(Query::select(select)),
            alias: alias.to_string(),
            lateral: false,
            form: DerivedForm::Subquery,
        };
        (factor, cols)
    }
}

impl QueryGenerator for MyQueryGenerator {
    fn from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope) {
        if let Some(kept) = self.core.reuse(rng, REUSED_SHARE) {
            return kept;
        }
        let (from, cols) = self.build_from_clause(rng);
        self.core.keep(from, cols, ())
    }

    fn predicate(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        self.core.predicate(rng, scope, WIDENED_SHARE)
    }

    fn expression(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        self.core.expression(rng, scope)
    }

    fn is_aggregate(&self, name: &str) -> bool {
        AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    fn check_ended(&mut self, saw_rows: bool) {
        self.core.check_ended(saw_rows);
    }

    fn pivot_predicate(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        pivot: &[Value],
    ) -> Option<(Expr, Truth)> {
        self.core.pivot_predicate(rng, scope, pivot)
    }

    fn pivot_tables(&mut self, rng: &mut Rng) -> Option<(FromClause, Scope)> {
        self.core.pivot_tables(rng)
    }

    /// Text and dates are read as their bytes: under a case-insensitive or
    /// PAD SPACE collation `'a'`, `'A'` and `'a '` are equal, and DISTINCT,
    /// GROUP BY, MIN and MAX may return any of them. Numbers need nothing
    /// (equal numbers that print differently are equal to the comparison).
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        match self.core.category_of(&expr) {
            Some(Category::Int | Category::Decimal | Category::Float | Category::Blob) => expr,
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
