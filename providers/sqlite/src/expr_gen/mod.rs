//! Random SQLite expressions over a set of columns.
//!
//! Everything generated is deterministic under any query plan, because the
//! oracles compare queries that must agree: no non-deterministic functions,
//! no aggregates outside scalar subqueries, and scalar subqueries only of
//! the forms that yield one row and one well-defined value: `COUNT(*)`,
//! `COUNT(col)`, and `MIN`/`MAX` of a base-table column whose equal values
//! are identical (INTEGER or NUMERIC affinity, BINARY collation). Depth and
//! the number of subqueries are bounded so that no query runs away.

use crate::functions::{self, Function, Shape, PRINTF_FORMATS};
use crate::literals;
use crate::operators;
use crate::types::{self, affinity, Affinity};
use lancet_core::schema::{Relation, RelationKind};
use lancet_core::{
    BinaryOp, Expr, FromClause, Query, Rng, Schema, ScopeColumn, Select, SelectItem, TableFactor,
    Value,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

mod subquery;

/// Generates expressions; one per statement or per query generator.
pub struct ExprGen<'s> {
    schema: &'s Schema,
    functions: Vec<&'static Function>,
    /// Subqueries still allowed in the expression being generated.
    subqueries: u32,
    /// The number of the next subquery alias (`s0`, `s1`, ...). Never reused,
    /// so nested and correlated subqueries never shadow one another.
    next_alias: u32,
    /// Whether LIKE and like() may be used (see [`ExprGen::without_like`]).
    like: bool,
    /// Whether GLOB and glob() may be used where LIKE may not: before
    /// 3.31, `PRAGMA case_sensitive_like` re-registered glob() as
    /// non-deterministic too.
    glob: bool,
    version: i32,
    /// Values from the database's rows, for comparisons' constants.
    sampled: &'s [Value],
}

/// The first SQLite whose glob() stays deterministic after `PRAGMA
/// case_sensitive_like` (3.26.0 and 3.28.0 refuse GLOB in index
/// expressions and partial-index predicates after it; 3.31.1 accepts).
const GLOB_STAYS_DETERMINISTIC_SINCE: i32 = 3_031_000;

impl<'s> ExprGen<'s> {
    /// A generator over `schema` (for subqueries) for SQLite `version`
    /// (`sqlite3_libversion_number()`), which decides the functions used.
    pub fn new(schema: &'s Schema, version: i32) -> ExprGen<'s> {
        ExprGen {
            schema,
            functions: functions::available(version),
            subqueries: 0,
            next_alias: 0,
            like: true,
            glob: true,
            version,
            sampled: &[],
        }
    }

    /// Takes half of comparisons' constants from `values` (sampled from
    /// the database's rows) where one fits the other side.
    pub fn with_sampled(mut self, values: &'s [Value]) -> Self {
        self.sampled = values;
        self
    }

    /// A value from the database's rows that fits a column of affinity
    /// `hint` (any, without one).
    fn sampled_value(&self, rng: &mut Rng, hint: Option<Affinity>) -> Option<Expr> {
        let fits = |v: &&Value| match hint {
            Some(Affinity::Integer | Affinity::Real | Affinity::Numeric) => {
                matches!(v, Value::Integer(_) | Value::Real(_))
            }
            Some(Affinity::Text) => matches!(v, Value::Text(_)),
            Some(Affinity::Blob) | None => true,
        };
        // A few tries rather than a filtered copy: this is on the hot path.
        (0..4)
            .filter_map(|_| self.sampled.choose(rng))
            .find(fits)
            .map(|v| Expr::Literal(v.clone()))
    }

    /// Generates GLOB where it would generate LIKE. After `PRAGMA
    /// case_sensitive_like`, SQLite's LIKE is an ordinary, non-deterministic
    /// function, prohibited in index expressions, partial-index predicates
    /// and generated columns.
    pub fn without_like(mut self) -> Self {
        self.like = false;
        self.glob = self.version >= GLOB_STAYS_DETERMINISTIC_SINCE;
        self
    }

    pub fn schema(&self) -> &'s Schema {
        self.schema
    }

