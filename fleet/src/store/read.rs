//! Reading a store: its runs, their samples, and the signatures and bugs across
//! all of them (what `lancet findings --store` lists and `lancet report`
//! shows).

use super::Store;
use crate::run_files::Sample;
use std::collections::{BTreeMap, BTreeSet};

/// A run as the store has it.
#[derive(Clone, Debug)]
pub struct RunInfo {
    pub run_id: String,
    pub dbms: String,
    pub dbms_version: String,
    pub seed: u64,
    pub shard_index: u32,
    pub shard_count: u32,
    pub threads: u32,
    pub oracles: Vec<String>,
    pub host: String,
    pub started_unix: u64,
    /// The run's summary.json, once it ended.
    pub summary: Option<serde_json::Value>,
}

impl RunInfo {
    /// `shard 2/4`, or the run id for a run that was not a shard.
    pub fn label(&self) -> String {
        if self.shard_count > 1 {
            format!(
                "shard {}/{} ({})",
                self.shard_index, self.shard_count, self.host
            )
        } else {
            self.run_id.clone()
        }
    }
}

/// One finding of a bug: where its reproducer is.
#[derive(Clone, Debug)]
pub struct FindingRef {
    pub run_id: String,
    pub file: String,
    pub statements: u64,
    pub bytes: u64,
    pub reduced: bool,
    pub found_unix: u64,
}

impl FindingRef {
    /// The reproducer's file in its run's findings/: the reduced one where
    /// there is one (the store holds that text).
    pub fn reproducer_file(&self) -> String {
        if self.reduced {
            self.file.replace(".sql", ".reduced.sql")
        } else {
            self.file.clone()
        }
    }
}

/// One signature across every run in the store (a bug groups several).
#[derive(Clone, Debug)]
pub struct BugSummary {
    pub signature: String,
    pub kind: String,
    pub oracle: Option<String>,
    pub relation: Option<String>,
    /// Findings with this signature, those past the flood limit included.
    pub count: u64,
    /// Runs that found it.
    pub runs: usize,
    /// When its first and last findings on disk were written (seconds
    /// since 1970).
    pub first_seen: u64,
    pub last_seen: u64,
    /// The smallest reproducer (fewest statements, then bytes).
    pub smallest: Option<FindingRef>,
    /// Root-cause groups (see [`crate::dedup::Entry::group_labels`]).
    pub groups: Vec<String>,
    /// The bug this signature is an instance of (the signature itself in
    /// a store written before bugs were grouped), and the query or error
    /// that shows it.
    pub bug: String,
    pub core: String,
}

/// One bug across every run: the signatures that are instances of it.
#[derive(Clone, Debug)]
pub struct Bug<'a> {
    pub bug: &'a str,
    /// The query or error that shows it: its smallest signature's.
    pub core: &'a str,
    /// Most frequent first.
    pub signatures: Vec<&'a BugSummary>,
    pub count: u64,
    /// The smallest reproducer among its signatures'.
    pub smallest: Option<&'a FindingRef>,
}

/// Signatures grouped into bugs, the bug with most findings first.
pub fn group_into_bugs(sigs: &[BugSummary]) -> Vec<Bug<'_>> {
    let mut bugs: Vec<Bug<'_>> = Vec::new();
    for s in sigs {
        let at = match bugs.iter().position(|b| b.bug == s.bug) {
            Some(at) => at,
            None => {
                bugs.push(Bug {
                    bug: &s.bug,
                    core: &s.core,
                    signatures: Vec::new(),
                    count: 0,
                    smallest: None,
                });
                bugs.len() - 1
            }
        };
        let b = &mut bugs[at];
        b.signatures.push(s);
        b.count += s.count;
        if let Some(f) = &s.smallest {
            if b.smallest
                .is_none_or(|m| (f.statements, f.bytes) < (m.statements, m.bytes))
            {
                b.smallest = Some(f);
                if !s.core.is_empty() {
                    b.core = &s.core;
                }
            }
        }
    }
    bugs.sort_by(|a, b| b.count.cmp(&a.count).then(a.bug.cmp(b.bug)));
    bugs
}

impl Store {
    pub fn runs(&mut self) -> anyhow::Result<Vec<RunInfo>> {
        let rows = self.db().query(
            "SELECT run_id, dbms, dbms_version, seed, shard_index, shard_count, threads, oracles,
                    host, started_unix, summary
             FROM lancet_runs ORDER BY started_unix, run_id",
            &[],
        )?;
        Ok(rows
            .into_iter()
            .map(|r| RunInfo {
                run_id: r[0].text().unwrap_or_default().to_string(),
                dbms: r[1].text().unwrap_or_default().to_string(),
                dbms_version: r[2].text().unwrap_or_default().to_string(),
                seed: r[3].int() as u64,
                shard_index: r[4].int() as u32,
                shard_count: r[5].int() as u32,
                threads: r[6].int() as u32,
                oracles: r[7]
                    .text()
                    .unwrap_or_default()
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
                host: r[8].text().unwrap_or_default().to_string(),
                started_unix: r[9].int() as u64,
                summary: r[10].text().and_then(|t| serde_json::from_str(t).ok()),
            })
            .collect())
    }

