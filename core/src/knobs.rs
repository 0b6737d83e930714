//! Optimizer knobs: documented switches that change how a DBMS plans a
//! query but never what it returns (SQLite's
//! `sqlite3_test_control(SQLITE_TESTCTRL_OPTIMIZATIONS, ...)` bits,
//! PostgreSQL's `enable_*` settings, MySQL's `optimizer_switch` flags).
//! The optimizer-configuration oracle runs a query under two settings.

use serde::{Deserialize, Serialize};

/// One switch a provider exposes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Knob {
    /// The provider's name for it (`query-flattener`, `enable_hashjoin`).
    pub name: String,
    pub description: String,
}

/// A configuration: which knobs are turned off; all others keep their defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KnobSetting {
    pub off: Vec<String>,
}

impl KnobSetting {
    pub fn defaults() -> KnobSetting {
        KnobSetting::default()
    }

    /// Whether this is the DBMS's default configuration.
    pub fn is_default(&self) -> bool {
        self.off.is_empty()
    }

    pub fn with_off(names: &[&str]) -> KnobSetting {
        KnobSetting {
            off: names.iter().map(|s| s.to_string()).collect(),
        }
    }
}
