//! A finding's record of any kind of check, read through one path: a
//! query oracle's ([`Finding`], with its reproducer) or that of an oracle
//! that opens sessions of its own ([`SessionsRecord`]: a transaction
//! schedule's). The record says which it is (a sessions record names a
//! sessions oracle and has no query check), so every command and the
//! store read both the same way, not by trying one parse after the other.

use crate::findings::Finding;
use crate::sessions_record::{is_sessions, SessionsRecord};
use anyhow::Context;
use lancet_engine::Catalog;
use std::path::{Path, PathBuf};

/// A finding's record, by the kind of check that made it.
#[derive(Debug)]
pub enum FindingRecord {
    /// A query oracle's finding.
    Query(Box<Finding>),
    /// A finding of an oracle with sessions of its own.
    Sessions(Box<SessionsRecord>),
}

/// The record file of `path`: `ID.json`, or the one beside `ID.sql`.
fn record_path(path: &Path) -> PathBuf {
    if path.extension().is_some_and(|e| e == "json") {
        path.to_path_buf()
    } else {
        path.with_extension("json")
    }
}

/// Whether the record at `path` is a sessions oracle's; `None` where it
/// cannot be read as JSON (the query loader says why).
fn names_sessions(path: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(record_path(path)).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(is_sessions(&value))
}

impl FindingRecord {
    /// The finding of an oracle that opens sessions of its own, as the
    /// commands replay and reduce it; an error for a query finding.
    pub fn sessions(&self) -> anyhow::Result<&SessionsRecord> {
        match self {
            FindingRecord::Query(_) => {
                anyhow::bail!("a query oracle's finding has no sessions of its own")
            }
            FindingRecord::Sessions(r) => Ok(r),
        }
    }

    /// The DBMS the finding was made on (its `--dbms` name).
    pub fn dbms(&self) -> &str {
        match self {
            FindingRecord::Query(f) => &f.dbms,
            FindingRecord::Sessions(r) => &r.facts.dbms,
        }
    }

    /// A record's text (`name` for errors).
    pub fn parse(text: &str, name: &str) -> anyhow::Result<FindingRecord> {
        let value: serde_json::Value = serde_json::from_str(text)
            .with_context(|| format!("{name} is not a valid lancet finding record"))?;
        Ok(if is_sessions(&value) {
            FindingRecord::Sessions(Box::new(
                SessionsRecord::from_text(text.to_string())
                    .with_context(|| format!("{name} is not a valid finding record"))?,
            ))
        } else {
            FindingRecord::Query(Box::new(
                serde_json::from_value(value)
                    .with_context(|| format!("{name} is not a valid lancet finding record"))?,
            ))
        })
    }

    /// The finding at `path` (`ID.json` or `ID.sql`), as commands run
    /// it: a query finding with its reproducer's statements
    /// ([`Finding::load`]), a sessions oracle's record.
    /// `catalog` says which dialect a query finding's DBMS prints.
    pub fn load(path: &Path, catalog: &Catalog) -> anyhow::Result<FindingRecord> {
        if names_sessions(path) == Some(true) {
            return Ok(FindingRecord::Sessions(Box::new(SessionsRecord::load(
                path,
            )?)));
        }
        Ok(FindingRecord::Query(Box::new(Finding::load(
            path, catalog,
        )?)))
    }

    /// The record alone at `path`, without a query finding's reproducer
    /// ([`Finding::load_record`]).
    pub fn load_record(path: &Path) -> anyhow::Result<FindingRecord> {
        if names_sessions(path) == Some(true) {
            return Ok(FindingRecord::Sessions(Box::new(SessionsRecord::load(
                path,
            )?)));
        }
        Ok(FindingRecord::Query(Box::new(Finding::load_record(path)?)))
    }
}

/// A sessions oracle's finding as written to the findings directory.
pub struct WrittenRecord {
    /// Its file id (`txn-0003-lost-update-read-committed`).
    pub id: String,
    /// Its `.sql`, which names it.
    pub sql: PathBuf,
    /// What the findings index keeps of it.
    pub indexed: crate::dedup::Indexed,
    /// One line for the run's output.
    pub headline: String,
}

impl FindingRecord {
    /// Writes the record a sessions oracle handed over (JSON text) as
    /// the `n`-th such finding of `dir`, under the id its oracle gives.
    pub fn write_sessions(record: &str, dir: &Path, n: u64) -> anyhow::Result<WrittenRecord> {
        let r = SessionsRecord::from_text(record.to_string())?;
        let id = r.file_id(n)?;
        write_sessions_record(&r, dir, &id)
    }

    /// [`FindingRecord::write_sessions`] under `id` (a reduced finding,
    /// beside its original).
    pub fn write_sessions_as(record: &str, dir: &Path, id: &str) -> anyhow::Result<WrittenRecord> {
        write_sessions_record(&SessionsRecord::from_text(record.to_string())?, dir, id)
    }
}

fn write_sessions_record(
    r: &SessionsRecord,
    dir: &Path,
    id: &str,
) -> anyhow::Result<WrittenRecord> {
    let sql = r.write(dir, id)?;
    Ok(WrittenRecord {
        id: id.to_string(),
        indexed: r.indexed(&sql),
        headline: format!("{} broke: {}", r.facts.oracle, r.facts.signature),
        sql,
    })
}
