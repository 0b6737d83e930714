//! DuckDB's optimizer knobs: the passes `duckdb_optimizers()` lists, each
//! of which `SET disabled_optimizers = '...'` turns off for the session (a
//! change of plan, never of result). The list is read from the library,
//! so every release offers exactly the passes it has.

use lancet_core::{Knob, KnobSetting};

/// Passes that are not optimizations of a plan: `extension` runs
/// optimizer extensions, of which lancet loads none.
const NOT_PASSES: &[&str] = &["extension"];

/// The query that lists the passes.
pub const LIST_QUERY: &str = "SELECT name FROM duckdb_optimizers() ORDER BY name";

/// The knobs for the passes a library lists.
pub fn list(names: &[String]) -> Vec<Knob> {
    names
        .iter()
        .filter(|n| is_plain(n) && !NOT_PASSES.contains(&n.as_str()))
        .map(|n| Knob::switch(n, &format!("optimizer pass {n} (on by default)")))
        .collect()
}

fn is_plain(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// The statement that puts the session under `setting`: the listed passes
/// off and every other on. An error for a change that is not a plain pass
/// name (no value: a pass is on or off).
pub fn statement(setting: &KnobSetting) -> Result<String, String> {
    let mut names = Vec::new();
    for (name, value) in setting.entries() {
        if !is_plain(name) || value.is_some() {
            return Err(format!("'{name}' is not a DuckDB optimizer pass"));
        }
        names.push(name);
    }
    Ok(if names.is_empty() {
        "RESET disabled_optimizers".to_string()
    } else {
        format!("SET disabled_optimizers = '{}'", names.join(","))
    })
}

/// What a reproducer runs in the `duckdb` shell to go from `from` to `to`.
pub fn commands(from: &KnobSetting, to: &KnobSetting) -> Vec<String> {
    if from == to {
        return Vec::new();
    }
    match statement(to) {
        Ok(s) => vec![format!("{s};")],
        Err(e) => {
            log::warn!("{e}");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_become_one_statement() {
        let names = ["filter_pushdown", "extension", "join_order"].map(String::from);
        let knobs = list(&names);
        assert_eq!(knobs.len(), 2);
        let to = KnobSetting::with(&["filter_pushdown", "join_order"]);
        assert_eq!(
            commands(&KnobSetting::default(), &to),
            ["SET disabled_optimizers = 'filter_pushdown,join_order';"]
        );
        assert_eq!(
            commands(&to, &KnobSetting::default()),
            ["RESET disabled_optimizers;"]
        );
        assert!(statement(&KnobSetting::with(&["a'; DROP"])).is_err());
        assert!(statement(&KnobSetting::with(&["join_order=1"])).is_err());
    }
}