    /// A fresh alias for a relation inside a subquery or derived table.
    pub fn fresh_alias(&mut self) -> String {
        let n = self.next_alias;
        self.next_alias += 1;
        format!("s{n}")
    }

    /// A predicate over `cols`, at most `depth` levels deep, with at most
    /// `subqueries` subqueries (0 where SQLite forbids them: CHECK, indexes).
    pub fn predicate(
        &mut self,
        rng: &mut Rng,
        cols: &[ScopeColumn],
        depth: u32,
        subqueries: u32,
    ) -> Expr {
        self.subqueries = subqueries;
        self.pred(rng, cols, depth)
    }

    /// An expression of any type over `cols`; limits as for [`ExprGen::predicate`].
    pub fn expression(
        &mut self,
        rng: &mut Rng,
        cols: &[ScopeColumn],
        depth: u32,
        subqueries: u32,
    ) -> Expr {
        self.subqueries = subqueries;
        self.expr(rng, cols, depth)
    }

    /// A literal, biased to the values of a column of affinity `hint`.
    pub fn literal(&self, rng: &mut Rng, hint: Option<Affinity>) -> Expr {
        Expr::Literal(literals::literal(rng, hint))
    }

    fn take_subquery(&mut self) -> bool {
        if self.subqueries > 0 && !self.schema.relations.is_empty() {
            self.subqueries -= 1;
            true
        } else {
            false
        }
    }

    // ---- leaves ------------------------------------------------------

    /// A column reference (mostly) or a literal.
    fn leaf(&mut self, rng: &mut Rng, cols: &[ScopeColumn]) -> Expr {
        match cols.choose(rng) {
            Some(c) if rng.random_bool(0.75) => c.expr.clone(),
            _ => self.literal(rng, None),
        }
    }

    /// The affinity of an expression if it is a plain column reference.
    fn affinity_of(e: &Expr, cols: &[ScopeColumn]) -> Option<Affinity> {
        match e {
            Expr::Column(_) => cols
                .iter()
                .find(|c| &c.expr == e)
                .map(|c| affinity(c.ty.as_ref())),
            Expr::Literal(Value::Integer(_)) => Some(Affinity::Integer),
            Expr::Literal(Value::Real(_)) => Some(Affinity::Real),
            Expr::Literal(Value::Text(_)) => Some(Affinity::Text),
            _ => None,
        }
    }

    /// The other side of a comparison with `left`: a literal of its kind,
    /// another column, or an expression.
    fn counterpart(
        &mut self,
        rng: &mut Rng,
        cols: &[ScopeColumn],
        left: &Expr,
        depth: u32,
    ) -> Expr {
        let hint = Self::affinity_of(left, cols);
        match rng.random_range(0..100) {
            0..30 => self
                .sampled_value(rng, hint)
                .unwrap_or_else(|| self.literal(rng, hint)),
            30..60 => self.literal(rng, hint),
            60..85 if !cols.is_empty() => cols
                .choose(rng)
                .map(|c| c.expr.clone())
                .unwrap_or(Expr::Literal(Value::Null)),
            _ => self.expr(rng, cols, depth),
        }
    }

    /// An operand of a comparison: mostly a column, sometimes an expression.
    fn operand(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        if depth == 0 || rng.random_bool(0.6) {
            self.leaf(rng, cols)
        } else {
            self.expr(rng, cols, depth - 1)
        }
    }

    // ---- predicates --------------------------------------------------

