//! Typed expressions in DuckDB's dialect: the provider's menus over the
//! server toolkit's builders ([`lancet_server::ExprGen`]), with DuckDB's
//! operators and deterministic functions (no `random()`, `now()`,
//! `uuid()`), casts between categories DuckDB converts, CASE, and
//! EXISTS/IN/ANY/ALL subqueries. Integer division is the `divide`
//! function (`//`): `/` divides as DOUBLE in DuckDB.

use crate::schema::{DuckSchema, DuckTable, Sampled, TypedColumn};
use crate::types::{literal, Category, DuckType};
use lancet_core::{BinaryOp, Expr, LikeKind, QueryGenerator, Rng, UnaryOp};
use lancet_server::{Menu, Pqs, ServerSchema};
use rand::seq::IndexedRandom;
use rand::Rng as _;

pub use crate::schema::ExprGen;

/// The columns an expression may read.
type Cols = [TypedColumn];

impl ServerSchema for DuckSchema {
    type Category = Category;
    type Table = DuckTable;
    const PQS: Pqs<DuckType> = crate::pqs::PQS;
    const MENU: Menu<DuckSchema> = Menu {
        leaf_share: 0.35,
        compound: |g, rng, cols, category, depth| compound(g, rng, cols, category, depth - 1),
        predicate,
        // `c <= x` or `c >= x`: never over a list or struct, whose two
        // range comparisons make a BETWEEN (see `predicate`).
        selective: |g, rng, cols| {
            let flat: Vec<TypedColumn> = cols
                .iter()
                .filter(|c| !c.category.is_nested())
                .cloned()
                .collect();
            g.selective(rng, &flat, Category::Bool)
        },
    };

    fn parts(&self) -> (&[DuckTable], &Sampled) {
        (&self.relations, &self.sampled)
    }

    fn indexes(&self) -> Vec<lancet_core::schema::Index> {
        self.indexes.clone()
    }

    fn query_generator(&self) -> Box<dyn QueryGenerator + '_> {
        Box::new(crate::query::DuckQueryGenerator::new(self.clone()))
    }
}

/// A category drawn at random.
pub fn any_category(rng: &mut Rng) -> Category {
    *Category::ALL.choose(rng).unwrap_or(&Category::Int)
}

/// The categories DuckDB casts to `to` without refusing the pair (a value
/// may still fail to convert: a Conversion error, expected).
fn cast_sources(to: Category) -> &'static [Category] {
    use Category::*;
    match to {
        Int => &[Decimal, Float, Text, Bool],
        Decimal => &[Int, Float, Text],
        Float => &[Int, Decimal, Text],
        Text => &[
            Int, Decimal, Float, Bool, Date, Timestamp, Time, Interval, List, Struct, Map,
        ],
        Blob => &[Text],
        Bool => &[Int, Text],
        Date => &[Text, Timestamp],
        Timestamp => &[Date, Text],
        Time => &[Text, Timestamp],
        Interval => &[Text],
        // Another integer list (`BIGINT[]` to `INTEGER[]` may not fit).
        List => &[List],
        Struct => &[Struct],
        Map => &[Map],
    }
}

