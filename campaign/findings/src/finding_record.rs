//! A finding's record of any kind of check, read through one path: a
//! query oracle's ([`Finding`], with its reproducer) or a transaction
//! schedule's ([`TxnFinding`]). The record says which it is (a
//! transaction record names the oracle `txn` and has no query check), so
//! every command and the store read both the same way, not by trying one
//! parse after the other.

use crate::findings::Finding;
use crate::txn_finding::{TxnFinding, TxnFindingFile};
use anyhow::Context;
use lancet_engine::Catalog;
use std::path::{Path, PathBuf};

/// A finding's record, by the kind of check that made it.
#[derive(Debug)]
pub enum FindingRecord {
    /// A query oracle's finding.
    Query(Box<Finding>),
    /// A transaction schedule's finding.
    Txn(Box<TxnFinding>),
}

/// Whether a record's JSON is a transaction schedule's.
fn is_txn(value: &serde_json::Value) -> bool {
    value.get("oracle").and_then(|o| o.as_str()) == Some(lancet_oracles::txn::NAME)
        && value.get("check").is_none()
}

/// The record file of `path`: `ID.json`, or the one beside `ID.sql`.
fn record_path(path: &Path) -> PathBuf {
    if path.extension().is_some_and(|e| e == "json") {
        path.to_path_buf()
    } else {
        path.with_extension("json")
    }
}

/// Whether the record at `path` is a transaction schedule's; `None`
/// where it cannot be read as JSON (the query loader says why).
fn names_txn(path: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(record_path(path)).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some(is_txn(&value))
}

impl FindingRecord {
    /// The finding of an oracle that opens sessions of its own, as the
    /// commands replay and reduce it; an error for a query finding.
    pub fn sessions_finding(&self) -> anyhow::Result<SessionsFinding> {
        match self {
            FindingRecord::Query(_) => {
                anyhow::bail!("a query oracle's finding has no sessions of its own")
            }
            FindingRecord::Txn(f) => Ok(SessionsFinding {
                oracle: f.oracle.clone(),
                dbms: f.dbms.clone(),
                signature: f.signature.clone(),
                fault: f.fault.clone(),
                record: serde_json::to_string(f)?,
            }),
        }
    }

    /// The DBMS the finding was made on (its `--dbms` name).
    pub fn dbms(&self) -> &str {
        match self {
            FindingRecord::Query(f) => &f.dbms,
            FindingRecord::Txn(f) => &f.dbms,
        }
    }

    /// A record's text (`name` for errors).
    pub fn parse(text: &str, name: &str) -> anyhow::Result<FindingRecord> {
        let value: serde_json::Value = serde_json::from_str(text)
            .with_context(|| format!("{name} is not a valid lancet finding record"))?;
        Ok(if is_txn(&value) {
            FindingRecord::Txn(Box::new(serde_json::from_value(value).with_context(
                || format!("{name} is not a valid transaction finding record"),
            )?))
        } else {
            FindingRecord::Query(Box::new(
                serde_json::from_value(value)
                    .with_context(|| format!("{name} is not a valid lancet finding record"))?,
            ))
        })
    }

    /// The finding at `path` (`ID.json` or `ID.sql`), as commands run
    /// it: a query finding with its reproducer's statements
    /// ([`Finding::load`]), a transaction finding's record.
    /// `catalog` says which dialect a query finding's DBMS prints.
    pub fn load(path: &Path, catalog: &Catalog) -> anyhow::Result<FindingRecord> {
        if names_txn(path) == Some(true) {
            return Ok(FindingRecord::Txn(Box::new(TxnFinding::load(path)?)));
        }
        Ok(FindingRecord::Query(Box::new(Finding::load(
            path, catalog,
        )?)))
    }

    /// The record alone at `path`, without a query finding's reproducer
    /// ([`Finding::load_record`]).
    pub fn load_record(path: &Path) -> anyhow::Result<FindingRecord> {
        if names_txn(path) == Some(true) {
            return Ok(FindingRecord::Txn(Box::new(TxnFinding::load(path)?)));
        }
        Ok(FindingRecord::Query(Box::new(Finding::load_record(path)?)))
    }
}

/// A finding of an oracle that opens sessions of its own, as the
/// commands handle it without knowing its record's type: which oracle
/// replays it, and its record as that oracle reads it.
#[derive(Clone, Debug)]
pub struct SessionsFinding {
    pub oracle: String,
    pub dbms: String,
    pub signature: String,
    /// The planted fault it was found under, if any.
    pub fault: Option<String>,
    /// Its record, JSON text (see `lancet_core::PreparedSessions::replay`).
    pub record: String,
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
    /// the `n`-th such finding of `dir`, under the id its record gives.
    pub fn write_sessions(record: &str, dir: &Path, n: u64) -> anyhow::Result<WrittenRecord> {
        let FindingRecord::Txn(f) = FindingRecord::parse(record, "the oracle's record")? else {
            anyhow::bail!("a sessions oracle handed over a query finding's record");
        };
        let id = TxnFinding::file_id(n, &f.signature);
        FindingRecord::write_txn(&f, dir, &id)
    }

    /// [`FindingRecord::write_sessions`] under `id` (a reduced finding,
    /// beside its original).
    pub fn write_sessions_as(record: &str, dir: &Path, id: &str) -> anyhow::Result<WrittenRecord> {
        let FindingRecord::Txn(f) = FindingRecord::parse(record, "the oracle's record")? else {
            anyhow::bail!("a sessions oracle handed over a query finding's record");
        };
        FindingRecord::write_txn(&f, dir, id)
    }

    fn write_txn(f: &TxnFinding, dir: &Path, id: &str) -> anyhow::Result<WrittenRecord> {
        let sql = f.write(dir, id)?;
        Ok(WrittenRecord {
            id: id.to_string(),
            indexed: f.indexed(&sql),
            headline: format!("{} broke: {}", f.oracle, f.signature),
            sql,
        })
    }
}
