//! How SQLite's SQL is spelled where dialects differ: the rules the core
//! printer asks for (see [`SqlDialect`]).

use lancet_core::{Dialect, SqlDialect};
use std::fmt::Write;

/// SQLite's dialect, as the provider hands it out.
pub const DIALECT: Dialect = Dialect::new(&Sqlite);

/// SQLite's spelling rules.
pub struct Sqlite;

impl SqlDialect for Sqlite {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn blob_literal(&self, hex: &str, out: &mut String) {
        let _ = write!(out, "X'{hex}'");
    }

    fn real_literal(&self, r: f64, out: &mut String) {
        if r.is_nan() {
            // SQLite has no NaN: it stores NULL.
            out.push_str("NULL");
        } else if r.is_infinite() {
            // Too large for a double: SQLite reads it as an infinity.
            out.push_str(if r > 0.0 { "1e999" } else { "(-1e999)" });
        } else if r.is_sign_negative() {
            let _ = write!(out, "({r:?})");
        } else {
            let _ = write!(out, "{r:?}");
        }
    }

    fn quotes_collation_names(&self) -> bool {
        false
    }

    fn null_safe_equal(&self) -> &'static str {
        "IS"
    }

    fn null_safe_not_equal(&self) -> Option<&'static str> {
        Some("IS NOT")
    }

    fn regex_match(&self) -> &'static str {
        "REGEXP"
    }

    fn intersect_binds_tighter(&self) -> bool {
        false
    }

    fn comma_binds_looser_than_join(&self) -> bool {
        false
    }

    fn unlimited_limit(&self) -> Option<&'static str> {
        Some("-1")
    }

    fn materialized_columns_lose_affinity(&self) -> bool {
        true
    }

    fn wrapping_keeps_type(&self) -> bool {
        false
    }

    fn explain_prefix(&self) -> Option<&'static str> {
        Some("EXPLAIN QUERY PLAN ")
    }
}
