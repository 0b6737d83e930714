//! Deduplication: the same bug found 500 times is one entry with a count
//! and its smallest reproducer. Findings are one entry when their
//! signatures ([`crate::signature`]) are equal.

use crate::findings::{Finding, FindingKind};
use crate::reproducer::write_synced;
use crate::signature::signature;
use anyhow::Context;
use lancet_core::knobs::describe_changes;
use lancet_core::Dialect;
use lancet_engine::Catalog;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

mod flood;

/// One unique bug of a run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Entry {
    pub signature: String,
    pub kind: FindingKind,
    pub oracle: Option<String>,
    pub relation: Option<String>,
    /// How many findings had this signature.
    pub count: u64,
    /// The smallest reproducer seen, and its size in statements and bytes.
    pub reproducer: PathBuf,
    pub statements: usize,
    pub bytes: usize,
    /// Whether that reproducer is a reduced one.
    pub reduced: bool,
    /// Every finding with this signature, in the order found.
    pub findings: Vec<PathBuf>,
    /// Findings past the flood limit: in `count`, not on disk.
    #[serde(default)]
    pub not_written: u64,
    /// The knobs that, each off alone, hide the bug (see `localize`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden_by_knobs: Vec<String>,
    /// The smallest set of knobs whose turning off flips the result
    /// (knob differential findings, see `localize`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flipped_by_knobs: Vec<String>,
    /// Set by `lancet bisect`: the releases between which it was fixed
    /// (`fixed after 3.26.0, by 3.31.1`), or `still open`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_in: Option<String>,
    /// The bug core of its smallest reproducer ([`crate::bug`]): the key
    /// that groups signatures into bugs, and the query that shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core: Option<String>,
    /// The SQL constructs of that core, which place an unreduced finding
    /// in the bug whose reduced constructs it holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub constructs: Vec<String>,
}

impl Entry {
    /// What grouping into bugs needs of this signature.
    fn member(&self) -> crate::bug::Member<'_> {
        crate::bug::Member {
            signature: &self.signature,
            core_key: self.core_key.as_deref(),
            constructs: &self.constructs,
            reduced: self.reduced,
            hiding_knob: self.hidden_by_knobs.first().map(String::as_str),
            fixed_in: self.fixed_in.as_deref(),
        }
    }

    /// The root-cause groups the bug is in, by label: the knob whose
    /// change alone hides it, the knob changes alone that show it (knob
    /// differential), the release that fixed it. Bugs with one label are
    /// likely one bug; the index and the findings store group by them.
    pub fn group_labels(&self) -> Vec<String> {
        let mut labels = Vec::new();
        if let Some(first) = self.hidden_by_knobs.first() {
            labels.push(format!(
                "hidden by the knob change `{}`",
                describe_changes(std::slice::from_ref(first))
            ));
        }
        if !self.flipped_by_knobs.is_empty() {
            labels.push(format!(
                "disagrees with only the knob change(s) `{}`",
                describe_changes(&self.flipped_by_knobs)
            ));
        }
        if let Some(fixed) = &self.fixed_in {
            labels.push(fixed.clone());
        }
        labels
    }
}

/// What the index keeps of one finding, whatever oracle wrote it: its
/// signature, what it is, its size (statements, bytes: the smallest is the
/// reproducer shown) and its bug core (which groups signatures into bugs).
pub struct Indexed {
    pub signature: String,
    pub kind: FindingKind,
    pub oracle: Option<String>,
    pub relation: Option<String>,
    pub size: (usize, usize),
    pub core: crate::bug::BugCore,
    pub hidden_by_knobs: Vec<String>,
    pub flipped_by_knobs: Vec<String>,
}

/// The findings index of a run: `index.json` and `index.md`, rewritten
/// after every change so that they are current if the run is killed.
pub struct Index {
    dir: PathBuf,
    entries: BTreeMap<String, Entry>,
    /// Signature of each finding's unreduced file, so that a finding's
    /// reduction replaces its provisional entry.
    provisional: BTreeMap<PathBuf, String>,
    /// Findings being written, by signature: counted by the flood limit
    /// before they are indexed, so that threads writing findings of one
    /// signature at once cannot all pass it.
    in_flight: BTreeMap<String, u64>,
}

