//! Campaign files (`lancet fuzz --config FILE`): what a long-running fuzzer
//! or a CI gate runs, kept in version control. Every key is optional;
//! options given on the command line win over the file.

use anyhow::Context;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The keys a campaign file may set (unknown keys are errors).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Campaign {
    pub dbms: Option<String>,
    /// Server URL (PostgreSQL). Prefer `LANCET_PG_URL` for a password.
    pub url: Option<String>,
    pub oracle: Option<String>,
    pub threads: Option<u32>,
    pub seed: Option<u64>,
    /// Shards of the campaign, when run as a Kubernetes Indexed Job (each
    /// pod's index is in `JOB_COMPLETION_INDEX`).
    pub shard_count: Option<u32>,
    /// The findings store: an SQLite file (relative to the campaign file)
    /// or a postgres:// URL (prefer `LANCET_STORE_URL` for a password).
    pub store: Option<String>,
    /// Seconds.
    pub timeout: Option<u64>,
    /// Checks in all.
    pub queries: Option<u64>,
    pub checks_per_database: Option<u64>,
    /// Extra expected-error rules, relative to the campaign file.
    pub expected_errors: Option<PathBuf>,
    pub out: Option<PathBuf>,
    /// `false` keeps findings unreduced.
    pub reduce: Option<bool>,
    /// Seconds per finding.
    pub reduce_time: Option<u64>,
    /// Reducer threads.
    pub reducers: Option<u32>,
    /// Seconds the reducers may go on after the run's limit.
    pub finish_reductions: Option<u64>,
    /// A JUnit XML report of the run, relative to the campaign file.
    pub junit: Option<PathBuf>,
    /// Reproducers of known open bugs, relative to the campaign file.
    pub known: Option<PathBuf>,
    /// A twin recipe for an extension (PostgreSQL, Citus): the twins
    /// oracle compares each table with a twin made by it (see
    /// `docs/gate-your-extension.md`).
    pub twin_recipe: Option<lancet_core::DeclaredRecipe>,
}

impl Campaign {
    pub fn load(path: &Path) -> anyhow::Result<Campaign> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the campaign file {}", path.display()))?;
        let mut c: Campaign = toml::from_str(&text)
            .with_context(|| format!("{} is not a valid campaign file", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        c.expected_errors = c.expected_errors.map(|p| base.join(p));
        c.junit = c.junit.map(|p| base.join(p));
        c.known = c.known.map(|p| base.join(p));
        c.store = c.store.map(|s| {
            let is_url = s.contains("://") || s.contains('=');
            let path = s.strip_prefix("sqlite:").unwrap_or(&s);
            if is_url || Path::new(path).is_absolute() {
                s.clone()
            } else {
                base.join(path).display().to_string()
            }
        });
        Ok(c)
    }
}
