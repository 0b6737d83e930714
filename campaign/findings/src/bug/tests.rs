//! Bug cores: findings of one bug share a key, findings of others do not.

use super::*;
use lancet_core::{ColumnRef, FromClause, Select, SelectItem, Value};

fn col(t: &str, c: &str) -> Expr {
    Expr::Column(ColumnRef {
        table: Some(t.into()),
        column: c.into(),
    })
}

fn cmp(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary {
        op,
        left: Box::new(l),
        right: Box::new(r),
    }
}

fn select(from: &str, items: Vec<Expr>) -> Select {
    Select {
        distinct: false,
        items: items
            .into_iter()
            .map(|expr| SelectItem::Expr { expr, alias: None })
            .collect(),
        from: Some(FromClause::table(from, Some("a0"))),
        ..Select::default()
    }
}

fn key(s: &Select, p: &Expr) -> String {
    case_key(s, Some(p), &Json::Null)
}

#[test]
fn names_literals_and_comparison_direction_are_abstracted() {
    let a = key(
        &select("t3", vec![col("a0", "c1"), col("a0", "c2")]),
        &cmp(
            BinaryOp::Lt,
            col("a0", "c1"),
            Expr::Literal(Value::Integer(5)),
        ),
    );
    let b = key(
        &select("t12", vec![col("a0", "c7")]),
        &cmp(
            BinaryOp::GtEq,
            Expr::Literal(Value::Integer(-3)),
            col("a0", "c0"),
        ),
    );
    assert_eq!(a, b);
    assert_eq!(a, "cmp");
}

#[test]
fn constructs_are_kept_and_and_is_glue() {
    let like = |e: Expr, p: Expr| Expr::Like {
        kind: lancet_core::LikeKind::Like,
        expr: Box::new(e),
        pattern: Box::new(p),
        escape: None,
        negated: false,
    };
    let plain = select("t0", vec![col("a0", "c0")]);
    let a = key(
        &plain,
        &like(col("a0", "c2"), Expr::Literal(Value::Text("B".into()))),
    );
    let b = key(
        &plain,
        &cmp(
            BinaryOp::And,
            like(Expr::Literal(Value::Null), Expr::Literal(Value::Null)),
            Expr::Literal(Value::Null),
        ),
    );
    assert_eq!(a, b);
    assert_eq!(a, "LIKE");
    let added = key(
        &plain,
        &cmp(
            BinaryOp::Add,
            col("a0", "c0"),
            Expr::Literal(Value::Integer(1)),
        ),
    );
    assert_ne!(a, added);
}

#[test]
fn the_select_list_counts_only_when_the_predicate_has_no_construct() {
    let min = || {
        select(
            "t0",
            vec![Expr::Function {
                name: "MIN".into(),
                args: vec![col("a0", "c0")],
                distinct: false,
            }],
        )
    };
    let live = cmp(
        BinaryOp::Eq,
        col("a0", "c0"),
        Expr::Literal(Value::Integer(1)),
    );
    let bare = col("a0", "c0");
    let plain = select("t0", vec![col("a0", "c0")]);
    assert_eq!(key(&min(), &live), key(&plain, &live));
    assert_ne!(key(&min(), &bare), key(&plain, &bare));
    assert_eq!(
        key(&plain, &bare),
        key(&plain, &Expr::Literal(Value::Integer(0)))
    );
}

fn member<'a>(sig: &'a str, constructs: &'a [String], reduced: bool) -> Member<'a> {
    Member {
        signature: sig,
        core_key: Some(sig),
        constructs,
        reduced,
        hiding_knob: None,
        fixed_in: None,
    }
}

#[test]
fn an_unreduced_finding_joins_the_one_bug_it_contains() {
    let set = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    let (between, like, between_or) = (set("Between"), set("LIKE"), set("Between Or"));
    let (big, both) = (set("Between Case Or cmp"), set("Between LIKE cmp"));
    let with_function = set("Between quote()");
    let members = [
        member("a", &between, true),
        member("b", &like, true),
        member("c", &between_or, true),
        member("d", &big, false),
        member("e", &both, false),
        Member {
            core_key: Some("c"),
            ..member("f", &between_or, true)
        },
        member("g", &with_function, true),
    ];
    let bugs = assign_bugs(&members);
    assert_eq!(bugs[3], bugs[0], "joins Between, the smallest set it holds");
    assert_ne!(bugs[4], bugs[0], "holds two bugs: joins neither");
    assert_ne!(bugs[4], bugs[1]);
    assert_eq!(
        bugs[2], bugs[0],
        "a reduced finding's extra OR is a connective"
    );
    assert_eq!(bugs[5], bugs[0]);
    assert_ne!(bugs[6], bugs[0], "a function may be another bug");
}

/// An error finding as a record: `sql` failed with `message`.
fn error_finding(sql: &str, message: &str) -> Finding {
    serde_json::from_value(serde_json::json!({
        "kind": "unexpected-error", "lancet_version": "0", "dbms": "duckdb",
        "dbms_version": "1.5.6", "oracle": "tlp-aggregate",
        "origin": {"seed": 1, "thread": 0, "database": 0, "check": 0},
        "relation": null, "setup": [], "diff": null, "case": null,
        "confirmed": true, "fault": null,
        "queries": [{"role": "failing statement", "sql": sql, "row_count": null}],
        "error": {"kind": "statement", "code": "SERIALIZATION", "message": message},
    }))
    .unwrap()
}

#[test]
fn an_error_is_one_bug_by_its_message_whatever_statement_raised_it() {
    let d = lancet_sqlite::dialect::DIALECT;
    let copy = "Serialization Error: Cannot copy BoundSubqueryExpression";
    let a = error_finding(
        "SELECT MIN(CASE WHEN EXISTS (SELECT 1) THEN 1 END) FROM t0",
        copy,
    );
    let b = error_finding(
        "SELECT MAX(CAST(x AS VARCHAR)) FROM v0 WHERE c1 IN (1, 2)",
        copy,
    );
    let other = error_finding(
        "SELECT 1",
        "Serialization Error: Cannot copy BoundColumnRef",
    );
    // The first line only: the query's text and caret below it differ.
    let lined = error_finding("SELECT 2", &format!("{copy}\n\nLINE 1: SELECT 2\n       ^"));
    let key = |f: &Finding| core_of(f, "sig", d, &crate::fixture::CATALOG).key;
    assert_eq!(key(&a), key(&b));
    assert_eq!(key(&a), key(&lined));
    assert_ne!(key(&a), key(&other));
}
