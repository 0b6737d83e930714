//! The printer cases every dialect runs, with each dialect's text side by
//! side: `pick(t, sqlite, postgres, mysql)`, or a guard where only some
//! dialects have the construct. A dialect runs them all through
//! [`crate::printer_suite`] in the crate that supplies it; a new dialect
//! adds its text wherever the cases list them per dialect (a case that
//! lacks it fails and says so).
//!
//! Long on purpose: one case per printer construct, each with every
//! dialect's expected text side by side.

use super::trees::*;
use super::{decoded_string, sp_shape, Tested};
use lancet_core::ast::*;
use lancet_core::value::Value;
use sqlparser::ast as sp;

/// This dialect's text of a case that spells it per dialect.
#[track_caller]
fn pick<'a>(t: &Tested, sqlite: &'a str, postgres: &'a str, mysql: &'a str) -> &'a str {
    t.of(&[("sqlite", sqlite), ("postgres", postgres), ("mysql", mysql)])
}

// ---------------------------------------------------------------------------
// Literals
// ---------------------------------------------------------------------------

fn null_and_boolean_literals(t: &Tested) {
    t.verified_expr(&Expr::lit(Value::Null), "NULL");
    t.verified_expr(&Expr::lit(Value::Boolean(true)), "TRUE");
    t.verified_expr(&Expr::lit(Value::Boolean(false)), "FALSE");
}

fn integer_literals(t: &Tested) {
    t.verified_expr(&int(0), "0");
    t.verified_expr(&int(42), "42");
    t.verified_expr(&int(i64::MAX), "9223372036854775807");
    // Negative literals carry their own parentheses, so that no operator
    // can ever stand next to the sign (`- -1` is a comment in SQL).
    t.verified_expr(&int(-7), "(-7)");
    t.verified_expr(&int(i64::MIN), "(-9223372036854775808)");
    t.same_shape(&int(-7));
    t.same_shape(&int(i64::MIN));
}

fn real_literals(t: &Tested) {
    // (value, SQLite, PostgreSQL, MySQL)
    let cases: &[(f64, &str, &str, &str)] = &[
        (1.5, "1.5", "'1.5'::float8", "1.5e0"),
        (1.0, "1.0", "'1.0'::float8", "1.0e0"),
        (0.0, "0.0", "'0.0'::float8", "0.0e0"),
        (-0.0, "(-0.0)", "'-0.0'::float8", "(-0.0e0)"),
        (-2.5, "(-2.5)", "'-2.5'::float8", "(-2.5e0)"),
        (1e308, "1e308", "'1e308'::float8", "1e308"),
        (1e-7, "1e-7", "'1e-7'::float8", "1e-7"),
        (-1e300, "(-1e300)", "'-1e300'::float8", "(-1e300)"),
        (
            f64::MAX,
            "1.7976931348623157e308",
            "'1.7976931348623157e308'::float8",
            "1.7976931348623157e308",
        ),
        (
            0.1 + 0.2,
            "0.30000000000000004",
            "'0.30000000000000004'::float8",
            "0.30000000000000004e0",
        ),
        (f64::INFINITY, "1e999", "'Infinity'::float8", "1e999"),
        (
            f64::NEG_INFINITY,
            "(-1e999)",
            "'-Infinity'::float8",
            "(-1e999)",
        ),
        // SQLite and MySQL have no NaN; where one arises they give NULL.
        (f64::NAN, "NULL", "'NaN'::float8", "NULL"),
    ];
    for &(r, s, p, m) in cases {
        t.verified_expr(&real(r), pick(t, s, p, m));
    }
    if t.is("postgres") {
        // PostgreSQL reads the quoted text back exactly.
        let parsed = t.verified_expr(&real(-0.0), "'-0.0'::float8");
        assert_eq!(decoded_string(&parsed), "-0.0");
        // As an operand, a negative PostgreSQL real is parenthesized too.
        t.verified_expr(
            &bin(BinaryOp::Sub, int(1), real(-2.5)),
            "1 - '-2.5'::float8",
        );
    }
}

