//! How PostgreSQL's SQL is spelled where dialects differ: the rules the
//! core printer asks for (see [`SqlDialect`]). Citus shares them.

use lancet_core::{Dialect, SqlDialect};
use std::fmt::Write;

/// PostgreSQL's dialect, as the provider hands it out.
pub const DIALECT: Dialect = Dialect::new(&Postgres);

/// PostgreSQL's spelling rules.
pub struct Postgres;

impl SqlDialect for Postgres {
    fn name(&self) -> &'static str {
        "postgres"
    }

    fn blob_literal(&self, hex: &str, out: &mut String) {
        let _ = write!(out, "'\\x{hex}'::bytea");
    }

    /// Quoted text cast to float8: the only spelling of NaN and the
    /// infinities, it keeps a minus sign away from any operator, and it
    /// reads back exactly (a bare `1.5` would be a numeric).
    fn real_literal(&self, r: f64, out: &mut String) {
        let text = if r.is_nan() {
            "NaN".to_string()
        } else if r.is_infinite() {
            if r > 0.0 { "Infinity" } else { "-Infinity" }.to_string()
        } else {
            format!("{r:?}")
        };
        let _ = write!(out, "'{text}'::float8");
    }

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

    fn explain_prefix(&self) -> Option<&'static str> {
        Some("EXPLAIN (COSTS OFF) ")
    }
}
