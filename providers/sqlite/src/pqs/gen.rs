//! Random expressions for PQS: the general generator's constructs, minus
//! those the evaluator ([`crate::eval`]) does not reproduce (subqueries,
//! printf, unhex), so that few predicates are declined.
//!
//! Comparisons often take a value of the pivot row itself as a literal:
//! then they are true on the pivot, and rectified predicates are not
//! always negations.

use crate::eval::functions::is_supported;
use crate::eval::typing::has_collate;
use crate::functions::{self, Function, Shape};
use crate::literals;
use crate::operators;
use crate::types::{self, Affinity};
use lancet_core::{BinaryOp, Expr, Rng, UnaryOp, Value};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// A column the generator may reference.
#[derive(Clone, Debug)]
pub struct GenColumn {
    pub expr: Expr,
    pub affinity: Affinity,
    /// Its value on the pivot row, to reuse as a literal.
    pub pivot: Value,
}

/// Generates PQS expressions over a fixed set of columns.
pub struct PqsGen<'c> {
    cols: &'c [GenColumn],
    functions: Vec<&'static Function>,
}

impl<'c> PqsGen<'c> {
    /// A generator for SQLite `version` (which decides the functions).
    pub fn new(cols: &'c [GenColumn], version: i32) -> PqsGen<'c> {
        let functions = functions::available(version)
            .into_iter()
            .filter(|f| match f.shape {
                Shape::Args(min, max) => (min..=max).all(|n| is_supported(f.name, n.into())),
                Shape::Hint => is_supported(f.name, 1),
                Shape::Likelihood => is_supported(f.name, 2),
                Shape::Iif => is_supported(f.name, 3),
                Shape::Like => is_supported(f.name, 2) && is_supported(f.name, 3),
                Shape::Glob => is_supported(f.name, 2),
                Shape::Printf => false,
            })
            .collect();
        PqsGen { cols, functions }
    }

    /// A predicate at most `depth` levels deep.
    pub fn predicate(&self, rng: &mut Rng, depth: u32) -> Expr {
        self.pred(rng, depth)
    }

    // ---- leaves ------------------------------------------------------

    fn leaf(&self, rng: &mut Rng) -> Expr {
        match self.cols.choose(rng) {
            Some(c) if rng.random_bool(0.75) => c.expr.clone(),
            _ => Expr::Literal(literals::literal(rng, None)),
        }
    }

    /// A literal: mostly of the kind a column of affinity `hint` holds,
    /// sometimes a value of the pivot row.
    fn literal(&self, rng: &mut Rng, hint: Option<Affinity>) -> Expr {
        if rng.random_bool(0.3) {
            if let Some(c) = self.cols.choose(rng) {
                if usable_literal(&c.pivot) {
                    return Expr::Literal(c.pivot.clone());
                }
            }
        }
        Expr::Literal(literals::literal(rng, hint))
    }

    fn affinity_of(&self, e: &Expr) -> Option<Affinity> {
        match e {
            Expr::Column(_) => self.cols.iter().find(|c| &c.expr == e).map(|c| c.affinity),
            _ => None,
        }
    }

    /// The other side of a comparison with `left`: its own pivot value, a
    /// literal of its kind, another column or an expression.
    fn counterpart(&self, rng: &mut Rng, left: &Expr, depth: u32) -> Expr {
        let own = self
            .cols
            .iter()
            .find(|c| &c.expr == left)
            .map(|c| &c.pivot)
            .filter(|v| usable_literal(v));
        match rng.random_range(0..100) {
            0..12 => match own {
                Some(v) => Expr::Literal(v.clone()),
                None => self.literal(rng, self.affinity_of(left)),
            },
            // Its own text in another case or with trailing spaces: equal
            // under NOCASE or RTRIM only.
            12..15 => match own {
                Some(Value::Text(t)) => Expr::Literal(Value::Text(match rng.random_range(0..3) {
                    0 => t.to_ascii_uppercase(),
                    1 => t.to_ascii_lowercase(),
                    _ => format!("{t}  "),
                })),
                _ => self.literal(rng, self.affinity_of(left)),
            },
            15..45 => self.literal(rng, self.affinity_of(left)),
            // A literal of another storage class than the column's values:
            // what affinity conversions are for.
            45..60 => Expr::Literal(match self.affinity_of(left) {
                Some(Affinity::Text) | Some(Affinity::Blob) => {
                    literals::literal(rng, Some(Affinity::Integer))
                }
                _ => Value::Text(literals::text(rng)),
            }),
            60..82 => match self.cols.choose(rng) {
                Some(c) => c.expr.clone(),
                None => self.literal(rng, None),
            },
            _ => self.expr(rng, depth),
        }
    }

    /// An operand of a comparison: mostly a column (sometimes under an
    /// operator that keeps or drops its affinity and collation), sometimes
    /// an expression.
    fn operand(&self, rng: &mut Rng, depth: u32) -> Expr {
        if depth > 0 && rng.random_bool(0.4) {
            return self.expr(rng, depth - 1);
        }
        let leaf = self.leaf(rng);
        if !matches!(leaf, Expr::Column(_)) || !rng.random_bool(0.2) {
            return leaf;
        }
        match rng.random_range(0..4) {
            0 => Expr::unary(UnaryOp::Plus, leaf),
            1 => Expr::Cast {
                expr: Box::new(leaf),
                ty: types::cast_type(rng),
            },
            2 => Expr::Collate {
                expr: Box::new(leaf),
                collation: types::collation(rng),
            },
            _ => Expr::func("likely", vec![leaf]),
        }
    }

    // ---- predicates --------------------------------------------------

    fn pred(&self, rng: &mut Rng, depth: u32) -> Expr {
        if depth == 0 {
            return self.comparison(rng, 0);
        }
        let d = depth - 1;
        match rng.random_range(0..100) {
            0..28 => self.comparison(rng, d),
            28..42 => {
                let op = if rng.random_bool(0.5) {
                    BinaryOp::And
                } else {
                    BinaryOp::Or
                };
                Expr::binary(op, self.pred(rng, d), self.pred(rng, d))
            }
            42..47 => Expr::not(self.pred(rng, d)),
            47..53 => Expr::IsNull {
                expr: Box::new(self.operand(rng, d)),
                negated: rng.random_bool(0.5),
            },
            53..57 => Expr::IsBool {
                expr: Box::new(if rng.random_bool(0.5) {
                    self.pred(rng, d)
                } else {
                    self.operand(rng, d)
                }),
                value: rng.random_bool(0.5),
                negated: rng.random_bool(0.5),
            },
            57..64 => {
                let expr = self.operand(rng, d);
                let low = self.counterpart(rng, &expr, d);
                let high = self.counterpart(rng, &expr, d);
                Expr::Between {
                    expr: Box::new(expr),
                    low: Box::new(low),
                    high: Box::new(high),
                    negated: rng.random_bool(0.3),
                    symmetric: false,
                }
            }
            64..71 => {
                let expr = self.operand(rng, d);
                let n = rng.random_range(1..=4);
                let list = (0..n)
                    .map(|_| {
                        let item = self.counterpart(rng, &expr, d);
                        // A COLLATE in an item would change the meaning
                        // of a one-item list (`x = +item`).
                        if has_collate(&item) {
                            self.literal(rng, None)
                        } else {
                            item
                        }
                    })
                    .collect();
                Expr::InList {
                    expr: Box::new(expr),
                    list,
                    negated: rng.random_bool(0.3),
                }
            }
            71..80 => self.like(rng, d),
            80..84 => {
                let cond = self.pred(rng, d);
                match rng.random_range(0..3) {
                    0 => Expr::func("likely", vec![cond]),
                    1 => Expr::func("unlikely", vec![cond]),
                    _ => Expr::func("likelihood", vec![cond, Expr::Literal(likelihood(rng))]),
                }
            }
            84..88 => Expr::Case {
                operand: None,
                branches: vec![(self.pred(rng, d), self.pred(rng, d))],
                otherwise: rng.random_bool(0.7).then(|| Box::new(self.pred(rng, d))),
            },
            // Any value is a truth value in SQLite.
            _ => self.expr(rng, d),
        }
    }

    fn comparison(&self, rng: &mut Rng, depth: u32) -> Expr {
        let op = operators::comparison(rng);
        let mut left = self.operand(rng, depth);
        let mut right = self.counterpart(rng, &left, depth);
        if rng.random_bool(0.08) {
            // An explicit collation on either side decides the comparison's.
            let collate = |e: Expr, rng: &mut Rng| Expr::Collate {
                expr: Box::new(e),
                collation: types::collation(rng),
            };
            if rng.random_bool(0.6) {
                left = collate(left, rng);
            } else {
                right = collate(right, rng);
            }
        }
        Expr::binary(op, left, right)
    }

    fn like(&self, rng: &mut Rng, depth: u32) -> Expr {
        let glob = rng.random_bool(0.3);
        let expr = self.operand(rng, depth);
        let pattern = if rng.random_bool(0.85) {
            Expr::Literal(Value::Text(if glob {
                literals::glob_pattern(rng)
            } else {
                literals::like_pattern(rng)
            }))
        } else {
            self.operand(rng, depth)
        };
        literals::like(rng, glob, expr, pattern)
    }

    // ---- expressions -------------------------------------------------

    fn expr(&self, rng: &mut Rng, depth: u32) -> Expr {
        if depth == 0 || rng.random_bool(0.25) {
            return self.leaf(rng);
        }
        let d = depth - 1;
        match rng.random_range(0..100) {
            0..10 => {
                let op = operators::unary(rng);
                Expr::unary(op, self.expr(rng, d))
            }
            10..32 => {
                let op = operators::arithmetic(rng);
                Expr::binary(op, self.expr(rng, d), self.expr(rng, d))
            }
            32..55 => self.function(rng, d),
            55..62 => self.case(rng, d),
            62..70 => Expr::Cast {
                expr: Box::new(self.expr(rng, d)),
                ty: types::cast_type(rng),
            },
            70..74 => Expr::Collate {
                expr: Box::new(self.expr(rng, d)),
                collation: types::collation(rng),
            },
            74..86 => self.pred(rng, d),
            _ => self.leaf(rng),
        }
    }

    fn case(&self, rng: &mut Rng, depth: u32) -> Expr {
        let n = rng.random_range(1..=2);
        let operand = rng.random_bool(0.5).then(|| self.operand(rng, depth));
        let branches = (0..n)
            .map(|_| {
                let when = match &operand {
                    Some(o) => self.counterpart(rng, o, depth),
                    None => self.pred(rng, depth),
                };
                (when, self.expr(rng, depth))
            })
            .collect();
        Expr::Case {
            operand: operand.map(Box::new),
            branches,
            otherwise: rng
                .random_bool(0.7)
                .then(|| Box::new(self.expr(rng, depth))),
        }
    }

    fn function(&self, rng: &mut Rng, depth: u32) -> Expr {
        let Some(&f) = self.functions.choose(rng) else {
            return self.leaf(rng);
        };
        let args = match f.shape {
            Shape::Args(min, max) => {
                let n = rng.random_range(min..=max);
                if f.name == "replace" {
                    // Literal `from` and `to`: nested replaces cannot
                    // multiply lengths.
                    vec![
                        self.expr(rng, depth),
                        Expr::Literal(Value::Text(literals::text(rng))),
                        Expr::Literal(Value::Text(literals::text(rng))),
                    ]
                } else {
                    (0..n).map(|_| self.expr(rng, depth)).collect()
                }
            }
            Shape::Hint => vec![self.pred(rng, depth)],
            Shape::Likelihood => vec![self.pred(rng, depth), Expr::Literal(likelihood(rng))],
            Shape::Iif => vec![
                self.pred(rng, depth),
                self.expr(rng, depth),
                self.expr(rng, depth),
            ],
            Shape::Like => {
                let mut args = vec![
                    Expr::Literal(Value::Text(literals::like_pattern(rng))),
                    self.expr(rng, depth),
                ];
                if rng.random_bool(0.3) {
                    args.push(Expr::Literal(Value::Text(literals::escape_char(rng))));
                }
                args
            }
            Shape::Glob => vec![
                Expr::Literal(Value::Text(literals::glob_pattern(rng))),
                self.expr(rng, depth),
            ],
            Shape::Printf => return self.leaf(rng),
        };
        Expr::func(f.name, args)
    }
}

/// A probability for `likelihood()`: a literal in [0, 1].
fn likelihood(rng: &mut Rng) -> Value {
    Value::Real(*[0.0, 0.0625, 0.5, 0.9375, 1.0].choose(rng).unwrap_or(&0.5))
}

/// Whether a pivot value can be written as a literal that SQLite reads
/// back as exactly that value.
fn usable_literal(v: &Value) -> bool {
    match v {
        Value::Text(s) => !s.contains(['\0', '\u{FFFD}']),
        Value::Real(r) => r.is_finite(),
        Value::Null | Value::Integer(_) | Value::Blob(_) => true,
        Value::Boolean(_) | Value::Decimal(_) => false,
    }
}