fn real_literals_round_trip_through_their_text(t: &Tested) {
    for r in [
        1.5,
        -0.0,
        1e308,
        -1e300,
        5e-324,
        0.1 + 0.2,
        123456789.125,
        1e16,
        1e15,
    ] {
        let s = t.sql(&real(r));
        let digits = if t.is("postgres") {
            s.trim_end_matches("::float8").trim_matches('\'')
        } else {
            s.trim_matches(['(', ')'])
        };
        let back: f64 = digits.parse().unwrap();
        assert_eq!(back.to_bits(), r.to_bits(), "{s}");
    }
}

fn text_literals(t: &Tested) {
    t.verified_expr(&text(""), "''");
    t.verified_expr(&text("abc"), "'abc'");
    t.verified_expr(&text("it's"), "'it''s'");
    t.verified_expr(&text("''"), "''''''");
    t.verified_expr(&text("é ☃"), "'é ☃'");
    // A backslash is an escape character only in MySQL.
    let expected = pick(t, r"'a\b'", r"'a\b'", r"'a\\b'");
    let parsed = t.verified_expr(&text(r"a\b"), expected);
    assert_eq!(decoded_string(&parsed), r"a\b", "{:?}", t.dialect());
    let expected = pick(t, r"'\''x'", r"'\''x'", r"'\\''x'");
    let parsed = t.verified_expr(&text(r"\'x"), expected);
    assert_eq!(decoded_string(&parsed), r"\'x", "{:?}", t.dialect());
    if t.is("mysql") {
        // A trailing backslash must not escape the closing quote in MySQL.
        let parsed = t.verified_expr(&text("x\\"), r"'x\\'");
        assert_eq!(decoded_string(&parsed), "x\\");
    }
}

fn blob_literals(t: &Tested) {
    let blob = Expr::lit(Value::Blob(vec![0x00, 0xab, 0xff, 0x10]));
    let expected = pick(t, "X'00ABFF10'", r"'\x00ABFF10'::bytea", "X'00ABFF10'");
    t.verified_expr(&blob, expected);
    let empty = Expr::lit(Value::Blob(vec![]));
    let parsed = t.verified_expr(&empty, pick(t, "X''", r"'\x'::bytea", "X''"));
    if t.is("postgres") {
        assert_eq!(decoded_string(&parsed), r"\x");
    }
}

fn decimal_literals(t: &Tested) {
    t.verified_expr(&Expr::lit(Value::Decimal("1.50".into())), "1.50");
    t.verified_expr(&Expr::lit(Value::Decimal("-3.25".into())), "(-3.25)");
    t.verified_expr(
        &un(UnaryOp::Neg, Expr::lit(Value::Decimal("-3.25".into()))),
        "-(-3.25)",
    );
}

fn column_refs(t: &Tested) {
    t.verified_expr(&col("c0"), "c0");
    t.verified_expr(&qcol("t0", "c0"), "t0.c0");
    t.verified_expr(
        &bin(BinaryOp::Eq, qcol("t0", "c0"), qcol("t1", "c0")),
        "t0.c0 = t1.c0",
    );
}

// ---------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------

