//! What the findings store keeps of a run's findings, read for it: the
//! fleet crate (`lancet_fleet`) cannot read finding records or findings
//! indexes, which are this crate's, so the campaign implements its
//! [`RunFindings`] here and hands [`CampaignFindings`] to every push.

use crate::dedup::{Entry, Index};
use crate::findings::Finding;
use lancet_fleet::store::push::{FindingFacts, RunBug, RunFindings};
use std::path::Path;

/// The campaign's findings on disk, as the store reads them.
pub struct CampaignFindings;

impl RunFindings for CampaignFindings {
    fn bugs(&self, findings_dir: &Path) -> anyhow::Result<Vec<RunBug>> {
        let mut entries: Vec<Entry> = if findings_dir.join("index.json").exists() {
            Index::load(findings_dir)?.entries().cloned().collect()
        } else {
            Vec::new()
        };
        add_unindexed(findings_dir, &mut entries)?;
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
        let finding: Finding = serde_json::from_str(record)?;
        Ok(FindingFacts {
            kind: finding.kind.name(),
            statements: finding.setup.len() + finding.queries.len(),
            origin: (
                finding.origin.seed,
                finding.origin.thread,
                finding.origin.database,
            ),
            oracle: finding.oracle,
        })
    }
}

/// Adds the findings on disk that the index does not name to `entries`:
/// written by a run killed before it saved its index (or, during a run,
/// between the two), they are findings all the same.
fn add_unindexed(dir: &Path, entries: &mut Vec<Entry>) -> anyhow::Result<()> {
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
        let Ok(finding) = Finding::load_record(&record) else {
            continue;
        };
        let Some(dialect) = crate::registry::dialect_of(&finding.dbms) else {
            continue;
        };
        let signature = finding
            .signature
            .clone()
            .unwrap_or_else(|| crate::dedup::signature(&finding, dialect));
        match entries.iter_mut().find(|e| e.signature == signature) {
            Some(e) => {
                e.count += 1;
                e.findings.push(sql);
            }
            None => entries.push(Entry {
                core_key: None,
                core: None,
                constructs: Vec::new(),
                signature: signature.clone(),
                kind: finding.kind,
                oracle: finding.oracle.clone(),
                relation: finding.relation.clone(),
                count: 1,
                reproducer: sql.clone(),
                statements: finding.setup.len() + finding.queries.len(),
                bytes: 0,
                reduced: false,
                findings: vec![sql],
                not_written: 0,
                hidden_by_knobs: Vec::new(),
                flipped_by_knobs: Vec::new(),
                fixed_in: None,
            }),
        }
        if let Some(e) = entries.iter_mut().find(|e| e.signature == signature) {
            if e.core_key.is_none() {
                let core = crate::bug::core_of(&finding, &signature, dialect);
                e.core_key = Some(core.key);
                e.core = Some(core.text);
                e.constructs = core.constructs;
            }
        }
    }
    Ok(())
}
