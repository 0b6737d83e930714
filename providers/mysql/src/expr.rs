//! Typed expressions in MySQL's dialect: a generator per result category,
//! with MySQL's operators (`<=>`, `DIV`, `REGEXP`, bit operators),
//! deterministic functions, casts, CASE, and IN/EXISTS/ALL-free
//! subqueries. Only functions whose value depends on their arguments
//! alone are used (no RAND, NOW, UUID, CONNECTION_ID).

use crate::schema::{MySchema, TypedColumn};
use crate::types::{literal, Category, MyType};
use lancet_core::{
    BinaryOp, Expr, FromClause, LikeKind, Query, Rng, Select, SelectItem, TableFactor, TypeName,
    UnaryOp,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// Generates expressions over some columns (and, for subqueries, the schema).
pub struct ExprGen<'s> {
    pub schema: &'s MySchema,
    /// Subquery aliases are numbered so that nested ones never clash.
    pub next_alias: u32,
    /// Whether subqueries may appear (not in CHECK, DEFAULT, generated
    /// columns or index expressions).
    pub subqueries: bool,
}

impl<'s> ExprGen<'s> {
    pub fn new(schema: &'s MySchema, subqueries: bool) -> ExprGen<'s> {
        ExprGen {
            schema,
            next_alias: 0,
            subqueries,
        }
    }

    /// A leaf: a column of the category (mostly), a value sampled from
    /// the tables, or a literal.
    fn leaf(&mut self, rng: &mut Rng, cols: &[TypedColumn], category: Category) -> Expr {
        let matching: Vec<&TypedColumn> = cols.iter().filter(|c| c.category == category).collect();
        if rng.random_bool(0.7) {
            if let Some(c) = matching.choose(rng) {
                return c.expr.clone();
            }
        }
        if rng.random_bool(0.5) {
            let sampled: Vec<_> = self
                .schema
                .sampled
                .0
                .iter()
                .filter(|(c, _)| *c == category)
                .collect();
            if let Some((_, v)) = sampled.choose(rng) {
                return Expr::Literal(v.clone());
            }
        }
        literal(rng, category)
    }

    /// An expression whose value is of `category`.
    pub fn expr(
        &mut self,
        rng: &mut Rng,
        cols: &[TypedColumn],
        category: Category,
        depth: u32,
    ) -> Expr {
        if depth == 0 || rng.random_bool(0.35) {
            return self.leaf(rng, cols, category);
        }
        let d = depth - 1;
        match rng.random_range(0..10) {
            0 => {
                let cond = self.predicate(rng, cols, d);
                let then = self.expr(rng, cols, category, d);
                let otherwise = self.expr(rng, cols, category, d);
                Expr::Case {
                    operand: None,
                    branches: vec![(cond, then)],
                    otherwise: Some(Box::new(otherwise)),
                }
            }
            1 => {
                let name = *["COALESCE", "IFNULL", "NULLIF"]
                    .choose(rng)
                    .unwrap_or(&"COALESCE");
                let a = self.expr(rng, cols, category, d);
                let b = self.expr(rng, cols, category, d);
                Expr::func(name, vec![a, b])
            }
            2 if category != Category::Date && category != Category::Blob => {
                // A cast from another category.
                let mut from = *Category::ALL.choose(rng).unwrap_or(&Category::Int);
                if from == Category::Float
                    && category == Category::Text
                    && self.schema.avoids_known_bugs()
                {
                    from = Category::Decimal;
                }
                let inner = self.expr(rng, cols, from, d);
                Expr::Cast {
                    expr: Box::new(inner),
                    ty: TypeName(MyType::cast_target(category, rng).into()),
                }
            }
            _ => self.typed_expr(rng, cols, category, d),
        }
    }

    /// Operators and functions of one category.
    fn typed_expr(
        &mut self,
        rng: &mut Rng,
        cols: &[TypedColumn],
        category: Category,
        d: u32,
    ) -> Expr {
        match category {
            Category::Int => match rng.random_range(0..8) {
                0 => {
                    let op = *[
                        BinaryOp::Add,
                        BinaryOp::Sub,
                        BinaryOp::Mul,
                        BinaryOp::Mod,
                        BinaryOp::BitAnd,
                        BinaryOp::BitOr,
                        BinaryOp::ShiftLeft,
                        BinaryOp::ShiftRight,
                    ]
                    .choose(rng)
                    .unwrap_or(&BinaryOp::Add);
                    let a = self.expr(rng, cols, Category::Int, d);
                    let b = self.expr(rng, cols, Category::Int, d);
                    Expr::binary(op, a, b)
                }
                1 => {
                    let a = self.expr(rng, cols, Category::Int, d);
                    let b = self.expr(rng, cols, Category::Int, d);
                    let op = *[BinaryOp::IntDiv, BinaryOp::BitXor]
                        .choose(rng)
                        .unwrap_or(&BinaryOp::IntDiv);
                    Expr::binary(op, a, b)
                }
                2 => Expr::unary(UnaryOp::Neg, self.expr(rng, cols, Category::Int, d)),
                3 => {
                    let name = *["ABS", "SIGN"].choose(rng).unwrap_or(&"ABS");
                    Expr::func(name, vec![self.expr(rng, cols, Category::Int, d)])
                }
                4 => {
                    let name = *["LENGTH", "CHAR_LENGTH", "ASCII", "CRC32"]
                        .choose(rng)
                        .unwrap_or(&"LENGTH");
                    Expr::func(name, vec![self.expr(rng, cols, Category::Text, d)])
                }
                5 => {
                    let x = self.expr(rng, cols, Category::Date, d);
                    let name = *["YEAR", "MONTH", "DAYOFMONTH", "TO_DAYS"]
                        .choose(rng)
                        .unwrap_or(&"YEAR");
                    Expr::func(name, vec![x])
                }
                6 => {
                    let name = *["GREATEST", "LEAST"].choose(rng).unwrap_or(&"GREATEST");
                    let a = self.expr(rng, cols, Category::Int, d);
                    let b = self.expr(rng, cols, Category::Int, d);
                    Expr::func(name, vec![a, b])
                }
                _ => Expr::unary(UnaryOp::BitNot, self.expr(rng, cols, Category::Int, d)),
            },
            Category::Decimal | Category::Float => match rng.random_range(0..4) {
                0 => {
                    let op = *[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div]
                        .choose(rng)
                        .unwrap_or(&BinaryOp::Add);
                    let a = self.expr(rng, cols, category, d);
                    let b = self.expr(rng, cols, category, d);
                    Expr::binary(op, a, b)
                }
                1 => {
                    let name = *["ROUND", "TRUNCATE"].choose(rng).unwrap_or(&"ROUND");
                    let x = self.expr(rng, cols, category, d);
                    Expr::func(name, vec![x, Expr::int(rng.random_range(0..3))])
                }
                2 => {
                    let name = *["ABS", "CEIL", "FLOOR"].choose(rng).unwrap_or(&"ABS");
                    Expr::func(name, vec![self.expr(rng, cols, category, d)])
                }
                _ => Expr::unary(UnaryOp::Neg, self.expr(rng, cols, category, d)),
            },
            Category::Text => match rng.random_range(0..6) {
                0 => {
                    let a = self.expr(rng, cols, Category::Text, d);
                    let b = self.expr(rng, cols, Category::Text, d);
                    Expr::binary(BinaryOp::Concat, a, b)
                }
                1 => {
                    let name = *["LOWER", "UPPER", "TRIM", "LTRIM", "RTRIM", "REVERSE", "HEX"]
                        .choose(rng)
                        .unwrap_or(&"LOWER");
                    Expr::func(name, vec![self.expr(rng, cols, Category::Text, d)])
                }
                2 => {
                    let name = *["LEFT", "RIGHT"].choose(rng).unwrap_or(&"LEFT");
                    let x = self.expr(rng, cols, Category::Text, d);
                    Expr::func(name, vec![x, Expr::int(rng.random_range(0..4))])
                }
                3 => {
                    let x = self.expr(rng, cols, Category::Text, d);
                    Expr::func(
                        "SUBSTRING",
                        vec![
                            x,
                            Expr::int(rng.random_range(-2..4)),
                            Expr::int(rng.random_range(0..3)),
                        ],
                    )
                }
                4 if !self.schema.avoids_known_bugs() => {
                    let x = self.expr(rng, cols, Category::Text, d);
                    let a = self.expr(rng, cols, Category::Text, 0);
                    let b = self.expr(rng, cols, Category::Text, 0);
                    Expr::func("REPLACE", vec![x, a, b])
                }
                _ => {
                    let x = self.expr(rng, cols, Category::Int, d);
                    Expr::Cast {
                        expr: Box::new(x),
                        ty: TypeName("CHAR".into()),
                    }
                }
            },
            Category::Blob => {
                let x = self.expr(rng, cols, Category::Text, d);
                Expr::Cast {
                    expr: Box::new(x),
                    ty: TypeName("BINARY".into()),
                }
            }
            Category::Date => {
                let x = self.expr(rng, cols, Category::Date, d);
                Expr::func("DATE", vec![x])
            }
        }
    }

    /// A predicate: comparisons, null tests, BETWEEN, IN, LIKE, REGEXP,
    /// subqueries, truth tests and the connectives, or a number read as a
    /// truth value (MySQL's WHERE takes any type).
    pub fn predicate(&mut self, rng: &mut Rng, cols: &[TypedColumn], depth: u32) -> Expr {
        let category = match cols.choose(rng) {
            Some(c) if rng.random_bool(0.8) => c.category,
            _ => *Category::ALL.choose(rng).unwrap_or(&Category::Int),
        };
        let d = depth.saturating_sub(1);
        match rng.random_range(0..20) {
            0..=6 => {
                // IS DISTINCT FROM prints as NOT (a <=> b) here.
                let op = *BinaryOp::COMPARISONS.choose(rng).unwrap_or(&BinaryOp::Eq);
                let a = self.expr(rng, cols, category, d);
                let b = self.expr(rng, cols, category, d);
                Expr::binary(op, a, b)
            }
            7..=9 if depth > 0 => {
                let op = *[
                    BinaryOp::And,
                    BinaryOp::Or,
                    BinaryOp::And,
                    BinaryOp::Or,
                    BinaryOp::Xor,
                ]
                .choose(rng)
                .unwrap_or(&BinaryOp::And);
                let a = self.predicate(rng, cols, d);
                let b = self.predicate(rng, cols, d);
                Expr::binary(op, a, b)
            }
            10 if depth > 0 => Expr::not(self.predicate(rng, cols, d)),
            11 => Expr::IsNull {
                expr: Box::new(self.expr(rng, cols, category, d)),
                negated: rng.random_bool(0.5),
            },
            12 => Expr::Between {
                expr: Box::new(self.expr(rng, cols, category, d)),
                low: Box::new(self.expr(rng, cols, category, 0)),
                high: Box::new(self.expr(rng, cols, category, 0)),
                negated: rng.random_bool(0.3),
                symmetric: false,
            },
            13 => {
                let n = rng.random_range(1..=3);
                Expr::InList {
                    expr: Box::new(self.expr(rng, cols, category, d)),
                    list: (0..n).map(|_| self.expr(rng, cols, category, 0)).collect(),
                    negated: rng.random_bool(0.3),
                }
            }
            14 => Expr::Like {
                kind: LikeKind::Like,
                expr: Box::new(self.expr(rng, cols, Category::Text, d)),
                pattern: Box::new(Expr::Literal(lancet_core::Value::Text(
                    lancet_core::patterns::LIKE
                        .choose(rng)
                        .unwrap_or(&"%")
                        .to_string(),
                ))),
                escape: None,
                negated: rng.random_bool(0.3),
            },
            15 => Expr::binary(
                BinaryOp::RegexMatch,
                self.expr(rng, cols, Category::Text, d),
                Expr::Literal(lancet_core::Value::Text(
                    lancet_core::patterns::REGEX
                        .choose(rng)
                        .unwrap_or(&"^a")
                        .to_string(),
                )),
            ),
            16 if self.subqueries && depth > 0 => self.subquery_predicate(rng, cols),
            17 if !self.schema.avoids_known_bugs() => Expr::IsBool {
                expr: Box::new(self.predicate(rng, cols, d)),
                value: rng.random_bool(0.5),
                negated: rng.random_bool(0.5),
            },
            // A number as a truth value (on MariaDB compared with 0: a bare
            // column under NOT and OR in HAVING crashes it).
            _ => {
                let e = self.expr(rng, cols, Category::Int, d);
                if self.schema.avoids_known_bugs() {
                    Expr::binary(BinaryOp::NotEq, e, Expr::int(0))
                } else {
                    e
                }
            }
        }
    }

    /// `x [NOT] IN (SELECT ...)` or `[NOT] EXISTS (SELECT ...)` over a table
    /// of the schema, correlated with the outer columns half the time.
    fn subquery_predicate(&mut self, rng: &mut Rng, outer: &[TypedColumn]) -> Expr {
        let Some(table) = self.schema.relations.choose(rng).cloned() else {
            return literal(rng, Category::Int);
        };
        let alias = format!("s{}", self.next_alias);
        self.next_alias += 1;
        let inner = table.typed_columns(&alias);
        let mut visible = inner.clone();
        if rng.random_bool(0.5) {
            visible.extend(outer.iter().cloned());
        }
        let selection = rng
            .random_bool(0.7)
            .then(|| self.predicate(rng, &visible, 1));
        let from = Some(FromClause {
            first: TableFactor::Table {
                name: table.name.clone(),
                alias: Some(alias.clone()),
                indexed_by: None,
            },
            joins: vec![],
        });
        let Some(column) = inner.choose(rng).cloned() else {
            return literal(rng, Category::Int);
        };
        let shape = rng.random_range(0..10);
        if shape < 5 {
            let query = Query::select(Select {
                items: vec![SelectItem::Expr {
                    expr: Expr::int(1),
                    alias: None,
                }],
                from,
                selection,
                ..Select::default()
            });
            return Expr::Exists {
                query: Box::new(query),
                negated: rng.random_bool(0.3),
            };
        }
        let probe = self.expr(rng, outer, column.category, 1);
        let query = Box::new(Query::select(Select {
            items: vec![SelectItem::Expr {
                expr: column.expr,
                alias: None,
            }],
            from,
            selection,
            ..Select::default()
        }));
        if shape < 8 {
            Expr::InSubquery {
                expr: Box::new(probe),
                query,
                negated: rng.random_bool(0.3),
            }
        } else {
            // `x op ANY|ALL (SELECT ...)`: NULLs and empty subqueries give
            // the three-valued cases IN does not reach.
            Expr::QuantifiedSubquery {
                expr: Box::new(probe),
                op: *BinaryOp::COMPARISONS[..6]
                    .choose(rng)
                    .unwrap_or(&BinaryOp::Eq),
                all: rng.random_bool(0.5),
                query,
            }
        }
    }

    /// `column op value` with a value sampled from the data: a comparison
    /// that selects some rows, for widening a random predicate.
    pub fn selective_comparison(&mut self, rng: &mut Rng, cols: &[TypedColumn]) -> Expr {
        let Some(c) = cols.choose(rng) else {
            return literal(rng, Category::Int);
        };
        let value = self.leaf(rng, &[], c.category);
        let op = *[BinaryOp::Eq, BinaryOp::LtEq, BinaryOp::GtEq]
            .choose(rng)
            .unwrap_or(&BinaryOp::Eq);
        Expr::binary(op, c.expr.clone(), value)
    }
}
