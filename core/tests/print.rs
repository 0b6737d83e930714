//! Printer tests in the style of sqlparser-rs: build the tree, assert the exact
//! text for every dialect, and have sqlparser parse the text with the
//! matching dialect wherever it supports the construct. Precedence-sensitive
//! trees are also compared structurally with what sqlparser parsed, and a few
//! printed SQLite expressions are evaluated by the `sqlite3` CLI.

use lancet_core::ast::*;
use lancet_core::print::{Dialect, ToSql};
use lancet_core::value::Value;
use sqlparser::ast as sp;
use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::{Parser, ParserError};

use Dialect::{MySql, Postgres, Sqlite};

const ALL: [Dialect; 3] = [Sqlite, Postgres, MySql];

// ---------------------------------------------------------------------------
// Building trees
// ---------------------------------------------------------------------------

fn col(name: &str) -> Expr {
    Expr::column(None, name)
}

fn qcol(table: &str, name: &str) -> Expr {
    Expr::column(Some(table), name)
}

fn int(i: i64) -> Expr {
    Expr::int(i)
}

fn real(r: f64) -> Expr {
    Expr::lit(Value::Real(r))
}

fn text(s: &str) -> Expr {
    Expr::lit(Value::Text(s.to_string()))
}

fn bin(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    Expr::binary(op, left, right)
}

fn un(op: UnaryOp, e: Expr) -> Expr {
    Expr::unary(op, e)
}

fn item(expr: Expr) -> SelectItem {
    SelectItem::Expr { expr, alias: None }
}

fn table(name: &str) -> TableFactor {
    TableFactor::Table {
        name: name.to_string(),
        alias: None,
        indexed_by: None,
    }
}

/// `SELECT items`
fn select(items: Vec<Expr>) -> Select {
    Select {
        items: items.into_iter().map(item).collect(),
        ..Select::default()
    }
}

/// `SELECT items FROM name`
fn select_from(items: Vec<Expr>, name: &str) -> Select {
    Select {
        from: Some(FromClause {
            first: table(name),
            joins: vec![],
        }),
        ..select(items)
    }
}

/// `SELECT * FROM` a FROM clause.
fn select_star(from: FromClause) -> Query {
    Query::select(Select {
        items: vec![SelectItem::Wildcard],
        from: Some(from),
        ..Select::default()
    })
}

fn join(kind: JoinKind, factor: TableFactor, constraint: JoinConstraint) -> Join {
    Join {
        kind,
        factor,
        constraint,
    }
}

fn query(items: Vec<Expr>) -> Query {
    Query::select(select(items))
}

fn query_from(items: Vec<Expr>, name: &str) -> Query {
    Query::select(select_from(items, name))
}

fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------
// Checking with sqlparser
// ---------------------------------------------------------------------------

fn sp_parse(d: Dialect, sql: &str) -> Result<Vec<sp::Statement>, ParserError> {
    match d {
        Sqlite => Parser::parse_sql(&SQLiteDialect {}, sql),
        Postgres => Parser::parse_sql(&PostgreSqlDialect {}, sql),
        MySql => Parser::parse_sql(&MySqlDialect {}, sql),
    }
}

fn parse_one(d: Dialect, sql: &str) -> sp::Statement {
    let mut statements =
        sp_parse(d, sql).unwrap_or_else(|e| panic!("sqlparser ({d:?}) rejects {sql}: {e}"));
    assert_eq!(statements.len(), 1, "{sql}");
    statements.remove(0)
}

/// The first select item of `SELECT ...`.
fn first_projection(statement: sp::Statement) -> sp::Expr {
    let sp::Statement::Query(q) = statement else {
        panic!("not a query: {statement}")
    };
    let sp::SetExpr::Select(s) = *q.body else {
        panic!("not a plain select")
    };
    match s.projection.into_iter().next() {
        Some(sp::SelectItem::UnnamedExpr(e)) => e,
        other => panic!("unexpected select item {other:?}"),
    }
}

/// Asserts the printed text without parsing it (for syntax sqlparser lacks).
#[track_caller]
fn printed(node: &impl ToSql, d: Dialect, expected: &str) {
    assert_eq!(node.to_sql(d), expected, "{d:?}");
}

/// Asserts the printed text and that sqlparser parses it in that dialect.
#[track_caller]
fn verified(node: &impl ToSql, d: Dialect, expected: &str) -> sp::Statement {
    printed(node, d, expected);
    parse_one(d, expected)
}

/// `verified` for each dialect, with the same text.
#[track_caller]
fn verified_all(node: &impl ToSql, expected: &str) {
    for d in ALL {
        verified(node, d, expected);
    }
}

/// Asserts an expression's text and parses it as `SELECT text`, returning
/// what sqlparser made of it.
#[track_caller]
fn verified_expr(e: &Expr, d: Dialect, expected: &str) -> sp::Expr {
    printed(e, d, expected);
    first_projection(parse_one(d, &format!("SELECT {expected}")))
}

#[track_caller]
fn verified_expr_all(e: &Expr, expected: &str) {
    for d in ALL {
        verified_expr(e, d, expected);
    }
}

/// Asserts that sqlparser parsed the printed expression into the same tree
/// as ours, parentheses aside: our precedence survived their parser.
#[track_caller]
fn same_shape(e: &Expr, d: Dialect) {
    let sql = e.to_sql(d);
    let parsed = first_projection(parse_one(d, &format!("SELECT {sql}")));
    assert_eq!(sp_shape(&parsed), our_shape(e, d), "{d:?}: {sql}");
}

/// A fully parenthesized prefix form of sqlparser's expression, ignoring
/// its `Nested` nodes. Leaves print as sqlparser prints them.
fn sp_shape(e: &sp::Expr) -> String {
    use sp::Expr as S;
    let s = |e: &sp::Expr| sp_shape(e);
    let not = |negated: bool| if negated { "NOT " } else { "" };
    match e {
        S::Nested(inner) => s(inner),
        S::UnaryOp { op, expr } => format!("({op} {})", s(expr)),
        S::BinaryOp { left, op, right } => format!("({op} {} {})", s(left), s(right)),
        S::IsNull(x) => format!("(IS NULL {})", s(x)),
        S::IsNotNull(x) => format!("(IS NOT NULL {})", s(x)),
        S::IsTrue(x) => format!("(IS TRUE {})", s(x)),
        S::IsNotTrue(x) => format!("(IS NOT TRUE {})", s(x)),
        S::IsFalse(x) => format!("(IS FALSE {})", s(x)),
        S::IsNotFalse(x) => format!("(IS NOT FALSE {})", s(x)),
        S::IsDistinctFrom(a, b) => format!("(IS DISTINCT FROM {} {})", s(a), s(b)),
        S::IsNotDistinctFrom(a, b) => format!("(IS NOT DISTINCT FROM {} {})", s(a), s(b)),
        S::Between {
            expr,
            negated,
            low,
            high,
        } => format!(
            "({}BETWEEN {} {} {})",
            not(*negated),
            s(expr),
            s(low),
            s(high)
        ),
        S::Like {
            negated,
            expr,
            pattern,
            escape_char,
            ..
        } => like_shape("LIKE", *negated, s(expr), s(pattern), escape_char),
        S::ILike {
            negated,
            expr,
            pattern,
            escape_char,
            ..
        } => like_shape("ILIKE", *negated, s(expr), s(pattern), escape_char),
        S::SimilarTo {
            negated,
            expr,
            pattern,
            escape_char,
        } => like_shape("SIMILAR TO", *negated, s(expr), s(pattern), escape_char),
        S::InList {
            expr,
            list,
            negated,
        } => {
            let items: Vec<String> = list.iter().map(s).collect();
            format!("({}IN {} {})", not(*negated), s(expr), items.join(" "))
        }
        S::Collate { expr, collation } => format!("(COLLATE {} {collation})", s(expr)),
        S::Function(f) => match &f.args {
            sp::FunctionArguments::List(list) if list.duplicate_treatment.is_none() => {
                let args: Vec<String> = list
                    .args
                    .iter()
                    .map(|a| match a {
                        sp::FunctionArg::Unnamed(sp::FunctionArgExpr::Expr(e)) => s(e),
                        other => other.to_string(),
                    })
                    .collect();
                format!("({} {})", f.name, args.join(" "))
            }
            _ => e.to_string(),
        },
        other => other.to_string(),
    }
}

