//! Printer cases: operators, precedence, COLLATE, predicates, subqueries,
//! CASE, CAST and function calls.

use super::pick;
use crate::printer::trees::*;
use crate::printer::{sp_shape, Tested};
use lancet_core::ast::*;
use lancet_core::value::Value;
use sqlparser::ast as sp;

pub(super) fn unary_operators(t: &Tested) {
    t.verified_expr(&un(UnaryOp::Neg, col("a")), "-a");
    t.verified_expr(&un(UnaryOp::Plus, col("a")), "+a");
    t.verified_expr(&un(UnaryOp::Not, col("a")), "NOT a");
    // sqlparser knows prefix `~` only in its PostgreSQL dialect.
    if t.is("postgres") {
        t.verified_expr(&un(UnaryOp::BitNot, col("a")), "~a");
        t.verified_expr(&un(UnaryOp::BitNot, int(-1)), "~(-1)");
    } else {
        t.printed(&un(UnaryOp::BitNot, col("a")), "~a");
    }
    t.same_shape(&un(UnaryOp::Neg, col("a")));
    t.same_shape(&un(UnaryOp::Not, col("a")));
}

pub(super) fn binary_operators(t: &Tested) {
    use BinaryOp::*;
    // (op, SQLite, PostgreSQL, MySQL)
    let cases: &[(BinaryOp, &str, &str, &str)] = &[
        (Add, "a + b", "a + b", "a + b"),
        (Sub, "a - b", "a - b", "a - b"),
        (Mul, "a * b", "a * b", "a * b"),
        (Div, "a / b", "a / b", "a / b"),
        (Mod, "a % b", "a % b", "a % b"),
        // MySQL reads `||` as OR.
        (Concat, "a || b", "a || b", "CONCAT(a, b)"),
        (BitAnd, "a & b", "a & b", "a & b"),
        (BitOr, "a | b", "a | b", "a | b"),
        (ShiftLeft, "a << b", "a << b", "a << b"),
        (ShiftRight, "a >> b", "a >> b", "a >> b"),
        (Eq, "a = b", "a = b", "a = b"),
        (NotEq, "a <> b", "a <> b", "a <> b"),
        (Lt, "a < b", "a < b", "a < b"),
        (LtEq, "a <= b", "a <= b", "a <= b"),
        (Gt, "a > b", "a > b", "a > b"),
        (GtEq, "a >= b", "a >= b", "a >= b"),
        (
            IsNotDistinctFrom,
            "a IS b",
            "a IS NOT DISTINCT FROM b",
            "a <=> b",
        ),
        (
            IsDistinctFrom,
            "a IS NOT b",
            "a IS DISTINCT FROM b",
            "NOT (a <=> b)",
        ),
        (And, "a AND b", "a AND b", "a AND b"),
        (Or, "a OR b", "a OR b", "a OR b"),
    ];
    for &(op, s, p, m) in cases {
        let e = bin(op, col("a"), col("b"));
        let expected = pick(t, s, p, m);
        // sqlparser has `<<`/`>>` only for PostgreSQL, and no general
        // `a IS b` (SQLite's null-safe comparison).
        let unsupported = matches!(op, ShiftLeft | ShiftRight) && !t.is("postgres")
            || matches!(op, IsNotDistinctFrom | IsDistinctFrom) && t.is("sqlite");
        if unsupported {
            t.printed(&e, expected);
        } else {
            t.verified_expr(&e, expected);
            t.same_shape(&e);
        }
    }
    // MySQL's own operators, which only its generator makes.
    if t.is("mysql") {
        for (op, m) in [(IntDiv, "a DIV b"), (BitXor, "a ^ b"), (Xor, "a XOR b")] {
            t.verified_expr(&bin(op, col("a"), col("b")), m);
        }
    }
}

