//! Query parts for the oracles: the exact forms of equality, aggregate
//! arguments, twin tables and Citus's rule for WHERE clauses; FROM
//! clauses are built in [`from`] and derived tables in [`derived`].
//! Typing, predicates, expressions and PQS come from the server
//! toolkit's [`QueryCore`].

use crate::schema::PgSchema;
use crate::types::Category;
use crate::types::TypedColumn;
use lancet_core::schema::RelationKind;
use lancet_core::{
    BinaryOp, DerivedForm, Expr, FromClause, Join, JoinConstraint, JoinKind, Query, QueryGenerator,
    Rng, Scope, Select, SelectItem, TableFactor, TypeName,
};
use lancet_server::{equal_pair, one_table_from, table_factor, QueryCore};
use rand::seq::IndexedRandom;
use rand::Rng as _;

mod derived;
mod from;
use from::no_pseudoconstant_conjunct;

pub struct PgQueryGenerator {
    core: QueryCore<PgSchema, FromFacts>,
}

/// What the generator keeps of the last FROM clause beside its columns,
/// for its predicates and exact forms (and with it in the pool of FROM
/// clauses that saw rows, see [`lancet_core::feedback`]).
#[derive(Clone, Debug, Default)]
struct FromFacts {
    /// The scope columns that read a base table's column directly. Their
    /// values are as stored: equal values are identical (a char(n)
    /// column pads every value to n characters).
    stored: Vec<Expr>,
    /// Whether the FROM clause has an outer join over Citus tables: its
    /// WHERE then gets no conjunct without a column (see
    /// [`no_pseudoconstant_conjunct`]).
    outer_join_on_citus: bool,
    /// With such an outer join: the distribution columns of the
    /// distributed tables in scope and the columns of views, which
    /// DISTINCT and GROUP BY read as text (see
    /// [`PgQueryGenerator::with_exact_equality`]).
    outer_distribution_columns: Vec<Expr>,
}

/// The share of FROM clauses drawn from those that saw rows.
const REUSED_SHARE: f64 = 0.7;

impl PgQueryGenerator {
    pub fn new(schema: PgSchema) -> PgQueryGenerator {
        PgQueryGenerator {
            core: QueryCore::new(schema),
        }
    }
}

const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "bool_and",
    "bool_or",
    "every",
    "string_agg",
    "array_agg",
    "bit_and",
    "bit_or",
    "stddev",
    "variance",
];

/// The share of predicates widened by an OR (see [`QueryCore::predicate`]).
const WIDENED_SHARE: f64 = 0.5;

