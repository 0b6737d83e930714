//! Declared types, their affinities, and collations.
//!
//! SQLite derives a column's affinity from the text of its declared type by
//! substring rules, so odd names (`VARCHAR(10)`, `BOOLEAN`, `FLOATING POINT`)
//! exercise those rules. Generators use the affinity to pick values that
//! stay in a column's domain, and to decide when equal values are
//! guaranteed identical (what makes MIN/MAX deterministic).

use lancet_core::Rng;
use lancet_core::TypeName;
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// SQLite's five column affinities.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Affinity {
    Integer,
    Text,
    /// Also the affinity of a column without a declared type.
    Blob,
    Real,
    Numeric,
}

/// The affinity SQLite gives a declared type (section 3.1 of "Datatypes In SQLite").
pub fn affinity(ty: Option<&TypeName>) -> Affinity {
    let Some(ty) = ty else {
        return Affinity::Blob;
    };
    let t = ty.0.as_bytes();
    let has = |word: &str| {
        t.windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
    };
    if has("INT") {
        Affinity::Integer
    } else if has("CHAR") || has("CLOB") || has("TEXT") {
        Affinity::Text
    } else if has("BLOB") || ty.0.trim().is_empty() {
        Affinity::Blob
    } else if has("REAL") || has("FLOA") || has("DOUB") {
        Affinity::Real
    } else {
        Affinity::Numeric
    }
}

/// Declared types for columns: the canonical names and some whose
/// affinity comes from the substring rules.
const COLUMN_TYPES: &[&str] = &[
    "INTEGER",
    "INT",
    "REAL",
    "TEXT",
    "BLOB",
    "NUMERIC",
    "VARCHAR(10)",
    "BOOLEAN",
    "DOUBLE",
    "BIGINT",
    "DECIMAL(10,2)",
    "CHARACTER(3)",
    "FLOAT",
    "DATETIME",
    "STRING",
    "FLOATING POINT",
];

/// A declared type for a new column, or `None` (no type: BLOB affinity).
pub fn column_type(rng: &mut Rng) -> Option<TypeName> {
    if rng.random_bool(0.15) {
        return None;
    }
    // The six canonical names twice as often as the odd ones.
    let name = if rng.random_bool(0.6) {
        COLUMN_TYPES[..6].choose(rng)
    } else {
        COLUMN_TYPES[6..].choose(rng)
    };
    name.map(|n| TypeName((*n).to_string()))
}

/// Type names for CAST: one per affinity, and a few that map by the rules.
const CAST_TYPES: &[&str] = &[
    "INTEGER",
    "REAL",
    "TEXT",
    "BLOB",
    "NUMERIC",
    "INT",
    "VARCHAR(5)",
    "BOOLEAN",
];

pub fn cast_type(rng: &mut Rng) -> TypeName {
    let name = if rng.random_bool(0.8) {
        CAST_TYPES[..5].choose(rng)
    } else {
        CAST_TYPES[5..].choose(rng)
    };
    TypeName(name.copied().unwrap_or("TEXT").to_string())
}

/// The built-in collations.
pub const COLLATIONS: &[&str] = &["BINARY", "NOCASE", "RTRIM"];

pub fn collation(rng: &mut Rng) -> String {
    COLLATIONS
        .choose(rng)
        .copied()
        .unwrap_or("BINARY")
        .to_string()
}

/// Whether a column's collation is BINARY (declared or by default).
pub fn is_binary(collation: Option<&str>) -> bool {
    collation.is_none_or(|c| c.eq_ignore_ascii_case("BINARY"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aff(t: &str) -> Affinity {
        affinity(Some(&TypeName(t.to_string())))
    }

    #[test]
    fn affinity_rules() {
        assert_eq!(aff("INTEGER"), Affinity::Integer);
        assert_eq!(aff("FLOATING POINT"), Affinity::Integer);
        assert_eq!(aff("VARCHAR(10)"), Affinity::Text);
        assert_eq!(aff("CHARINT"), Affinity::Integer);
        assert_eq!(aff("BLOB"), Affinity::Blob);
        assert_eq!(aff("DOUBLE"), Affinity::Real);
        assert_eq!(aff("BOOLEAN"), Affinity::Numeric);
        assert_eq!(aff("STRING"), Affinity::Numeric);
        assert_eq!(aff("DECIMAL(10,2)"), Affinity::Numeric);
        assert_eq!(affinity(None), Affinity::Blob);
    }
}
