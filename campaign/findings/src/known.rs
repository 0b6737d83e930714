//! Known open bugs of a CI gate (`lancet fuzz --known DIR`): reproducers
//! lancet wrote earlier (a run's `findings/`, or a copy kept with the
//! code), replayed at start-up on the target through the run's own
//! databases (so through the run's planted fault, if any).
//!
//! One that still fails makes its signatures known: a finding of this run
//! with such a signature is written as usual but does not fail the gate,
//! since the bug is already reported. One that now passes is reported
//! fixed, so that its reproducer can become a regression test. Bugs are
//! matched by signature (`dedup`), the identity the findings index uses.
//!
//! A known bug may be a query oracle's reproducer or a transaction
//! schedule's record ([`FindingRecord`]); a schedule is run again on a
//! fresh database with the run's planted transaction fault, if any, by
//! the oracle that made it ([`crate::sessions_replay`]).
//! What the replay found goes into the run's summary through
//! [`KnownBugsOfRun`], which the summary implements.

use crate::finding_record::FindingRecord;
use crate::findings::FindingKind;
use crate::replay::Replayed;
use crate::sessions_record::SessionsRecord;
use anyhow::{bail, Context};
use lancet_core::Dialect;
use lancet_databases::databases::Databases;
use lancet_engine::Catalog;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One known bug: a reproducer and, when the directory has it, its
/// reduced version (`X.sql` and `X.reduced.sql` are one bug).
pub struct KnownBug {
    /// The file replayed: the reduced one if there is one (smaller, and
    /// its signature is the one a run's reduced finding gets).
    pub reproducer: PathBuf,
    /// The signatures of its files, the replayed one's first: a finding
    /// with any of them is this bug (unreduced findings of a run with the
    /// same seed keep the unreduced signature).
    pub signatures: Vec<String>,
    pub kind: FindingKind,
    pub oracle: Option<String>,
    finding: FindingRecord,
}

/// The files in a known-bugs directory that make up one bug.
#[derive(Default)]
struct Files {
    plain: Option<PathBuf>,
    reduced: Option<PathBuf>,
}

/// Reads the known bugs in `dir`: every reproducer (`.sql` with its
/// `.json` record) at its top level, the run's index and `pending/` aside.
/// A file that is not a reproducer of `dbms` whose record fits its oracle
/// is an error naming it: a gate must not silently ignore a known bug.
pub fn load(
    dir: &Path,
    dbms: &str,
    dialect: Dialect,
    catalog: &Catalog,
) -> anyhow::Result<Vec<KnownBug>> {
    if !dir.is_dir() {
        bail!(
            "the known-bugs directory {} does not exist (or is not a directory)",
            dir.display()
        );
    }
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the known-bugs directory {}", dir.display()))?;
    let mut groups: BTreeMap<String, Files> = BTreeMap::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot read the known-bugs directory {}", dir.display()))?
            .path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Some(stem) = name
            .strip_suffix(".sql")
            .or_else(|| name.strip_suffix(".json"))
        else {
            continue;
        };
        if name.starts_with("index.") || !path.is_file() {
            continue;
        }
        let (base, reduced) = match stem.strip_suffix(".reduced") {
            Some(base) => (base, true),
            None => (stem, false),
        };
        let files = groups.entry(base.to_string()).or_default();
        let slot = if reduced {
            &mut files.reduced
        } else {
            &mut files.plain
        };
        // The `.sql` when there is one: it is read as the user may have edited it.
        if slot.is_none() || name.ends_with(".sql") {
            *slot = Some(path);
        }
    }
    groups
        .into_values()
        .map(|files| {
            let mut loaded = Vec::new();
            for path in files.reduced.iter().chain(&files.plain) {
                loaded.push((path.clone(), load_one(path, dbms, dialect, catalog)?));
            }
            let signatures = loaded
                .iter()
                .map(|(_, f)| signature_of(f, dialect, catalog))
                .collect();
            let (reproducer, finding) = loaded.swap_remove(0);
            let (kind, oracle) = match &finding {
                FindingRecord::Query(f) => (f.kind, f.oracle.clone()),
                FindingRecord::Sessions(r) => (r.kind(), Some(r.facts.oracle.clone())),
            };
            Ok(KnownBug {
                reproducer,
                signatures,
                kind,
                oracle,
                finding,
            })
        })
        .collect()
}

/// The signature a finding of this run has when it is the bug of `record`.
fn signature_of(record: &FindingRecord, dialect: Dialect, catalog: &Catalog) -> String {
    match record {
        FindingRecord::Query(f) => f
            .signature
            .clone()
            .unwrap_or_else(|| crate::signature::signature(f, dialect, catalog)),
        FindingRecord::Sessions(r) => r.facts.signature.clone(),
    }
}