fn like_shape(
    kind: &str,
    negated: bool,
    expr: String,
    pattern: String,
    escape: &Option<sp::Value>,
) -> String {
    let not = if negated { "NOT " } else { "" };
    match escape {
        Some(e) => format!("({not}{kind} {expr} {pattern} ESCAPE {e})"),
        None => format!("({not}{kind} {expr} {pattern})"),
    }
}

/// Our tree in the form of [`sp_shape`]. Leaves other than columns and
/// integers are printed, which matches sqlparser's display for the leaves
/// used with it (casts, functions, text without quotes).
fn our_shape(e: &Expr, d: Dialect) -> String {
    let s = |e: &Expr| our_shape(e, d);
    let not = |negated: bool| if negated { "NOT " } else { "" };
    match e {
        Expr::Literal(Value::Integer(i)) if *i < 0 => format!("(- {})", i.unsigned_abs()),
        Expr::Literal(Value::Integer(i)) => i.to_string(),
        Expr::Column(_) => e.to_sql(d),
        Expr::Unary { op, expr } => {
            let op = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Plus => "+",
                UnaryOp::BitNot => "~",
                UnaryOp::Not => "NOT",
            };
            format!("({op} {})", s(expr))
        }
        Expr::Binary { op, left, right } => {
            let (l, r) = (s(left), s(right));
            use BinaryOp::*;
            let op = match (op, d) {
                (Concat, MySql) => return format!("(CONCAT {l} {r})"),
                (IsDistinctFrom, MySql) => return format!("(NOT (<=> {l} {r}))"),
                (IsNotDistinctFrom, MySql) => "<=>",
                (IsNotDistinctFrom, _) => return format!("(IS NOT DISTINCT FROM {l} {r})"),
                (IsDistinctFrom, _) => return format!("(IS DISTINCT FROM {l} {r})"),
                (Add, _) => "+",
                (Sub, _) => "-",
                (Mul, _) => "*",
                (Div, _) => "/",
                (Mod, _) => "%",
                (Concat, _) => "||",
                (BitAnd, _) => "&",
                (BitOr, _) => "|",
                (ShiftLeft, _) => "<<",
                (ShiftRight, _) => ">>",
                (Eq, _) => "=",
                (NotEq, _) => "<>",
                (Lt, _) => "<",
                (LtEq, _) => "<=",
                (Gt, _) => ">",
                (GtEq, _) => ">=",
                (And, _) => "AND",
                (Or, _) => "OR",
                (RegexMatch, _) => unreachable!("not generated here"),
            };
            format!("({op} {l} {r})")
        }
        Expr::IsNull { expr, negated } => format!("(IS {}NULL {})", not(*negated), s(expr)),
        Expr::IsBool {
            expr,
            value,
            negated,
        } => format!(
            "(IS {}{} {})",
            not(*negated),
            if *value { "TRUE" } else { "FALSE" },
            s(expr)
        ),
        Expr::Like {
            kind,
            expr,
            pattern,
            escape,
            negated,
        } => {
            let kind = match kind {
                LikeKind::Like => "LIKE",
                LikeKind::ILike => "ILIKE",
                LikeKind::SimilarTo => "SIMILAR TO",
                LikeKind::Glob => "GLOB",
            };
            let not = not(*negated);
            match escape {
                Some(x) => format!(
                    "({not}{kind} {} {} ESCAPE {})",
                    s(expr),
                    s(pattern),
                    x.to_sql(d)
                ),
                None => format!("({not}{kind} {} {})", s(expr), s(pattern)),
            }
        }
        Expr::Between {
            expr,
            low,
            high,
            negated,
            symmetric: false,
        } => format!(
            "({}BETWEEN {} {} {})",
            not(*negated),
            s(expr),
            s(low),
            s(high)
        ),
        Expr::InList {
            expr,
            list,
            negated,
        } => {
            let items: Vec<String> = list.iter().map(s).collect();
            format!("({}IN {} {})", not(*negated), s(expr), items.join(" "))
        }
        Expr::Collate { expr, .. } => {
            // The printed collation, as sqlparser displays it.
            let printed = e.to_sql(d);
            let name = printed.rsplit(" COLLATE ").next().unwrap();
            format!("(COLLATE {} {name})", s(expr))
        }
        Expr::Function {
            name,
            args,
            distinct: false,
        } if !args.is_empty() => {
            let args: Vec<String> = args.iter().map(s).collect();
            format!("({name} {})", args.join(" "))
        }
        _ => e.to_sql(d),
    }
}

/// The string sqlparser decoded from a literal, through a PostgreSQL cast.
fn decoded_string(e: &sp::Expr) -> String {
    match e {
        sp::Expr::Value(v) => match &v.value {
            sp::Value::SingleQuotedString(s) | sp::Value::HexStringLiteral(s) => s.clone(),
            other => panic!("not a string: {other:?}"),
        },
        sp::Expr::Cast { expr, .. } => decoded_string(expr),
        sp::Expr::Nested(inner) => decoded_string(inner),
        other => panic!("not a string literal: {other:?}"),
    }
}

// ---------------------------------------------------------------------------
// Literals
// ---------------------------------------------------------------------------

#[test]
fn null_and_boolean_literals() {
    verified_expr_all(&Expr::lit(Value::Null), "NULL");
    verified_expr_all(&Expr::lit(Value::Boolean(true)), "TRUE");
    verified_expr_all(&Expr::lit(Value::Boolean(false)), "FALSE");
}

#[test]
fn integer_literals() {
    verified_expr_all(&int(0), "0");
    verified_expr_all(&int(42), "42");
    verified_expr_all(&int(i64::MAX), "9223372036854775807");
    // Negative literals carry their own parentheses, so that no operator
    // can ever stand next to the sign (`- -1` is a comment in SQL).
    verified_expr_all(&int(-7), "(-7)");
    verified_expr_all(&int(i64::MIN), "(-9223372036854775808)");
    for d in ALL {
        same_shape(&int(-7), d);
        same_shape(&int(i64::MIN), d);
    }
}

#[test]
fn real_literals() {
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
        verified_expr(&real(r), Sqlite, s);
        verified_expr(&real(r), Postgres, p);
        verified_expr(&real(r), MySql, m);
    }
    // PostgreSQL reads the quoted text back exactly.
    let parsed = verified_expr(&real(-0.0), Postgres, "'-0.0'::float8");
    assert_eq!(decoded_string(&parsed), "-0.0");
    // As an operand, a negative PostgreSQL real is parenthesized too.
    verified_expr(
        &bin(BinaryOp::Sub, int(1), real(-2.5)),
        Postgres,
        "1 - '-2.5'::float8",
    );
}

#[test]
fn real_literals_round_trip_through_their_text() {
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
        let s = real(r).to_sql(Sqlite);
        let back: f64 = s.trim_matches(['(', ')']).parse().unwrap();
        assert_eq!(back.to_bits(), r.to_bits(), "{s}");
        let m = real(r).to_sql(MySql);
        let back: f64 = m.trim_matches(['(', ')']).parse().unwrap();
        assert_eq!(back.to_bits(), r.to_bits(), "{m}");
        let p = real(r).to_sql(Postgres);
        let back: f64 = p
            .trim_end_matches("::float8")
            .trim_matches('\'')
            .parse()
            .unwrap();
        assert_eq!(back.to_bits(), r.to_bits(), "{p}");
    }
}

#[test]
fn text_literals() {
    verified_expr_all(&text(""), "''");
    verified_expr_all(&text("abc"), "'abc'");
    verified_expr_all(&text("it's"), "'it''s'");
    verified_expr_all(&text("''"), "''''''");
    verified_expr_all(&text("é ☃"), "'é ☃'");
    // A backslash is an escape character only in MySQL.
    for (d, expected) in [(Sqlite, r"'a\b'"), (Postgres, r"'a\b'"), (MySql, r"'a\\b'")] {
        let parsed = verified_expr(&text(r"a\b"), d, expected);
        assert_eq!(decoded_string(&parsed), r"a\b", "{d:?}");
    }
    for (d, expected) in [
        (Sqlite, r"'\''x'"),
        (Postgres, r"'\''x'"),
        (MySql, r"'\\''x'"),
    ] {
        let parsed = verified_expr(&text(r"\'x"), d, expected);
        assert_eq!(decoded_string(&parsed), r"\'x", "{d:?}");
    }
    // A trailing backslash must not escape the closing quote in MySQL.
    let parsed = verified_expr(&text("x\\"), MySql, r"'x\\'");
    assert_eq!(decoded_string(&parsed), "x\\");
}

