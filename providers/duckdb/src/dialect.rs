//! How DuckDB's SQL is spelled where dialects differ: the rules the core
//! printer asks for (see [`SqlDialect`]). DuckDB follows PostgreSQL's
//! spelling in most of them.

use lancet_core::{Dialect, SqlDialect};
use std::fmt::Write;

/// DuckDB's dialect, as the provider hands it out.
pub const DIALECT: Dialect = Dialect::new(&DuckDb);

/// DuckDB's spelling rules.
pub struct DuckDb;

impl SqlDialect for DuckDb {
    fn name(&self) -> &'static str {
        "duckdb"
    }

    /// `'\xAA\xBB'::BLOB`, DuckDB's escaped blob text, as a cast.
    fn blob_literal(&self, hex: &str, out: &mut String) {
        out.push_str("CAST('");
        for pair in hex.as_bytes().chunks(2) {
            out.push_str("\\x");
            out.push_str(std::str::from_utf8(pair).unwrap_or("00"));
        }
        out.push_str("' AS BLOB)");
    }

    /// Quoted text cast to DOUBLE: a bare `1.5` is a DECIMAL in DuckDB;
    /// the text form also spells NaN and the infinities and keeps a minus
    /// sign away from any operator.
    fn real_literal(&self, r: f64, out: &mut String) {
        let text = if r.is_nan() {
            "nan".to_string()
        } else if r.is_infinite() {
            if r > 0.0 { "inf" } else { "-inf" }.to_string()
        } else {
            format!("{r:?}")
        };
        let _ = write!(out, "CAST('{text}' AS DOUBLE)");
    }

    /// Quoted: `binary`, the collation that makes equality exact, is a
    /// keyword unquoted (DuckDB reads quoted names case-blind).
    fn quotes_collation_names(&self) -> bool {
        true
    }

    fn null_safe_equal(&self) -> &'static str {
        "IS NOT DISTINCT FROM"
    }

    fn null_safe_not_equal(&self) -> Option<&'static str> {
        Some("IS DISTINCT FROM")
    }

    fn regex_match(&self) -> &'static str {
        "~"
    }

    fn intersect_binds_tighter(&self) -> bool {
        true
    }

    fn comma_binds_looser_than_join(&self) -> bool {
        true
    }

    fn unlimited_limit(&self) -> Option<&'static str> {
        None
    }

    fn integer_columns_hold_integers(&self) -> bool {
        true
    }

    /// DuckDB's EXPLAIN answers one row (`physical_plan`, the plan drawn
    /// as a tree); the knob differential compares it as text.
    fn explain_prefix(&self) -> Option<&'static str> {
        Some("EXPLAIN ")
    }

    fn wildcard_exclude(&self) -> Option<&'static str> {
        Some("EXCLUDE")
    }
}

#[cfg(test)]
mod tests {
    use super::DIALECT;
    use lancet_core::{Expr, FromClause, Query, Select, SelectItem, TableFactor, ToSql, Value};

    #[test]
    fn literals_read_back_as_their_types() {
        let sql = |v: Value| Expr::Literal(v).to_sql(DIALECT);
        assert_eq!(sql(Value::Blob(vec![0, 0xFF])), r"CAST('\x00\xFF' AS BLOB)");
        assert_eq!(sql(Value::Real(-1.5)), "CAST('-1.5' AS DOUBLE)");
        assert_eq!(sql(Value::Real(f64::NAN)), "CAST('nan' AS DOUBLE)");
        assert_eq!(
            sql(Value::Real(f64::NEG_INFINITY)),
            "CAST('-inf' AS DOUBLE)"
        );
        assert_eq!(sql(Value::Integer(-3)), "(-3)");
        let collated = Expr::Collate {
            expr: Box::new(Expr::column(Some("a0"), "c0")),
            collation: "binary".into(),
        };
        assert_eq!(collated.to_sql(DIALECT), "a0.c0 COLLATE \"binary\"");
    }

    #[test]
    fn a_wildcard_excludes_or_replaces_columns_by_name() {
        let query = Query::select(Select {
            items: vec![SelectItem::WildcardExcluding(vec![
                "c1".into(),
                "c3".into(),
            ])],
            from: Some(FromClause {
                first: TableFactor::Table {
                    name: "t0".into(),
                    alias: Some("d0".into()),
                    indexed_by: None,
                },
                joins: vec![],
            }),
            ..Select::default()
        });
        assert_eq!(
            query.to_sql(DIALECT),
            "SELECT * EXCLUDE (c1, c3) FROM t0 AS d0"
        );
        let mut query = query;
        if let lancet_core::SetExpr::Select(s) = &mut query.body {
            s.items = vec![SelectItem::WildcardReplacing(vec![(
                Expr::column(Some("d0"), "c0"),
                "c1".into(),
            )])];
        }
        assert_eq!(
            query.to_sql(DIALECT),
            "SELECT * REPLACE (d0.c0 AS c1) FROM t0 AS d0"
        );
    }

    /// GROUP BY ALL stands for the group keys; QUALIFY filters after the
    /// window calls, last of the clauses.
    #[test]
    fn group_by_all_and_qualify_print_as_clauses() {
        let column = Expr::column(Some("d0"), "c0");
        let query = Query::select(Select {
            items: vec![SelectItem::Expr {
                expr: column.clone(),
                alias: Some("c0".into()),
            }],
            from: Some(FromClause::table("t0", Some("d0"))),
            group_by_all: true,
            having: Some(Expr::binary(
                lancet_core::BinaryOp::Gt,
                Expr::CountStar,
                Expr::int(1),
            )),
            qualify: Some(Expr::binary(
                lancet_core::BinaryOp::LtEq,
                Expr::Window {
                    function: Box::new(Expr::func("rank", vec![])),
                    partition_by: vec![],
                    order_by: vec![lancet_core::OrderBy {
                        expr: column,
                        descending: false,
                        nulls_first: None,
                    }],
                },
                Expr::int(1),
            )),
            ..Select::default()
        });
        assert_eq!(
            query.to_sql(DIALECT),
            "SELECT d0.c0 AS c0 FROM t0 AS d0 GROUP BY ALL HAVING COUNT(*) > 1 \
             QUALIFY (rank() OVER (ORDER BY d0.c0)) <= 1"
        );
    }
}
