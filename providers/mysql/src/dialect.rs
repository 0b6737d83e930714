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
    /// are a DECIMAL); a negative one in parentheses (`- -1` would start a
    /// comment). MySQL has no NaN (where one would arise it gives NULL)
    /// and no infinities (a literal out of range is rejected, not read as
    /// another value).
    fn real_literal(&self, r: f64, out: &mut String) {
        if r.is_nan() {
            out.push_str("NULL");
        } else if r.is_infinite() {
            out.push_str(if r > 0.0 { "1e999" } else { "(-1e999)" });
        } else {
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

    fn supports_straight_join(&self) -> bool {
        true
    }

    fn wrapping_keeps_type(&self) -> bool {
        false
    }

    fn integer_columns_hold_integers(&self) -> bool {
        true
    }

    fn explain_prefix(&self) -> Option<&'static str> {
        Some(EXPLAIN)
    }
}