/// Reads one known reproducer and checks that this run can replay it (a
/// schedule's levels are checked when it runs).
fn load_one(
    path: &Path,
    dbms: &str,
    dialect: Dialect,
    catalog: &Catalog,
) -> anyhow::Result<FindingRecord> {
    let context = || format!("known bug {} cannot be used", path.display());
    let record = FindingRecord::load(path, catalog).with_context(context)?;
    let of = record.dbms();
    if of != dbms {
        bail!(
            "known bug {} is a reproducer for {of}; this run tests {dbms}",
            path.display()
        );
    }
    if let FindingRecord::Query(f) = &record {
        crate::replay::check_case(f, dialect).with_context(context)?;
    }
    Ok(record)
}

/// Runs a known schedule again on a fresh database, with `fault` (the
/// run's planted fault of the oracle that made it) in place of the one it
/// recorded: still failing while it shows its signature (the oracle gives
/// a timing-dependent case a second try, as in the campaign).
fn replay_sessions(
    finding: &SessionsRecord,
    databases: &Databases,
    fault: Option<&str>,
) -> anyhow::Result<Replayed> {
    let shown =
        crate::sessions_replay::replay(databases, &finding.facts.oracle, &finding.text, fault)?;
    Ok(if shown.same {
        Replayed::StillFails {
            why: shown.said,
            same: true,
        }
    } else {
        Replayed::Passes(shown.said)
    })
}

/// The known bugs after their replay at start-up.
#[derive(Default)]
pub struct KnownBugs {
    bugs: Vec<(KnownBug, Replayed)>,
}

impl KnownBugs {
    /// Replays each known bug on a fresh database of `databases` (a
    /// schedule with `txn_fault`, the run's planted
    /// transaction fault). A reproducer that cannot be replayed (a setup
    /// statement fails now) is an error naming it: whether the bug is open
    /// cannot be told.
    pub fn replay(
        bugs: Vec<KnownBug>,
        databases: &Databases,
        txn_fault: Option<&str>,
    ) -> anyhow::Result<KnownBugs> {
        let mut replayed = Vec::new();
        for bug in bugs {
            let outcome = match &bug.finding {
                FindingRecord::Query(f) => crate::replay::replay(f, databases),
                FindingRecord::Sessions(r) => replay_sessions(r, databases, txn_fault),
            }
            .with_context(|| {
                format!("known bug {} cannot be replayed", bug.reproducer.display())
            })?;
            replayed.push((bug, outcome));
        }
        Ok(KnownBugs { bugs: replayed })
    }

    /// How many are still open, and how many are fixed.
    pub fn counts(&self) -> (usize, usize) {
        let open = self
            .bugs
            .iter()
            .filter(|(_, r)| matches!(r, Replayed::StillFails { .. }))
            .count();
        (open, self.bugs.len() - open)
    }

    /// Whether `signature` is that of a known bug that is still open.
    pub fn is_open(&self, signature: &str) -> bool {
        self.bugs.iter().any(|(bug, r)| {
            matches!(r, Replayed::StillFails { .. })
                && bug.signatures.iter().any(|s| s == signature)
        })
    }

    /// Marks the run's findings of known open bugs in `summary` (they do
    /// not fail the run) and lists the known bugs, open and fixed.
    pub fn apply(&self, summary: &mut impl KnownBugsOfRun) {
        summary.mark_known(&|signature| self.is_open(signature));
        let lines = self
            .bugs
            .iter()
            .map(|(bug, replayed)| {
                let (fixed, why) = match replayed {
                    Replayed::StillFails { why, .. } => (false, why.clone()),
                    Replayed::Passes(why) => (true, why.clone()),
                };
                KnownBugLine {
                    signature: bug.signatures[0].clone(),
                    kind: bug.kind.name().to_string(),
                    oracle: bug.oracle.clone(),
                    reproducer: bug.reproducer.display().to_string(),
                    fixed,
                    replay: why,
                    findings: if fixed {
                        0
                    } else {
                        summary.findings_of(&bug.signatures)
                    },
                }
            })
            .collect();
        summary.list_known_bugs(lines);
    }
}

/// A run's summary as known bugs mark it: which of its bugs are known and
/// open, and the list of known bugs (the campaign's summary implements it).
pub trait KnownBugsOfRun {
    /// Marks each of the run's bugs whose signature `is_open` takes as a
    /// known open bug, and counts their findings as known.
    fn mark_known(&mut self, is_open: &dyn Fn(&str) -> bool);
    /// The run's findings under any of `signatures`.
    fn findings_of(&self, signatures: &[String]) -> u64;
    /// Lists the known bugs, open and fixed, as replayed at start-up.
    fn list_known_bugs(&mut self, bugs: Vec<KnownBugLine>);
}

/// A known open bug (`--known`), as the summary lists it.
#[derive(Clone, Debug, Serialize)]
pub struct KnownBugLine {
    pub signature: String,
    pub kind: String,
    pub oracle: Option<String>,
    /// The known reproducer that was replayed.
    pub reproducer: String,
    /// It no longer reproduces.
    pub fixed: bool,
    /// What replaying it at start-up showed.
    pub replay: String,
    /// Findings of it in this run.
    pub findings: u64,
}
