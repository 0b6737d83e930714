//! Feeding a store from a run directory. The directory is the truth: a
//! push makes the store's rows for that run match it (findings added,
//! reduced, or removed by flood control; bug counts; samples; the summary
//! once there is one), in one transaction, and is idempotent, so a push
//! that failed or was killed halfway is simply done again.

use super::backend::{Backend, Value};
use crate::run_files::{read_samples, RunRecord, Sample};
use anyhow::Context;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What the store keeps of a run's findings and cannot read itself: their
/// records and their deduplication are the campaign's (the `lancet`
/// crate, which depends on this one), which reads them for the store.
pub trait RunFindings: Sync {
    /// The run's unique bugs, in any order: those its findings index in
    /// `findings_dir` names, and findings on disk it does not name
    /// (written by a run killed before it saved its index, or, during a
    /// run, between the two).
    fn bugs(&self, findings_dir: &Path) -> anyhow::Result<Vec<RunBug>>;
    /// What the store keeps of a finding, read from its JSON record.
    fn facts(&self, record: &str) -> anyhow::Result<FindingFacts>;
}

/// One unique bug of a run, as the store keeps it.
#[derive(Clone, Debug)]
pub struct RunBug {
    pub signature: String,
    /// Its findings' kind, by name (`logic`, `crash`, ...).
    pub kind: &'static str,
    pub oracle: Option<String>,
    pub relation: Option<String>,
    /// How many findings had this signature.
    pub count: u64,
    /// Findings past the flood limit: in `count`, not on disk.
    pub not_written: u64,
    /// The root-cause groups it is in, by label.
    pub group_labels: Vec<String>,
    /// The bug it is an instance of (signatures of one bug share it), and
    /// the query or error that shows that bug, for people.
    pub bug: String,
    pub core: String,
    /// Its findings on disk (`.sql` files), in the order found.
    pub findings: Vec<PathBuf>,
}

/// What the store keeps of one finding besides its files.
#[derive(Clone, Debug)]
pub struct FindingFacts {
    /// Its kind, by name (`logic`, `crash`, ...).
    pub kind: &'static str,
    pub oracle: Option<String>,
    /// Seed, thread and database: what regenerates it.
    pub origin: (u64, u32, u64),
    /// Setup statements and queries.
    pub statements: usize,
}

/// What a feeder already pushed of one run, so that the next push sends
/// only what changed. A new state (`Default`) pushes everything again.
#[derive(Default)]
pub struct PushState {
    samples_sent: u64,
    summary_sent: bool,
    /// Findings in the store, by file name: their signature and whether
    /// the reduced reproducer was pushed.
    findings: Option<StoredFindings>,
    /// Bug counts in the store: (count, not written) by signature.
    bugs: Option<BTreeMap<String, (u64, u64)>>,
    /// What the run directory looked like at the last push.
    stamp: Option<Stamp>,
}

/// The modification times and sizes of what a push reads: equal stamps
/// mean nothing changed, so a long run's pushes cost nothing while it
/// finds nothing new. Taken before reading, so that a change made while
/// a push reads is seen by the next one.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Stamp(Vec<Option<(std::time::SystemTime, u64)>>);

impl Stamp {
    fn of(run_dir: &Path) -> Stamp {
        let findings = run_dir.join("findings");
        Stamp(
            [
                findings.clone(),
                findings.join("index.json"),
                run_dir.join(crate::run_files::SAMPLES_FILE),
                run_dir.join("summary.json"),
            ]
            .iter()
            .map(|p| {
                std::fs::metadata(p)
                    .ok()
                    .and_then(|m| Some((m.modified().ok()?, m.len())))
            })
            .collect(),
        )
    }
}

impl PushState {
    /// Findings of the run the store holds.
    pub fn findings(&self) -> usize {
        self.findings.as_ref().map_or(0, BTreeMap::len)
    }
}

/// Findings in the store by file name: signature, and whether reduced.
type StoredFindings = BTreeMap<String, (String, bool)>;

/// What one push sent.
#[derive(Debug, Default, Clone)]
pub struct Pushed {
    pub findings: usize,
    pub removed: usize,
    pub samples: usize,
    /// Finding records that do not read (truncated, edited by hand), each
    /// with why: left out, and the rest pushed.
    pub broken: Vec<String>,
}

