//! Typed expressions in MySQL's dialect: the provider's menus over the
//! server toolkit's builders ([`lancet_server::ExprGen`]), with MySQL's
//! operators (`<=>`, `DIV`, `REGEXP`, bit operators), deterministic
//! functions, casts, CASE, and IN/EXISTS/ANY/ALL subqueries. Only
//! functions whose value depends on their arguments alone are used (no
//! RAND, NOW, UUID, CONNECTION_ID).

use crate::schema::{MySchema, MyTable, Sampled, TypedColumn};
use crate::types::{literal, Category, MyType};
use lancet_core::{BinaryOp, Expr, LikeKind, QueryGenerator, Rng, TypeName, UnaryOp};
use lancet_server::{Menu, Pqs, ServerSchema};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// Generates expressions over some columns (and, for subqueries, the schema).
pub type ExprGen<'s> = lancet_server::ExprGen<'s, MySchema>;

impl ServerSchema for MySchema {
    type Category = Category;
    type Table = MyTable;
    const PQS: Pqs<MyType> = crate::pqs::PQS;
    const MENU: Menu<MySchema> = Menu {
        leaf_share: 0.35,
        compound: |g, rng, cols, category, depth| compound(g, rng, cols, category, depth - 1),
        predicate,
        selective: |g, rng, cols| g.selective(rng, cols, Category::Int),
    };

    fn parts(&self) -> (&[MyTable], &Sampled) {
        (&self.relations, &self.sampled)
    }

    fn indexes(&self) -> Vec<lancet_core::schema::Index> {
        self.indexes.clone()
    }

    fn query_generator(&self) -> Box<dyn QueryGenerator + '_> {
        Box::new(crate::query::MyQueryGenerator::new(self.clone()))
    }
}

/// The columns an expression may read.
type Cols = [TypedColumn];

/// A category drawn at random.
pub fn any_category(rng: &mut Rng) -> Category {
    *Category::ALL.choose(rng).unwrap_or(&Category::Int)
}

/// An expression of `category` that is not a leaf: CASE, COALESCE,
/// IFNULL, NULLIF, a cast, or the category's operators and functions.
fn compound(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &Cols, category: Category, d: u32) -> Expr {
    match rng.random_range(0..10) {
        0 => g.case(rng, cols, category, d, 1.0),
        1 => {
            let name = *["COALESCE", "IFNULL", "NULLIF"]
                .choose(rng)
                .unwrap_or(&"COALESCE");
            g.call(rng, cols, name, &[category, category], d)
        }
        2 if category != Category::Date && category != Category::Blob => {
            // A cast from another category.
            let mut from = any_category(rng);
            if from == Category::Float && category == Category::Text && g.schema.avoids_known_bugs()
            {
                from = Category::Decimal;
            }
            let ty = TypeName(MyType::cast_target(category, rng).into());
            g.cast(rng, cols, from, ty, d)
        }
        _ => match category {
            Category::Int => int_expr(g, rng, cols, d),
            Category::Decimal | Category::Float => number_expr(g, rng, cols, category, d),
            Category::Text => text_expr(g, rng, cols, d),
            Category::Blob => g.cast(rng, cols, Category::Text, TypeName("BINARY".into()), d),
            Category::Date => g.call(rng, cols, "DATE", &[Category::Date], d),
        },
    }
}

/// Integer operators (DIV, XOR, shifts, bit operators) and functions.
fn int_expr(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &Cols, d: u32) -> Expr {
    const INT: Category = Category::Int;
    match rng.random_range(0..8) {
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
            g.binary(rng, cols, op, (INT, INT), d)
        }
        1 => {
            let op = *[BinaryOp::IntDiv, BinaryOp::BitXor]
                .choose(rng)
                .unwrap_or(&BinaryOp::IntDiv);
            g.binary(rng, cols, op, (INT, INT), d)
        }
        2 => Expr::unary(UnaryOp::Neg, g.expr(rng, cols, INT, d)),
        3 => {
            let name = *["ABS", "SIGN"].choose(rng).unwrap_or(&"ABS");
            g.call(rng, cols, name, &[INT], d)
        }
        4 => {
            let name = *["LENGTH", "CHAR_LENGTH", "ASCII", "CRC32"]
                .choose(rng)
                .unwrap_or(&"LENGTH");
            g.call(rng, cols, name, &[Category::Text], d)
        }
        5 => {
            let name = *["YEAR", "MONTH", "DAYOFMONTH", "TO_DAYS"]
                .choose(rng)
                .unwrap_or(&"YEAR");
            g.call(rng, cols, name, &[Category::Date], d)
        }
        6 => {
            let name = *["GREATEST", "LEAST"].choose(rng).unwrap_or(&"GREATEST");
            g.call(rng, cols, name, &[INT, INT], d)
        }
        _ => Expr::unary(UnaryOp::BitNot, g.expr(rng, cols, INT, d)),
    }
}