/// Nested trees whose meaning depends on parentheses.
// Long because: a table of cases, one tree and its expected text each.
pub(super) fn precedence_sensitive_nesting(t: &Tested) {
    use BinaryOp::*;
    let (a, b, c) = (col("a"), col("b"), col("c"));
    let cases: Vec<(Expr, &str)> = vec![
        (
            un(UnaryOp::Not, bin(Eq, a.clone(), b.clone())),
            "NOT (a = b)",
        ),
        (un(UnaryOp::Neg, int(-1)), "-(-1)"),
        (un(UnaryOp::Neg, un(UnaryOp::Neg, a.clone())), "-(-a)"),
        (un(UnaryOp::Plus, un(UnaryOp::Neg, a.clone())), "+(-a)"),
        (un(UnaryOp::Neg, un(UnaryOp::Plus, a.clone())), "-(+a)"),
        (un(UnaryOp::Not, un(UnaryOp::Not, a.clone())), "NOT (NOT a)"),
        (un(UnaryOp::Neg, bin(Add, a.clone(), b.clone())), "-(a + b)"),
        (
            bin(Sub, a.clone(), bin(Sub, b.clone(), c.clone())),
            "a - (b - c)",
        ),
        (
            bin(Sub, bin(Sub, a.clone(), b.clone()), c.clone()),
            "(a - b) - c",
        ),
        (bin(Sub, a.clone(), int(-1)), "a - (-1)"),
        (bin(Sub, int(-1), a.clone()), "(-1) - a"),
        (
            bin(Mul, a.clone(), bin(Add, b.clone(), c.clone())),
            "a * (b + c)",
        ),
        (
            bin(Add, bin(Mul, a.clone(), b.clone()), c.clone()),
            "(a * b) + c",
        ),
        (
            bin(Div, a.clone(), bin(Div, b.clone(), c.clone())),
            "a / (b / c)",
        ),
        (
            bin(And, bin(Or, a.clone(), b.clone()), c.clone()),
            "(a OR b) AND c",
        ),
        (
            bin(Or, a.clone(), bin(And, b.clone(), c.clone())),
            "a OR (b AND c)",
        ),
        (
            un(UnaryOp::Not, bin(And, a.clone(), b.clone())),
            "NOT (a AND b)",
        ),
        (
            bin(And, un(UnaryOp::Not, a.clone()), b.clone()),
            "(NOT a) AND b",
        ),
        (
            bin(Eq, a.clone(), bin(Eq, b.clone(), c.clone())),
            "a = (b = c)",
        ),
        (
            bin(Lt, bin(Lt, a.clone(), b.clone()), c.clone()),
            "(a < b) < c",
        ),
        (
            bin(BitAnd, a.clone(), bin(BitOr, b.clone(), c.clone())),
            "a & (b | c)",
        ),
        (
            Expr::IsNull {
                expr: Box::new(Expr::is_null(a.clone())),
                negated: false,
            },
            "(a IS NULL) IS NULL",
        ),
        (
            Expr::is_null(bin(Add, a.clone(), int(1))),
            "(a + 1) IS NULL",
        ),
        (
            Expr::Between {
                expr: Box::new(a.clone()),
                low: Box::new(bin(And, b.clone(), c.clone())),
                high: Box::new(int(2)),
                negated: false,
                symmetric: false,
            },
            "a BETWEEN (b AND c) AND 2",
        ),
        (
            bin(
                And,
                Expr::Between {
                    expr: Box::new(a.clone()),
                    low: Box::new(int(1)),
                    high: Box::new(int(2)),
                    negated: true,
                    symmetric: false,
                },
                b.clone(),
            ),
            "(a NOT BETWEEN 1 AND 2) AND b",
        ),
        (
            bin(
                Eq,
                Expr::InList {
                    expr: Box::new(a.clone()),
                    list: vec![int(1), int(-2)],
                    negated: false,
                },
                b.clone(),
            ),
            "(a IN (1, (-2))) = b",
        ),
        (
            bin(
                Eq,
                Expr::Function {
                    name: "abs".into(),
                    args: vec![bin(Sub, a.clone(), b.clone())],
                    distinct: false,
                },
                int(1),
            ),
            "abs(a - b) = 1",
        ),
    ];
    for (e, expected) in &cases {
        t.verified_expr(e, expected);
        t.same_shape(e);
        assert!(!t.sql(e).contains("--"), "{expected}");
    }
}