    /// Every sample, by run, in order.
    pub fn samples(&mut self) -> anyhow::Result<BTreeMap<String, Vec<Sample>>> {
        let rows = self.db().query(
            "SELECT run_id, seq, elapsed, unix, checks, skipped, nonempty, statements, databases,
                    findings, plans, per_oracle
             FROM lancet_samples ORDER BY run_id, seq",
            &[],
        )?;
        let mut out: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
        for r in rows {
            out.entry(r[0].text().unwrap_or_default().to_string())
                .or_default()
                .push(Sample {
                    seq: r[1].int() as u64,
                    elapsed: r[2].float(),
                    unix: r[3].int() as u64,
                    checks: r[4].int() as u64,
                    skipped: r[5].int() as u64,
                    nonempty: r[6].int() as u64,
                    statements: r[7].int() as u64,
                    databases: r[8].int() as u64,
                    findings: r[9].int() as u64,
                    plans: r[10].int() as u64,
                    per_oracle: serde_json::from_str(r[11].text().unwrap_or("{}"))
                        .unwrap_or_default(),
                });
        }
        Ok(out)
    }

    /// The unique bugs, most frequent first.
    pub fn bugs(&mut self) -> anyhow::Result<Vec<BugSummary>> {
        let mut bugs: BTreeMap<String, BugSummary> = BTreeMap::new();
        for r in self.db().query(
            "SELECT s.signature, s.kind, s.oracle, s.relation, b.count, b.run_id
             FROM lancet_signatures s JOIN lancet_run_bugs b ON b.signature = s.signature",
            &[],
        )? {
            let sig = r[0].text().unwrap_or_default().to_string();
            let bug = bugs.entry(sig.clone()).or_insert_with(|| BugSummary {
                signature: sig,
                kind: r[1].text().unwrap_or_default().to_string(),
                oracle: r[2].text().map(str::to_string),
                relation: r[3].text().map(str::to_string),
                count: 0,
                runs: 0,
                first_seen: u64::MAX,
                last_seen: 0,
                smallest: None,
                groups: Vec::new(),
                bug: String::new(),
                core: String::new(),
            });
            bug.count += r[4].int() as u64;
            bug.runs += 1;
        }
        for r in self.db().query(
            "SELECT signature, run_id, file, statements, bytes, reduced, found_unix
             FROM lancet_findings",
            &[],
        )? {
            let Some(bug) = r[0].text().and_then(|s| bugs.get_mut(s)) else {
                continue;
            };
            let f = FindingRef {
                run_id: r[1].text().unwrap_or_default().to_string(),
                file: r[2].text().unwrap_or_default().to_string(),
                statements: r[3].int() as u64,
                bytes: r[4].int() as u64,
                reduced: r[5].int() != 0,
                found_unix: r[6].int() as u64,
            };
            bug.first_seen = bug.first_seen.min(f.found_unix);
            bug.last_seen = bug.last_seen.max(f.found_unix);
            let smaller = bug.smallest.as_ref().is_none_or(|s| {
                (f.statements, f.bytes, &f.run_id, &f.file)
                    < (s.statements, s.bytes, &s.run_id, &s.file)
            });
            if smaller {
                bug.smallest = Some(f);
            }
        }
        let mut groups: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for r in self
            .db()
            .query("SELECT signature, label FROM lancet_groups", &[])?
        {
            groups
                .entry(r[0].text().unwrap_or_default().to_string())
                .or_default()
                .insert(r[1].text().unwrap_or_default().to_string());
        }
        let mut bug_of: BTreeMap<String, (String, String)> = BTreeMap::new();
        for r in self
            .db()
            .query("SELECT signature, bug, core FROM lancet_bug_of", &[])?
        {
            bug_of.insert(
                r[0].text().unwrap_or_default().to_string(),
                (
                    r[1].text().unwrap_or_default().to_string(),
                    r[2].text().unwrap_or_default().to_string(),
                ),
            );
        }
        let mut list: Vec<BugSummary> = bugs
            .into_values()
            .map(|mut b| {
                (b.bug, b.core) = bug_of
                    .remove(&b.signature)
                    .unwrap_or_else(|| (b.signature.clone(), String::new()));
                if b.first_seen == u64::MAX {
                    b.first_seen = 0;
                }
                b.groups = groups
                    .remove(&b.signature)
                    .map(|g| g.into_iter().collect())
                    .unwrap_or_default();
                b
            })
            .collect();
        list.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
        Ok(list)
    }

    /// A stored reproducer's text (the reduced one where there is one).
    pub fn reproducer(&mut self, run_id: &str, file: &str) -> anyhow::Result<Option<String>> {
        let rows = self.db().query(
            "SELECT sql FROM lancet_findings WHERE run_id = $1 AND file = $2",
            &[run_id.into(), file.into()],
        )?;
        Ok(rows.first().and_then(|r| r[0].text().map(str::to_string)))
    }
}