/// DECIMAL and floating-point arithmetic, rounding and sign functions.
fn number_expr(
    g: &mut ExprGen<'_>,
    rng: &mut Rng,
    cols: &Cols,
    category: Category,
    d: u32,
) -> Expr {
    match rng.random_range(0..4) {
        0 => {
            let op = *[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div]
                .choose(rng)
                .unwrap_or(&BinaryOp::Add);
            g.binary(rng, cols, op, (category, category), d)
        }
        1 => {
            let name = *["ROUND", "TRUNCATE"].choose(rng).unwrap_or(&"ROUND");
            let x = g.expr(rng, cols, category, d);
            Expr::func(name, vec![x, Expr::int(rng.random_range(0..3))])
        }
        2 => {
            let name = *["ABS", "CEIL", "FLOOR"].choose(rng).unwrap_or(&"ABS");
            g.call(rng, cols, name, &[category], d)
        }
        _ => Expr::unary(UnaryOp::Neg, g.expr(rng, cols, category, d)),
    }
}

/// String functions and casts to CHAR.
fn text_expr(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &Cols, d: u32) -> Expr {
    const TEXT: Category = Category::Text;
    match rng.random_range(0..6) {
        0 => g.binary(rng, cols, BinaryOp::Concat, (TEXT, TEXT), d),
        1 => {
            let name = *["LOWER", "UPPER", "TRIM", "LTRIM", "RTRIM", "REVERSE", "HEX"]
                .choose(rng)
                .unwrap_or(&"LOWER");
            g.call(rng, cols, name, &[TEXT], d)
        }
        2 => {
            let name = *["LEFT", "RIGHT"].choose(rng).unwrap_or(&"LEFT");
            let x = g.expr(rng, cols, TEXT, d);
            Expr::func(name, vec![x, Expr::int(rng.random_range(0..4))])
        }
        3 => {
            let x = g.expr(rng, cols, TEXT, d);
            let start = Expr::int(rng.random_range(-2..4));
            Expr::func(
                "SUBSTRING",
                vec![x, start, Expr::int(rng.random_range(0..3))],
            )
        }
        4 if !g.schema.avoids_known_bugs() => {
            let x = g.expr(rng, cols, TEXT, d);
            let a = g.expr(rng, cols, TEXT, 0);
            let b = g.expr(rng, cols, TEXT, 0);
            Expr::func("REPLACE", vec![x, a, b])
        }
        _ => g.cast(rng, cols, Category::Int, TypeName("CHAR".into()), d),
    }
}

/// A predicate: comparisons, null tests, BETWEEN, IN, LIKE, REGEXP,
/// subqueries, truth tests and the connectives, or a number read as a
/// truth value (MySQL's WHERE takes any type).
fn predicate(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &Cols, depth: u32) -> Expr {
    let category = match cols.choose(rng) {
        Some(c) if rng.random_bool(0.8) => c.category,
        _ => any_category(rng),
    };
    let d = depth.saturating_sub(1);
    match rng.random_range(0..20) {
        0..=6 => {
            // IS DISTINCT FROM prints as NOT (a <=> b) here.
            let op = *BinaryOp::COMPARISONS.choose(rng).unwrap_or(&BinaryOp::Eq);
            g.binary(rng, cols, op, (category, category), d)
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
            g.connective(rng, cols, op, d)
        }
        10 if depth > 0 => Expr::not(g.predicate(rng, cols, d)),
        11 => g.is_null(rng, cols, category, d),
        12 => g.between(rng, cols, category, (d, 0), 0.0),
        13 => g.in_list(rng, cols, category, (d, 0)),
        14 => g.like(rng, cols, LikeKind::Like, Category::Text, d),
        15 => g.regex(rng, cols, Category::Text, d),
        16 if g.subqueries && depth > 0 => {
            // Correlated with the outer columns half the time; EXISTS,
            // IN and ANY/ALL five, three and two in ten.
            let shape = rng.random_range(0..10);
            let q = if shape < 5 {
                g.exists(rng, cols, 1)
            } else if shape < 8 {
                g.in_subquery(rng, cols, 1)
            } else {
                g.quantified_subquery(rng, cols, 1)
            };
            q.unwrap_or_else(|| literal(rng, Category::Int))
        }
        17 if !g.schema.avoids_known_bugs() => g.is_bool(rng, cols, d),
        // A number as a truth value (on MariaDB compared with 0: a bare
        // column under NOT and OR in HAVING crashes it).
        _ => {
            let e = g.expr(rng, cols, Category::Int, d);
            if g.schema.avoids_known_bugs() {
                Expr::binary(BinaryOp::NotEq, e, Expr::int(0))
            } else {
                e
            }
        }
    }
}
