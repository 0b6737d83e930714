//! SQL text that lancet did not generate, or no longer has as a tree: the
//! setup statements of a finding, and files from anywhere given to
//! `lancet reduce`. Statements are split and simplified with sqlparser where
//! it parses them; where it cannot, with its tokenizer, token by token, so
//! that an unusual statement never stops a reduction.

use lancet_core::Dialect;
use lancet_engine::Catalog;
pub use lancet_findings::script::{parser_dialect, split_statements};
use sqlparser::ast::{self as sp, visit_expressions_mut};
use sqlparser::parser::Parser;
use sqlparser::tokenizer::{Token, Tokenizer};
use std::ops::ControlFlow;

/// Every statement one simplification step away from `stmt`, the biggest
/// cuts first. Parsed statements lose INSERT rows, column options, select
/// items, joins and clauses, and have expressions replaced by a part of
/// them or a simpler literal; statements sqlparser cannot parse lose tokens.
pub fn statement_variants(stmt: &str, dialect: Dialect, catalog: &Catalog) -> Vec<String> {
    let d = parser_dialect(dialect, catalog);
    let mut parsed = match Parser::parse_sql(&*d, stmt) {
        Ok(v) if v.len() == 1 => v,
        _ => return token_variants(stmt, dialect, catalog),
    };
    let original = parsed.remove(0);
    let mut out: Vec<String> = structural_variants(&original)
        .into_iter()
        .map(|s| s.to_string())
        .collect();
    out.extend(expression_variants(&original));
    let printed = original.to_string();
    out.retain(|s| *s != printed && s.as_str() != stmt);
    out.sort_by_key(|s| s.len());
    out.dedup();
    out
}

/// Statement-level cuts: rows of an INSERT, options and constraints of a
/// CREATE TABLE, parts of a SELECT.
fn structural_variants(stmt: &sp::Statement) -> Vec<sp::Statement> {
    let mut out = Vec::new();
    match stmt {
        sp::Statement::Insert(insert) => {
            if let Some(source) = &insert.source {
                if let sp::SetExpr::Values(values) = &*source.body {
                    let n = values.rows.len();
                    // Halves first, then single rows.
                    let mut cuts: Vec<(usize, usize)> = Vec::new();
                    if n > 2 {
                        cuts.push((0, n / 2));
                        cuts.push((n / 2, n));
                    }
                    if n > 1 {
                        cuts.extend((0..n).map(|i| (i, i + 1)));
                    }
                    for (from, to) in cuts {
                        let mut c = stmt.clone();
                        if let sp::Statement::Insert(i) = &mut c {
                            if let Some(src) = &mut i.source {
                                if let sp::SetExpr::Values(v) = &mut *src.body {
                                    v.rows.drain(from..to);
                                }
                            }
                        }
                        out.push(c);
                    }
                }
            }
        }
        sp::Statement::CreateTable(ct) => {
            for i in 0..ct.constraints.len() {
                let mut c = stmt.clone();
                if let sp::Statement::CreateTable(t) = &mut c {
                    t.constraints.remove(i);
                }
                out.push(c);
            }
            for (i, col) in ct.columns.iter().enumerate() {
                for j in 0..col.options.len() {
                    let mut c = stmt.clone();
                    if let sp::Statement::CreateTable(t) = &mut c {
                        t.columns[i].options.remove(j);
                    }
                    out.push(c);
                }
                if ct.columns.len() > 1 {
                    let mut c = stmt.clone();
                    if let sp::Statement::CreateTable(t) = &mut c {
                        t.columns.remove(i);
                    }
                    out.push(c);
                }
            }
        }
        sp::Statement::Query(q) => {
            for v in query_variants(q) {
                out.push(sp::Statement::Query(Box::new(v)));
            }
        }
        _ => {}
    }
    out
}

