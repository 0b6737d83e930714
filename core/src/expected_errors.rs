//! Errors that generated statements may legitimately raise, declared per
//! statement kind and matched on the DBMS's error code. A message is
//! matched only where the code alone is too broad (SQLite's generic
//! `SQLITE_ERROR`), and then by exact text or prefix, never by substring, so
//! that a rule cannot hide an unrelated bug. Each provider's built-in rules
//! are a TOML file in its crate (`providers/<dbms>/expected-errors.toml`);
//! users add their own with `--expected-errors FILE` (see
//! `configs/expected-errors/`).

use crate::ast::StatementKind;
use crate::connection::{DbError, FailureKind};
use anyhow::{bail, Context};
use serde::Deserialize;

/// One rule: this code (and message) is fine for these statement kinds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorRule {
    /// Statement kinds the rule applies to; empty means every kind.
    #[serde(default)]
    pub statements: Vec<StatementKind>,
    /// The DBMS's error code, exactly.
    pub code: String,
    /// The whole message, exactly.
    pub message: Option<String>,
    /// The start of the message.
    pub message_prefix: Option<String>,
    /// Why the generator may cause it: documentation for the next reader.
    pub why: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedErrors {
    #[serde(default, rename = "expected")]
    pub rules: Vec<ErrorRule>,
}

impl ExpectedErrors {
    /// Parses rules from TOML; `origin` names the file in error messages.
    pub fn from_toml(text: &str, origin: &str) -> anyhow::Result<ExpectedErrors> {
        let parsed: ExpectedErrors = toml::from_str(text)
            .with_context(|| format!("malformed expected-errors file {origin}"))?;
        for (i, rule) in parsed.rules.iter().enumerate() {
            if rule.code.trim().is_empty() {
                bail!("{origin}: rule {} has an empty code", i + 1);
            }
            if rule.message.is_some() && rule.message_prefix.is_some() {
                bail!(
                    "{origin}: rule {} has both message and message_prefix; give one",
                    i + 1
                );
            }
        }
        Ok(parsed)
    }

    /// Adds the rules of another file (a user's additions).
    pub fn extend(&mut self, other: ExpectedErrors) {
        self.rules.extend(other.rules);
    }

    /// The rule that allows this error for this kind of statement, if any.
    /// Lost connections and timeouts are never expected.
    pub fn matching_rule(&self, kind: StatementKind, error: &DbError) -> Option<&ErrorRule> {
        if error.kind != FailureKind::Statement {
            return None;
        }
        let code = error.code.as_deref()?;
        self.rules.iter().find(|r| {
            (r.statements.is_empty() || r.statements.contains(&kind))
                && r.code == code
                && r.message.as_deref().is_none_or(|m| m == error.message)
                && r.message_prefix
                    .as_deref()
                    .is_none_or(|p| error.message.starts_with(p))
        })
    }

    pub fn is_expected(&self, kind: StatementKind, error: &DbError) -> bool {
        self.matching_rule(kind, error).is_some()
    }
}