/// One finding as the store keeps it: its smallest reproducer.
struct FindingRow {
    file: String,
    signature: String,
    kind: String,
    oracle: Option<String>,
    found_unix: u64,
    /// Seed, thread and database: what regenerates it.
    origin: (u64, u32, u64),
    statements: usize,
    bytes: usize,
    reduced: bool,
    sql: String,
    record: String,
    /// A reduced record that did not read, for the push's report.
    note: Option<String>,
}

/// A finding record that does not read: the file and why.
#[derive(Debug)]
struct BrokenRecord(String);

impl std::fmt::Display for BrokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BrokenRecord {}

/// Reads finding `file` (its `.sql` path in the run's findings/) and its
/// reduction if there is one. `None` if flood control removed it meanwhile.
fn read_finding(
    file: &Path,
    signature: &str,
    findings: &dyn RunFindings,
) -> anyhow::Result<Option<FindingRow>> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let record_path = file.with_extension("json");
    let found_unix = match std::fs::metadata(&record_path) {
        Ok(m) => m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", record_path.display())),
    };
    let read = |p: &Path| -> anyhow::Result<Option<String>> {
        match std::fs::read_to_string(p) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", p.display())),
        }
    };
    // The reduced reproducer where there is one whose record reads; the
    // finding as found otherwise (a broken reduced record costs only the
    // reduction).
    let reduced_sql = file.with_extension("reduced.sql");
    let mut chosen = None;
    let mut broken = None;
    for (sql_path, reduced) in [(reduced_sql, true), (file.to_path_buf(), false)] {
        let json = sql_path.with_extension("json");
        let (Some(sql), Some(record)) = (read(&sql_path)?, read(&json)?) else {
            continue;
        };
        match findings.facts(&record) {
            Ok(facts) => {
                chosen = Some((sql, record, facts, reduced));
                break;
            }
            Err(e) => {
                broken.get_or_insert(BrokenRecord(format!(
                    "{}: not a finding record ({e:#})",
                    json.display()
                )));
            }
        }
    }
    let Some((mut sql, record, facts, reduced)) = chosen else {
        return match broken {
            Some(b) => Err(b.into()),
            None => Ok(None),
        };
    };
    let note = broken.map(|b| format!("{b}; the finding as found is pushed"));
    // PostgreSQL's text holds no NUL; reproducers written before lancet
    // escaped control characters in their header may have one there.
    if sql.contains('\0') {
        sql = sql.replace('\0', "\\0");
    }
    Ok(Some(FindingRow {
        file: name,
        signature: signature.to_string(),
        kind: facts.kind.to_string(),
        oracle: facts.oracle,
        found_unix,
        origin: facts.origin,
        statements: facts.statements,
        bytes: sql.len(),
        reduced,
        sql,
        record,
        note,
    }))
}

/// What a push reads of a run directory.
struct RunSnapshot {
    record: RunRecord,
    /// summary.json, if the run ended and the store does not have it yet.
    summary: Option<String>,
    /// The samples the store does not have yet.
    samples: Vec<Sample>,
    /// Its bugs, in signature order: shared rows are written in one order
    /// by every shard, so that two shards' transactions cannot deadlock.
    entries: Vec<RunBug>,
    /// Every finding on disk, by file name: its path and signature.
    on_disk: BTreeMap<String, (PathBuf, String)>,
}

impl RunSnapshot {
    fn read(
        run_dir: &Path,
        findings: &dyn RunFindings,
        state: &PushState,
    ) -> anyhow::Result<RunSnapshot> {
        let record = RunRecord::load(run_dir)?;
        let summary = if state.summary_sent {
            None
        } else {
            match std::fs::read_to_string(run_dir.join("summary.json")) {
                Ok(t) => Some(t),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e).context("cannot read the run's summary.json"),
            }
        };
        let samples = read_samples(run_dir)?
            .into_iter()
            .filter(|s| s.seq >= state.samples_sent)
            .collect();
        let findings_dir = run_dir.join("findings");
        let mut entries = findings.bugs(&findings_dir)?;
        entries.sort_by(|a, b| a.signature.cmp(&b.signature));
        let mut on_disk = BTreeMap::new();
        for e in &entries {
            for name in e.findings.iter().filter_map(|f| f.file_name()) {
                let name = name.to_string_lossy().into_owned();
                on_disk.insert(
                    name.clone(),
                    (findings_dir.join(&name), e.signature.clone()),
                );
            }
        }
        Ok(RunSnapshot {
            record,
            summary,
            samples,
            entries,
            on_disk,
        })
    }

    /// (count, not written) by signature.
    fn bug_counts(&self) -> BTreeMap<String, (u64, u64)> {
        self.entries
            .iter()
            .map(|e| (e.signature.clone(), (e.count, e.not_written)))
            .collect()
    }
}