#[test]
fn blob_literals() {
    let blob = Expr::lit(Value::Blob(vec![0x00, 0xab, 0xff, 0x10]));
    for (d, expected) in [
        (Sqlite, "X'00ABFF10'"),
        (Postgres, r"'\x00ABFF10'::bytea"),
        (MySql, "X'00ABFF10'"),
    ] {
        verified_expr(&blob, d, expected);
    }
    let empty = Expr::lit(Value::Blob(vec![]));
    verified_expr(&empty, Sqlite, "X''");
    verified_expr(&empty, MySql, "X''");
    let parsed = verified_expr(&empty, Postgres, r"'\x'::bytea");
    assert_eq!(decoded_string(&parsed), r"\x");
}

#[test]
fn decimal_literals() {
    verified_expr_all(&Expr::lit(Value::Decimal("1.50".into())), "1.50");
    verified_expr_all(&Expr::lit(Value::Decimal("-3.25".into())), "(-3.25)");
    verified_expr_all(
        &un(UnaryOp::Neg, Expr::lit(Value::Decimal("-3.25".into()))),
        "-(-3.25)",
    );
}

#[test]
fn column_refs() {
    verified_expr_all(&col("c0"), "c0");
    verified_expr_all(&qcol("t0", "c0"), "t0.c0");
    verified_expr_all(
        &bin(BinaryOp::Eq, qcol("t0", "c0"), qcol("t1", "c0")),
        "t0.c0 = t1.c0",
    );
}

// ---------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------

#[test]
fn unary_operators() {
    verified_expr_all(&un(UnaryOp::Neg, col("a")), "-a");
    verified_expr_all(&un(UnaryOp::Plus, col("a")), "+a");
    verified_expr_all(&un(UnaryOp::Not, col("a")), "NOT a");
    // sqlparser knows prefix `~` only in its PostgreSQL dialect.
    verified_expr(&un(UnaryOp::BitNot, col("a")), Postgres, "~a");
    printed(&un(UnaryOp::BitNot, col("a")), Sqlite, "~a");
    printed(&un(UnaryOp::BitNot, col("a")), MySql, "~a");
    verified_expr(&un(UnaryOp::BitNot, int(-1)), Postgres, "~(-1)");
    for d in ALL {
        same_shape(&un(UnaryOp::Neg, col("a")), d);
        same_shape(&un(UnaryOp::Not, col("a")), d);
    }
}

#[test]
fn binary_operators() {
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
        for (d, expected) in [(Sqlite, s), (Postgres, p), (MySql, m)] {
            // sqlparser has `<<`/`>>` only for PostgreSQL, and no general
            // `a IS b` (SQLite's null-safe comparison).
            let unsupported = matches!(op, ShiftLeft | ShiftRight) && d != Postgres
                || matches!(op, IsNotDistinctFrom | IsDistinctFrom) && d == Sqlite;
            if unsupported {
                printed(&e, d, expected);
            } else {
                verified_expr(&e, d, expected);
                same_shape(&e, d);
            }
        }
    }
}

#[test]
fn comparison_classification() {
    use BinaryOp::*;
    for op in [
        Eq,
        NotEq,
        Lt,
        LtEq,
        Gt,
        GtEq,
        IsNotDistinctFrom,
        IsDistinctFrom,
    ] {
        assert!(op.is_comparison(), "{op:?}");
    }
    for op in [
        Add, Sub, Mul, Div, Mod, Concat, BitAnd, BitOr, ShiftLeft, ShiftRight, And, Or,
    ] {
        assert!(!op.is_comparison(), "{op:?}");
    }
}

/// Nested trees whose meaning depends on parentheses.
#[test]
fn precedence_sensitive_nesting() {
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
        for d in ALL {
            verified_expr(e, d, expected);
            same_shape(e, d);
            assert!(!e.to_sql(d).contains("--"), "{expected}");
        }
    }
}

#[test]
fn collate() {
    let e = bin(
        BinaryOp::Eq,
        Expr::Collate {
            expr: Box::new(col("x")),
            collation: "NOCASE".into(),
        },
        col("y"),
    );
    let s = verified_expr(&e, Sqlite, "(x COLLATE NOCASE) = y");
    // PostgreSQL folds unquoted names to lower case.
    let p = verified_expr(&e, Postgres, "(x COLLATE \"NOCASE\") = y");
    let m = verified_expr(&e, MySql, "(x COLLATE NOCASE) = y");
    for (d, parsed) in [(Sqlite, s), (Postgres, p), (MySql, m)] {
        assert_eq!(sp_shape(&parsed), our_shape(&e, d));
        let sp::Expr::BinaryOp { left, .. } = parsed else {
            panic!()
        };
        assert!(
            matches!(*left, sp::Expr::Nested(ref x) if matches!(**x, sp::Expr::Collate { .. }))
        );
    }
    // The collated operand is itself parenthesized when compound.
    let e = Expr::Collate {
        expr: Box::new(bin(BinaryOp::Concat, col("a"), col("b"))),
        collation: "BINARY".into(),
    };
    verified_expr(&e, Sqlite, "(a || b) COLLATE BINARY");
    verified_expr(&e, MySql, "(CONCAT(a, b)) COLLATE BINARY");
    let e = Expr::Collate {
        expr: Box::new(text("a")),
        collation: "C".into(),
    };
    verified_expr(&e, Postgres, "'a' COLLATE \"C\"");
}

// ---------------------------------------------------------------------------
// Predicates
// ---------------------------------------------------------------------------

#[test]
fn is_null_and_is_bool() {
    verified_expr_all(&Expr::is_null(col("a")), "a IS NULL");
    let not_null = Expr::IsNull {
        expr: Box::new(col("a")),
        negated: true,
    };
    verified_expr_all(&not_null, "a IS NOT NULL");
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
        verified_expr_all(&e, expected);
        for d in ALL {
            same_shape(&e, d);
        }
    }
    let e = Expr::IsBool {
        expr: Box::new(bin(BinaryOp::Gt, col("a"), int(1))),
        value: false,
        negated: true,
    };
    verified_expr_all(&e, "(a > 1) IS NOT FALSE");
    for d in ALL {
        same_shape(&e, d);
        same_shape(&not_null, d);
    }
}

fn like(kind: LikeKind, pattern: &str, escape: Option<&str>, negated: bool) -> Expr {
    Expr::Like {
        kind,
        expr: Box::new(col("a")),
        pattern: Box::new(text(pattern)),
        escape: escape.map(|e| Box::new(text(e))),
        negated,
    }
}

