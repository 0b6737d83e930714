//! SQL scripts as text: which sqlparser dialect reads one of ours, and
//! how a reproducer or a foreign file splits into statements. Used by
//! findings (reading an edited reproducer), deduplication and the reducer.

use lancet_core::Dialect;
use lancet_engine::Catalog;
use sqlparser::dialect::Dialect as SpDialect;
use sqlparser::tokenizer::{Token, Tokenizer};

/// The sqlparser dialect that reads one of ours (each DBMS's description
/// in `catalog` names it; core knows nothing of sqlparser).
pub fn parser_dialect(d: Dialect, catalog: &Catalog) -> Box<dyn SpDialect> {
    catalog.parser_dialect(d)
}

/// Splits a script into statements at top-level semicolons, dropping
/// comments-only pieces. Strings and quoted names may contain semicolons;
/// the tokenizer knows them. If it cannot tokenize the text (an unclosed
/// quote), the split falls back to semicolons at line ends.
pub fn split_statements(text: &str, dialect: Dialect, catalog: &Catalog) -> Vec<String> {
    let d = parser_dialect(dialect, catalog);
    let Ok(tokens) = Tokenizer::new(&*d, text).tokenize() else {
        return text
            .split(";\n")
            .map(strip_comments)
            .filter(|s| !s.is_empty())
            .collect();
    };
    let mut out = Vec::new();
    let mut current = String::new();
    for t in tokens {
        match t {
            Token::SemiColon => {
                let s = current.trim().to_string();
                if !s.is_empty() {
                    out.push(s);
                }
                current.clear();
            }
            Token::Whitespace(sqlparser::tokenizer::Whitespace::SingleLineComment { .. })
            | Token::Whitespace(sqlparser::tokenizer::Whitespace::MultiLineComment(_)) => {
                current.push(' ')
            }
            other => current.push_str(&other.to_string()),
        }
    }
    let s = current.trim().to_string();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

fn strip_comments(piece: &str) -> String {
    piece
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .trim_end_matches(';')
        .to_string()
}