impl Index {
    pub fn new(dir: &Path) -> Index {
        Index {
            dir: dir.to_path_buf(),
            entries: BTreeMap::new(),
            provisional: BTreeMap::new(),
            in_flight: BTreeMap::new(),
        }
    }

    /// Unique bugs so far.
    pub fn unique(&self) -> usize {
        self.entries.len()
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// Records a finding written at `path` (its `.sql`). A reduced finding
    /// (`reduced_from` = the unreduced file) replaces the provisional entry
    /// its unreduced version made. Returns the entry's count.
    pub fn add(
        &mut self,
        f: &Finding,
        dialect: Dialect,
        catalog: &Catalog,
        path: &Path,
        reduced_from: Option<&Path>,
    ) -> anyhow::Result<(String, u64)> {
        let signature = f
            .signature
            .clone()
            .unwrap_or_else(|| signature(f, dialect, catalog));
        let indexed = Indexed {
            core: crate::bug::core_of(f, &signature, dialect, catalog),
            signature,
            kind: f.kind,
            oracle: f.oracle.clone(),
            relation: f.relation.clone(),
            size: (f.statement_count(), f.sql_bytes()),
            hidden_by_knobs: f.hidden_by_knobs.clone(),
            flipped_by_knobs: f.flipped_by_knobs.clone(),
        };
        self.add_indexed(indexed, path, reduced_from)
    }

    /// [`Index::add`] for a finding of any form: the index keeps only
    /// what [`Indexed`] says of it (the transaction oracle's findings are
    /// schedules, not a [`Finding`]).
    pub fn add_indexed(
        &mut self,
        f: Indexed,
        path: &Path,
        reduced_from: Option<&Path>,
    ) -> anyhow::Result<(String, u64)> {
        let sig = f.signature.clone();
        let origin = reduced_from.unwrap_or(path).to_path_buf();
        self.drop_provisional(&origin);
        if reduced_from.is_none() {
            self.provisional.insert(origin.clone(), sig.clone());
        }
        let entry = self.entries.entry(sig.clone()).or_insert_with(|| Entry {
            signature: sig.clone(),
            kind: f.kind,
            oracle: f.oracle.clone(),
            relation: f.relation.clone(),
            count: 0,
            reproducer: path.to_path_buf(),
            statements: usize::MAX,
            bytes: usize::MAX,
            reduced: false,
            findings: Vec::new(),
            not_written: 0,
            hidden_by_knobs: Vec::new(),
            flipped_by_knobs: Vec::new(),
            fixed_in: None,
            core_key: None,
            core: None,
            constructs: Vec::new(),
        });
        entry.count += 1;
        entry.findings.push(origin);
        if !f.hidden_by_knobs.is_empty() {
            entry.hidden_by_knobs = f.hidden_by_knobs;
        }
        if !f.flipped_by_knobs.is_empty() {
            entry.flipped_by_knobs = f.flipped_by_knobs;
        }
        if f.size < (entry.statements, entry.bytes) {
            entry.statements = f.size.0;
            entry.bytes = f.size.1;
            entry.reproducer = path.to_path_buf();
            entry.reduced = reduced_from.is_some();
            entry.core_key = Some(f.core.key);
            entry.core = Some(f.core.text);
            entry.constructs = f.core.constructs;
        }
        let count = entry.count;
        self.save()?;
        Ok((sig, count))
    }

    /// How many findings have signature `sig` so far.
    pub fn count(&self, sig: &str) -> u64 {
        self.entries.get(sig).map_or(0, |e| e.count)
    }

    /// Takes a finding out of the index: a crash that turned out to be
    /// another crash's collateral (its files moved to `unconfirmed/`).
    pub fn remove(&mut self, unreduced: &Path) -> anyhow::Result<()> {
        self.drop_provisional(unreduced);
        self.save()
    }

    /// Removes the provisional entry the unreduced finding at `origin`
    /// made, if any; another finding of its signature becomes the
    /// signature's reproducer.
    fn drop_provisional(&mut self, origin: &Path) {
        let Some(old) = self.provisional.remove(origin) else {
            return;
        };
        if let Some(e) = self.entries.get_mut(&old) {
            e.count -= 1;
            e.findings.retain(|p| p != origin);
            if e.count == 0 {
                self.entries.remove(&old);
            } else if e.reproducer == origin {
                if let Some(first) = e.findings.first() {
                    e.reproducer = first.clone();
                }
            }
        }
    }

    /// Counts one more finding of `sig` that flood control kept off disk.
    pub fn add_not_written(&mut self, sig: &str) -> anyhow::Result<()> {
        if let Some(e) = self.entries.get_mut(sig) {
            e.count += 1;
            e.not_written += 1;
        }
        self.save()
    }

    /// Writes `index.json` and `index.md`.
    pub fn save(&self) -> anyhow::Result<()> {
        let mut sorted: Vec<&Entry> = self.entries.values().collect();
        sorted.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
        let json = serde_json::to_string_pretty(&sorted).context("serializing the index")?;
        write_synced(&self.dir.join("index.json"), json.as_bytes())?;
        write_synced(&self.dir.join("index.md"), self.render().as_bytes())
    }

    /// The signatures grouped into bugs ([`group_into_bugs`]).
    pub fn bugs(&self) -> Vec<(String, Vec<&Entry>)> {
        group_into_bugs(self.entries.values())
    }

    /// The human-readable index: each bug, what shows it, and its
    /// signatures, one table row each.
    pub fn render(&self) -> String {
        let bugs = self.bugs();
        let mut out = format!(
            "# lancet findings: {} bug(s) under {} signature(s), {} finding(s) in all\n\n\
             Signatures whose reduced cases are the same once tables, columns, literals, oracles \
             and the direction of comparisons are abstracted, and that the same knob hides and the \
             same release fixed, are one bug.\n",
            bugs.len(),
            self.entries.len(),
            self.entries.values().map(|e| e.count).sum::<u64>()
        );
        for (bug, entries) in &bugs {
            out.push_str(&self.render_bug(bug, entries));
        }
        out.push_str(&self.render_groups());
        out
    }

    /// One bug: its smallest signature's core, then a row per signature.
    fn render_bug(&self, bug: &str, entries: &[&Entry]) -> String {
        let smallest = entries
            .iter()
            .min_by_key(|e| (e.statements, e.bytes))
            .expect("a bug has a signature");
        let mut out =
            format!(
            "\n## bug {bug}: {} finding(s) under {} signature(s), smallest {} statement(s){}\n\n",
            entries.iter().map(|e| e.count).sum::<u64>(),
            entries.len(),
            smallest.statements,
            if smallest.reduced { ", reduced" } else { ", not reduced" }
        );
        if let Some(core) = &smallest.core {
            out.push_str(&format!("```sql\n{core}\n```\n\n"));
        }
        out.push_str(
            "| signature | count | kind | oracle | statements | reduced | reproducer |\n\
             |---|---|---|---|---|---|---|\n",
        );
        for e in entries {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                e.signature,
                if e.not_written > 0 {
                    format!("{} ({} not written)", e.count, e.not_written)
                } else {
                    e.count.to_string()
                },
                e.kind.name(),
                e.oracle.as_deref().unwrap_or("-"),
                e.statements,
                if e.reduced { "yes" } else { "no" },
                e.reproducer
                    .strip_prefix(&self.dir)
                    .unwrap_or(&e.reproducer)
                    .display()
            ));
        }
        out
    }

    /// Signatures that share a root-cause hint: the same knob hides them,
    /// or the same release fixed them. Each group is likely one bug.
    fn render_groups(&self) -> String {
        let mut groups: BTreeMap<String, Vec<&Entry>> = BTreeMap::new();
        for e in self.entries.values() {
            for label in e.group_labels() {
                groups.entry(label).or_default().push(e);
            }
        }
        if groups.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "\n## Groups (likely one bug each)\n\nSignatures that the same optimizer knob hides when \
             turned off alone, that the same knobs turned off show (knob differential), or that the \
             same release fixed (`lancet bisect --update-index`).\n",
        );
        for (label, entries) in groups {
            let count: u64 = entries.iter().map(|e| e.count).sum();
            out.push_str(&format!(
                "\n- **{label}**: {} signature(s), {count} finding(s)\n",
                entries.len()
            ));
            for e in entries {
                out.push_str(&format!(
                    "  - {} ({} x{}) {}\n",
                    e.signature,
                    e.oracle.as_deref().unwrap_or(e.kind.name()),
                    e.count,
                    e.reproducer
                        .strip_prefix(&self.dir)
                        .unwrap_or(&e.reproducer)
                        .display()
                ));
            }
        }
        out
    }

    /// The index of a findings directory as saved (`index.json`).
    pub fn load(dir: &Path) -> anyhow::Result<Index> {
        let path = dir.join("index.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let entries: Vec<Entry> = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a lancet index", path.display()))?;
        Ok(Index {
            dir: dir.to_path_buf(),
            entries: entries
                .into_iter()
                .map(|e| (e.signature.clone(), e))
                .collect(),
            provisional: BTreeMap::new(),
            in_flight: BTreeMap::new(),
        })
    }

    /// Records where `lancet bisect` found the bug of the reproducer
    /// `file` fixed (`fixed after 3.26.0, by 3.31.1`, `still open`): on the entry whose
    /// reproducer or findings name it. Whether one did.
    pub fn set_fixed_in(&mut self, file: &Path, fixed: &str) -> bool {
        // A reduced reproducer stands for the finding it was reduced from
        // (`X.reduced.sql` for `X.sql`), which is what the index lists.
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
        let unreduced = name.as_deref().and_then(|n| {
            n.strip_suffix(".reduced.sql")
                .map(|stem| format!("{stem}.sql"))
        });
        let same = |p: &Path| {
            let other = p.file_name().map(|n| n.to_string_lossy().into_owned());
            p == file || (other.is_some() && (other == name || other == unreduced))
        };
        let mut found = false;
        for e in self.entries.values_mut() {
            if same(&e.reproducer) || e.findings.iter().any(|p| same(p)) {
                e.fixed_in = Some(fixed.to_string());
                found = true;
            }
        }
        found
    }
}