#[test]
fn like_and_glob() {
    let e = like(LikeKind::Like, "x!%", Some("!"), false);
    verified_expr_all(&e, "a LIKE 'x!%' ESCAPE '!'");
    let e = like(LikeKind::Like, "x%", None, true);
    verified_expr_all(&e, "a NOT LIKE 'x%'");
    for d in ALL {
        same_shape(&like(LikeKind::Like, "x!%", Some("!"), false), d);
        same_shape(&like(LikeKind::Like, "x%", None, true), d);
    }
    // A backslash escape character, per dialect.
    let e = like(LikeKind::Like, r"x\%", Some(r"\"), false);
    verified_expr(&e, Sqlite, r"a LIKE 'x\%' ESCAPE '\'");
    verified_expr(&e, Postgres, r"a LIKE 'x\%' ESCAPE '\'");
    verified_expr(&e, MySql, r"a LIKE 'x\\%' ESCAPE '\\'");
    // The pattern is an operand like any other.
    let e = Expr::Like {
        kind: LikeKind::Like,
        expr: Box::new(bin(BinaryOp::Concat, col("a"), col("b"))),
        pattern: Box::new(bin(BinaryOp::Concat, col("c"), text("%"))),
        escape: None,
        negated: false,
    };
    verified_expr(&e, Sqlite, "(a || b) LIKE (c || '%')");
    verified_expr(&e, MySql, "(CONCAT(a, b)) LIKE (CONCAT(c, '%'))");
    // sqlparser has no GLOB.
    printed(
        &like(LikeKind::Glob, "x*", None, false),
        Sqlite,
        "a GLOB 'x*'",
    );
    printed(
        &like(LikeKind::Glob, "x*", Some("!"), true),
        Sqlite,
        "a NOT GLOB 'x*' ESCAPE '!'",
    );
    // PostgreSQL's pattern operators.
    let e = like(LikeKind::ILike, "X%", None, false);
    verified_expr(&e, Postgres, "a ILIKE 'X%'");
    same_shape(&e, Postgres);
    let e = like(LikeKind::ILike, "X%", Some("!"), true);
    verified_expr(&e, Postgres, "a NOT ILIKE 'X%' ESCAPE '!'");
    same_shape(&e, Postgres);
    let e = like(LikeKind::SimilarTo, "(a|b)%", None, false);
    verified_expr(&e, Postgres, "a SIMILAR TO '(a|b)%'");
    same_shape(&e, Postgres);
    let e = like(LikeKind::SimilarTo, "x!%", Some("!"), true);
    verified_expr(&e, Postgres, "a NOT SIMILAR TO 'x!%' ESCAPE '!'");
    same_shape(&e, Postgres);
}

fn between(expr: Expr, low: Expr, high: Expr, negated: bool, symmetric: bool) -> Expr {
    Expr::Between {
        expr: Box::new(expr),
        low: Box::new(low),
        high: Box::new(high),
        negated,
        symmetric,
    }
}

#[test]
fn between_and_symmetric() {
    let e = between(col("a"), int(1), int(2), false, false);
    verified_expr_all(&e, "a BETWEEN 1 AND 2");
    let e = between(col("a"), int(1), int(2), true, false);
    verified_expr_all(&e, "a NOT BETWEEN 1 AND 2");
    let e = between(
        bin(BinaryOp::Add, col("a"), int(1)),
        int(-1),
        bin(BinaryOp::Mul, col("b"), int(2)),
        false,
        false,
    );
    verified_expr_all(&e, "(a + 1) BETWEEN (-1) AND (b * 2)");
    for d in ALL {
        same_shape(&e, d);
    }
    // sqlparser has no SYMMETRIC.
    let e = between(col("a"), int(2), int(1), false, true);
    printed(&e, Postgres, "a BETWEEN SYMMETRIC 2 AND 1");
    let e = between(col("a"), int(2), int(1), true, true);
    printed(&e, Postgres, "a NOT BETWEEN SYMMETRIC 2 AND 1");
}

#[test]
fn in_list() {
    let e = Expr::InList {
        expr: Box::new(col("a")),
        list: vec![int(1), int(-2), text("x"), Expr::lit(Value::Null)],
        negated: false,
    };
    verified_expr_all(&e, "a IN (1, (-2), 'x', NULL)");
    let e = Expr::InList {
        expr: Box::new(bin(BinaryOp::Add, col("a"), int(1))),
        list: vec![bin(BinaryOp::Add, col("b"), int(1)), col("c")],
        negated: true,
    };
    verified_expr_all(&e, "(a + 1) NOT IN (b + 1, c)");
    for d in ALL {
        same_shape(&e, d);
    }
    // SQLite accepts an empty list (always false).
    let e = Expr::InList {
        expr: Box::new(col("a")),
        list: vec![],
        negated: false,
    };
    verified_expr(&e, Sqlite, "a IN ()");
}

#[test]
fn subqueries() {
    let sub = query_from(vec![col("c0")], "t0");
    let e = Expr::InSubquery {
        expr: Box::new(col("a")),
        query: Box::new(sub.clone()),
        negated: false,
    };
    verified_expr_all(&e, "a IN (SELECT c0 FROM t0)");
    let e = Expr::InSubquery {
        expr: Box::new(bin(BinaryOp::Sub, col("a"), int(1))),
        query: Box::new(sub.clone()),
        negated: true,
    };
    verified_expr_all(&e, "(a - 1) NOT IN (SELECT c0 FROM t0)");

    let e = Expr::Exists {
        query: Box::new(query(vec![int(1)])),
        negated: false,
    };
    verified_expr_all(&e, "EXISTS (SELECT 1)");
    let filtered = Query::select(Select {
        items: vec![SelectItem::Wildcard],
        selection: Some(bin(BinaryOp::Gt, col("c0"), int(1))),
        ..select_from(vec![], "t0")
    });
    let e = Expr::Exists {
        query: Box::new(filtered),
        negated: true,
    };
    verified_expr_all(&e, "NOT EXISTS (SELECT * FROM t0 WHERE c0 > 1)");
    // EXISTS as an operand is parenthesized whole.
    let e = bin(
        BinaryOp::And,
        Expr::Exists {
            query: Box::new(query(vec![int(1)])),
            negated: false,
        },
        col("b"),
    );
    verified_expr_all(&e, "(EXISTS (SELECT 1)) AND b");

    // A scalar subquery is atomic.
    let max = query_from(vec![Expr::func("MAX", vec![col("c0")])], "t0");
    let e = bin(BinaryOp::Add, Expr::Subquery(Box::new(max)), int(1));
    verified_expr_all(&e, "(SELECT MAX(c0) FROM t0) + 1");
    let e = un(UnaryOp::Neg, Expr::Subquery(Box::new(query(vec![int(1)]))));
    verified_expr_all(&e, "-(SELECT 1)");
}

#[test]
fn case_both_forms() {
    let searched = Expr::Case {
        operand: None,
        branches: vec![
            (bin(BinaryOp::Eq, col("a"), int(1)), text("one")),
            (Expr::is_null(col("a")), text("null")),
        ],
        otherwise: Some(Box::new(text("other"))),
    };
    verified_expr_all(
        &searched,
        "CASE WHEN a = 1 THEN 'one' WHEN a IS NULL THEN 'null' ELSE 'other' END",
    );
    let simple = Expr::Case {
        operand: Some(Box::new(bin(BinaryOp::Add, col("a"), int(1)))),
        branches: vec![(int(1), int(-2)), (int(3), col("b"))],
        otherwise: None,
    };
    verified_expr_all(&simple, "CASE (a + 1) WHEN 1 THEN (-2) WHEN 3 THEN b END");
    // CASE is atomic as an operand.
    let e = bin(BinaryOp::Mul, simple, int(2));
    verified_expr_all(&e, "CASE (a + 1) WHEN 1 THEN (-2) WHEN 3 THEN b END * 2");
}

#[test]
fn cast() {
    let e = Expr::Cast {
        expr: Box::new(bin(BinaryOp::Add, col("a"), int(1))),
        ty: TypeName("INTEGER".into()),
    };
    verified_expr_all(&e, "CAST(a + 1 AS INTEGER)");
    let e = Expr::Cast {
        expr: Box::new(int(-1)),
        ty: TypeName("TEXT".into()),
    };
    verified_expr(&e, Sqlite, "CAST((-1) AS TEXT)");
    verified_expr(&e, Postgres, "CAST((-1) AS TEXT)");
    let e = Expr::Cast {
        expr: Box::new(col("a")),
        ty: TypeName("numeric(10,2)".into()),
    };
    verified_expr(&e, Postgres, "CAST(a AS numeric(10,2))");
    let e = Expr::Cast {
        expr: Box::new(col("a")),
        ty: TypeName("SIGNED".into()),
    };
    verified_expr(&e, MySql, "CAST(a AS SIGNED)");
    // CAST is atomic as an operand.
    let e = un(
        UnaryOp::Neg,
        Expr::Cast {
            expr: Box::new(col("a")),
            ty: TypeName("REAL".into()),
        },
    );
    verified_expr(&e, Sqlite, "-CAST(a AS REAL)");
}

#[test]
fn functions() {
    verified_expr_all(&Expr::func("random", vec![]), "random()");
    verified_expr_all(&Expr::func("abs", vec![int(-1)]), "abs((-1))");
    verified_expr_all(
        &Expr::func("coalesce", vec![col("a"), Expr::lit(Value::Null), int(1)]),
        "coalesce(a, NULL, 1)",
    );
    verified_expr_all(&Expr::CountStar, "COUNT(*)");
    let distinct = Expr::Function {
        name: "COUNT".into(),
        args: vec![col("c0")],
        distinct: true,
    };
    verified_expr_all(&distinct, "COUNT(DISTINCT c0)");
    let e = bin(BinaryOp::Gt, Expr::CountStar, int(1));
    verified_expr_all(&e, "COUNT(*) > 1");
    let e = bin(BinaryOp::Add, Expr::func("MAX", vec![col("a")]), int(1));
    verified_expr_all(&e, "MAX(a) + 1");
    for d in ALL {
        same_shape(&e, d);
    }
    // Aggregate detection, used by generators.
    let is_agg = |name: &str| name.eq_ignore_ascii_case("max");
    assert!(e.contains_aggregate(&is_agg));
    assert!(Expr::CountStar.contains_aggregate(&is_agg));
    assert!(!Expr::func("abs", vec![col("a")]).contains_aggregate(&is_agg));
}

// ---------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------

#[test]
fn select_clauses() {
    verified_all(&Statement::Query(query(vec![int(1)])), "SELECT 1");
    let q = select_star(FromClause {
        first: table("t0"),
        joins: vec![],
    });
    verified_all(&Statement::Query(q), "SELECT * FROM t0");
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
    printed(&s, Sqlite, expected);
    verified_all(&Statement::Query(Query::select(s)), expected);
}

#[test]
fn joins() {
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
        verified_all(&Statement::Query(q), &format!("SELECT * FROM t0{expected}"));
    }
}

#[test]
fn natural_is_never_dropped() {
    // NATURAL on a comma or CROSS join is an inner natural join; printing
    // the kind alone would silently make it a cross product.
    for kind in [JoinKind::Comma, JoinKind::Cross] {
        let q = select_star(FromClause {
            first: table("t0"),
            joins: vec![join(kind, table("t1"), JoinConstraint::Natural)],
        });
        verified_all(&Statement::Query(q), "SELECT * FROM t0 NATURAL JOIN t1");
    }
}

#[test]
fn comma_join_keeps_the_tree_left_deep() {
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
    let statement = Statement::Query(q);
    verified(
        &statement,
        Sqlite,
        "SELECT * FROM t0, t1 JOIN t2 ON t0.c0 = t2.c0",
    );
    verified(
        &statement,
        Postgres,
        "SELECT * FROM t0 CROSS JOIN t1 JOIN t2 ON t0.c0 = t2.c0",
    );
    verified(
        &statement,
        MySql,
        "SELECT * FROM t0 CROSS JOIN t1 JOIN t2 ON t0.c0 = t2.c0",
    );
}

#[test]
fn table_aliases_and_derived_tables() {
    let aliased = TableFactor::Table {
        name: "t0".into(),
        alias: Some("a".into()),
        indexed_by: None,
    };
    let derived = TableFactor::Derived {
        query: Box::new(query_from(vec![col("c0")], "t1")),
        alias: "d".into(),
        lateral: false,
    };
    let q = select_star(FromClause {
        first: aliased,
        joins: vec![join(
            JoinKind::Left,
            derived,
            JoinConstraint::On(bin(BinaryOp::Eq, qcol("a", "c0"), qcol("d", "c0"))),
        )],
    });
    verified_all(
        &Statement::Query(q),
        "SELECT * FROM t0 AS a LEFT JOIN (SELECT c0 FROM t1) AS d ON a.c0 = d.c0",
    );
    let lateral = TableFactor::Derived {
        query: Box::new(Query::select(Select {
            selection: Some(bin(BinaryOp::Eq, qcol("t1", "c0"), qcol("t0", "c0"))),
            ..select_from(vec![qcol("t1", "c1")], "t1")
        })),
        alias: "l".into(),
        lateral: true,
    };
    let q = select_star(FromClause {
        first: table("t0"),
        joins: vec![join(JoinKind::Cross, lateral, JoinConstraint::None)],
    });
    let expected =
        "SELECT * FROM t0 CROSS JOIN LATERAL (SELECT t1.c1 FROM t1 WHERE t1.c0 = t0.c0) AS l";
    verified(&Statement::Query(q.clone()), Postgres, expected);
    verified(&Statement::Query(q), MySql, expected);
}

#[test]
fn indexed_by() {
    // SQLite only; sqlparser cannot parse either form.
    for (indexed_by, expected) in [
        (
            Some(Some("i0".to_string())),
            "SELECT * FROM t0 AS a INDEXED BY i0",
        ),
        (Some(None), "SELECT * FROM t0 AS a NOT INDEXED"),
    ] {
        let q = select_star(FromClause {
            first: TableFactor::Table {
                name: "t0".into(),
                alias: Some("a".into()),
                indexed_by,
            },
            joins: vec![],
        });
        printed(&q, Sqlite, expected);
    }
}

fn compound(op: SetOperator, left: SetExpr, right: SetExpr) -> SetExpr {
    SetExpr::SetOp {
        op,
        left: Box::new(left),
        right: Box::new(right),
    }
}

fn arm(i: i64) -> SetExpr {
    SetExpr::Select(Box::new(select(vec![int(i)])))
}

fn body_query(body: SetExpr) -> Query {
    Query {
        body,
        order_by: vec![],
        limit: None,
        offset: None,
    }
}

#[test]
fn set_operations() {
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
    verified_all(
        &Statement::Query(q),
        "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3",
    );
    for (op, text) in [
        (SetOperator::Union, "UNION"),
        (SetOperator::UnionAll, "UNION ALL"),
        (SetOperator::Intersect, "INTERSECT"),
        (SetOperator::Except, "EXCEPT"),
    ] {
        let q = Query::set_operation(op, vec![select(vec![int(1)]), select(vec![int(2)])]);
        verified_all(&Statement::Query(q), &format!("SELECT 1 {text} SELECT 2"));
    }
    // A compound right arm becomes a derived table.
    let q = body_query(compound(
        SetOperator::Except,
        arm(1),
        compound(SetOperator::Union, arm(2), arm(3)),
    ));
    verified_all(
        &Statement::Query(q),
        "SELECT 1 EXCEPT SELECT * FROM (SELECT 2 UNION SELECT 3) AS lancet_arm",
    );
    // INTERSECT binds no tighter than UNION in SQLite, so a left-deep tree
    // prints flat.
    let q = body_query(compound(
        SetOperator::Union,
        compound(SetOperator::Intersect, arm(1), arm(2)),
        arm(3),
    ));
    verified_all(
        &Statement::Query(q),
        "SELECT 1 INTERSECT SELECT 2 UNION SELECT 3",
    );
}

#[test]
fn intersect_over_union_keeps_its_meaning() {
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
        let statement = Statement::Query(q);
        verified(
            &statement,
            Sqlite,
            &format!("SELECT 1 {inner} SELECT 2 INTERSECT SELECT 3"),
        );
        let wrapped =
            format!("SELECT * FROM (SELECT 1 {inner} SELECT 2) AS lancet_arm INTERSECT SELECT 3");
        verified(&statement, Postgres, &wrapped);
        verified(&statement, MySql, &wrapped);
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
    verified_all(
        &Statement::Query(q),
        "SELECT 1 INTERSECT SELECT 2 INTERSECT SELECT 3",
    );
}

#[test]
fn order_by_limit_offset() {
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
    verified(&Statement::Query(q.clone()), Sqlite, expected);
    verified(&Statement::Query(q.clone()), Postgres, expected);
    // MySQL has no NULLS FIRST/LAST; the text is still the tree's.
    printed(&q, MySql, expected);

    let mut q = query_from(vec![col("a")], "t0");
    q.limit = Some(int(-1));
    verified(&Statement::Query(q), Sqlite, "SELECT a FROM t0 LIMIT (-1)");

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
    verified_all(
        &Statement::Query(q),
        "SELECT 2 UNION SELECT 1 ORDER BY 1 LIMIT 1",
    );
}

#[test]
fn offset_without_limit() {
    // SQLite and MySQL allow OFFSET only after LIMIT.
    let mut q = query_from(vec![col("a")], "t0");
    q.offset = Some(int(2));
    let statement = Statement::Query(q);
    verified(&statement, Sqlite, "SELECT a FROM t0 LIMIT -1 OFFSET 2");
    verified(&statement, Postgres, "SELECT a FROM t0 OFFSET 2");
    verified(
        &statement,
        MySql,
        "SELECT a FROM t0 LIMIT 18446744073709551615 OFFSET 2",
    );
}

#[test]
fn subquery_keeps_its_order_and_limit() {
    let mut inner = query_from(vec![col("c0")], "t0");
    inner.order_by = vec![OrderBy {
        expr: col("c0"),
        descending: true,
        nulls_first: None,
    }];
    inner.limit = Some(int(1));
    let e = Expr::Subquery(Box::new(inner));
    verified_expr_all(&e, "(SELECT c0 FROM t0 ORDER BY c0 DESC LIMIT 1)");
}

// ---------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------

fn column(name: &str, ty: Option<&str>, constraints: Vec<ColumnConstraint>) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty: ty.map(|t| TypeName(t.into())),
        constraints,
    }
}