fn query_variants(q: &sp::Query) -> Vec<sp::Query> {
    let mut out = Vec::new();
    if q.order_by.is_some() {
        let mut c = q.clone();
        c.order_by = None;
        out.push(c);
    }
    if q.limit_clause.is_some() {
        let mut c = q.clone();
        c.limit_clause = None;
        out.push(c);
    }
    if let sp::SetExpr::Select(s) = &*q.body {
        let with = |f: &dyn Fn(&mut sp::Select)| {
            let mut c = q.clone();
            if let sp::SetExpr::Select(s) = &mut *c.body {
                f(s);
            }
            c
        };
        if s.selection.is_some() {
            out.push(with(&|s| s.selection = None));
        }
        if s.having.is_some() {
            out.push(with(&|s| s.having = None));
        }
        if s.distinct.is_some() {
            out.push(with(&|s| s.distinct = None));
        }
        if s.projection.len() > 1 {
            for i in 0..s.projection.len() {
                out.push(with(&|s| {
                    s.projection.remove(i);
                }));
            }
        }
        for (t, twj) in s.from.iter().enumerate() {
            for j in 0..twj.joins.len() {
                out.push(with(&|s| {
                    s.from[t].joins.remove(j);
                }));
            }
        }
        if s.from.len() > 1 {
            for t in 0..s.from.len() {
                out.push(with(&|s| {
                    s.from.remove(t);
                }));
            }
        }
    }
    out
}

/// Simpler expressions for one sqlparser expression: its parts, then
/// simpler literals.
fn sp_expr_variants(e: &sp::Expr) -> Vec<sp::Expr> {
    use sp::Expr as E;
    let null = || E::value(sp::Value::Null);
    let num = |n: &str| E::value(sp::Value::Number(n.into(), false));
    let mut out: Vec<sp::Expr> = match e {
        E::BinaryOp { left, right, .. } => vec![(**left).clone(), (**right).clone()],
        E::UnaryOp { expr, .. }
        | E::Nested(expr)
        | E::IsNull(expr)
        | E::IsNotNull(expr)
        | E::IsTrue(expr)
        | E::IsFalse(expr)
        | E::IsNotTrue(expr)
        | E::IsNotFalse(expr)
        | E::Cast { expr, .. } => vec![(**expr).clone()],
        E::Between {
            expr, low, high, ..
        } => vec![(**expr).clone(), (**low).clone(), (**high).clone()],
        E::Like { expr, pattern, .. }
        | E::ILike { expr, pattern, .. }
        | E::SimilarTo { expr, pattern, .. } => vec![(**expr).clone(), (**pattern).clone()],
        E::InList { expr, list, .. } => {
            let mut v = vec![(**expr).clone()];
            if list.len() > 1 {
                for i in 0..list.len() {
                    let mut c = e.clone();
                    if let E::InList { list, .. } = &mut c {
                        list.remove(i);
                    }
                    v.push(c);
                }
            }
            v
        }
        E::Case {
            conditions,
            else_result,
            ..
        } => {
            let mut v: Vec<sp::Expr> = conditions.iter().map(|w| w.result.clone()).collect();
            v.extend(else_result.iter().map(|r| (**r).clone()));
            v
        }
        _ => vec![],
    };
    match e {
        E::Value(v) => match &v.value {
            sp::Value::Number(n, _) if n != "0" && n != "1" => {
                out.push(num("0"));
                out.push(num("1"));
            }
            sp::Value::Number(n, _) if n == "1" => out.push(num("0")),
            sp::Value::SingleQuotedString(s) if !s.is_empty() => {
                out.push(E::value(sp::Value::SingleQuotedString(String::new())));
                let half: String = s.chars().take(s.chars().count() / 2).collect();
                out.push(E::value(sp::Value::SingleQuotedString(half)));
            }
            sp::Value::Null => {}
            _ => out.push(null()),
        },
        _ => {
            out.push(null());
            out.push(num("0"));
            out.push(num("1"));
        }
    }
    out
}

/// Every version of `stmt` with one expression simplified.
fn expression_variants(stmt: &sp::Statement) -> Vec<String> {
    // The same (post-)order as the mutable walk below, which replaces the k-th node.
    let mut nodes: Vec<sp::Expr> = Vec::new();
    let _ = visit_expressions_mut(&mut stmt.clone(), |e| {
        nodes.push(e.clone());
        ControlFlow::<()>::Continue(())
    });
    let mut out = Vec::new();
    for (k, node) in nodes.iter().enumerate() {
        for replacement in sp_expr_variants(node) {
            let mut c = stmt.clone();
            let mut index = 0;
            let _ = visit_expressions_mut(&mut c, |e| {
                if index == k {
                    *e = replacement.clone();
                    index += 1;
                    return ControlFlow::Break(());
                }
                index += 1;
                ControlFlow::Continue(())
            });
            out.push(c.to_string());
        }
    }
    out
}

