//! The printer with a dialect that overrides every default of
//! [`SqlDialect`]: MySQL's rules, which no provider supplies yet. The cases
//! every dialect runs are in lancet-testkit's printer suite; SQLite and
//! PostgreSQL run them in their provider crates, and a MySQL provider would
//! take these rules over. What no dialect changes is tested here too.

use lancet_core::ast::*;
use lancet_core::{Dialect, SqlDialect};
use lancet_testkit::printer::trees::{col, int};
use lancet_testkit::printer::Tested;
use lancet_testkit::standard::STANDARD;
use sqlparser::dialect::MySqlDialect;
use std::fmt::Write;

/// MySQL's spelling rules.
struct MySql;

impl SqlDialect for MySql {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn blob_literal(&self, hex: &str, out: &mut String) {
        let _ = write!(out, "X'{hex}'");
    }

    fn real_literal(&self, r: f64, out: &mut String) {
        if r.is_nan() {
            // MySQL has no NaN: where one would arise, it gives NULL.
            out.push_str("NULL");
        } else if r.is_infinite() {
            // MySQL has no infinities: it rejects this literal as out of
            // range rather than read it as another value.
            out.push_str(if r > 0.0 { "1e999" } else { "(-1e999)" });
        } else {
            // The exponent makes MySQL read a DOUBLE, not a DECIMAL.
            let mut text = format!("{r:?}");
            if !text.contains('e') {
                text.push_str("e0");
            }
            if r.is_sign_negative() {
                let _ = write!(out, "({text})");
            } else {
                out.push_str(&text);
            }
        }
    }

    fn backslash_escapes(&self) -> bool {
        true
    }

    fn quotes_collation_names(&self) -> bool {
        false
    }

    fn concat_function(&self) -> Option<&'static str> {
        Some("CONCAT")
    }

    fn null_safe_equal(&self) -> &'static str {
        "<=>"
    }

    fn null_safe_not_equal(&self) -> Option<&'static str> {
        None
    }

    fn regex_match(&self) -> &'static str {
        "REGEXP"
    }

    fn intersect_binds_tighter(&self) -> bool {
        true
    }

    fn comma_binds_looser_than_join(&self) -> bool {
        true
    }

    fn unlimited_limit(&self) -> Option<&'static str> {
        Some("18446744073709551615")
    }
}

const MYSQL: Dialect = Dialect::new(&MySql);

lancet_testkit::printer_suite!(Tested::new(MYSQL, MySqlDialect {}));

#[test]
fn dialect_handles_compare_and_print_by_name() {
    use std::collections::HashSet;
    let again = Dialect::new(&MySql);
    assert_eq!(MYSQL, again);
    assert_ne!(MYSQL, STANDARD);
    assert_eq!(MYSQL.name(), "mysql");
    assert_eq!(format!("{MYSQL:?}"), "Dialect(\"mysql\")");
    assert_eq!(HashSet::from([MYSQL, again, STANDARD]).len(), 2);
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