pub(super) fn collate(t: &Tested) {
    let e = bin(
        BinaryOp::Eq,
        Expr::Collate {
            expr: Box::new(col("x")),
            collation: "NOCASE".into(),
        },
        col("y"),
    );
    let expected = pick(
        t,
        "(x COLLATE NOCASE) = y",
        // PostgreSQL folds unquoted names to lower case.
        "(x COLLATE \"NOCASE\") = y",
        "(x COLLATE NOCASE) = y",
    );
    let parsed = t.verified_expr(&e, expected);
    assert_eq!(sp_shape(&parsed), t.our_shape(&e));
    let sp::Expr::BinaryOp { left, .. } = parsed else {
        panic!()
    };
    assert!(matches!(*left, sp::Expr::Nested(ref x) if matches!(**x, sp::Expr::Collate { .. })));
    // The collated operand is itself parenthesized when compound.
    let e = Expr::Collate {
        expr: Box::new(bin(BinaryOp::Concat, col("a"), col("b"))),
        collation: "BINARY".into(),
    };
    if t.is("sqlite") {
        t.verified_expr(&e, "(a || b) COLLATE BINARY");
    }
    if t.is("mysql") {
        t.verified_expr(&e, "(CONCAT(a, b)) COLLATE BINARY");
    }
    let e = Expr::Collate {
        expr: Box::new(text("a")),
        collation: "C".into(),
    };
    if t.is("postgres") {
        t.verified_expr(&e, "'a' COLLATE \"C\"");
    }
}

pub(super) fn is_null_and_is_bool(t: &Tested) {
    t.verified_expr(&Expr::is_null(col("a")), "a IS NULL");
    let not_null = Expr::IsNull {
        expr: Box::new(col("a")),
        negated: true,
    };
    t.verified_expr(&not_null, "a IS NOT NULL");
    for (value, negated, expected) in [
        (true, false, "a IS TRUE"),
        (true, true, "a IS NOT TRUE"),
        (false, false, "a IS FALSE"),
        (false, true, "a IS NOT FALSE"),
    ] {
        let e = Expr::IsBool {
            expr: Box::new(col("a")),
            value,
            negated,
        };
        t.verified_expr(&e, expected);
        t.same_shape(&e);
    }
    let e = Expr::IsBool {
        expr: Box::new(bin(BinaryOp::Gt, col("a"), int(1))),
        value: false,
        negated: true,
    };
    t.verified_expr(&e, "(a > 1) IS NOT FALSE");
    t.same_shape(&e);
    t.same_shape(&not_null);
}