#[test]
fn create_table_with_every_constraint() {
    let t = Statement::CreateTable(CreateTable {
        name: "t0".into(),
        columns: vec![
            column(
                "c0",
                Some("INT"),
                vec![ColumnConstraint::PrimaryKey { descending: false }],
            ),
            column(
                "c1",
                Some("TEXT"),
                vec![
                    ColumnConstraint::NotNull,
                    ColumnConstraint::Unique,
                    ColumnConstraint::Check(bin(BinaryOp::NotEq, col("c1"), text(""))),
                    ColumnConstraint::Default(text("x")),
                    ColumnConstraint::Collate("NOCASE".into()),
                ],
            ),
            column(
                "c2",
                Some("INT"),
                vec![ColumnConstraint::Generated {
                    expr: bin(BinaryOp::Add, col("c0"), int(1)),
                    stored: true,
                }],
            ),
            column(
                "c3",
                Some("INT"),
                vec![ColumnConstraint::Generated {
                    expr: bin(BinaryOp::Mul, col("c0"), int(-2)),
                    stored: false,
                }],
            ),
        ],
        constraints: vec![
            TableConstraint::PrimaryKey(strings(&["c0", "c1"])),
            TableConstraint::Unique(strings(&["c1"])),
            TableConstraint::Check(bin(BinaryOp::Gt, col("c0"), int(0))),
        ],
        without_rowid: false,
    });
    let body = "c0 INT PRIMARY KEY, c1 TEXT NOT NULL UNIQUE CHECK (c1 <> '') DEFAULT ('x') \
                COLLATE {coll}, c2 INT GENERATED ALWAYS AS (c0 + 1) STORED, \
                c3 INT GENERATED ALWAYS AS (c0 * (-2)) VIRTUAL, PRIMARY KEY (c0, c1), \
                UNIQUE (c1), CHECK (c0 > 0)";
    let text = |coll: &str| format!("CREATE TABLE t0 ({})", body.replace("{coll}", coll));
    verified(&t, Sqlite, &text("NOCASE"));
    verified(&t, MySql, &text("NOCASE"));
    // PostgreSQL needs the collation quoted, as in expressions. sqlparser
    // knows only STORED generated columns for PostgreSQL (VIRTUAL came with
    // PostgreSQL 18), so the parse is of the table without c3.
    let postgres_text = text("\"NOCASE\"");
    printed(&t, Postgres, &postgres_text);
    let without_virtual =
        postgres_text.replace("c3 INT GENERATED ALWAYS AS (c0 * (-2)) VIRTUAL, ", "");
    assert_ne!(without_virtual, postgres_text);
    parse_one(Postgres, &without_virtual);
    assert_eq!(t.kind(), StatementKind::CreateTable);
}