/// One of `names`.
fn one(rng: &mut Rng, names: &[&'static str]) -> &'static str {
    names.choose(rng).copied().unwrap_or(names[0])
}

/// An expression of `category` that is not a leaf: for a twentieth a list
/// function's scalar ([`crate::lists`]) where the category has one, for
/// another twentieth what reads a map back ([`crate::maps`]), else
/// CASE, COALESCE, IFNULL, NULLIF, GREATEST, LEAST, a cast, or the
/// category's operators and functions.
fn compound(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &Cols, category: Category, d: u32) -> Expr {
    if rng.random_range(0..20) == 0 {
        if let Some(e) = crate::lists::scalar(g, rng, cols, category, d) {
            return e;
        }
    }
    if rng.random_range(0..20) == 0 {
        if let Some(e) = crate::maps::scalar(g, rng, cols, category, d) {
            return e;
        }
    }
    if category == Category::Int && rng.random_range(0..30) == 0 {
        return crate::structs::field(g, rng, cols, d);
    }
    match rng.random_range(0..10) {
        0 => g.case(rng, cols, category, d, 0.8),
        1 => {
            let name = one(rng, &["COALESCE", "IFNULL", "NULLIF", "GREATEST", "LEAST"]);
            g.call(rng, cols, name, &[category, category], d)
        }
        2 => {
            let from = *cast_sources(category)
                .choose(rng)
                .unwrap_or(&Category::Text);
            g.cast(rng, cols, from, DuckType::cast_target(category), d)
        }
        _ => match category {
            Category::Int => int_expr(g, rng, cols, d),
            Category::Decimal | Category::Float => number_expr(g, rng, cols, category, d),
            Category::Text => text_expr(g, rng, cols, d),
            Category::Bool => g.predicate(rng, cols, d),
            // No `||`: over a NULL constant DuckDB types it as NULL, which
            // a view or a materialized step stores as INTEGER, and an
            // INTEGER never compares with a BLOB (a Binder error).
            Category::Blob => {
                let ty = DuckType::cast_target(Category::Blob);
                g.cast(rng, cols, Category::Text, ty, d)
            }
            Category::Date | Category::Timestamp | Category::Time | Category::Interval => {
                temporal_expr(g, rng, cols, category, d)
            }
            Category::List => crate::lists::expr(g, rng, cols, d),
            Category::Struct => crate::structs::expr(g, rng, cols, d),
            Category::Map => crate::maps::expr(g, rng, cols, d),
        },
    }
}

/// Integer operators and functions.
fn int_expr(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &Cols, d: u32) -> Expr {
    const INT: Category = Category::Int;
    match rng.random_range(0..9) {
        0 | 1 => {
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
        2 => {
            // Integer division (`//`) and exclusive or have no operator
            // the core printer spells DuckDB's way: their functions.
            let name = one(rng, &["divide", "xor"]);
            g.call(rng, cols, name, &[INT, INT], d)
        }
        3 => Expr::unary(UnaryOp::Neg, g.expr(rng, cols, INT, d)),
        4 => {
            let name = one(rng, &["abs", "sign"]);
            g.call(rng, cols, name, &[INT], d)
        }
        5 => {
            let name = one(rng, &["length", "strlen", "ascii"]);
            g.call(rng, cols, name, &[Category::Text], d)
        }
        6 => {
            let name = one(rng, &["year", "month", "day", "dayofweek"]);
            g.call(rng, cols, name, &[Category::Date], d)
        }
        7 if g.subqueries => g
            .scalar_count(rng, cols, 1)
            .unwrap_or_else(|| literal(rng, INT)),
        _ => Expr::unary(UnaryOp::BitNot, g.expr(rng, cols, INT, d)),
    }
}

/// DECIMAL and floating-point arithmetic, rounding and sign functions.
/// No division of decimals: DuckDB divides them as DOUBLE, and a
/// "decimal" that is not exact would break exact sums.
fn number_expr(
    g: &mut ExprGen<'_>,
    rng: &mut Rng,
    cols: &Cols,
    category: Category,
    d: u32,
) -> Expr {
    match rng.random_range(0..4) {
        0 => {
            let ops: &[BinaryOp] = if category == Category::Float {
                &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div]
            } else {
                &[BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul]
            };
            let op = *ops.choose(rng).unwrap_or(&BinaryOp::Add);
            g.binary(rng, cols, op, (category, category), d)
        }
        1 => {
            let name = one(rng, &["round", "trunc"]);
            let x = g.expr(rng, cols, category, d);
            if name == "round" {
                Expr::func(name, vec![x, Expr::int(rng.random_range(0..3))])
            } else {
                Expr::func(name, vec![x])
            }
        }
        2 => {
            let name = one(rng, &["abs", "ceil", "floor"]);
            g.call(rng, cols, name, &[category], d)
        }
        _ => Expr::unary(UnaryOp::Neg, g.expr(rng, cols, category, d)),
    }
}

/// String functions and concatenation.
fn text_expr(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &Cols, d: u32) -> Expr {
    const TEXT: Category = Category::Text;
    match rng.random_range(0..6) {
        // `concat`, not `||`: `s || NULL` is typed NULL (see the BLOB arm
        // of `compound`), and an INTEGER column made of it takes no text
        // function.
        0 => g.call(rng, cols, "concat", &[TEXT, TEXT], d),
        1 => {
            let name = one(
                rng,
                &["lower", "upper", "trim", "ltrim", "rtrim", "reverse"],
            );
            g.call(rng, cols, name, &[TEXT], d)
        }
        2 => {
            let name = one(rng, &["left", "right"]);
            let x = g.expr(rng, cols, TEXT, d);
            Expr::func(name, vec![x, Expr::int(rng.random_range(0..4))])
        }
        3 => {
            // No negative start: DuckDB's `substring(c, -2, 1)` over a
            // column gives another string than over a constant (a bug
            // of 1.3 to 1.5, in *Bugs lancet has found*), which would
            // flood every run.
            let x = g.expr(rng, cols, TEXT, d);
            let start = Expr::int(rng.random_range(0..4));
            Expr::func(
                "substring",
                vec![x, start, Expr::int(rng.random_range(0..3))],
            )
        }
        4 => {
            let x = g.expr(rng, cols, TEXT, d);
            let a = g.expr(rng, cols, TEXT, 0);
            let b = g.expr(rng, cols, TEXT, 0);
            Expr::func("replace", vec![x, a, b])
        }
        _ => {
            let name = one(rng, &["concat", "concat_ws"]);
            g.call(rng, cols, name, &[TEXT, TEXT], d)
        }
    }
}

/// Dates, timestamps, times and intervals: truncation, parts and
/// interval arithmetic.
fn temporal_expr(
    g: &mut ExprGen<'_>,
    rng: &mut Rng,
    cols: &Cols,
    category: Category,
    d: u32,
) -> Expr {
    use Category::*;
    match category {
        Timestamp if rng.random_bool(0.5) => {
            let x = g.expr(rng, cols, Timestamp, d);
            let unit = one(rng, &["year", "month", "day", "hour"]);
            Expr::func(
                "date_trunc",
                vec![Expr::Literal(lancet_core::Value::Text(unit.into())), x],
            )
        }
        Timestamp => g.binary(rng, cols, BinaryOp::Add, (Timestamp, Interval), d),
        Interval if rng.random_bool(0.5) => {
            g.binary(rng, cols, BinaryOp::Add, (Interval, Interval), d)
        }
        Interval => {
            // They take INTEGER or BIGINT only: a HUGEINT is cast down.
            let name = one(rng, &["to_days", "to_hours", "to_months"]);
            let n = g.cast(rng, cols, Int, DuckType::cast_target(Int), d);
            Expr::func(name, vec![n])
        }
        // DATE + INTEGER exists for INTEGER only (not BIGINT or a literal):
        // a timestamp's day instead.
        Date => g.cast(rng, cols, Timestamp, DuckType::cast_target(Date), d),
        _ => g.cast(rng, cols, Timestamp, DuckType::cast_target(Time), d),
    }
}

/// A predicate: comparisons, null and truth tests, BETWEEN, IN, LIKE and
/// ILIKE, regular expressions, subqueries, connectives, or a BOOLEAN
/// expression.
fn predicate(g: &mut ExprGen<'_>, rng: &mut Rng, cols: &Cols, depth: u32) -> Expr {
    let category = match cols.choose(rng) {
        Some(c) if rng.random_bool(0.8) => c.category,
        _ => any_category(rng),
    };
    let d = depth.saturating_sub(1);
    match rng.random_range(0..20) {
        0..=6 => {
            // Lists and structs only by (in)equality: two range
            // comparisons of one make a BETWEEN, which DuckDB 1.5.6
            // refuses in a filter (see BETWEEN below).
            let ops: &[BinaryOp] = match category {
                _ if category.is_nested() => &[
                    BinaryOp::Eq,
                    BinaryOp::NotEq,
                    BinaryOp::IsDistinctFrom,
                    BinaryOp::IsNotDistinctFrom,
                ],
                _ => &BinaryOp::COMPARISONS,
            };
            let op = *ops.choose(rng).unwrap_or(&BinaryOp::Eq);
            g.binary(rng, cols, op, (category, category), d)
        }
        7..=9 if depth > 0 => {
            let op = *[BinaryOp::And, BinaryOp::Or]
                .choose(rng)
                .unwrap_or(&BinaryOp::And);
            g.connective(rng, cols, op, d)
        }
        10 if depth > 0 => Expr::not(g.predicate(rng, cols, d)),
        11 => g.is_null(rng, cols, category, d),
        // No BETWEEN over lists or structs: DuckDB 1.5.6 refuses it in a
        // filter ("Invalid type for BETWEEN", a bug in *Bugs lancet has
        // found*), which would flood every run.
        12 if !category.is_nested() => g.between(rng, cols, category, (d, 0), 0.0),
        13 => g.in_list(rng, cols, category, (d, 0)),
        14 => {
            let kind = *[LikeKind::Like, LikeKind::ILike, LikeKind::Like]
                .choose(rng)
                .unwrap_or(&LikeKind::Like);
            g.like(rng, cols, kind, Category::Text, d)
        }
        15 => {
            let x = g.expr(rng, cols, Category::Text, d);
            let p = lancet_core::patterns::REGEX
                .choose(rng)
                .copied()
                .unwrap_or("a");
            Expr::func(
                "regexp_matches",
                vec![x, Expr::Literal(lancet_core::Value::Text(p.into()))],
            )
        }
        16 if g.subqueries && depth > 0 => {
            let shape = rng.random_range(0..10);
            let q = if shape < 5 {
                g.exists(rng, cols, 1)
            } else if shape < 8 {
                g.in_subquery(rng, cols, 1)
            } else {
                g.quantified_subquery(rng, cols, 1)
            };
            q.unwrap_or_else(|| literal(rng, Category::Bool))
        }
        17 => g.is_bool(rng, cols, d),
        _ => g.expr(rng, cols, Category::Bool, d),
    }
}