/// The run's row; its summary once there is one.
fn write_run(db: &mut Backend, snap: &RunSnapshot) -> anyhow::Result<()> {
    let r = &snap.record;
    db.execute(
        "INSERT INTO lancet_runs (run_id, dbms, dbms_version, seed, shard_index, shard_count,
             threads, oracles, host, lancet_version, started_unix, summary)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (run_id) DO UPDATE SET summary = COALESCE(excluded.summary, lancet_runs.summary)",
        &[
            r.run_id.as_str().into(),
            r.dbms.as_str().into(),
            r.dbms_version.as_str().into(),
            Value::Int(r.seed as i64),
            u64::from(r.shard.index).into(),
            u64::from(r.shard.count).into(),
            u64::from(r.threads).into(),
            r.oracles.join(",").into(),
            r.host.as_str().into(),
            r.lancet_version.as_str().into(),
            r.started_unix.into(),
            snap.summary.clone().into(),
        ],
    )?;
    Ok(())
}

fn write_samples(db: &mut Backend, run: &str, samples: &[Sample]) -> anyhow::Result<()> {
    for s in samples {
        db.execute(
            "INSERT INTO lancet_samples (run_id, seq, elapsed, unix, checks, skipped, nonempty,
                 statements, databases, findings, plans, per_oracle)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
             ON CONFLICT (run_id, seq) DO NOTHING",
            &[
                run.into(),
                s.seq.into(),
                s.elapsed.into(),
                s.unix.into(),
                s.checks.into(),
                s.skipped.into(),
                s.nonempty.into(),
                s.statements.into(),
                s.databases.into(),
                s.findings.into(),
                s.plans.into(),
                serde_json::to_string(&s.per_oracle)?.into(),
            ],
        )?;
    }
    Ok(())
}

/// The signatures and groups (shared by all runs, so only added) and this
/// run's bug counts (replaced).
fn write_bugs(db: &mut Backend, run: &str, entries: &[RunBug]) -> anyhow::Result<()> {
    for e in entries {
        db.execute(
            "INSERT INTO lancet_signatures (signature, kind, oracle, relation)
             VALUES ($1, $2, $3, $4) ON CONFLICT (signature) DO NOTHING",
            &[
                e.signature.as_str().into(),
                e.kind.into(),
                e.oracle.clone().into(),
                e.relation.clone().into(),
            ],
        )?;
        // A signature's bug can change (a knob localized, a release
        // bisected): the latest push says which it is.
        db.execute(
            "INSERT INTO lancet_bug_of (signature, bug, core) VALUES ($1, $2, $3)
             ON CONFLICT (signature) DO UPDATE SET bug = excluded.bug, core = excluded.core",
            &[
                e.signature.as_str().into(),
                e.bug.as_str().into(),
                e.core.as_str().into(),
            ],
        )?;
        for label in &e.group_labels {
            db.execute(
                "INSERT INTO lancet_groups (signature, label) VALUES ($1, $2)
                 ON CONFLICT (signature, label) DO NOTHING",
                &[e.signature.as_str().into(), label.as_str().into()],
            )?;
        }
    }
    db.execute(
        "DELETE FROM lancet_run_bugs WHERE run_id = $1",
        &[run.into()],
    )?;
    for e in entries {
        db.execute(
            "INSERT INTO lancet_run_bugs (run_id, signature, count, not_written)
             VALUES ($1, $2, $3, $4)",
            &[
                run.into(),
                e.signature.as_str().into(),
                e.count.into(),
                e.not_written.into(),
            ],
        )?;
    }
    Ok(())
}

