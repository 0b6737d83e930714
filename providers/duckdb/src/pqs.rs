//! PQS on DuckDB: which pivot columns and values the core evaluator
//! ([`lancet_server::pivot`]) can read, under DuckDB's semantics.
//!
//! Signed integer columns (operands and results kept within TINYINT's
//! range, so no column type overflows; unsigned columns are left out, as
//! their subtraction fails below zero), and VARCHAR columns of the
//! default (binary) collation, whose order is byte order, and BOOLEAN
//! columns; ENUM columns
//! are left out (they order by member index and refuse non-members).

use crate::types::{Category, DuckType};
use lancet_server::pivot::{Kind, Semantics};

/// The evaluator's kind for a column type, if it supports it.
pub fn kind_of(ty: &DuckType) -> Option<Kind> {
    if ty.fixed_domain {
        return None;
    }
    match ty.category {
        Category::Int if !ty.is_unsigned() => Some(Kind::Int),
        Category::Text if ty.collation.is_none() => Some(Kind::Text),
        Category::Bool => Some(Kind::Bool),
        _ => None,
    }
}

/// TINYINT's range: no signed column type overflows within it.
const SEMANTICS: Semantics = Semantics { int_limit: 127 };

/// What PQS reads on DuckDB, for the server toolkit.
pub const PQS: lancet_server::Pqs<DuckType> = lancet_server::Pqs {
    semantics: SEMANTICS,
    kind: kind_of,
    read: lancet_server::read_plain,
};
