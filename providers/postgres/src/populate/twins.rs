//! Twin tables (Citus' dist-vs-local oracle): every statement that built
//! the tables, repeated on plain copies in [`TWIN_SCHEMA`], names
//! qualified, so that each twin holds the rows its table holds.

use super::*;

/// Repeats every statement that built the tables on copies in
/// [`TWIN_SCHEMA`] (names qualified), in the same order, so that each
/// twin holds the rows its table holds. If a statement that succeeded on
/// the tables fails on the twins, the two no longer agree and the
/// database keeps no twins.
pub(super) fn write_twins(
    out: &mut Out<'_, '_>,
    schema: &mut PgSchema,
    stats_names: &[String],
    log: Vec<(StatementKind, String)>,
) -> Result<(), ExecError> {
    let mut names: Vec<String> = schema.relations.iter().map(|t| t.name.clone()).collect();
    names.extend(stats_names.iter().cloned());
    let session = out.session();
    if !session.execute_sql(
        StatementKind::CreateTable,
        format!("CREATE SCHEMA {TWIN_SCHEMA}"),
    )? {
        return Ok(());
    }
    for (kind, sql) in log {
        if sql == "ANALYZE" {
            // Already analyzed the twins' schema-mates: nothing to repeat.
            continue;
        }
        let twin_sql = qualify(&sql, &names, TWIN_SCHEMA);
        if !session.execute_sql(kind, twin_sql)? {
            log::debug!("a twin statement failed where its table's succeeded: no twins");
            return Ok(());
        }
    }
    for t in &mut schema.relations {
        t.twin = Some(format!("{TWIN_SCHEMA}.{}", t.name));
    }
    Ok(())
}

/// The twins' statements for a setup written without them (a reduced
/// candidate): the twin schema, then every statement that is not a
/// setting or a Citus function call, with the names of the tables, views
/// and statistics it creates qualified by the twin schema.
pub fn twin_statements(base: &[String]) -> Vec<String> {
    let names: Vec<String> = base
        .iter()
        .filter_map(|s| {
            let words: Vec<&str> = s.split_whitespace().take(3).collect();
            match words.as_slice() {
                [c, kind, name]
                    if c.eq_ignore_ascii_case("CREATE")
                        && ["TABLE", "VIEW", "STATISTICS"]
                            .iter()
                            .any(|k| kind.eq_ignore_ascii_case(k)) =>
                {
                    Some(name.trim_end_matches(['(', ';']).to_string())
                }
                _ => None,
            }
        })
        .collect();
    let copied = base.iter().filter(|s| {
        let first = s
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_uppercase();
        !matches!(first.as_str(), "SET" | "RESET" | "SELECT" | "")
    });
    std::iter::once(format!("CREATE SCHEMA {TWIN_SCHEMA}"))
        .chain(copied.map(|s| qualify(s, &names, TWIN_SCHEMA)))
        .collect()
}

/// `sql` with every identifier in `names` qualified by `schema`, outside
/// string literals and quoted identifiers.
pub fn qualify(sql: &str, names: &[String], schema: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 32);
    let mut chars = sql.char_indices().peekable();
    let bytes = sql.as_bytes();
    while let Some((i, c)) = chars.next() {
        if c == '\'' || c == '"' {
            // Copy the literal or quoted identifier whole ('' and "" escape).
            out.push(c);
            while let Some((_, d)) = chars.next() {
                out.push(d);
                if d == c {
                    if chars.peek().map(|&(_, e)| e) == Some(c) {
                        out.push(c);
                        chars.next();
                    } else {
                        break;
                    }
                }
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    end = j + d.len_utf8();
                    chars.next();
                } else {
                    break;
                }
            }
            let word = &sql[i..end];
            let after_dot = i > 0 && bytes[i - 1] == b'.';
            let before_dot = bytes.get(end) == Some(&b'.');
            if !after_dot && !before_dot && names.iter().any(|n| n == word) {
                out.push_str(schema);
                out.push('.');
            }
            out.push_str(word);
            continue;
        }
        out.push(c);
    }
    out
}