/// Whether removing the words `start..end` (indexes into `words`) leaves
/// a statement that the DBMS still accepts but reads otherwise: `CAST(x
/// AS )` (SQLite takes an empty type name, with another affinity) or
/// `UNION` for `UNION ALL` (duplicates removed). Such a candidate may show
/// a different bug under the same relation.
fn changes_meaning(tokens: &[Token], words: &[usize], start: usize, end: usize) -> bool {
    let word = |i: usize| -> String {
        match &tokens[words[i]] {
            Token::Word(w) => w.value.to_ascii_uppercase(),
            other => other.to_string(),
        }
    };
    let before = start.checked_sub(1).map(word);
    let after = (end < words.len()).then(|| word(end));
    let empty_type = before.as_deref() == Some("AS") && after.as_deref() == Some(")");
    let set_quantifier = (start..end).any(|i| {
        let w = word(i);
        (w == "ALL" || w == "DISTINCT")
            && i.checked_sub(1).map(word).is_some_and(|p| {
                ["UNION", "INTERSECT", "EXCEPT"].contains(&p.as_str()) && i - 1 < start
            })
    });
    empty_type || set_quantifier
}

/// For statements sqlparser cannot parse: the statement with a run of
/// tokens removed, long runs first, never one that changes what a
/// statement means while keeping it valid ([`changes_meaning`]).
pub fn token_variants(stmt: &str, dialect: Dialect, catalog: &Catalog) -> Vec<String> {
    let d = parser_dialect(dialect, catalog);
    let Ok(tokens) = Tokenizer::new(&*d, stmt).tokenize() else {
        return vec![];
    };
    let words: Vec<usize> = tokens
        .iter()
        .enumerate()
        .filter(|(_, t)| !matches!(t, Token::Whitespace(_) | Token::EOF))
        .map(|(i, _)| i)
        .collect();
    let n = words.len();
    let mut out = Vec::new();
    if n < 2 {
        return out;
    }
    let mut size = (n / 2).max(1);
    loop {
        let mut start = 0;
        while start < n {
            let end = (start + size).min(n);
            let (from, to) = (words[start], words[end - 1]);
            if changes_meaning(&tokens, &words, start, end) {
                start += size;
                continue;
            }
            let text: String = tokens
                .iter()
                .enumerate()
                .filter(|(i, _)| *i < from || *i > to)
                .map(|(_, t)| t.to_string())
                .collect();
            let text = text.trim().to_string();
            if !text.is_empty() {
                out.push(text);
            }
            start += size;
        }
        if size == 1 {
            break;
        }
        size /= 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::CATALOG;
    use lancet_sqlite::dialect::DIALECT as SQLITE;

    /// [`statement_variants`] of SQLite's statement `stmt`.
    fn variants(stmt: &str) -> Vec<String> {
        statement_variants(stmt, SQLITE, &CATALOG)
    }

    #[test]
    fn splits_at_top_level_semicolons_only() {
        let s = split_statements(
            "-- a comment\nCREATE TABLE t(a);\nINSERT INTO t VALUES ('x;y');\n\nSELECT 1",
            SQLITE,
            &CATALOG,
        );
        assert_eq!(s.len(), 3, "{s:?}");
        assert_eq!(s[1], "INSERT INTO t VALUES ('x;y')");
    }

    #[test]
    fn insert_rows_and_expressions_are_simplified() {
        let v = variants("INSERT INTO t VALUES (1), (2), (3)");
        assert!(v.contains(&"INSERT INTO t VALUES (1)".to_string()), "{v:?}");
        let v = variants("SELECT a FROM t WHERE a > 5 AND b = 'xy'");
        assert!(v.contains(&"SELECT a FROM t".to_string()), "{v:?}");
        assert!(
            v.contains(&"SELECT a FROM t WHERE a > 5".to_string()),
            "{v:?}"
        );
    }

    #[test]
    fn token_cuts_keep_type_names_and_set_quantifiers() {
        let variants = token_variants(
            "CREATE VIEW v0 AS SELECT CAST(c0 AS INT) FROM t0 UNION ALL SELECT 1 FROM t1",
            SQLITE,
            &CATALOG,
        );
        assert!(!variants.is_empty());
        for v in &variants {
            assert!(!v.contains("AS )"), "{v}");
            assert!(!v.contains("UNION SELECT"), "{v}");
        }
    }

    #[test]
    fn unparsable_statements_lose_tokens() {
        let v = variants("FROB THE WIDGET 42");
        assert!(
            v.iter().any(|s| s == "FROB THE 42" || s == "FROB THE"),
            "{v:?}"
        );
    }
}
