//! How MySQL's and MariaDB's SQL is spelled where dialects differ: the
//! rules the core printer asks for (see [`SqlDialect`]).

use lancet_core::{Dialect, SqlDialect};
use std::fmt::Write;

/// MySQL's dialect, as the provider hands it out.
pub const DIALECT: Dialect = Dialect::new(&MySql);

/// How lancet asks for a plan; the connection turns EXPLAIN's table into
/// one step per row (see `connection::plan_step`).
pub const EXPLAIN: &str = "EXPLAIN ";

/// MySQL's and MariaDB's spelling rules.
pub struct MySql;

impl SqlDialect for MySql {
    fn name(&self) -> &'static str {
        "mysql"
    }

    fn blob_literal(&self, hex: &str, out: &mut String) {
        let _ = write!(out, "X'{hex}'");
    }

    /// With an exponent, so that the server reads a DOUBLE (plain digits
    /// are a DECIMAL); MySQL has no NaN or infinities, so those print as
    /// NULL, which the generator never asks for.
    fn real_literal(&self, r: f64, out: &mut String) {
        if !r.is_finite() {
            out.push_str("NULL");
        } else {
            let _ = write!(out, "({r:e})");
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

    fn explain_prefix(&self) -> Option<&'static str> {
        Some(EXPLAIN)
    }
}
