//! Printer cases: literals of every type and column references.

use super::pick;
use crate::printer::trees::*;
use crate::printer::{decoded_string, Tested};
use lancet_core::ast::*;
use lancet_core::value::Value;

pub(super) fn null_and_boolean_literals(t: &Tested) {
    t.verified_expr(&Expr::lit(Value::Null), "NULL");
    t.verified_expr(&Expr::lit(Value::Boolean(true)), "TRUE");
    t.verified_expr(&Expr::lit(Value::Boolean(false)), "FALSE");
}

pub(super) fn integer_literals(t: &Tested) {
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

pub(super) fn real_literals(t: &Tested) {
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

pub(super) fn real_literals_round_trip_through_their_text(t: &Tested) {
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

pub(super) fn text_literals(t: &Tested) {
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

pub(super) fn blob_literals(t: &Tested) {
    let blob = Expr::lit(Value::Blob(vec![0x00, 0xab, 0xff, 0x10]));
    let expected = pick(t, "X'00ABFF10'", r"'\x00ABFF10'::bytea", "X'00ABFF10'");
    t.verified_expr(&blob, expected);
    let empty = Expr::lit(Value::Blob(vec![]));
    let parsed = t.verified_expr(&empty, pick(t, "X''", r"'\x'::bytea", "X''"));
    if t.is("postgres") {
        assert_eq!(decoded_string(&parsed), r"\x");
    }
}

pub(super) fn decimal_literals(t: &Tested) {
    t.verified_expr(&Expr::lit(Value::Decimal("1.50".into())), "1.50");
    t.verified_expr(&Expr::lit(Value::Decimal("-3.25".into())), "(-3.25)");
    t.verified_expr(
        &un(UnaryOp::Neg, Expr::lit(Value::Decimal("-3.25".into()))),
        "-(-3.25)",
    );
}

pub(super) fn column_refs(t: &Tested) {
    t.verified_expr(&col("c0"), "c0");
    t.verified_expr(&qcol("t0", "c0"), "t0.c0");
    t.verified_expr(
        &bin(BinaryOp::Eq, qcol("t0", "c0"), qcol("t1", "c0")),
        "t0.c0 = t1.c0",
    );
}

// ---------------------------------------------------------------------------
