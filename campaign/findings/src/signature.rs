//! A finding's signature: a hash of its kind, oracle, relation and the
//! *shape* of its (reduced) case: the syntax tree with every literal and
//! every generated name (`t3`, `c12`, `a0`) abstracted. Error findings use
//! the error code and the shape of the failing statement's tokens; crashes
//! and hangs how the DBMS died (signal and last words, see [`signature`]).
//! Deduplication ([`crate::dedup`]) counts findings by it; bug cores
//! ([`crate::bug`]) hash and shape statements the same way.

use crate::findings::{Finding, FindingKind};
use lancet_core::Dialect;
use lancet_engine::Catalog;
use serde_json::Value as Json;
use sqlparser::tokenizer::{Token, Tokenizer};

/// FNV-1a, stable across Rust releases (signatures are stored on disk).
pub(crate) fn fnv(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `t12` → `t`, `a0` → `a`: generated names differ between databases that
/// show the same bug.
pub(crate) fn abstract_name(s: &str) -> String {
    let trimmed = s.trim_end_matches(|c: char| c.is_ascii_digit());
    if trimmed.len() < s.len()
        && !trimmed.is_empty()
        && trimmed.chars().all(|c| c.is_ascii_alphabetic() || c == '_')
    {
        trimmed.to_string()
    } else {
        s.to_string()
    }
}

/// Replaces literals by `null` and abstracts names in a serialized case.
fn abstract_json(v: &mut Json) {
    match v {
        Json::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "Literal" || key == "pivot" {
                    *value = Json::Null;
                } else {
                    abstract_json(value);
                }
            }
        }
        Json::Array(items) => items.iter_mut().for_each(abstract_json),
        Json::String(s) => *s = abstract_name(s),
        _ => {}
    }
}

/// The shape of a statement: keywords and operators kept, literals and
/// generated names abstracted.
pub(crate) fn statement_shape(sql: &str, dialect: Dialect, catalog: &Catalog) -> String {
    let d = crate::script::parser_dialect(dialect, catalog);
    match Tokenizer::new(&*d, sql).tokenize() {
        Ok(tokens) => tokens
            .iter()
            .filter(|t| !matches!(t, Token::Whitespace(_)))
            .map(|t| match t {
                Token::Number(..)
                | Token::SingleQuotedString(_)
                | Token::DoubleQuotedString(_)
                | Token::HexStringLiteral(_) => "?".to_string(),
                Token::Word(w) if w.keyword == sqlparser::keywords::Keyword::NoKeyword => {
                    abstract_name(&w.value)
                }
                other => other.to_string().to_ascii_uppercase(),
            })
            .collect::<Vec<_>>()
            .join(" "),
        Err(_) => sql.to_string(),
    }
}

/// A finding's signature: 16 hex digits (`catalog` gives the parser that
/// reads statements printed in `dialect`).
pub fn signature(f: &Finding, dialect: Dialect, catalog: &Catalog) -> String {
    if matches!(f.kind, FindingKind::Crash | FindingKind::Hang) {
        // A crash is known by how the DBMS died (the signal, its last
        // words), not by the shape of whichever query set it off: the
        // same crash reached through fifty query shapes is one entry.
        let how = f
            .error
            .as_ref()
            .map(|e| lancet_core::connection::message_shape(&e.message))
            .unwrap_or_default();
        return format!("{:016x}", fnv(&format!("{}|{how}", f.kind.name())));
    }
    let mut key = format!(
        "{}|{}|{}|",
        f.kind.name(),
        f.oracle.as_deref().unwrap_or(""),
        f.relation.as_deref().unwrap_or("")
    );
    match (f.kind, &f.case) {
        (kind, Some(case)) if kind.is_relation() => {
            let mut json = serde_json::to_value(case).unwrap_or(Json::Null);
            abstract_json(&mut json);
            key.push_str(&json.to_string());
        }
        _ => {
            if let Some(e) = &f.error {
                key.push_str(e.code.as_deref().unwrap_or(""));
                key.push('|');
            }
            if let Some(q) = f.queries.first() {
                key.push_str(&statement_shape(&q.sql, dialect, catalog));
            }
        }
    }
    format!("{:016x}", fnv(&key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_sqlite::dialect::DIALECT as SQLITE;

    #[test]
    fn names_and_literals_are_abstracted() {
        assert_eq!(abstract_name("t12"), "t");
        assert_eq!(abstract_name("lancet_parts"), "lancet_parts");
        assert_eq!(abstract_name("MAX"), "MAX");
        let shape = |sql| statement_shape(sql, SQLITE, &crate::fixture::CATALOG);
        assert_eq!(
            shape("SELECT c1 FROM t3 WHERE c1 > 17"),
            shape("SELECT c4 FROM t0 WHERE c4 > 'x'")
        );
        assert_ne!(
            shape("SELECT c1 FROM t3 WHERE c1 > 17"),
            shape("SELECT c1 FROM t3 WHERE c1 < 17")
        );
    }
}