#[test]
fn create_table_sqlite_forms() {
    let t = Statement::CreateTable(CreateTable {
        name: "t0".into(),
        columns: vec![
            column(
                "c0",
                Some("INT"),
                vec![ColumnConstraint::PrimaryKey { descending: true }],
            ),
            // SQLite allows a column without a type.
            column("c1", None, vec![]),
            column("c2", None, vec![ColumnConstraint::NotNull]),
        ],
        constraints: vec![],
        without_rowid: true,
    });
    verified(
        &t,
        Sqlite,
        "CREATE TABLE t0 (c0 INT PRIMARY KEY DESC, c1, c2 NOT NULL) WITHOUT ROWID",
    );
}

#[test]
fn create_index() {
    let i = Statement::CreateIndex(CreateIndex {
        name: "i0".into(),
        table: "t0".into(),
        unique: true,
        keys: vec![
            IndexKey {
                expr: col("c0"),
                collation: Some("NOCASE".into()),
                descending: true,
            },
            IndexKey {
                expr: bin(BinaryOp::Add, col("c1"), int(1)),
                collation: None,
                descending: false,
            },
            IndexKey {
                expr: col("c2"),
                collation: None,
                descending: false,
            },
        ],
        predicate: Some(bin(BinaryOp::Gt, col("c0"), int(1))),
    });
    verified(
        &i,
        Sqlite,
        "CREATE UNIQUE INDEX i0 ON t0 (c0 COLLATE NOCASE DESC, (c1 + 1), c2) WHERE c0 > 1",
    );
    verified(
        &i,
        Postgres,
        "CREATE UNIQUE INDEX i0 ON t0 (c0 COLLATE \"NOCASE\" DESC, (c1 + 1), c2) WHERE c0 > 1",
    );
    assert_eq!(i.kind(), StatementKind::CreateIndex);

    // An expression key is parenthesized even when atomic (MySQL requires
    // `((expr))` for functional keys).
    let i = Statement::CreateIndex(CreateIndex {
        name: "i1".into(),
        table: "t0".into(),
        unique: false,
        keys: vec![IndexKey {
            expr: Expr::func("abs", vec![col("c0")]),
            collation: None,
            descending: true,
        }],
        predicate: None,
    });
    verified_all(&i, "CREATE INDEX i1 ON t0 ((abs(c0)) DESC)");
}

#[test]
fn create_view() {
    let q = Query::select(Select {
        selection: Some(Expr::is_null(col("c1"))),
        ..select_from(vec![col("c0"), bin(BinaryOp::Add, col("c1"), int(1))], "t0")
    });
    let v = Statement::CreateView(CreateView {
        name: "v0".into(),
        columns: strings(&["a", "b"]),
        query: q.clone(),
    });
    verified_all(
        &v,
        "CREATE VIEW v0 (a, b) AS SELECT c0, c1 + 1 FROM t0 WHERE c1 IS NULL",
    );
    let v = Statement::CreateView(CreateView {
        name: "v1".into(),
        columns: vec![],
        query: q,
    });
    verified_all(
        &v,
        "CREATE VIEW v1 AS SELECT c0, c1 + 1 FROM t0 WHERE c1 IS NULL",
    );
    assert_eq!(v.kind(), StatementKind::CreateView);
}

#[test]
fn insert() {
    let multi = Statement::Insert(Insert {
        table: "t0".into(),
        or: None,
        columns: strings(&["c0", "c1"]),
        rows: vec![
            vec![int(1), text("a")],
            vec![int(-2), Expr::lit(Value::Null)],
            vec![bin(BinaryOp::Add, int(1), int(2)), text("it's")],
        ],
    });
    verified_all(
        &multi,
        "INSERT INTO t0 (c0, c1) VALUES (1, 'a'), ((-2), NULL), (1 + 2, 'it''s')",
    );
    assert_eq!(multi.kind(), StatementKind::Insert);
    for (or, expected) in [
        (OnConflict::Ignore, "INSERT OR IGNORE INTO t0 VALUES (1)"),
        (OnConflict::Replace, "INSERT OR REPLACE INTO t0 VALUES (1)"),
        (OnConflict::Abort, "INSERT OR ABORT INTO t0 VALUES (1)"),
    ] {
        let i = Statement::Insert(Insert {
            table: "t0".into(),
            or: Some(or),
            columns: vec![],
            rows: vec![vec![int(1)]],
        });
        verified(&i, Sqlite, expected);
    }
    let i = Statement::Insert(Insert {
        table: "t0".into(),
        or: Some(OnConflict::Ignore),
        columns: strings(&["c0"]),
        rows: vec![vec![int(1)], vec![int(2)]],
    });
    verified(&i, Sqlite, "INSERT OR IGNORE INTO t0 (c0) VALUES (1), (2)");
    let i = Statement::Insert(Insert {
        table: "t0".into(),
        or: None,
        columns: vec![],
        rows: vec![],
    });
    verified(&i, Sqlite, "INSERT INTO t0 DEFAULT VALUES");
    verified(&i, Postgres, "INSERT INTO t0 DEFAULT VALUES");
}

