//! MySQL's and MariaDB's optimizer knobs: the flags of `optimizer_switch`
//! as the server lists them (each a change of plan, never of result; a flag
//! on by default is turned off, one off by default is turned on), and a
//! few system variables with values that steer join planning.

use crate::ServerKind;
use lancet_core::{Knob, KnobSetting};

/// The `optimizer_switch` flags every session sets apart from the
/// defaults, to steer clear of a known crash: MariaDB 10.11 crashes on
/// `SELECT c0 FROM t0 GROUP BY c0 HAVING NOT (c0 OR c0 = -1)` in its
/// pushdown of HAVING conditions (README, *Bugs lancet has found*), which
/// every HAVING check would meet.
pub fn baseline(kind: ServerKind) -> Option<&'static str> {
    match kind {
        ServerKind::MariaDb => Some("condition_pushdown_from_having=off"),
        ServerKind::MySql => None,
    }
}

/// System variables (not `optimizer_switch` flags) a configuration may
/// set, with the values it may give them, where the server has them.
pub const VARIABLES: &[(&str, &str, &[&str])] = &[
    (
        "join_cache_level",
        "which join buffer algorithms MariaDB may use (0: none, 8: all)",
        &["0", "4", "8"],
    ),
    (
        "optimizer_search_depth",
        "how deep the join order search goes (1: greedy)",
        &["1"],
    ),
    (
        "optimizer_use_condition_selectivity",
        "which statistics estimate condition selectivity",
        &["1", "5"],
    ),
];

/// The knobs of a server whose `@@optimizer_switch` is `switch` and which
/// has the variables `variables` (names from [`VARIABLES`]).
pub fn list(switch: &str, variables: &[&str]) -> Vec<Knob> {
    let mut knobs: Vec<Knob> = switch
        .split(',')
        .filter_map(|flag| flag.split_once('='))
        .filter(|(name, _)| is_plain(name))
        .filter_map(|(name, default)| match default {
            "on" => Some(Knob::switch(
                name,
                &format!("optimizer_switch flag {name} (on by default)"),
            )),
            "off" => Some(Knob::valued(
                name,
                &format!("optimizer_switch flag {name} (off by default)"),
                &["on"],
            )),
            _ => None,
        })
        .collect();
    knobs.extend(
        VARIABLES
            .iter()
            .filter(|(name, _, _)| variables.contains(name))
            .map(|(name, what, values)| Knob::valued(name, what, values)),
    );
    knobs
}

fn is_plain(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn is_variable(name: &str) -> bool {
    VARIABLES.iter().any(|(n, _, _)| *n == name)
}

/// The statements that change the configuration from `from` to `to`: every
/// knob of `from` back to its default, then those of `to` (a reproducer
/// runs the same lines in the `mariadb`/`mysql` client). An error for a
/// change that is not a plain name and value.
pub fn commands(
    from: &KnobSetting,
    to: &KnobSetting,
    kind: ServerKind,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    if !from.is_default() {
        out.push("SET SESSION optimizer_switch = DEFAULT;".to_string());
        if let Some(b) = baseline(kind) {
            out.push(format!("SET SESSION optimizer_switch = '{b}';"));
        }
        for (name, _) in from.entries().filter(|(n, _)| is_variable(n)) {
            out.push(format!("SET SESSION {name} = DEFAULT;"));
        }
    }
    let mut flags = Vec::new();
    for (name, value) in to.entries() {
        let value = value.unwrap_or("off");
        if !is_plain(name) || !is_plain(value) {
            return Err(format!(
                "'{name}={value}' is not an optimizer_switch flag or variable"
            ));
        }
        if is_variable(name) {
            out.push(format!("SET SESSION {name} = {value};"));
        } else {
            flags.push(format!("{name}={value}"));
        }
    }
    if !flags.is_empty() {
        out.push(format!(
            "SET SESSION optimizer_switch = '{}';",
            flags.join(",")
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_variables_become_set_statements() {
        let knobs = list(
            "index_merge=on,derived_merge=on,rowid_filter=off,bad flag=on",
            &["join_cache_level"],
        );
        let names: Vec<&str> = knobs.iter().map(|k| k.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "index_merge",
                "derived_merge",
                "rowid_filter",
                "join_cache_level"
            ]
        );
        let to = KnobSetting::with(&["derived_merge", "rowid_filter=on", "join_cache_level=0"]);
        assert_eq!(
            commands(&KnobSetting::default(), &to, ServerKind::MySql).unwrap(),
            [
                "SET SESSION join_cache_level = 0;",
                "SET SESSION optimizer_switch = 'derived_merge=off,rowid_filter=on';"
            ]
        );
        assert_eq!(
            commands(&to, &KnobSetting::default(), ServerKind::MySql).unwrap(),
            [
                "SET SESSION optimizer_switch = DEFAULT;",
                "SET SESSION join_cache_level = DEFAULT;"
            ]
        );
        assert!(commands(
            &KnobSetting::default(),
            &KnobSetting::with(&["a'; DROP"]),
            ServerKind::MySql
        )
        .is_err());
    }
}
