//! Optimizer knobs: documented switches and settings that change how a
//! DBMS plans a query but never what it returns (SQLite's
//! `sqlite3_test_control(SQLITE_TESTCTRL_OPTIMIZATIONS, ...)` bits,
//! PostgreSQL's `enable_*` switches and cost or collapse limits, Citus's
//! executor choices, MySQL's `optimizer_switch` flags). The knob oracles
//! run a query under several configurations.

use serde::{Deserialize, Serialize};

/// One knob a provider exposes: a switch (on by default; the change is to
/// turn it off) or a setting with values other than its default.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knob {
    /// The provider's name for it (`query-flattener`, `enable_hashjoin`,
    /// `join_collapse_limit`).
    pub name: String,
    pub description: String,
    /// The values other than the default that a configuration may give
    /// it; empty for a switch.
    #[serde(default)]
    pub values: Vec<String>,
}

impl Knob {
    /// A switch, on by default.
    pub fn switch(name: &str, description: &str) -> Knob {
        Knob {
            name: name.to_string(),
            description: description.to_string(),
            values: Vec::new(),
        }
    }

    /// A setting that a configuration may give any of `values`.
    pub fn valued(name: &str, description: &str, values: &[&str]) -> Knob {
        Knob {
            name: name.to_string(),
            description: description.to_string(),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    /// The changes a configuration may make to this knob, as
    /// [`KnobSetting::changes`] writes them.
    pub fn changes(&self) -> Vec<String> {
        if self.values.is_empty() {
            vec![self.name.clone()]
        } else {
            self.values
                .iter()
                .map(|v| format!("{}={v}", self.name))
                .collect()
        }
    }
}

/// A configuration: the knobs it changes; all others keep their defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnobSetting {
    /// One entry per changed knob: `name` for a switch turned off,
    /// `name=value` for a setting given `value`. (Findings written before
    /// knobs had values call the field `off`.)
    #[serde(alias = "off")]
    pub changes: Vec<String>,
}

impl KnobSetting {
    pub fn defaults() -> KnobSetting {
        KnobSetting::default()
    }

    /// Whether this is the DBMS's default configuration.
    pub fn is_default(&self) -> bool {
        self.changes.is_empty()
    }

    /// A configuration of `changes` (see [`KnobSetting::changes`]).
    pub fn with(changes: &[&str]) -> KnobSetting {
        KnobSetting {
            changes: changes.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// Each change as a knob's name and, for a setting, its value (`None`
    /// for a switch turned off).
    pub fn entries(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.changes.iter().map(|c| split_change(c))
    }

    /// The configuration as people read it: `enable_hashjoin off,
    /// join_collapse_limit = 1`; `the defaults` for none.
    pub fn describe(&self) -> String {
        if self.is_default() {
            return "the defaults".to_string();
        }
        describe_changes(&self.changes)
    }
}

/// Changes as people read them: `enable_hashjoin off, join_collapse_limit = 1`.
pub fn describe_changes(changes: &[String]) -> String {
    changes
        .iter()
        .map(|c| match split_change(c) {
            (name, None) => format!("{name} off"),
            (name, Some(v)) => format!("{name} = {v}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A change's knob name and value (see [`KnobSetting::changes`]).
pub fn split_change(change: &str) -> (&str, Option<&str>) {
    match change.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (change, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_and_settings_read_alike() {
        let k = Knob::valued("join_collapse_limit", "join order", &["1", "2"]);
        assert_eq!(
            k.changes(),
            ["join_collapse_limit=1", "join_collapse_limit=2"]
        );
        assert_eq!(Knob::switch("hash-join", "").changes(), ["hash-join"]);
        let s = KnobSetting::with(&["hash-join", "join_collapse_limit=1"]);
        assert_eq!(s.describe(), "hash-join off, join_collapse_limit = 1");
        assert_eq!(KnobSetting::defaults().describe(), "the defaults");
        let old: KnobSetting = serde_json::from_str(r#"{"off":["a"]}"#).unwrap();
        assert_eq!(old, KnobSetting::with(&["a"]));
    }
}