pub(super) fn like_and_glob(t: &Tested) {
    let e = like(LikeKind::Like, "x!%", Some("!"), false);
    t.verified_expr(&e, "a LIKE 'x!%' ESCAPE '!'");
    let e = like(LikeKind::Like, "x%", None, true);
    t.verified_expr(&e, "a NOT LIKE 'x%'");
    t.same_shape(&like(LikeKind::Like, "x!%", Some("!"), false));
    t.same_shape(&like(LikeKind::Like, "x%", None, true));
    // A backslash escape character, per dialect.
    let e = like(LikeKind::Like, r"x\%", Some(r"\"), false);
    let expected = pick(
        t,
        r"a LIKE 'x\%' ESCAPE '\'",
        r"a LIKE 'x\%' ESCAPE '\'",
        r"a LIKE 'x\\%' ESCAPE '\\'",
    );
    t.verified_expr(&e, expected);
    // The pattern is an operand like any other.
    let e = Expr::Like {
        kind: LikeKind::Like,
        expr: Box::new(bin(BinaryOp::Concat, col("a"), col("b"))),
        pattern: Box::new(bin(BinaryOp::Concat, col("c"), text("%"))),
        escape: None,
        negated: false,
    };
    if t.is("sqlite") {
        t.verified_expr(&e, "(a || b) LIKE (c || '%')");
        // sqlparser has no GLOB.
        t.printed(&like(LikeKind::Glob, "x*", None, false), "a GLOB 'x*'");
        t.printed(
            &like(LikeKind::Glob, "x*", Some("!"), true),
            "a NOT GLOB 'x*' ESCAPE '!'",
        );
    }
    if t.is("mysql") {
        t.verified_expr(&e, "(CONCAT(a, b)) LIKE (CONCAT(c, '%'))");
    }
    if t.is("postgres") {
        // PostgreSQL's pattern operators.
        for (e, expected) in [
            (like(LikeKind::ILike, "X%", None, false), "a ILIKE 'X%'"),
            (
                like(LikeKind::ILike, "X%", Some("!"), true),
                "a NOT ILIKE 'X%' ESCAPE '!'",
            ),
            (
                like(LikeKind::SimilarTo, "(a|b)%", None, false),
                "a SIMILAR TO '(a|b)%'",
            ),
            (
                like(LikeKind::SimilarTo, "x!%", Some("!"), true),
                "a NOT SIMILAR TO 'x!%' ESCAPE '!'",
            ),
        ] {
            t.verified_expr(&e, expected);
            t.same_shape(&e);
        }
    }
}

pub(super) fn between_and_symmetric(t: &Tested) {
    let e = between(col("a"), int(1), int(2), false, false);
    t.verified_expr(&e, "a BETWEEN 1 AND 2");
    let e = between(col("a"), int(1), int(2), true, false);
    t.verified_expr(&e, "a NOT BETWEEN 1 AND 2");
    let e = between(
        bin(BinaryOp::Add, col("a"), int(1)),
        int(-1),
        bin(BinaryOp::Mul, col("b"), int(2)),
        false,
        false,
    );
    t.verified_expr(&e, "(a + 1) BETWEEN (-1) AND (b * 2)");
    t.same_shape(&e);
    if t.is("postgres") {
        // sqlparser has no SYMMETRIC.
        let e = between(col("a"), int(2), int(1), false, true);
        t.printed(&e, "a BETWEEN SYMMETRIC 2 AND 1");
        let e = between(col("a"), int(2), int(1), true, true);
        t.printed(&e, "a NOT BETWEEN SYMMETRIC 2 AND 1");
    }
}

pub(super) fn in_list(t: &Tested) {
    let e = Expr::InList {
        expr: Box::new(col("a")),
        list: vec![int(1), int(-2), text("x"), Expr::lit(Value::Null)],
        negated: false,
    };
    t.verified_expr(&e, "a IN (1, (-2), 'x', NULL)");
    let e = Expr::InList {
        expr: Box::new(bin(BinaryOp::Add, col("a"), int(1))),
        list: vec![bin(BinaryOp::Add, col("b"), int(1)), col("c")],
        negated: true,
    };
    t.verified_expr(&e, "(a + 1) NOT IN (b + 1, c)");
    t.same_shape(&e);
    if t.is("sqlite") {
        // SQLite accepts an empty list (always false).
        let e = Expr::InList {
            expr: Box::new(col("a")),
            list: vec![],
            negated: false,
        };
        t.verified_expr(&e, "a IN ()");
    }
}

pub(super) fn subqueries(t: &Tested) {
    let sub = query_from(vec![col("c0")], "t0");
    let e = Expr::InSubquery {
        expr: Box::new(col("a")),
        query: Box::new(sub.clone()),
        negated: false,
    };
    t.verified_expr(&e, "a IN (SELECT c0 FROM t0)");
    let e = Expr::InSubquery {
        expr: Box::new(bin(BinaryOp::Sub, col("a"), int(1))),
        query: Box::new(sub.clone()),
        negated: true,
    };
    t.verified_expr(&e, "(a - 1) NOT IN (SELECT c0 FROM t0)");
    let e = Expr::QuantifiedSubquery {
        expr: Box::new(bin(BinaryOp::Sub, col("a"), int(1))),
        op: BinaryOp::LtEq,
        all: true,
        query: Box::new(sub.clone()),
    };
    t.verified_expr(&e, "(a - 1) <= ALL (SELECT c0 FROM t0)");
    let e = Expr::QuantifiedSubquery {
        expr: Box::new(col("a")),
        op: BinaryOp::NotEq,
        all: false,
        query: Box::new(sub.clone()),
    };
    t.verified_expr(&e, "a <> ANY (SELECT c0 FROM t0)");

    let e = Expr::Exists {
        query: Box::new(query(vec![int(1)])),
        negated: false,
    };
    t.verified_expr(&e, "EXISTS (SELECT 1)");
    let filtered = Query::select(Select {
        items: vec![SelectItem::Wildcard],
        selection: Some(bin(BinaryOp::Gt, col("c0"), int(1))),
        ..select_from(vec![], "t0")
    });
    let e = Expr::Exists {
        query: Box::new(filtered),
        negated: true,
    };
    t.verified_expr(&e, "NOT EXISTS (SELECT * FROM t0 WHERE c0 > 1)");
    // EXISTS as an operand is parenthesized whole.
    let e = bin(
        BinaryOp::And,
        Expr::Exists {
            query: Box::new(query(vec![int(1)])),
            negated: false,
        },
        col("b"),
    );
    t.verified_expr(&e, "(EXISTS (SELECT 1)) AND b");

    // A scalar subquery is atomic.
    let max = query_from(vec![Expr::func("MAX", vec![col("c0")])], "t0");
    let e = bin(BinaryOp::Add, Expr::Subquery(Box::new(max)), int(1));
    t.verified_expr(&e, "(SELECT MAX(c0) FROM t0) + 1");
    let e = un(UnaryOp::Neg, Expr::Subquery(Box::new(query(vec![int(1)]))));
    t.verified_expr(&e, "-(SELECT 1)");
}

pub(super) fn case_both_forms(t: &Tested) {
    let searched = Expr::Case {
        operand: None,
        branches: vec![
            (bin(BinaryOp::Eq, col("a"), int(1)), text("one")),
            (Expr::is_null(col("a")), text("null")),
        ],
        otherwise: Some(Box::new(text("other"))),
    };
    t.verified_expr(
        &searched,
        "CASE WHEN a = 1 THEN 'one' WHEN a IS NULL THEN 'null' ELSE 'other' END",
    );
    let simple = Expr::Case {
        operand: Some(Box::new(bin(BinaryOp::Add, col("a"), int(1)))),
        branches: vec![(int(1), int(-2)), (int(3), col("b"))],
        otherwise: None,
    };
    t.verified_expr(&simple, "CASE (a + 1) WHEN 1 THEN (-2) WHEN 3 THEN b END");
    // CASE is atomic as an operand.
    let e = bin(BinaryOp::Mul, simple, int(2));
    t.verified_expr(&e, "CASE (a + 1) WHEN 1 THEN (-2) WHEN 3 THEN b END * 2");
}

pub(super) fn cast(t: &Tested) {
    let e = Expr::Cast {
        expr: Box::new(bin(BinaryOp::Add, col("a"), int(1))),
        ty: TypeName("INTEGER".into()),
    };
    t.verified_expr(&e, "CAST(a + 1 AS INTEGER)");
    let e = Expr::Cast {
        expr: Box::new(int(-1)),
        ty: TypeName("TEXT".into()),
    };
    if t.is("sqlite") || t.is("postgres") {
        t.verified_expr(&e, "CAST((-1) AS TEXT)");
    }
    let e = Expr::Cast {
        expr: Box::new(col("a")),
        ty: TypeName("numeric(10,2)".into()),
    };
    if t.is("postgres") {
        t.verified_expr(&e, "CAST(a AS numeric(10,2))");
    }
    let e = Expr::Cast {
        expr: Box::new(col("a")),
        ty: TypeName("SIGNED".into()),
    };
    if t.is("mysql") {
        t.verified_expr(&e, "CAST(a AS SIGNED)");
    }
    // CAST is atomic as an operand.
    let e = un(
        UnaryOp::Neg,
        Expr::Cast {
            expr: Box::new(col("a")),
            ty: TypeName("REAL".into()),
        },
    );
    if t.is("sqlite") {
        t.verified_expr(&e, "-CAST(a AS REAL)");
    }
}

pub(super) fn functions(t: &Tested) {
    t.verified_expr(&Expr::func("random", vec![]), "random()");
    t.verified_expr(&Expr::func("abs", vec![int(-1)]), "abs((-1))");
    t.verified_expr(
        &Expr::func("coalesce", vec![col("a"), Expr::lit(Value::Null), int(1)]),
        "coalesce(a, NULL, 1)",
    );
    t.verified_expr(&Expr::CountStar, "COUNT(*)");
    let distinct = Expr::Function {
        name: "COUNT".into(),
        args: vec![col("c0")],
        distinct: true,
    };
    t.verified_expr(&distinct, "COUNT(DISTINCT c0)");
    let e = bin(BinaryOp::Gt, Expr::CountStar, int(1));
    t.verified_expr(&e, "COUNT(*) > 1");
    let e = bin(BinaryOp::Add, Expr::func("MAX", vec![col("a")]), int(1));
    t.verified_expr(&e, "MAX(a) + 1");
    t.same_shape(&e);
}

// ---------------------------------------------------------------------------
