//! Query parts for the oracles: typed predicates and expressions, the PQS
//! pivot hooks and the exact forms of equality; FROM clauses are built in
//! [`from`] and derived tables in [`derived`].

use crate::expr::{ExprGen, TypedColumn};
use crate::schema::PgSchema;
use crate::types::{Category, PgType};
use lancet_core::schema::RelationKind;
use lancet_core::{
    BinaryOp, DerivedForm, Expr, FromClause, Join, JoinConstraint, JoinKind, ProductivePool, Query,
    QueryGenerator, Rng, Scope, ScopeColumn, Select, SelectItem, TableFactor, TypeName, UnaryOp,
    Value,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

mod derived;
mod from;
use from::no_pseudoconstant_conjunct;

pub struct PgQueryGenerator {
    schema: PgSchema,
    next_alias: u32,
    /// The columns of the last FROM clause, to type scope columns an oracle
    /// passes back without a type (TLP-HAVING's grouping keys).
    last_scope: Vec<TypedColumn>,
    /// PQS: the columns of the last pivot tables the evaluator understands.
    pivot_columns: Vec<Option<lancet_core::pivot::PivotColumn>>,
    /// The expressions handed out since the last FROM clause, with their
    /// categories, so that the exact forms of what an oracle passes back
    /// can be chosen by type.
    generated: Vec<TypedColumn>,
    /// The scope columns of the last FROM clause that read a base table's
    /// column directly. Their values are as stored: equal values are
    /// identical (a char(n) column pads every value to n characters).
    stored: Vec<Expr>,
    /// Whether the last FROM clause has an outer join over Citus tables:
    /// its WHERE then gets no conjunct without a column (see
    /// [`no_pseudoconstant_conjunct`]).
    outer_join_on_citus: bool,
    /// With such an outer join: the distribution columns of the
    /// distributed tables in scope and the columns of views, which
    /// DISTINCT and GROUP BY read as text (see
    /// [`PgQueryGenerator::with_exact_equality`]).
    outer_distribution_columns: Vec<Expr>,
    /// FROM clauses whose checks saw rows, drawn again for
    /// [`REUSED_SHARE`] of the checks (see [`lancet_core::feedback`]).
    productive: ProductivePool<ProductiveFrom>,
}

/// A FROM clause kept for reuse, with the state of the generator its
/// predicates and exact forms depend on.
#[derive(Clone, Debug)]
struct ProductiveFrom {
    from: FromClause,
    scope: Scope,
    last_scope: Vec<TypedColumn>,
    stored: Vec<Expr>,
    outer_join_on_citus: bool,
    outer_distribution_columns: Vec<Expr>,
}

/// The share of FROM clauses drawn from those that saw rows.
const REUSED_SHARE: f64 = 0.7;

impl PgQueryGenerator {
    pub fn new(schema: PgSchema) -> PgQueryGenerator {
        PgQueryGenerator {
            schema,
            next_alias: 0,
            last_scope: Vec::new(),
            pivot_columns: Vec::new(),
            generated: Vec::new(),
            outer_join_on_citus: false,
            outer_distribution_columns: Vec::new(),
            stored: Vec::new(),
            productive: ProductivePool::default(),
        }
    }

    /// The category of an expression this generator made or an oracle
    /// built from its parts: a column of the last FROM clause, an
    /// expression it generated, or a cast.
    fn category_of(&self, expr: &Expr) -> Option<Category> {
        if let Some(c) = self
            .last_scope
            .iter()
            .chain(self.generated.iter())
            .find(|c| &c.expr == expr)
        {
            return Some(c.category);
        }
        // Shapes an oracle or a reducer may build from generated parts.
        match expr {
            Expr::Cast { ty, .. } => Some(PgType::from_name(&ty.0).category),
            Expr::Collate { .. }
            | Expr::Binary {
                op: BinaryOp::Concat,
                ..
            } => Some(Category::Text),
            Expr::Literal(v) => match v {
                Value::Text(_) => Some(Category::Text),
                Value::Integer(_) => Some(Category::Int),
                Value::Decimal(_) => Some(Category::Numeric),
                Value::Real(_) => Some(Category::Float),
                Value::Boolean(_) => Some(Category::Bool),
                Value::Blob(_) => Some(Category::Bytea),
                Value::Null => None,
            },
            Expr::Unary {
                op: UnaryOp::Neg,
                expr,
            } => self.category_of(expr),
            Expr::Function { name, args, .. } => match name.to_ascii_lowercase().as_str() {
                "coalesce" | "nullif" | "greatest" | "least" => {
                    common_category(args.iter().filter_map(|a| self.category_of(a)))
                }
                "lower" | "upper" | "substr" | "replace" | "btrim" | "ltrim" | "rtrim" | "left"
                | "right" | "md5" | "reverse" => Some(Category::Text),
                _ => None,
            },
            Expr::Case {
                branches,
                otherwise,
                ..
            } => common_category(
                branches
                    .iter()
                    .map(|(_, e)| e)
                    .chain(otherwise.as_deref())
                    .filter_map(|e| self.category_of(e)),
            ),
            _ => None,
        }
    }

    /// Remembers the category of an expression handed to an oracle.
    fn record(&mut self, expr: &Expr, category: Category) {
        if self.category_of(expr).is_none() {
            self.generated.push(TypedColumn {
                expr: expr.clone(),
                category,
            });
        }
    }

    /// The scope's columns with their categories; a column without a type
    /// is typed from the last FROM clause, or left out.
    fn typed(&self, scope: &Scope) -> Vec<TypedColumn> {
        scope
            .columns
            .iter()
            .filter_map(|c| {
                let category = match &c.ty {
                    Some(t) => PgType::from_name(&t.0).category,
                    None => self.category_of(&c.expr)?,
                };
                Some(TypedColumn {
                    expr: c.expr.clone(),
                    category,
                })
            })
            .collect()
    }

    fn scope_of(columns: &[TypedColumn]) -> Vec<ScopeColumn> {
        columns
            .iter()
            .map(|c| ScopeColumn {
                expr: c.expr.clone(),
                ty: Some(TypeName(category_type(c.category).into())),
            })
            .collect()
    }
}

/// A type name for a category, for scope columns whose exact type is not known.
fn category_type(c: Category) -> &'static str {
    match c {
        Category::Int => "bigint",
        Category::Numeric => "numeric",
        Category::Float => "double precision",
        Category::Text => "text",
        Category::Bool => "boolean",
        Category::Bytea => "bytea",
        Category::Date => "date",
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

/// The share of predicates widened by an OR (see `predicate`).
const WIDENED_SHARE: f64 = 0.5;

impl QueryGenerator for PgQueryGenerator {
    fn from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope) {
        if let Some(kept) = self.productive.draw(rng, REUSED_SHARE) {
            self.generated.clear();
            self.last_scope = kept.last_scope;
            self.stored = kept.stored;
            self.outer_join_on_citus = kept.outer_join_on_citus;
            self.outer_distribution_columns = kept.outer_distribution_columns;
            return (kept.from, kept.scope);
        }
        let (from, scope) = self.build_from_clause(rng);
        self.productive.generated(ProductiveFrom {
            from: from.clone(),
            scope: scope.clone(),
            last_scope: self.last_scope.clone(),
            stored: self.stored.clone(),
            outer_join_on_citus: self.outer_join_on_citus,
            outer_distribution_columns: self.outer_distribution_columns.clone(),
        });
        (from, scope)
    }

    fn check_ended(&mut self, saw_rows: bool) {
        self.productive.check_ended(saw_rows);
    }

    fn predicate(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let cols = self.typed(scope);
        let mut g = ExprGen::new(&self.schema, true);
        g.next_alias = self.next_alias;
        let mut p = g.predicate(rng, &cols, 2);
        // Random predicates are FALSE or NULL on every row of a small table
        // more often than not; a share widened by OR with a comparison
        // against a value from the data see rows more often.
        if rng.random_bool(WIDENED_SHARE) {
            let wide = g.selective_comparison(rng, &cols);
            p = Expr::binary(BinaryOp::Or, p, wide);
        }
        // Citus on PostgreSQL 15 and 16 returns wrong results for outer
        // joins with a pseudoconstant qual (citusdata/citus#7696, #7697,
        // and over derived tables, where its XX000 guard misses them).
        // Checked on Citus 14.0.1 over PostgreSQL 18 (2026-11): right rows
        // and no error, plain or over derived tables; Citus's guard names
        // PostgreSQL 15 and 16, so the rule follows the server's major.
        if self.outer_join_on_citus && self.schema.features.major < 17 {
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
        }
        self.next_alias = g.next_alias;
        p
    }

    fn expression(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let cols = self.typed(scope);
        let cat = match cols.choose(rng) {
            Some(c) if rng.random_bool(0.6) => c.category,
            _ => *Category::ALL.choose(rng).unwrap_or(&Category::Int),
        };
        let mut g = ExprGen::new(&self.schema, true);
        g.next_alias = self.next_alias;
        let e = g.expr(rng, &cols, cat, 2);
        self.next_alias = g.next_alias;
        self.record(&e, cat);
        e
    }

    fn pivot_tables(&mut self, rng: &mut Rng) -> Option<(FromClause, Scope)> {
        let tables: Vec<&crate::schema::PgTable> = self
            .schema
            .relations
            .iter()
            .filter(|t| t.writable)
            .collect();
        let n = rng.random_range(1..=2.min(tables.len()).max(1));
        let chosen: Vec<crate::schema::PgTable> = (0..n)
            .filter_map(|_| tables.choose(rng).map(|t| (*t).clone()))
            .collect();
        let tables: Vec<_> = chosen
            .into_iter()
            .map(|t| {
                let cols = t
                    .columns
                    .iter()
                    .map(|(c, ty)| {
                        (
                            c.clone(),
                            TypeName(ty.name.clone()),
                            crate::pqs::kind_of(ty),
                        )
                    })
                    .collect();
                (t.name, cols)
            })
            .collect();
        let (from, scope, pivot_columns) = lancet_core::pivot::pivot_from(&tables)?;
        self.pivot_columns = pivot_columns;
        Some((from, scope))
    }

    fn pivot_predicate(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        pivot: &[lancet_core::Value],
    ) -> Option<(Expr, lancet_core::Truth)> {
        if scope.columns.len() != self.pivot_columns.len() {
            return None;
        }
        crate::pqs::pivot_predicate(rng, &self.pivot_columns, pivot)
    }

    fn twin_tables(&self) -> Vec<(String, String)> {
        let twins: Option<Vec<(String, String)>> = self
            .schema
            .relations
            .iter()
            .map(|t| t.twin.clone().map(|twin| (t.name.clone(), twin)))
            .collect();
        twins.unwrap_or_default()
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
        if self.outer_distribution_columns.contains(&expr) {
            return exact_text(expr);
        }
        let is_text_cast = |e: &Expr| matches!(e, Expr::Cast { ty, .. } if ty.0 == "text");
        if self.category_of(&expr) == Some(Category::Text)
            && !self.stored.contains(&expr)
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
        let category = self.category_of(&expr);
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
        match self.category_of(&proposed) {
            Some(c) if !takes.contains(&c) => {}
            // Accepted, or not known (then it is the oracle's own).
            _ => return proposed,
        }
        let cols = self.typed(scope);
        let fitting: Vec<&TypedColumn> = cols
            .iter()
            .filter(|c| takes.contains(&c.category))
            .collect();
        if rng.random_bool(0.7) {
            if let Some(c) = fitting.choose(rng) {
                return c.expr.clone();
            }
        }
        let category = *takes.choose(rng).unwrap_or(&Category::Int);
        let mut g = ExprGen::new(&self.schema, true);
        g.next_alias = self.next_alias;
        let e = g.expr(rng, &cols, category, 2);
        self.next_alias = g.next_alias;
        self.record(&e, category);
        e
    }
}

/// The category PostgreSQL resolves CASE, COALESCE, GREATEST... to:
/// integers widen to numeric, numeric to float.
fn common_category(categories: impl Iterator<Item = Category>) -> Option<Category> {
    categories.reduce(|a, b| match (a, b) {
        _ if a == b => a,
        (Category::Float, _) | (_, Category::Float) if a.is_number() && b.is_number() => {
            Category::Float
        }
        _ if a.is_number() && b.is_number() => Category::Numeric,
        // Unlike categories would not type-check; keep the first.
        _ => a,
    })
}

/// `CAST(expr AS text)`.
fn exact_text(expr: Expr) -> Expr {
    Expr::Cast {
        expr: Box::new(expr),
        ty: TypeName("text".into()),
    }
}
