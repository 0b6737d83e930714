//! PQS on PostgreSQL: which pivot columns and values the core evaluator
//! ([`lancet_server::pivot`]) can read, under PostgreSQL's semantics.
//!
//! Integer columns (values kept within smallint's range, so no integer
//! type overflows), text and varchar columns (the databases lancet creates
//! use the "C" collation: byte order) and booleans. Not char(n), whose
//! trailing blanks do not count in comparisons.

use crate::types::PgType;
use lancet_core::Value;
use lancet_server::pivot::{Kind, Semantics, V};

/// The evaluator's kind for a declared type, if it supports it.
pub fn kind_of(ty: &PgType) -> Option<Kind> {
    match ty.name.as_str() {
        "smallint" | "integer" | "bigint" => Some(Kind::Int),
        "text" => Some(Kind::Text),
        "boolean" => Some(Kind::Bool),
        n if n.starts_with("varchar") => Some(Kind::Text),
        _ => None,
    }
}

/// Within smallint, no integer type overflows.
const SEMANTICS: Semantics = Semantics { int_limit: 32767 };

/// A pivot column's value as the evaluator reads it; `None` where the text
/// form is ambiguous (a text value that looked like a number).
fn read(kind: Kind, v: &Value) -> Option<V> {
    match (kind, v) {
        (_, Value::Null) => Some(V::Null),
        (Kind::Int, Value::Integer(i)) => Some(V::Int(*i)),
        (Kind::Text, Value::Text(t)) => Some(V::Text(t.clone())),
        (Kind::Bool, Value::Text(t)) if t == "t" => Some(V::Bool(true)),
        (Kind::Bool, Value::Text(t)) if t == "f" => Some(V::Bool(false)),
        _ => None,
    }
}

/// What PQS reads on PostgreSQL, for the server toolkit.
pub const PQS: lancet_server::Pqs<PgType> = lancet_server::Pqs {
    semantics: SEMANTICS,
    kind: kind_of,
    read,
};
