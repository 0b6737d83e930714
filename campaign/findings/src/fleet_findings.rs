//! What the findings store keeps of a run's findings, read for it: the
//! fleet crate (`lancet_fleet`) cannot read finding records or findings
//! indexes, which are this crate's, so the campaign implements its
//! [`RunFindings`] here and hands [`CampaignFindings`] to every push.

use crate::dedup::{Entry, Index};
use crate::finding_record::FindingRecord;
use lancet_engine::Catalog;
use lancet_fleet::store::push::{FindingFacts, RunBug, RunFindings};
use std::path::Path;

/// The campaign's findings on disk, as the store reads them (`catalog`
/// says which dialect an unindexed finding's DBMS prints).
pub struct CampaignFindings {
    catalog: Catalog,
}

impl CampaignFindings {
    /// The findings of runs of the DBMSs in `catalog`.
    pub const fn new(catalog: &Catalog) -> CampaignFindings {
        CampaignFindings { catalog: *catalog }
    }
}

impl RunFindings for CampaignFindings {
    fn bugs(&self, findings_dir: &Path) -> anyhow::Result<Vec<RunBug>> {
        let mut entries: Vec<Entry> = if findings_dir.join("index.json").exists() {
            Index::load(findings_dir)?.entries().cloned().collect()
        } else {
            Vec::new()
        };
        add_unindexed(findings_dir, &self.catalog, &mut entries)?;
        let bug_of: std::collections::BTreeMap<String, String> =
            crate::dedup::group_into_bugs(entries.iter())
                .into_iter()
                .flat_map(|(bug, es)| {
                    es.into_iter()
                        .map(move |e| (e.signature.clone(), bug.clone()))
                })
                .collect();
        Ok(entries
            .into_iter()
            .map(|e| RunBug {
                group_labels: e.group_labels(),
                bug: bug_of
                    .get(&e.signature)
                    .cloned()
                    .unwrap_or_else(|| e.signature.clone()),
                core: e.core.clone().unwrap_or_default(),
                signature: e.signature,
                kind: e.kind.name(),
                oracle: e.oracle,
                relation: e.relation,
                count: e.count,
                not_written: e.not_written,
                findings: e.findings,
            })
            .collect())
    }

    fn facts(&self, record: &str) -> anyhow::Result<FindingFacts> {
        Ok(match FindingRecord::parse(record, "the record")? {
            FindingRecord::Query(finding) => FindingFacts {
                kind: finding.kind.name(),
                statements: finding.setup.len() + finding.queries.len(),
                origin: (
                    finding.origin.seed,
                    finding.origin.thread,
                    finding.origin.database,
                ),
                oracle: finding.oracle,
            },
            FindingRecord::Sessions(r) => FindingFacts {
                kind: r.kind().name(),
                oracle: Some(r.facts.oracle.clone()),
                origin: r.facts.origin,
                statements: r.facts.size,
            },
        })
    }
}

/// Adds the findings on disk that the index does not name to `entries`:
/// written by a run killed before it saved its index (or, during a run,
/// between the two), they are findings all the same.
fn add_unindexed(dir: &Path, catalog: &Catalog, entries: &mut Vec<Entry>) -> anyhow::Result<()> {
    let indexed: std::collections::BTreeSet<std::ffi::OsString> = entries
        .iter()
        .flat_map(|e| {
            e.findings
                .iter()
                .filter_map(|f| f.file_name().map(|n| n.to_owned()))
        })
        .collect();
    let records = crate::reproducer::finding_files(dir, "json");
    for record in records {
        let sql = record.with_extension("sql");
        let Some(name) = sql.file_name().map(|n| n.to_owned()) else {
            continue;
        };
        if indexed.contains(&name) || !sql.exists() {
            continue;
        }
        let found = match FindingRecord::load_record(&record) {
            Ok(FindingRecord::Query(finding)) => {
                let Some(dialect) = catalog.dialect_of(&finding.dbms) else {
                    continue;
                };
                let signature = finding
                    .signature
                    .clone()
                    .unwrap_or_else(|| crate::signature::signature(&finding, dialect, catalog));
                crate::dedup::Indexed {
                    core: crate::bug::core_of(&finding, &signature, dialect, catalog),
                    signature,
                    kind: finding.kind,
                    oracle: finding.oracle.clone(),
                    relation: finding.relation.clone(),
                    size: (finding.setup.len() + finding.queries.len(), 0),
                    hidden_by_knobs: Vec::new(),
                    flipped_by_knobs: Vec::new(),
                }
            }
            Ok(FindingRecord::Sessions(r)) => r.indexed(&sql),
            Err(_) => continue,
        };
        add_one(entries, found, sql);
    }
    Ok(())
}

/// Adds one finding the index does not name to `entries`: one more of
/// its signature, or a new entry.
fn add_one(entries: &mut Vec<Entry>, f: crate::dedup::Indexed, sql: std::path::PathBuf) {
    if let Some(e) = entries.iter_mut().find(|e| e.signature == f.signature) {
        e.count += 1;
        e.findings.push(sql);
        if e.core_key.is_none() {
            e.core_key = Some(f.core.key);
            e.core = Some(f.core.text);
            e.constructs = f.core.constructs;
        }
        return;
    }
    entries.push(Entry {
        signature: f.signature,
        kind: f.kind,
        oracle: f.oracle,
        relation: f.relation,
        count: 1,
        reproducer: sql.clone(),
        statements: f.size.0,
        bytes: f.size.1,
        reduced: false,
        findings: vec![sql],
        not_written: 0,
        hidden_by_knobs: Vec::new(),
        flipped_by_knobs: Vec::new(),
        fixed_in: None,
        core_key: Some(f.core.key),
        core: Some(f.core.text),
        constructs: f.core.constructs,
    });
}