fn unary_operators(t: &Tested) {
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

fn binary_operators(t: &Tested) {
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
fn precedence_sensitive_nesting(t: &Tested) {
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

fn collate(t: &Tested) {
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

// ---------------------------------------------------------------------------
// Predicates
// ---------------------------------------------------------------------------

fn is_null_and_is_bool(t: &Tested) {
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

fn like_and_glob(t: &Tested) {
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

fn between_and_symmetric(t: &Tested) {
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

fn in_list(t: &Tested) {
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

fn subqueries(t: &Tested) {
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

fn case_both_forms(t: &Tested) {
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

fn cast(t: &Tested) {
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

fn functions(t: &Tested) {
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
// Queries
// ---------------------------------------------------------------------------

fn select_clauses(t: &Tested) {
    t.verified(&query(vec![int(1)]), "SELECT 1");
    let q = select_star(FromClause {
        first: table("t0"),
        joins: vec![],
    });
    t.verified(&q, "SELECT * FROM t0");
    let s = Select {
        distinct: true,
        items: vec![
            SelectItem::Expr {
                expr: qcol("t0", "c0"),
                alias: Some("x".into()),
            },
            item(Expr::CountStar),
        ],
        from: Some(FromClause {
            first: table("t0"),
            joins: vec![],
        }),
        selection: Some(bin(BinaryOp::Gt, qcol("t0", "c0"), int(-1))),
        group_by: vec![
            qcol("t0", "c0"),
            bin(BinaryOp::Add, qcol("t0", "c1"), int(1)),
        ],
        having: Some(bin(BinaryOp::Gt, Expr::CountStar, int(1))),
    };
    let expected = "SELECT DISTINCT t0.c0 AS x, COUNT(*) FROM t0 WHERE t0.c0 > (-1) \
                    GROUP BY t0.c0, t0.c1 + 1 HAVING COUNT(*) > 1";
    t.printed(&s, expected);
    t.verified(&Query::select(s), expected);
}

fn joins(t: &Tested) {
    use JoinConstraint::{Natural, On, Using};
    let on = || On(bin(BinaryOp::Eq, qcol("t0", "c0"), qcol("t1", "c0")));
    // (kind, constraint, printed join)
    let cases: Vec<(JoinKind, JoinConstraint, &str)> = vec![
        (JoinKind::Inner, on(), " JOIN t1 ON t0.c0 = t1.c0"),
        (JoinKind::Left, on(), " LEFT JOIN t1 ON t0.c0 = t1.c0"),
        (JoinKind::Right, on(), " RIGHT JOIN t1 ON t0.c0 = t1.c0"),
        (JoinKind::Full, on(), " FULL JOIN t1 ON t0.c0 = t1.c0"),
        (JoinKind::Cross, JoinConstraint::None, " CROSS JOIN t1"),
        (
            JoinKind::Inner,
            Using(strings(&["c0", "c1"])),
            " JOIN t1 USING (c0, c1)",
        ),
        (
            JoinKind::Left,
            Using(strings(&["c0"])),
            " LEFT JOIN t1 USING (c0)",
        ),
        (JoinKind::Inner, Natural, " NATURAL JOIN t1"),
        (JoinKind::Left, Natural, " NATURAL LEFT JOIN t1"),
        (JoinKind::Right, Natural, " NATURAL RIGHT JOIN t1"),
        (JoinKind::Full, Natural, " NATURAL FULL JOIN t1"),
    ];
    for (kind, constraint, expected) in cases {
        let q = select_star(FromClause {
            first: table("t0"),
            joins: vec![join(kind, table("t1"), constraint)],
        });
        t.verified(&q, &format!("SELECT * FROM t0{expected}"));
    }
    // MySQL's alone: the other dialects' parsers reject it, and only the
    // MySQL generator writes it.
    let q = select_star(FromClause {
        first: table("t0"),
        joins: vec![join(JoinKind::Straight, table("t1"), on())],
    });
    let text = "SELECT * FROM t0 STRAIGHT_JOIN t1 ON t0.c0 = t1.c0";
    if t.is("mysql") {
        t.verified(&q, text);
    } else {
        t.printed(&q, text);
    }
}

fn natural_is_never_dropped(t: &Tested) {
    // NATURAL on a comma or CROSS join is an inner natural join; printing
    // the kind alone would silently make it a cross product.
    for kind in [JoinKind::Comma, JoinKind::Cross] {
        let q = select_star(FromClause {
            first: table("t0"),
            joins: vec![join(kind, table("t1"), JoinConstraint::Natural)],
        });
        t.verified(&q, "SELECT * FROM t0 NATURAL JOIN t1");
    }
}

fn comma_join_keeps_the_tree_left_deep(t: &Tested) {
    // t0, t1 JOIN t2 ON t0.c0 = t2.c0: the ON sees t0 only if the comma
    // binds as tightly as JOIN, which it does in SQLite alone.
    let q = select_star(FromClause {
        first: table("t0"),
        joins: vec![
            join(JoinKind::Comma, table("t1"), JoinConstraint::None),
            join(
                JoinKind::Inner,
                table("t2"),
                JoinConstraint::On(bin(BinaryOp::Eq, qcol("t0", "c0"), qcol("t2", "c0"))),
            ),
        ],
    });
    let expected = pick(
        t,
        "SELECT * FROM t0, t1 JOIN t2 ON t0.c0 = t2.c0",
        "SELECT * FROM t0 CROSS JOIN t1 JOIN t2 ON t0.c0 = t2.c0",
        "SELECT * FROM t0 CROSS JOIN t1 JOIN t2 ON t0.c0 = t2.c0",
    );
    t.verified(&q, expected);
}

fn table_aliases_and_derived_tables(t: &Tested) {
    let aliased = TableFactor::Table {
        name: "t0".into(),
        alias: Some("a".into()),
        indexed_by: None,
    };
    let derived = TableFactor::Derived {
        query: Box::new(query_from(vec![col("c0")], "t1")),
        alias: "d".into(),
        lateral: false,
        form: DerivedForm::Subquery,
    };
    let q = select_star(FromClause {
        first: aliased,
        joins: vec![join(
            JoinKind::Left,
            derived,
            JoinConstraint::On(bin(BinaryOp::Eq, qcol("a", "c0"), qcol("d", "c0"))),
        )],
    });
    t.verified(
        &q,
        "SELECT * FROM t0 AS a LEFT JOIN (SELECT c0 FROM t1) AS d ON a.c0 = d.c0",
    );
    let lateral = TableFactor::Derived {
        query: Box::new(Query::select(Select {
            selection: Some(bin(BinaryOp::Eq, qcol("t1", "c0"), qcol("t0", "c0"))),
            ..select_from(vec![qcol("t1", "c1")], "t1")
        })),
        alias: "l".into(),
        lateral: true,
        form: DerivedForm::Subquery,
    };
    let q = select_star(FromClause {
        first: table("t0"),
        joins: vec![join(JoinKind::Cross, lateral, JoinConstraint::None)],
    });
    let expected =
        "SELECT * FROM t0 CROSS JOIN LATERAL (SELECT t1.c1 FROM t1 WHERE t1.c0 = t0.c0) AS l";
    if t.is("postgres") || t.is("mysql") {
        t.verified(&q, expected);
    }
}

fn common_table_expressions(t: &Tested) {
    let cte = |alias: &str, form| TableFactor::Derived {
        query: Box::new(query_from(vec![col("c0")], "t1")),
        alias: alias.into(),
        lateral: false,
        form,
    };
    let on = |l: &str, r: &str| JoinConstraint::On(bin(BinaryOp::Eq, qcol(l, "c0"), qcol(r, "c0")));
    let q = select_star(FromClause {
        first: table("t0"),
        joins: vec![join(
            JoinKind::Inner,
            cte("w", DerivedForm::Cte),
            on("t0", "w"),
        )],
    });
    t.verified(
        &q,
        "WITH w AS (SELECT c0 FROM t1) SELECT * FROM t0 JOIN w ON t0.c0 = w.c0",
    );
    // Every arm of a compound names the same CTE: one WITH clause serves.
    let arm_over = |form| Select {
        items: vec![SelectItem::Wildcard],
        from: Some(FromClause {
            first: cte("w", form),
            joins: vec![],
        }),
        ..Select::default()
    };
    let q = Query::set_operation(
        SetOperator::UnionAll,
        vec![arm_over(DerivedForm::Cte), arm_over(DerivedForm::Cte)],
    );
    t.verified(
        &q,
        "WITH w AS (SELECT c0 FROM t1) SELECT * FROM w UNION ALL SELECT * FROM w",
    );
    // One alias for two different tables: both are written in place.
    let q = Query::set_operation(
        SetOperator::UnionAll,
        vec![
            arm_over(DerivedForm::Cte),
            arm_over(DerivedForm::CteMaterialized),
        ],
    );
    t.verified(
        &q,
        "SELECT * FROM (SELECT c0 FROM t1) AS w UNION ALL SELECT * FROM (SELECT c0 FROM t1) AS w",
    );
    // A CTE in a subquery belongs to the subquery.
    let inner = Query::select(arm_over(DerivedForm::Cte));
    let q = select_star(FromClause {
        first: TableFactor::Derived {
            query: Box::new(inner),
            alias: "d".into(),
            lateral: false,
            form: DerivedForm::Subquery,
        },
        joins: vec![],
    });
    t.verified(
        &q,
        "SELECT * FROM (WITH w AS (SELECT c0 FROM t1) SELECT * FROM w) AS d",
    );
    if t.is("postgres") || t.is("sqlite") {
        let q = select_star(FromClause {
            first: cte("m", DerivedForm::CteMaterialized),
            joins: vec![join(
                JoinKind::Inner,
                cte("n", DerivedForm::CteNotMaterialized),
                on("m", "n"),
            )],
        });
        t.printed(
            &q,
            "WITH m AS MATERIALIZED (SELECT c0 FROM t1), n AS NOT MATERIALIZED (SELECT c0 FROM t1) \
             SELECT * FROM m JOIN n ON m.c0 = n.c0",
        );
    }
}

fn window_calls(t: &Tested) {
    let window = |function: Expr, partition_by: Vec<Expr>, order_by: Vec<OrderBy>| Expr::Window {
        function: Box::new(function),
        partition_by,
        order_by,
    };
    let by = |e: Expr, descending| OrderBy {
        expr: e,
        descending,
        nulls_first: None,
    };
    t.verified_expr(
        &window(Expr::CountStar, vec![col("c0")], vec![]),
        "COUNT(*) OVER (PARTITION BY c0)",
    );
    t.verified_expr(
        &window(
            Expr::func("max", vec![col("c1")]),
            vec![col("c0"), col("c2")],
            vec![by(col("c1"), true)],
        ),
        "max(c1) OVER (PARTITION BY c0, c2 ORDER BY c1 DESC)",
    );
    t.verified_expr(
        &window(
            Expr::func("rank", vec![]),
            vec![],
            vec![by(col("c1"), false)],
        ),
        "rank() OVER (ORDER BY c1)",
    );
}

fn set_operations(t: &Tested) {
    // Three selects under UNION ALL print flat: SQLite allows no
    // parentheses around compound arms.
    let q = Query::set_operation(
        SetOperator::UnionAll,
        vec![
            select(vec![int(1)]),
            select(vec![int(2)]),
            select(vec![int(3)]),
        ],
    );
    t.verified(&q, "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3");
    for (op, text) in [
        (SetOperator::Union, "UNION"),
        (SetOperator::UnionAll, "UNION ALL"),
        (SetOperator::Intersect, "INTERSECT"),
        (SetOperator::Except, "EXCEPT"),
    ] {
        let q = Query::set_operation(op, vec![select(vec![int(1)]), select(vec![int(2)])]);
        t.verified(&q, &format!("SELECT 1 {text} SELECT 2"));
    }
    // A compound right arm becomes a derived table.
    let q = body_query(compound(
        SetOperator::Except,
        arm(1),
        compound(SetOperator::Union, arm(2), arm(3)),
    ));
    t.verified(
        &q,
        "SELECT 1 EXCEPT SELECT * FROM (SELECT 2 UNION SELECT 3) AS lancet_arm",
    );
    // INTERSECT binds no tighter than UNION in SQLite, so a left-deep tree
    // prints flat.
    let q = body_query(compound(
        SetOperator::Union,
        compound(SetOperator::Intersect, arm(1), arm(2)),
        arm(3),
    ));
    t.verified(&q, "SELECT 1 INTERSECT SELECT 2 UNION SELECT 3");
}

fn intersect_over_union_keeps_its_meaning(t: &Tested) {
    // (1 UNION 2) INTERSECT 3: in PostgreSQL and MySQL, INTERSECT binds
    // tighter, so the flat text would mean 1 UNION (2 INTERSECT 3).
    for inner in [
        SetOperator::Union,
        SetOperator::UnionAll,
        SetOperator::Except,
    ] {
        let q = body_query(compound(
            SetOperator::Intersect,
            compound(inner, arm(1), arm(2)),
            arm(3),
        ));
        let inner = match inner {
            SetOperator::Union => "UNION",
            SetOperator::UnionAll => "UNION ALL",
            _ => "EXCEPT",
        };
        let flat = format!("SELECT 1 {inner} SELECT 2 INTERSECT SELECT 3");
        let wrapped =
            format!("SELECT * FROM (SELECT 1 {inner} SELECT 2) AS lancet_arm INTERSECT SELECT 3");
        t.verified(&q, pick(t, &flat, &wrapped, &wrapped));
    }
    // INTERSECT over INTERSECT needs nothing.
    let q = Query::set_operation(
        SetOperator::Intersect,
        vec![
            select(vec![int(1)]),
            select(vec![int(2)]),
            select(vec![int(3)]),
        ],
    );
    t.verified(&q, "SELECT 1 INTERSECT SELECT 2 INTERSECT SELECT 3");
}

fn order_by_limit_offset(t: &Tested) {
    let mut q = query_from(vec![col("a"), col("b")], "t0");
    q.order_by = vec![
        OrderBy {
            expr: col("a"),
            descending: true,
            nulls_first: None,
        },
        OrderBy {
            expr: col("b"),
            descending: false,
            nulls_first: Some(true),
        },
        OrderBy {
            expr: bin(BinaryOp::Add, col("a"), col("b")),
            descending: true,
            nulls_first: Some(false),
        },
    ];
    q.limit = Some(int(10));
    q.offset = Some(int(5));
    let expected =
        "SELECT a, b FROM t0 ORDER BY a DESC, b NULLS FIRST, a + b DESC NULLS LAST LIMIT 10 OFFSET 5";
    if t.is("mysql") {
        // MySQL has no NULLS FIRST/LAST; the text is still the tree's.
        t.printed(&q, expected);
    } else {
        t.verified(&q, expected);
    }

    if t.is("sqlite") {
        let mut q = query_from(vec![col("a")], "t0");
        q.limit = Some(int(-1));
        t.verified(&q, "SELECT a FROM t0 LIMIT (-1)");
    }

    // A compound's ORDER BY and LIMIT apply to the whole compound.
    let mut q = Query::set_operation(
        SetOperator::Union,
        vec![select(vec![int(2)]), select(vec![int(1)])],
    );
    q.order_by = vec![OrderBy {
        expr: int(1),
        descending: false,
        nulls_first: None,
    }];
    q.limit = Some(int(1));
    t.verified(&q, "SELECT 2 UNION SELECT 1 ORDER BY 1 LIMIT 1");
}

fn offset_without_limit(t: &Tested) {
    // SQLite and MySQL allow OFFSET only after LIMIT.
    let mut q = query_from(vec![col("a")], "t0");
    q.offset = Some(int(2));
    let expected = pick(
        t,
        "SELECT a FROM t0 LIMIT -1 OFFSET 2",
        "SELECT a FROM t0 OFFSET 2",
        "SELECT a FROM t0 LIMIT 18446744073709551615 OFFSET 2",
    );
    t.verified(&q, expected);
}

fn subquery_keeps_its_order_and_limit(t: &Tested) {
    let mut inner = query_from(vec![col("c0")], "t0");
    inner.order_by = vec![OrderBy {
        expr: col("c0"),
        descending: true,
        nulls_first: None,
    }];
    inner.limit = Some(int(1));
    let e = Expr::Subquery(Box::new(inner));
    t.verified_expr(&e, "(SELECT c0 FROM t0 ORDER BY c0 DESC LIMIT 1)");
}

/// Constructs the printer emits that sqlparser 0.58 cannot parse. If a later
/// sqlparser parses one, move it into the tests above.
fn sqlparser_gaps(t: &Tested) {
    let gaps = [
        ("sqlite", "SELECT a IS b"),
        ("sqlite", "SELECT a IS NOT b"),
        ("sqlite", "SELECT a GLOB 'x*'"),
        ("sqlite", "SELECT a << b"),
        ("sqlite", "SELECT a >> b"),
        ("mysql", "SELECT a << b"),
        ("mysql", "SELECT ~a"),
        ("sqlite", "SELECT ~a"),
        ("postgres", "SELECT a BETWEEN SYMMETRIC 2 AND 1"),
        ("sqlite", "SELECT * FROM t0 INDEXED BY i0"),
        ("sqlite", "SELECT * FROM t0 NOT INDEXED"),
        ("sqlite", "ANALYZE"),
        ("sqlite", "VACUUM"),
        ("sqlite", "REINDEX t0"),
        ("sqlite", "PRAGMA reverse_unordered_selects = ON"),
        (
            "postgres",
            "CREATE TABLE t0 (c0 INT GENERATED ALWAYS AS (1) VIRTUAL)",
        ),
        // sqlparser takes only a literal after ESCAPE.
        ("sqlite", "SELECT a LIKE b ESCAPE (c)"),
    ];
    for (name, sql) in gaps {
        if t.is(name) {
            assert!(t.parse(sql).is_err(), "sqlparser ({name}) now parses {sql}");
        }
    }
}

// ---------------------------------------------------------------------------
// Random trees
// ---------------------------------------------------------------------------

fn random_trees_keep_their_shape_in_sqlparser(t: &Tested) {
    let mut r = Lcg(0x1a2b_3c4d);
    let mut checked = 0;
    for _ in 0..600 {
        let e = random_expr(&mut r, 4);
        let sql = t.sql(&e);
        assert!(!sql.contains("--"), "{:?}: {sql}", t.dialect());
        // sqlparser has no general `a IS b` for SQLite.
        if t.is("sqlite") && uses_null_safe_comparison(&e) {
            continue;
        }
        t.same_shape(&e);
        checked += 1;
    }
    // Most of the 600 trees are checked in every dialect.
    assert!(checked > 300, "{checked}");
}

/// A case: the checks of one construct, for the dialect it is given.
pub type Case = fn(&Tested);

crate::__printer_cases!(__printer_case_table());

/// Runs the case named `name` for `t`.
#[track_caller]
pub fn run(t: &Tested, name: &str) {
    match CASES.iter().find(|(n, _)| *n == name) {
        Some((_, case)) => case(t),
        None => panic!("no printer case named {name}"),
    }
}

/// Defines one `#[test]` per case of [`printer::suite`](crate::printer::suite),
/// each running it for `$tested` (an expression giving a
/// [`Tested`](crate::printer::Tested)).
#[macro_export]
macro_rules! printer_suite {
    ($tested:expr) => {
        $crate::__printer_cases!(__printer_case_tests($tested));
    };
}

/// The one list of the cases, handed to the macro `$then` (with `$arg`):
/// it makes both [`CASES`] here and the tests of [`crate::printer_suite`],
/// and a case left out of it is dead code, which the lints reject.
#[doc(hidden)]
#[macro_export]
macro_rules! __printer_cases {
    ($then:ident ($($arg:tt)*)) => {
        $crate::$then!(
            ($($arg)*)
            null_and_boolean_literals,
            integer_literals,
            real_literals,
            real_literals_round_trip_through_their_text,
            text_literals,
            blob_literals,
            decimal_literals,
            column_refs,
            unary_operators,
            binary_operators,
            precedence_sensitive_nesting,
            collate,
            is_null_and_is_bool,
            like_and_glob,
            between_and_symmetric,
            in_list,
            subqueries,
            case_both_forms,
            cast,
            functions,
            select_clauses,
            joins,
            natural_is_never_dropped,
            comma_join_keeps_the_tree_left_deep,
            table_aliases_and_derived_tables,
            common_table_expressions,
            window_calls,
            set_operations,
            intersect_over_union_keeps_its_meaning,
            order_by_limit_offset,
            offset_without_limit,
            subquery_keeps_its_order_and_limit,
            sqlparser_gaps,
            random_trees_keep_their_shape_in_sqlparser,
        );
    };
}

/// [`CASES`], from the list of cases.
#[doc(hidden)]
#[macro_export]
macro_rules! __printer_case_table {
    (() $($case:ident,)*) => {
        /// Every case, by name: what [`crate::printer_suite`] runs.
        pub const CASES: &[(&str, Case)] = &[$((stringify!($case), $case)),*];
    };
}

/// The tests of [`crate::printer_suite`], from the list of cases.
#[doc(hidden)]
#[macro_export]
macro_rules! __printer_case_tests {
    (($tested:expr) $($case:ident,)*) => {
        $(
            #[test]
            fn $case() {
                $crate::printer::suite::run(&$tested, stringify!($case));
            }
        )*
    };
}