#[test]
fn update() {
    let u = Statement::Update(Update {
        table: "t0".into(),
        or: Some(OnConflict::Replace),
        assignments: vec![
            ("c0".into(), int(-1)),
            ("c1".into(), bin(BinaryOp::Add, col("c1"), int(1))),
        ],
        selection: Some(Expr::is_null(col("c2"))),
    });
    verified(
        &u,
        Sqlite,
        "UPDATE OR REPLACE t0 SET c0 = (-1), c1 = c1 + 1 WHERE c2 IS NULL",
    );
    let u = Statement::Update(Update {
        table: "t0".into(),
        or: Some(OnConflict::Ignore),
        assignments: vec![("c0".into(), int(1))],
        selection: None,
    });
    verified(&u, Sqlite, "UPDATE OR IGNORE t0 SET c0 = 1");
    let u = Statement::Update(Update {
        table: "t0".into(),
        or: None,
        assignments: vec![("c0".into(), int(1)), ("c1".into(), text("x"))],
        selection: Some(bin(BinaryOp::Gt, col("c0"), int(1))),
    });
    verified_all(&u, "UPDATE t0 SET c0 = 1, c1 = 'x' WHERE c0 > 1");
    assert_eq!(u.kind(), StatementKind::Update);
}

#[test]
fn delete() {
    let d = Statement::Delete(Delete {
        table: "t0".into(),
        selection: Some(bin(BinaryOp::Eq, col("c0"), int(-1))),
    });
    verified_all(&d, "DELETE FROM t0 WHERE c0 = (-1)");
    let d = Statement::Delete(Delete {
        table: "t0".into(),
        selection: None,
    });
    verified_all(&d, "DELETE FROM t0");
    assert_eq!(d.kind(), StatementKind::Delete);
}

#[test]
fn maintenance_statements() {
    let analyze = Statement::Analyze(Some("t0".into()));
    verified(&analyze, Sqlite, "ANALYZE t0");
    verified(&analyze, Postgres, "ANALYZE t0");
    // MySQL knows only ANALYZE TABLE.
    verified(&analyze, MySql, "ANALYZE TABLE t0");
    // sqlparser needs a table name after ANALYZE and has no VACUUM or
    // REINDEX.
    printed(&Statement::Analyze(None), Sqlite, "ANALYZE");
    printed(&Statement::Analyze(None), Postgres, "ANALYZE");
    printed(&Statement::Vacuum, Sqlite, "VACUUM");
    printed(&Statement::Vacuum, Postgres, "VACUUM");
    printed(&Statement::Reindex(None), Sqlite, "REINDEX");
    printed(&Statement::Reindex(Some("i0".into())), Sqlite, "REINDEX i0");
    for s in [
        Statement::Analyze(None),
        Statement::Analyze(Some("t0".into())),
        Statement::Vacuum,
        Statement::Reindex(None),
        Statement::Reindex(Some("t0".into())),
    ] {
        assert_eq!(s.kind(), StatementKind::Maintenance);
    }
}

#[test]
fn settings() {
    let pragma = Statement::Pragma {
        name: "case_sensitive_like".into(),
        value: "1".into(),
    };
    verified(&pragma, Sqlite, "PRAGMA case_sensitive_like = 1");
    // sqlparser wants a literal value; SQLite also takes keywords.
    let pragma = Statement::Pragma {
        name: "reverse_unordered_selects".into(),
        value: "ON".into(),
    };
    printed(&pragma, Sqlite, "PRAGMA reverse_unordered_selects = ON");
    assert_eq!(pragma.kind(), StatementKind::Setting);

    let set = Statement::Set {
        name: "enable_seqscan".into(),
        value: "off".into(),
    };
    verified(&set, Postgres, "SET enable_seqscan = off");
    let set = Statement::Set {
        name: "optimizer_switch".into(),
        value: "'index_merge=off'".into(),
    };
    verified(
        &set,
        MySql,
        "SET SESSION optimizer_switch = 'index_merge=off'",
    );
    verified(&set, Postgres, "SET optimizer_switch = 'index_merge=off'");
    assert_eq!(set.kind(), StatementKind::Setting);
}

#[test]
fn statement_kinds_are_named() {
    let names: Vec<&str> = StatementKind::ALL.iter().map(|k| k.name()).collect();
    assert_eq!(
        names,
        [
            "create-table",
            "create-index",
            "create-view",
            "insert",
            "update",
            "delete",
            "maintenance",
            "setting",
            "query"
        ]
    );
    assert_eq!(
        Statement::Query(query(vec![int(1)])).kind(),
        StatementKind::Query
    );
}

#[test]
fn query_statement_prints_as_its_query() {
    let q = query_from(vec![col("c0")], "t0");
    for d in ALL {
        assert_eq!(Statement::Query(q.clone()).to_sql(d), q.to_sql(d));
    }
}

/// Constructs the printer emits that sqlparser 0.58 cannot parse. If a later
/// sqlparser parses one, move it into the tests above.
#[test]
fn sqlparser_gaps() {
    let gaps = [
        (Sqlite, "SELECT a IS b"),
        (Sqlite, "SELECT a IS NOT b"),
        (Sqlite, "SELECT a GLOB 'x*'"),
        (Sqlite, "SELECT a << b"),
        (Sqlite, "SELECT a >> b"),
        (MySql, "SELECT a << b"),
        (MySql, "SELECT ~a"),
        (Sqlite, "SELECT ~a"),
        (Postgres, "SELECT a BETWEEN SYMMETRIC 2 AND 1"),
        (Sqlite, "SELECT * FROM t0 INDEXED BY i0"),
        (Sqlite, "SELECT * FROM t0 NOT INDEXED"),
        (Sqlite, "ANALYZE"),
        (Sqlite, "VACUUM"),
        (Sqlite, "REINDEX t0"),
        (Sqlite, "PRAGMA reverse_unordered_selects = ON"),
        (
            Postgres,
            "CREATE TABLE t0 (c0 INT GENERATED ALWAYS AS (1) VIRTUAL)",
        ),
        // sqlparser takes only a literal after ESCAPE.
        (Sqlite, "SELECT a LIKE b ESCAPE (c)"),
    ];
    for (d, sql) in gaps {
        assert!(
            sp_parse(d, sql).is_err(),
            "sqlparser ({d:?}) now parses {sql}"
        );
    }
}

// ---------------------------------------------------------------------------
// Random trees
// ---------------------------------------------------------------------------

/// A small deterministic generator, independent of lancet's own.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Trees over operators that sqlparser parses in every dialect.
fn random_expr(r: &mut Lcg, depth: u32) -> Expr {
    use BinaryOp::*;
    if depth == 0 || r.below(4) == 0 {
        return match r.below(4) {
            0 => col(["a", "b", "c"][r.below(3) as usize]),
            1 => int(r.below(5) as i64),
            2 => int(-(r.below(5) as i64) - 1),
            _ => qcol("t0", "c0"),
        };
    }
    match r.below(9) {
        0 => {
            let op = [UnaryOp::Neg, UnaryOp::Plus, UnaryOp::Not][r.below(3) as usize];
            un(op, random_expr(r, depth - 1))
        }
        1 => Expr::IsNull {
            expr: Box::new(random_expr(r, depth - 1)),
            negated: r.below(2) == 0,
        },
        2 => Expr::IsBool {
            expr: Box::new(random_expr(r, depth - 1)),
            value: r.below(2) == 0,
            negated: r.below(2) == 0,
        },
        3 => between(
            random_expr(r, depth - 1),
            random_expr(r, depth - 1),
            random_expr(r, depth - 1),
            r.below(2) == 0,
            false,
        ),
        4 => Expr::InList {
            expr: Box::new(random_expr(r, depth - 1)),
            list: vec![random_expr(r, depth - 1), random_expr(r, depth - 1)],
            negated: r.below(2) == 0,
        },
        5 => Expr::Like {
            kind: LikeKind::Like,
            expr: Box::new(random_expr(r, depth - 1)),
            pattern: Box::new(random_expr(r, depth - 1)),
            escape: None,
            negated: r.below(2) == 0,
        },
        _ => {
            let ops = [
                Add,
                Sub,
                Mul,
                Div,
                Mod,
                Concat,
                BitAnd,
                BitOr,
                Eq,
                NotEq,
                Lt,
                LtEq,
                Gt,
                GtEq,
                And,
                Or,
                IsNotDistinctFrom,
                IsDistinctFrom,
            ];
            let op = ops[r.below(ops.len() as u64) as usize];
            bin(op, random_expr(r, depth - 1), random_expr(r, depth - 1))
        }
    }
}

fn uses_null_safe_comparison(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Binary {
            op: BinaryOp::IsNotDistinctFrom | BinaryOp::IsDistinctFrom,
            ..
        }
    ) || e.children().into_iter().any(uses_null_safe_comparison)
}

