//! PQS on MySQL and MariaDB: which pivot columns and values the core
//! evaluator ([`lancet_server::pivot`]) can read, under MySQL's semantics.
//!
//! Signed integer columns (operands and results kept within TINYINT's
//! range, so no column type overflows; UNSIGNED columns are left out, as
//! their subtraction fails below zero), and text columns with the
//! `utf8mb4_bin` collation, whose order is byte order for the values
//! read: none with a trailing blank or a control character, where PAD
//! SPACE comparison would differ. Literals compare the same way, because
//! every session sets `collation_connection` to `utf8mb4_bin`.

use crate::types::{Category, MyType};
use lancet_core::Value;
use lancet_server::pivot::{Kind, Semantics, V};

/// The evaluator's kind for a column type, if it supports it.
pub fn kind_of(ty: &MyType) -> Option<Kind> {
    if ty.fixed_domain {
        // BIT is unsigned in arithmetic; ENUM is left to the server.
        return None;
    }
    match ty.category {
        Category::Int if !ty.sql.contains("UNSIGNED") => Some(Kind::Int),
        Category::Text if ty.sql.contains("utf8mb4_bin") => Some(Kind::Text),
        _ => None,
    }
}

/// TINYINT's range: no signed column type overflows within it.
const SEMANTICS: Semantics = Semantics { int_limit: 127 };

/// A pivot column's value as the evaluator reads it; `None` for text it
/// would compare otherwise than the server (a trailing blank, a control
/// character).
fn read(kind: Kind, v: &Value) -> Option<V> {
    match v {
        Value::Text(t) if t.ends_with(' ') => None,
        _ => lancet_server::read_plain(kind, v),
    }
}

/// What PQS reads on MySQL and MariaDB, for the server toolkit.
pub const PQS: lancet_server::Pqs<MyType> = lancet_server::Pqs {
    semantics: SEMANTICS,
    kind: kind_of,
    read,
};
