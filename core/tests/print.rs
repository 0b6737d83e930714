//! What the printer and the AST do whatever the dialect. The cases every
//! dialect runs are in lancet-testkit's printer suite, which each provider
//! crate runs with its own dialect (SQLite, PostgreSQL, MySQL).

use lancet_core::ast::*;
use lancet_testkit::printer::trees::{col, int};

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

#[test]
fn aggregates_are_found_inside_expressions() {
    // Aggregate detection, used by generators.
    let e = Expr::binary(BinaryOp::Add, Expr::func("MAX", vec![col("a")]), int(1));
    let is_agg = |name: &str| name.eq_ignore_ascii_case("max");
    assert!(e.contains_aggregate(&is_agg));
    assert!(Expr::CountStar.contains_aggregate(&is_agg));
    assert!(!Expr::func("abs", vec![col("a")]).contains_aggregate(&is_agg));
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
}