    fn pred(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        if depth == 0 {
            return self.comparison(rng, cols, 0);
        }
        let d = depth - 1;
        match rng.random_range(0..100) {
            0..30 => self.comparison(rng, cols, d),
            30..42 => {
                let op = if rng.random_bool(0.5) {
                    BinaryOp::And
                } else {
                    BinaryOp::Or
                };
                let l = self.pred(rng, cols, d);
                let r = self.pred(rng, cols, d);
                Expr::binary(op, l, r)
            }
            42..47 => Expr::not(self.pred(rng, cols, d)),
            47..53 => Expr::IsNull {
                expr: Box::new(self.operand(rng, cols, d)),
                negated: rng.random_bool(0.5),
            },
            53..57 => Expr::IsBool {
                expr: Box::new(if rng.random_bool(0.5) {
                    self.pred(rng, cols, d)
                } else {
                    self.operand(rng, cols, d)
                }),
                value: rng.random_bool(0.5),
                negated: rng.random_bool(0.5),
            },
            57..63 => {
                let expr = self.operand(rng, cols, d);
                let low = self.counterpart(rng, cols, &expr, d);
                let high = self.counterpart(rng, cols, &expr, d);
                Expr::Between {
                    expr: Box::new(expr),
                    low: Box::new(low),
                    high: Box::new(high),
                    negated: rng.random_bool(0.3),
                    symmetric: false,
                }
            }
            63..70 => {
                let expr = self.operand(rng, cols, d);
                let n = rng.random_range(1..=4);
                let list = (0..n)
                    .map(|_| self.counterpart(rng, cols, &expr, d))
                    .collect();
                Expr::InList {
                    expr: Box::new(expr),
                    list,
                    negated: rng.random_bool(0.3),
                }
            }
            70..78 => self.like(rng, cols, d),
            78..83 if self.take_subquery() => self.in_subquery(rng, cols, d),
            83..88 if self.take_subquery() => self.exists(rng, cols, d),
            88..92 => {
                // A function whose result is a truth value.
                let cond = self.pred(rng, cols, d);
                match rng.random_range(0..3) {
                    0 => Expr::func("likely", vec![cond]),
                    1 => Expr::func("unlikely", vec![cond]),
                    _ => Expr::func(
                        "likelihood",
                        vec![cond, Expr::Literal(Value::Real(likelihood(rng)))],
                    ),
                }
            }
            92..95 => Expr::Case {
                operand: None,
                branches: vec![(self.pred(rng, cols, d), self.pred(rng, cols, d))],
                otherwise: rng
                    .random_bool(0.7)
                    .then(|| Box::new(self.pred(rng, cols, d))),
            },
            // Any value is a truth value in SQLite.
            _ => self.expr(rng, cols, d),
        }
    }

    fn comparison(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        let op = operators::comparison(rng);
        let left = self.operand(rng, cols, depth);
        let right = self.counterpart(rng, cols, &left, depth);
        let cmp = Expr::binary(op, left, right);
        if rng.random_bool(0.05) {
            // A COLLATE on the comparison's operand decides its collation.
            match cmp {
                Expr::Binary { op, left, right } => Expr::Binary {
                    op,
                    left: Box::new(Expr::Collate {
                        expr: left,
                        collation: types::collation(rng),
                    }),
                    right,
                },
                other => other,
            }
        } else {
            cmp
        }
    }

    fn like(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        if !self.like && !self.glob {
            return self.leaf(rng, cols);
        }
        let glob = !self.like || rng.random_bool(0.3);
        let expr = self.operand(rng, cols, depth);
        let pattern = if rng.random_bool(0.85) {
            Expr::Literal(Value::Text(if glob {
                literals::glob_pattern(rng)
            } else {
                literals::like_pattern(rng)
            }))
        } else {
            self.operand(rng, cols, depth)
        };
        literals::like(rng, glob, expr, pattern)
    }

    // ---- expressions -------------------------------------------------

    fn expr(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        if depth == 0 || rng.random_bool(0.25) {
            return self.leaf(rng, cols);
        }
        let d = depth - 1;
        match rng.random_range(0..100) {
            0..10 => {
                let op = operators::unary(rng);
                Expr::unary(op, self.expr(rng, cols, d))
            }
            10..32 => {
                let op = operators::arithmetic(rng);
                let l = self.expr(rng, cols, d);
                let r = self.expr(rng, cols, d);
                Expr::binary(op, l, r)
            }
            32..56 => self.function(rng, cols, d),
            56..63 => self.case(rng, cols, d),
            63..70 => Expr::Cast {
                expr: Box::new(self.expr(rng, cols, d)),
                ty: types::cast_type(rng),
            },
            70..74 => Expr::Collate {
                expr: Box::new(self.expr(rng, cols, d)),
                collation: types::collation(rng),
            },
            74..86 => self.pred(rng, cols, d),
            86..91 if self.take_subquery() => self.scalar_subquery(rng, cols, d),
            _ => self.leaf(rng, cols),
        }
    }