/// Signs a reduced finding and writes its reproducer and record to `out`:
/// the one path a reduction's result takes to disk, from a run's reducer
/// thread and from `lancet reduce` alike.
pub fn write_reduced(
    writer: &crate::reproducer::FindingWriter,
    out: &crate::reproducer::WrittenFinding,
    finding: &mut Finding,
    provider: &dyn lancet_core::Provider,
    catalog: &Catalog,
) -> anyhow::Result<()> {
    finding.signature = Some(signature(finding, provider.dialect(), catalog));
    writer.update(
        out,
        finding,
        provider.comment_prefix(),
        &provider.client_command(),
    )
}

/// Signatures grouped into bugs ([`crate::bug::assign_bugs`]), the bug
/// with most findings first, and in each the signature with most first.
pub fn group_into_bugs<'a>(
    entries: impl Iterator<Item = &'a Entry>,
) -> Vec<(String, Vec<&'a Entry>)> {
    let entries: Vec<&Entry> = entries.collect();
    let members: Vec<crate::bug::Member<'_>> = entries.iter().map(|e| e.member()).collect();
    let mut bugs: BTreeMap<String, Vec<&Entry>> = BTreeMap::new();
    for (bug, e) in crate::bug::assign_bugs(&members).into_iter().zip(&entries) {
        bugs.entry(bug).or_default().push(e);
    }
    let mut list: Vec<(String, Vec<&Entry>)> = bugs.into_iter().collect();
    for (_, entries) in &mut list {
        entries.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
    }
    let total = |es: &[&Entry]| es.iter().map(|e| e.count).sum::<u64>();
    list.sort_by(|a, b| total(&b.1).cmp(&total(&a.1)).then(a.0.cmp(&b.0)));
    list
}