impl QueryGenerator for PgQueryGenerator {
    fn from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope) {
        if let Some(kept) = self.core.reuse(rng, REUSED_SHARE) {
            return kept;
        }
        let (from, cols, facts) = self.build_from_clause(rng);
        self.core.keep(from, cols, facts)
    }

    fn check_ended(&mut self, saw_rows: bool) {
        self.core.check_ended(saw_rows);
    }

    fn predicate(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let mut p = self.core.predicate(rng, scope, WIDENED_SHARE);
        // Citus on PostgreSQL 15 and 16 returns wrong results for outer
        // joins with a pseudoconstant qual (citusdata/citus#7696, #7697,
        // and over derived tables, where its XX000 guard misses them).
        // Checked on Citus 14.0.1 over PostgreSQL 18 (2026-11): right rows
        // and no error, plain or over derived tables; Citus's guard names
        // PostgreSQL 15 and 16, so the rule follows the server's major.
        if self.core.facts.outer_join_on_citus && self.core.schema.features.major < 17 {
            let cols = self.core.typed(scope);
            p = self.core.with_gen(true, |g, _| {
                let mut tries = 0;
                while !no_pseudoconstant_conjunct(&p) && tries < 10 {
                    p = g.predicate(rng, &cols, 2);
                    tries += 1;
                }
                if !no_pseudoconstant_conjunct(&p) {
                    if let Some(c) = cols.choose(rng) {
                        p = Expr::binary(BinaryOp::Or, Expr::is_null(c.expr.clone()), p);
                    }
                }
                p
            });
        }
        p
    }

    /// Without subqueries where Citus fails on them in a modification of
    /// `table` (see [`PgSchema::modifications_may_have_subqueries`]).
    fn modification_predicate(&mut self, rng: &mut Rng, scope: &Scope, table: &str) -> Expr {
        let schema = &self.core.schema;
        let subqueries = schema
            .relations
            .iter()
            .find(|t| t.name == table)
            .is_none_or(|t| schema.modifications_may_have_subqueries(t));
        if subqueries {
            return self.predicate(rng, scope);
        }
        self.core.predicate_with(rng, scope, WIDENED_SHARE, false)
    }

    fn expression(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        self.core.expression(rng, scope)
    }

    fn pivot_tables(&mut self, rng: &mut Rng) -> Option<(FromClause, Scope)> {
        self.core.pivot_tables(rng)
    }

    fn pivot_predicate(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        pivot: &[lancet_core::Value],
    ) -> Option<(Expr, lancet_core::Truth)> {
        self.core.pivot_predicate(rng, scope, pivot)
    }

    fn literal_probe(&self, constant: &Expr) -> Option<Vec<Expr>> {
        crate::folding::literal_probe(constant)
    }

    fn literal_of(&self, probe: &[lancet_core::Value]) -> Option<Expr> {
        crate::folding::literal_of(probe)
    }

    fn twin_tables(&self) -> Vec<(String, String)> {
        let twins: Option<Vec<(String, String)>> = self
            .core
            .schema
            .relations
            .iter()
            .map(|t| t.twin.clone().map(|twin| (t.name.clone(), twin)))
            .collect();
        twins.unwrap_or_default()
    }

    fn twin_recipes(&self) -> Vec<String> {
        crate::recipes::recipes(&self.core.schema)
    }

    fn twin_build(&self, recipe: &str, table: &str) -> Option<lancet_core::TwinBuild> {
        crate::recipes::build(&self.core.schema, recipe, table)
    }

    fn twin_knobs(&self, recipe: &str) -> Vec<lancet_core::Knob> {
        crate::recipes::knobs(&self.core.schema, recipe)
    }

    fn is_aggregate(&self, name: &str) -> bool {
        AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    /// Text is cast to `text`: a `bpchar` that is not a stored char(n)
    /// column (`COALESCE(c, 'a')`, a CASE over one, a derived table's or a
    /// view's column) may hold `'a'` and `'a  '`, which are equal (trailing
    /// blanks do not count) but print differently, and DISTINCT, GROUP BY,
    /// MIN and MAX may return either. The cast strips trailing blanks of a
    /// bpchar, orders as bpchar does (bpchar compares without its trailing
    /// blanks), and changes nothing for text and varchar. Other types need
    /// nothing here: equal numbers that print differently (`-0` and `0`,
    /// `1.0` and `1.00`) are equal to the result comparison too.
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        // Citus 13.2 groups by a distribution column on the shards alone,
        // also when an outer join makes it NULL on every shard: one NULL
        // group per shard (`SELECT a.k, count(*) FROM a FULL JOIN b ON a.k
        // = b.k GROUP BY a.k`). Read as text, the key is an expression
        // Citus groups again on the coordinator.
        if self.core.facts.outer_distribution_columns.contains(&expr) {
            return exact_text(expr);
        }
        let is_text_cast = |e: &Expr| matches!(e, Expr::Cast { ty, .. } if ty.0 == "text");
        if self.core.category_of(&expr) == Some(Category::Text)
            && !self.core.facts.stored.contains(&expr)
            && !is_text_cast(&expr)
        {
            exact_text(expr)
        } else {
            expr
        }
    }

    /// The exact form of `expr`, and for numbers its text as well: `-0` and
    /// `0` (floats), `1.0` and `1.00` (numerics) are one group, and a HAVING
    /// predicate that reads the key's text (`CAST(c AS text) = '0'`) tells
    /// them apart. PostgreSQL evaluates a HAVING without aggregates as a
    /// WHERE, on every row of the group, so every row must hold the same
    /// value. With the text as a key, all rows of a group print the same.
    fn exact_group_keys(&self, expr: Expr) -> Vec<Expr> {
        let category = self.core.category_of(&expr);
        let exact = self.with_exact_equality(expr.clone());
        match category {
            // Text: a stored column, or cast to text.
            Some(
                Category::Int | Category::Bool | Category::Date | Category::Bytea | Category::Text,
            ) => vec![exact],
            // Numbers, and anything whose type is not known: its text.
            _ => vec![exact, exact_text(expr)],
        }
    }

    /// PostgreSQL's SUM and AVG take numbers only, MIN and MAX no boolean
    /// or bytea; COUNT takes anything. A `proposed` argument of another
    /// category is replaced by a column (mostly) or an expression of a
    /// category the aggregate takes.
    fn aggregate_argument(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        function: &str,
        proposed: Expr,
    ) -> Expr {
        let takes: &[Category] = match function.to_ascii_uppercase().as_str() {
            "SUM" | "AVG" | "TOTAL" => &[Category::Int, Category::Numeric, Category::Float],
            "MIN" | "MAX" => &[
                Category::Int,
                Category::Numeric,
                Category::Float,
                Category::Text,
                Category::Date,
            ],
            _ => return proposed,
        };
        self.core
            .aggregate_argument(rng, scope, (takes, 0.7), proposed, None)
    }
}

/// `CAST(expr AS text)`.
fn exact_text(expr: Expr) -> Expr {
    Expr::Cast {
        expr: Box::new(expr),
        ty: TypeName("text".into()),
    }
}
