//! A finding of an oracle that opens sessions of its own (the
//! transaction oracle's schedules), as lancet's findings keep it: its
//! record, the oracle's own serde type as JSON text, with the facts that
//! oracle reads from it ([`lancet_core::SessionsFacts`]: signature, kind,
//! relation, size, bug). Written as the oracle lays it out
//! ([`lancet_core::FindingFiles`]): `ID.json`, `ID.sql` (the reproducer
//! the index, store and report show) and the directory `ID/`. Nothing
//! here knows a particular oracle's record: a new sessions oracle's
//! findings are written, indexed, stored and replayed through this.

use crate::bug::BugCore;
use crate::dedup::Indexed;
use crate::findings::FindingKind;
use crate::reproducer::write_synced;
use anyhow::Context;
use lancet_core::{AnyOracle, SessionsFacts, SessionsOracle};
use std::path::{Path, PathBuf};

/// A sessions oracle's finding: its record and the facts read from it.
#[derive(Clone, Debug)]
pub struct SessionsRecord {
    /// The record as JSON text (what the oracle reads back to replay it).
    pub text: String,
    pub facts: SessionsFacts,
}

/// The sessions oracle named `name`, if lancet has one.
fn oracle(name: &str) -> Option<Box<dyn SessionsOracle>> {
    match lancet_oracles::any_by_name(name)? {
        AnyOracle::Sessions(o) => Some(o),
        AnyOracle::Queries(_) => None,
    }
}

/// Whether a record's JSON is a sessions oracle's: it names one, and has
/// no query check (a query finding's record always has one).
pub fn is_sessions(value: &serde_json::Value) -> bool {
    value.get("check").is_none()
        && value
            .get("oracle")
            .and_then(|o| o.as_str())
            .is_some_and(|o| oracle(o).is_some())
}

impl SessionsRecord {
    /// A record's text; its oracle reads the facts.
    pub fn from_text(text: String) -> anyhow::Result<SessionsRecord> {
        let value: serde_json::Value = serde_json::from_str(&text)?;
        let name = value
            .get("oracle")
            .and_then(|o| o.as_str())
            .context("the record names no oracle")?;
        let o = oracle(name).with_context(|| {
            format!("the record names {name}, not an oracle with sessions of its own")
        })?;
        let facts = o.facts(&text)?;
        Ok(SessionsRecord { text, facts })
    }

    /// Reads a finding's record: `ID.json`, or the one beside `ID.sql`.
    pub fn load(path: &Path) -> anyhow::Result<SessionsRecord> {
        let record = if path.extension().is_some_and(|e| e == "sql") {
            path.with_extension("json")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&record)
            .with_context(|| format!("cannot read {}", record.display()))?;
        SessionsRecord::from_text(text)
            .with_context(|| format!("{} is not a valid finding record", record.display()))
    }

    /// The oracle that made it.
    fn oracle(&self) -> anyhow::Result<Box<dyn SessionsOracle>> {
        oracle(&self.facts.oracle)
            .with_context(|| format!("lancet has no oracle {}", self.facts.oracle))
    }

    /// The file id of a run's `n`-th finding of its oracle.
    pub fn file_id(&self, n: u64) -> anyhow::Result<String> {
        Ok(self.oracle()?.file_id(n, &self.facts.signature))
    }

    /// Writes the finding as its oracle lays it out, each file synced
    /// through a temporary name as every finding is: `ID.json` (the
    /// record, first: on disk before anything else), `ID.sql` and the
    /// directory `ID/`, all in `findings_dir`. Returns the `.sql` path,
    /// which names the finding.
    pub fn write(&self, findings_dir: &Path, id: &str) -> anyhow::Result<PathBuf> {
        let files = self.oracle()?.files(&self.text, id)?;
        write_synced(
            &findings_dir.join(format!("{id}.json")),
            files.record.as_bytes(),
        )?;
        let sql = findings_dir.join(format!("{id}.sql"));
        write_synced(&sql, files.script.as_bytes())?;
        let dir = findings_dir.join(id);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        for (name, text) in &files.directory {
            write_synced(&dir.join(name), text.as_bytes())?;
        }
        Ok(sql)
    }

    /// Its kind, as the findings name them.
    pub fn kind(&self) -> FindingKind {
        FindingKind::from_name(self.facts.kind).unwrap_or(FindingKind::Logic)
    }

    /// What the findings index keeps of this finding, written at `sql`.
    pub fn indexed(&self, sql: &Path) -> Indexed {
        let f = &self.facts;
        Indexed {
            signature: f.signature.clone(),
            kind: self.kind(),
            oracle: Some(f.oracle.clone()),
            relation: Some(f.relation.clone()),
            size: (
                f.size,
                std::fs::metadata(sql).map_or(0, |m| m.len() as usize),
            ),
            core: BugCore {
                key: f.bug_key.clone(),
                constructs: Vec::new(),
                text: f.bug_text.clone(),
            },
            hidden_by_knobs: Vec::new(),
            flipped_by_knobs: Vec::new(),
        }
    }
}