    fn case(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        let n = rng.random_range(1..=2);
        if rng.random_bool(0.5) {
            // CASE x WHEN v THEN ... : values of x's kind.
            let operand = self.operand(rng, cols, depth);
            let branches = (0..n)
                .map(|_| {
                    let when = self.counterpart(rng, cols, &operand, depth);
                    (when, self.expr(rng, cols, depth))
                })
                .collect();
            Expr::Case {
                operand: Some(Box::new(operand)),
                branches,
                otherwise: rng
                    .random_bool(0.7)
                    .then(|| Box::new(self.expr(rng, cols, depth))),
            }
        } else {
            let branches = (0..n)
                .map(|_| (self.pred(rng, cols, depth), self.expr(rng, cols, depth)))
                .collect();
            Expr::Case {
                operand: None,
                branches,
                otherwise: rng
                    .random_bool(0.7)
                    .then(|| Box::new(self.expr(rng, cols, depth))),
            }
        }
    }

    fn function(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        let Some(&f) = self.functions.choose(rng) else {
            return self.leaf(rng, cols);
        };
        if (f.shape == Shape::Like && !self.like) || (f.shape == Shape::Glob && !self.glob) {
            return self.leaf(rng, cols);
        }
        let args = match f.shape {
            Shape::Args(min, max) => {
                let n = rng.random_range(min..=max);
                if f.name == "replace" {
                    // replace(x, from, to): literals for `from` and `to`, so
                    // that nested replaces cannot multiply lengths unboundedly.
                    vec![
                        self.expr(rng, cols, depth),
                        Expr::Literal(Value::Text(literals::text(rng))),
                        Expr::Literal(Value::Text(literals::text(rng))),
                    ]
                } else {
                    (0..n).map(|_| self.expr(rng, cols, depth)).collect()
                }
            }
            Shape::Hint => vec![self.pred(rng, cols, depth)],
            Shape::Likelihood => vec![
                self.pred(rng, cols, depth),
                Expr::Literal(Value::Real(likelihood(rng))),
            ],
            Shape::Iif => vec![
                self.pred(rng, cols, depth),
                self.expr(rng, cols, depth),
                self.expr(rng, cols, depth),
            ],
            Shape::Printf => {
                let (format, n) = *PRINTF_FORMATS.choose(rng).unwrap_or(&("%s", 1));
                let mut args = vec![Expr::Literal(Value::Text(format.to_string()))];
                args.extend((0..n).map(|_| self.expr(rng, cols, depth)));
                args
            }
            Shape::Like => {
                let mut args = vec![
                    Expr::Literal(Value::Text(literals::like_pattern(rng))),
                    self.expr(rng, cols, depth),
                ];
                if rng.random_bool(0.3) {
                    args.push(Expr::Literal(Value::Text(literals::escape_char(rng))));
                }
                args
            }
            Shape::Glob => vec![
                Expr::Literal(Value::Text(literals::glob_pattern(rng))),
                self.expr(rng, cols, depth),
            ],
        };
        Expr::func(f.name, args)
    }
}

/// A probability for `likelihood()`: a literal in [0, 1].
fn likelihood(rng: &mut Rng) -> f64 {
    *[0.0, 0.0625, 0.5, 0.9375, 1.0].choose(rng).unwrap_or(&0.5)
}

/// The columns of `rel` as referenced through `alias` (`alias.c0`, ...).
pub fn relation_columns(rel: &Relation, alias: &str) -> Vec<ScopeColumn> {
    rel.columns
        .iter()
        .map(|c| ScopeColumn {
            expr: Expr::column(Some(alias), &c.name),
            ty: c.ty.clone(),
        })
        .collect()
}

/// `FROM rel AS alias`.
pub fn table_from(rel: &Relation, alias: String) -> FromClause {
    FromClause {
        first: TableFactor::Table {
            name: rel.name.clone(),
            alias: Some(alias),
            indexed_by: None,
        },
        joins: vec![],
    }
}