#[test]
fn random_trees_keep_their_shape_in_sqlparser() {
    let mut r = Lcg(0x1a2b_3c4d);
    let mut checked = 0;
    for _ in 0..600 {
        let e = random_expr(&mut r, 4);
        for d in ALL {
            let sql = e.to_sql(d);
            assert!(!sql.contains("--"), "{d:?}: {sql}");
            // sqlparser has no general `a IS b` for SQLite.
            if d == Sqlite && uses_null_safe_comparison(&e) {
                continue;
            }
            same_shape(&e, d);
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
}

// ---------------------------------------------------------------------------
// Semantics, with the sqlite3 CLI
// ---------------------------------------------------------------------------

const SQLITE3: &str = "/usr/bin/sqlite3";

/// Runs SQL in an in-memory SQLite database and returns its output, or None
/// (with a note) when the CLI is not installed.
fn sqlite3(sql: &str) -> Option<String> {
    if !std::path::Path::new(SQLITE3).exists() {
        eprintln!("note: {SQLITE3} is missing; skipping the SQLite semantic check");
        return None;
    }
    let out = std::process::Command::new(SQLITE3)
        .args(["-batch", ":memory:", sql])
        .output()
        .expect("run sqlite3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{sql}: {stderr}");
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string(),
    )
}

/// `SELECT e1, e2, ...` as SQLite prints it (`|`-separated).
fn sqlite_eval(exprs: &[Expr]) -> Option<String> {
    let printed: Vec<String> = exprs.iter().map(|e| e.to_sql(Sqlite)).collect();
    sqlite3(&format!("SELECT {}", printed.join(", ")))
}

#[test]
fn sqlite_evaluates_printed_precedence_as_the_tree_means() {
    use BinaryOp::*;
    // (tree, what it means)
    let cases: Vec<(Expr, &str)> = vec![
        (un(UnaryOp::Not, bin(Eq, int(1), int(2))), "1"),
        (un(UnaryOp::Neg, int(-1)), "1"),
        (un(UnaryOp::Neg, un(UnaryOp::Neg, int(1))), "1"),
        (bin(Sub, int(1), bin(Sub, int(2), int(3))), "2"),
        (bin(Sub, bin(Sub, int(1), int(2)), int(3)), "-4"),
        (bin(Sub, int(1), int(-1)), "2"),
        (bin(And, bin(Or, int(1), int(0)), int(0)), "0"),
        (bin(Or, int(1), bin(And, int(0), int(0))), "1"),
        (bin(Mul, int(2), bin(Add, int(3), int(4))), "14"),
        (bin(Add, bin(Mul, int(2), int(3)), int(4)), "10"),
        (bin(ShiftLeft, int(1), bin(Add, int(2), int(1))), "8"),
        (bin(Add, bin(ShiftLeft, int(1), int(2)), int(1)), "5"),
        (un(UnaryOp::BitNot, int(-1)), "0"),
        (bin(Eq, bin(Eq, int(1), int(1)), int(0)), "0"),
        (bin(Eq, int(0), bin(Eq, int(1), int(2))), "1"),
        // NOT binds looser than = in SQLite: `NOT 0 = 1` would be NOT (0 = 1).
        (bin(Eq, un(UnaryOp::Not, int(0)), int(1)), "1"),
        (
            between(int(1), bin(And, int(0), int(1)), int(2), false, false),
            "1",
        ),
        (
            bin(
                IsNotDistinctFrom,
                Expr::lit(Value::Null),
                Expr::lit(Value::Null),
            ),
            "1",
        ),
        (bin(IsDistinctFrom, int(1), Expr::lit(Value::Null)), "1"),
        (Expr::is_null(bin(Eq, int(1), Expr::lit(Value::Null))), "1"),
        (
            Expr::IsBool {
                expr: Box::new(bin(Eq, int(1), int(2))),
                value: false,
                negated: false,
            },
            "1",
        ),
        (
            bin(
                Eq,
                Expr::Collate {
                    expr: Box::new(text("a")),
                    collation: "NOCASE".into(),
                },
                text("A"),
            ),
            "1",
        ),
        (
            bin(Concat, text("x"), bin(Concat, text("it's"), text(r"\"))),
            r"xit's\",
        ),
    ];
    let exprs: Vec<Expr> = cases.iter().map(|(e, _)| e.clone()).collect();
    let Some(out) = sqlite_eval(&exprs) else {
        return;
    };
    let expected: Vec<&str> = cases.iter().map(|(_, v)| *v).collect();
    assert_eq!(out, expected.join("|"));
}

#[test]
fn sqlite_reads_printed_literals_as_the_tree_means() {
    let lit = Expr::lit;
    let typeof_ = |e: Expr| Expr::func("typeof", vec![e]);
    let exprs = vec![
        int(i64::MIN),
        typeof_(int(i64::MIN)),
        int(i64::MAX),
        typeof_(int(i64::MAX)),
        typeof_(real(-0.0)),
        bin(BinaryOp::Eq, real(-0.0), real(0.0)),
        typeof_(real(1.0)),
        real(1e308),
        real(f64::INFINITY),
        real(f64::NEG_INFINITY),
        typeof_(real(f64::NAN)),
        bin(
            BinaryOp::Eq,
            real(0.1 + 0.2),
            bin(BinaryOp::Add, real(0.1), real(0.2)),
        ),
        typeof_(lit(Value::Blob(vec![0, 0xff]))),
        Expr::func("hex", vec![lit(Value::Blob(vec![0, 0xff]))]),
        Expr::func("length", vec![lit(Value::Blob(vec![]))]),
        Expr::func("length", vec![text("it's")]),
        lit(Value::Boolean(true)),
        lit(Value::Decimal("-3.25".into())),
    ];
    let Some(out) = sqlite_eval(&exprs) else {
        return;
    };
    assert_eq!(
        out,
        "-9223372036854775808|integer|9223372036854775807|integer|real|1|real|1.0e+308|Inf|-Inf|null|1|blob|00FF|0|4|1|-3.25"
    );
    // The sign of -0.0 survives, where math functions show it.
    if sqlite3("SELECT atan2(0.0, -1.0)").is_some_and(|o| !o.is_empty()) {
        let e = Expr::func("atan2", vec![real(-0.0), real(-1.0)]);
        let out = sqlite_eval(&[bin(BinaryOp::Lt, e, int(0))]).unwrap();
        assert_eq!(out, "1");
    }
}

#[test]
fn sqlite_evaluates_printed_compounds_and_limits_as_the_tree_means() {
    // Three UNION ALL arms, flat: three rows.
    let q = Query::set_operation(
        SetOperator::UnionAll,
        vec![
            select(vec![int(1)]),
            select(vec![int(1)]),
            select(vec![int(2)]),
        ],
    );
    let Some(out) = sqlite3(&format!("SELECT count(*) FROM ({})", q.to_sql(Sqlite))) else {
        return;
    };
    assert_eq!(out, "3");
    // 3 EXCEPT (3 UNION 4) is empty; (3 EXCEPT 3) UNION 4 is not.
    let q = body_query(compound(
        SetOperator::Except,
        arm(3),
        compound(SetOperator::Union, arm(3), arm(4)),
    ));
    let out = sqlite3(&format!("SELECT count(*) FROM ({})", q.to_sql(Sqlite))).unwrap();
    assert_eq!(out, "0");
    // (1 UNION 2) INTERSECT 1 is {1}; 1 UNION (2 INTERSECT 1) would be {1, 2}.
    let mut s1 = select(vec![]);
    s1.items = vec![SelectItem::Expr {
        expr: int(1),
        alias: Some("x".into()),
    }];
    let q = body_query(compound(
        SetOperator::Intersect,
        compound(SetOperator::Union, SetExpr::Select(Box::new(s1)), arm(2)),
        arm(1),
    ));
    let out = sqlite3(&format!(
        "SELECT group_concat(x) FROM ({})",
        q.to_sql(Sqlite)
    ))
    .unwrap();
    assert_eq!(out, "1");
    // OFFSET without LIMIT skips rows and keeps the rest.
    let mut q = Query::set_operation(
        SetOperator::UnionAll,
        vec![
            select(vec![int(1)]),
            select(vec![int(2)]),
            select(vec![int(3)]),
        ],
    );
    q.offset = Some(int(1));
    let out = sqlite3(&q.to_sql(Sqlite)).unwrap();
    assert_eq!(out, "2\n3");
}
