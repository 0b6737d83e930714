//! A dialect with the SQL standard's spellings, for tests whose SQL is the
//! same in every dialect (the oracles' queries): they need some dialect to
//! print with, and must not depend on a provider for it.

use lancet_core::{Dialect, SqlDialect};
use std::fmt::Write;

/// The standard dialect's handle.
pub const STANDARD: Dialect = Dialect::new(&Standard);

/// The SQL standard's spellings; for reals, the shortest digits, and where
/// the standard has no spelling (NaN, the infinities), a cast from text.
pub struct Standard;

impl SqlDialect for Standard {
    fn name(&self) -> &'static str {
        "standard"
    }

    fn blob_literal(&self, hex: &str, out: &mut String) {
        let _ = write!(out, "X'{hex}'");
    }

    fn real_literal(&self, r: f64, out: &mut String) {
        if r.is_finite() {
            // The shortest digits that read back as `r`; a negative one in
            // parentheses, so that no operator stands next to its sign.
            if r.is_sign_negative() {
                let _ = write!(out, "({r:?})");
            } else {
                let _ = write!(out, "{r:?}");
            }
        } else {
            let text = if r.is_nan() {
                "NaN"
            } else if r > 0.0 {
                "Infinity"
            } else {
                "-Infinity"
            };
            let _ = write!(out, "CAST('{text}' AS DOUBLE PRECISION)");
        }
    }

    fn quotes_collation_names(&self) -> bool {
        false
    }

    fn null_safe_equal(&self) -> &'static str {
        "IS NOT DISTINCT FROM"
    }

    fn null_safe_not_equal(&self) -> Option<&'static str> {
        Some("IS DISTINCT FROM")
    }

    fn regex_match(&self) -> &'static str {
        "LIKE_REGEX"
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
}