/// Makes the run's findings in the store those on disk: removes the ones
/// flood control deleted, adds new ones and replaces reduced ones.
/// `stored` is what the store held and becomes what it holds.
fn sync_findings(
    db: &mut Backend,
    run: &str,
    on_disk: &BTreeMap<String, (PathBuf, String)>,
    findings: &dyn RunFindings,
    stored: &mut StoredFindings,
) -> anyhow::Result<Pushed> {
    let mut pushed = Pushed::default();
    let gone: Vec<String> = stored
        .keys()
        .filter(|f| !on_disk.contains_key(*f))
        .cloned()
        .collect();
    for file in gone {
        db.execute(
            "DELETE FROM lancet_findings WHERE run_id = $1 AND file = $2",
            &[run.into(), file.as_str().into()],
        )?;
        stored.remove(&file);
        pushed.removed += 1;
    }
    for (name, (path, signature)) in on_disk {
        let reduced_now = path.with_extension("reduced.sql").exists();
        if stored.get(name) == Some(&(signature.clone(), reduced_now)) {
            continue;
        }
        let row = match read_finding(path, signature, findings) {
            Ok(Some(row)) => {
                pushed.broken.extend(row.note.clone());
                row
            }
            Ok(None) => continue,
            Err(e) if e.is::<BrokenRecord>() => {
                pushed.broken.push(e.to_string());
                continue;
            }
            Err(e) => return Err(e),
        };
        db.execute(
            "INSERT INTO lancet_findings (run_id, file, signature, kind, oracle, found_unix,
                 seed, thread, db, statements, bytes, reduced, sql, record)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
             ON CONFLICT (run_id, file) DO UPDATE SET signature = excluded.signature,
                 statements = excluded.statements, bytes = excluded.bytes,
                 reduced = excluded.reduced, sql = excluded.sql, record = excluded.record",
            &[
                run.into(),
                row.file.as_str().into(),
                row.signature.as_str().into(),
                row.kind.as_str().into(),
                row.oracle.clone().into(),
                row.found_unix.into(),
                Value::Int(row.origin.0 as i64),
                u64::from(row.origin.1).into(),
                row.origin.2.into(),
                (row.statements as u64).into(),
                (row.bytes as u64).into(),
                Value::Int(i64::from(row.reduced)),
                row.sql.as_str().into(),
                row.record.as_str().into(),
            ],
        )?;
        if !stored.contains_key(name) {
            pushed.findings += 1;
        }
        stored.insert(name.clone(), (signature.clone(), row.reduced));
    }
    Ok(pushed)
}

/// The findings of a run the store holds, read from it (a new feeder, or
/// `lancet push`).
fn stored_findings(db: &mut Backend, run: &str) -> anyhow::Result<StoredFindings> {
    Ok(db
        .query(
            "SELECT file, signature, reduced FROM lancet_findings WHERE run_id = $1",
            &[run.into()],
        )?
        .into_iter()
        .map(|r| {
            (
                r[0].text().unwrap_or_default().to_string(),
                (r[1].text().unwrap_or_default().to_string(), r[2].int() != 0),
            )
        })
        .collect())
}

/// Pushes what changed in `run_dir` since `state`, in one transaction; on
/// success `state` says what the store now holds. `findings` reads the
/// run's findings.
pub fn push_run(
    db: &mut Backend,
    run_dir: &Path,
    findings: &dyn RunFindings,
    state: &mut PushState,
) -> anyhow::Result<Pushed> {
    let stamp = Stamp::of(run_dir);
    if state.stamp.as_ref() == Some(&stamp) {
        return Ok(Pushed::default());
    }
    let snap = RunSnapshot::read(run_dir, findings, state)?;
    let run = snap.record.run_id.as_str();
    let bugs = snap.bug_counts();
    db.begin()?;
    let result = (|| -> anyhow::Result<(Pushed, StoredFindings)> {
        write_run(db, &snap)?;
        write_samples(db, run, &snap.samples)?;
        if state.bugs.as_ref() != Some(&bugs) {
            write_bugs(db, run, &snap.entries)?;
        }
        let mut stored = match &state.findings {
            Some(f) => f.clone(),
            None => stored_findings(db, run)?,
        };
        let mut pushed = sync_findings(db, run, &snap.on_disk, findings, &mut stored)?;
        pushed.samples = snap.samples.len();
        Ok((pushed, stored))
    })();
    match result {
        Ok((pushed, stored)) => {
            db.commit()?;
            state.samples_sent = snap
                .samples
                .last()
                .map_or(state.samples_sent, |s| s.seq + 1);
            state.summary_sent |= snap.summary.is_some();
            state.findings = Some(stored);
            state.bugs = Some(bugs);
            state.stamp = Some(stamp);
            Ok(pushed)
        }
        Err(e) => {
            db.rollback();
            Err(e)
        }
    }
}
