//! Run statistics: shared counters the workers bump, the status line, and
//! the summary printed at the end (and written with `--summary-json`).

pub use lancet_findings::known::KnownBugLine;
use lancet_findings::known::KnownBugsOfRun;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

mod counters;
use counters::share;
pub use counters::Counters;

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// Every worker finished its work (`--database`).
    Finished,
    Timeout,
    /// `--queries` checks were reached.
    Checks,
    Interrupted,
    Error,
}

impl StopReason {
    /// As the summary says it.
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Finished => "finished",
            StopReason::Timeout => "timeout reached",
            StopReason::Checks => "check limit reached",
            StopReason::Interrupted => "interrupted",
            StopReason::Error => "stopped by an error",
        }
    }
}

/// One statement shape and the DBMS time it took in a run.
#[derive(Clone, Debug, Serialize)]
pub struct ShapeLine {
    pub shape: String,
    pub statements: u64,
    pub seconds: f64,
    /// Its share of all DBMS time.
    pub share: f64,
    /// Mean time per statement, in microseconds.
    pub mean_us: f64,
}

/// The summary of a run, as printed and as written by `--summary-json`.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub run_id: String,
    pub dbms: String,
    pub dbms_version: String,
    pub seed: u64,
    /// `I/N` for a shard of a campaign (`--shard`), absent for a whole one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub threads: u32,
    pub oracles: Vec<String>,
    pub stopped_by: StopReason,
    pub elapsed_seconds: f64,
    pub checks: u64,
    pub checks_per_second: f64,
    pub checks_per_oracle: BTreeMap<String, u64>,
    /// Checks skipped because a query raised an expected error.
    pub skipped_checks: u64,
    pub statements: u64,
    pub statements_per_second: f64,
    pub databases: u64,
    pub findings: u64,
    /// Disagreements that did not reproduce on a fresh database (kept apart, not findings).
    pub unconfirmed: u64,
    /// Crash findings that did not crash the DBMS again on a fresh
    /// database (kept as found, with what every session was running).
    #[serde(default)]
    pub unrepeated_crashes: u64,
    /// Findings of frequent signatures past the flood limit: counted in
    /// the index, not written.
    #[serde(default)]
    pub flooded: u64,
    /// Statement shapes that took the most DBMS time, most first.
    pub slowest_shapes: Vec<ShapeLine>,
    /// Share of checks whose original query returned rows.
    pub nonempty_share: f64,
    /// Distinct query plans run, counted per database (plan coverage; only
    /// oracles that read plans count them).
    #[serde(default)]
    pub distinct_plans: u64,
    /// Share of the workers' wall time spent inside DBMS calls.
    pub dbms_time_share: f64,
    pub findings_dir: String,
    /// Unique signatures among the findings (see `dedup`); the name is
    /// kept so that summaries written before bugs were grouped still read.
    pub unique_bugs: u64,
    /// Bugs: signatures grouped by their reduced cores (see `bug`).
    #[serde(default)]
    pub bug_groups: u64,
    /// Findings reduced during the run.
    pub reduced: u64,
    /// Confirmed findings left unreduced, by why (the queue was full, the
    /// finishing time ran out, the reduction failed, an interrupt).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub unreduced: std::collections::BTreeMap<String, u64>,
    /// One line per unique bug: signature, count, oracle, size, reproducer.
    pub bugs: Vec<BugLine>,
    /// Workers that stopped on an error (the others went on).
    pub failures: Vec<String>,
    /// What did not stop the run but should be known (statement logs that
    /// could not be written).
    pub warnings: Vec<String>,
    /// Workers still inside a DBMS call when the run ended (left behind).
    pub unstopped_workers: Vec<u32>,
    /// Databases lancet created but could not drop (`lancet cleanup`
    /// retries them later), with the reason.
    pub leftover_databases: Vec<crate::databases::Leftover>,
    /// Of `findings`, those of known open bugs (`--known`): on disk like
    /// the others, but they do not fail the run.
    pub known_findings: u64,
    /// The known open bugs (`--known`) as replayed at start-up: still
    /// open, or fixed.
    pub known_bugs: Vec<KnownBugLine>,
    /// A sessions oracle's own counts, by label (the transaction
    /// oracle's: per isolation level, schedules, commits, conflicts and
    /// undetermined schedules; each schedule is one check).
    #[serde(
        default,
        skip_serializing_if = "BTreeMap::is_empty",
        serialize_with = "tallies_as_maps"
    )]
    pub tallies: Tallies,
    /// Whether the run had no end of its own (no `--timeout`, `--queries`
    /// or `--database`): a signal is then the way it ends, not a cut.
    #[serde(skip)]
    pub open_ended: bool,
}

/// A sessions oracle's own counts: by label, named numbers in the order
/// they print.
pub type Tallies = BTreeMap<String, Vec<(&'static str, u64)>>;

/// Tallies in JSON: an object per label, a field per count.
fn tallies_as_maps<S: serde::Serializer>(t: &Tallies, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(Some(t.len()))?;
    for (label, counts) in t {
        map.serialize_entry(label, &InOrder(counts))?;
    }
    map.end()
}

/// Named numbers as a JSON object, in their order.
struct InOrder<'a>(&'a [(&'static str, u64)]);

impl serde::Serialize for InOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(name, n)| (*name, *n)))
    }
}

/// A unique bug, as the summary lists it.
#[derive(Clone, Debug, Serialize)]
pub struct BugLine {
    /// The bug it is a signature of (see `bug`).
    #[serde(default)]
    pub bug: String,
    pub signature: String,
    pub count: u64,
    pub kind: String,
    pub oracle: Option<String>,
    pub statements: usize,
    pub reduced: bool,
    pub reproducer: String,
    /// The relation that broke (logic findings).
    pub relation: Option<String>,
    /// Whether this is a known open bug (`--known`).
    pub known: bool,
}

/// Known bugs (`--known`) mark the run's bugs and are listed with them.
impl KnownBugsOfRun for Summary {
    fn mark_known(&mut self, is_open: &dyn Fn(&str) -> bool) {
        for line in &mut self.bugs {
            line.known = is_open(&line.signature);
        }
        self.known_findings = self.bugs.iter().filter(|b| b.known).map(|b| b.count).sum();
    }

    fn findings_of(&self, signatures: &[String]) -> u64 {
        self.bugs
            .iter()
            .filter(|b| signatures.contains(&b.signature))
            .map(|b| b.count)
            .sum()
    }

    fn list_known_bugs(&mut self, bugs: Vec<KnownBugLine>) {
        self.known_bugs = bugs;
    }
}

/// What a summary states about the run besides its counters.
pub struct RunFacts<'a> {
    pub run_id: &'a str,
    pub dbms: &'a str,
    pub dbms_version: &'a str,
    pub seed: u64,
    pub shard: crate::shard::Shard,
    /// Workers the run had.
    pub workers: u32,
    pub oracles: Vec<&'static str>,
    pub elapsed: Duration,
    pub stopped_by: StopReason,
    pub findings_dir: &'a Path,
    /// No `--timeout`, `--queries` or `--database`: only a signal ends it.
    pub open_ended: bool,
}

impl Summary {
    pub fn new(facts: &RunFacts, counters: &Counters) -> Summary {
        let elapsed = facts.elapsed;
        let secs = elapsed.as_secs_f64().max(1e-9);
        let checks = counters.checks();
        let statements = counters.statements.load(Relaxed);
        let workers = facts.workers.max(1);
        let dbms_secs = counters.dbms_nanos.load(Relaxed) as f64 / 1e9;
        Summary {
            run_id: facts.run_id.to_string(),
            dbms: facts.dbms.to_string(),
            dbms_version: facts.dbms_version.to_string(),
            seed: facts.seed,
            shard: facts.shard.is_part().then(|| facts.shard.to_string()),
            threads: workers,
            oracles: facts.oracles.iter().map(|s| s.to_string()).collect(),
            stopped_by: facts.stopped_by,
            elapsed_seconds: elapsed.as_secs_f64(),
            checks,
            checks_per_second: checks as f64 / secs,
            checks_per_oracle: facts
                .oracles
                .iter()
                .zip(&counters.per_oracle)
                .map(|(n, c)| (n.to_string(), c.load(Relaxed)))
                .collect(),
            skipped_checks: counters.skipped.load(Relaxed),
            statements,
            statements_per_second: statements as f64 / secs,
            databases: counters.databases.load(Relaxed),
            findings: counters.findings.load(Relaxed),
            unconfirmed: counters.unconfirmed.load(Relaxed),
            unrepeated_crashes: counters.unrepeated_crashes.load(Relaxed),
            flooded: counters.flooded.load(Relaxed),
            slowest_shapes: {
                let all = counters.shapes.lock().unwrap_or_else(|e| e.into_inner());
                let total: f64 = all
                    .values()
                    .map(|(_, t)| t.as_secs_f64())
                    .sum::<f64>()
                    .max(1e-9);
                let mut lines: Vec<ShapeLine> = all
                    .iter()
                    .map(|(shape, (n, t))| ShapeLine {
                        shape: shape.clone(),
                        statements: *n,
                        seconds: t.as_secs_f64(),
                        share: t.as_secs_f64() / total,
                        mean_us: t.as_secs_f64() * 1e6 / (*n).max(1) as f64,
                    })
                    .collect();
                lines.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
                lines.truncate(8);
                lines
            },
            nonempty_share: share(counters.nonempty.load(Relaxed), checks),
            distinct_plans: counters.plans.load(Relaxed),
            dbms_time_share: (dbms_secs / (secs * f64::from(workers))).min(1.0),
            findings_dir: facts.findings_dir.display().to_string(),
            unique_bugs: 0,
            bug_groups: 0,
            reduced: 0,
            unreduced: Default::default(),
            bugs: Vec::new(),
            failures: Vec::new(),
            warnings: Vec::new(),
            unstopped_workers: Vec::new(),
            leftover_databases: Vec::new(),
            known_findings: 0,
            known_bugs: Vec::new(),
            tallies: BTreeMap::new(),
            open_ended: facts.open_ended,
        }
    }

    /// The summary as people read it.
    pub fn render(&self) -> String {
        let mut s = String::new();
        self.render_counts(&mut s);
        self.render_findings_line(&mut s);
        self.render_bugs(&mut s);
        self.render_known_and_problems(&mut s);
        s
    }

    /// The run and its counts: what ran, how fast, on how many databases.
    fn render_counts(&self, s: &mut String) {
        let stopped = self.stopped_by.describe();
        s.push_str(&format!(
            "lancet run {} ({}, {}): {stopped} after {:.1} s\n",
            self.run_id, self.dbms, self.dbms_version, self.elapsed_seconds
        ));
        s.push_str(&format!(
            "  seed        {}  (threads {}{})\n",
            self.seed,
            self.threads,
            match &self.shard {
                Some(shard) => format!("; shard {shard} of the campaign"),
                None => String::new(),
            }
        ));
        s.push_str(&format!(
            "  checks      {}  ({:.0}/s; {:.0}% with non-empty results; {} skipped on expected errors)\n",
            self.checks,
            self.checks_per_second,
            100.0 * self.nonempty_share,
            self.skipped_checks
        ));
        let per: Vec<String> = self
            .checks_per_oracle
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        s.push_str(&format!("  per oracle  {}\n", per.join(", ")));
        if self.distinct_plans > 0 {
            s.push_str(&format!(
                "  plans       {} distinct, counted per database ({:.0} per 1,000 checks)\n",
                self.distinct_plans,
                1000.0 * self.distinct_plans as f64 / self.checks.max(1) as f64
            ));
        }
        s.push_str(&format!(
            "  statements  {}  ({:.0}/s; {:.0}% of wall time inside the DBMS)\n",
            self.statements,
            self.statements_per_second,
            100.0 * self.dbms_time_share
        ));
        s.push_str(&format!("  databases   {}\n", self.databases));
        for (label, counts) in &self.tallies {
            let counts: Vec<String> = counts
                .iter()
                .map(|(name, n)| format!("{n} {name}"))
                .collect();
            s.push_str(&format!("  {label}: {}\n", counts.join(", ")));
        }
    }

    /// The findings line: how many, unique and reduced, and those counted
    /// but not written (flooded) or not confirmed.
    fn render_findings_line(&self, s: &mut String) {
        s.push_str(&format!("  findings    {}", self.findings));
        if self.findings > 0 {
            s.push_str(&format!(
                "  ({} bug(s) under {} signature(s); {} reduced",
                self.bug_groups, self.unique_bugs, self.reduced
            ));
            let unreduced: Vec<String> = self
                .unreduced
                .iter()
                .map(|(why, n)| format!("{n} not: {why}"))
                .collect();
            if !unreduced.is_empty() {
                s.push_str(&format!("; {}", unreduced.join(", ")));
            }
            s.push(')');
        }
        if self.flooded > 0 {
            s.push_str(&format!(
                "  ({} more of frequent signatures counted, not written: --flood-limit)",
                self.flooded
            ));
        }
        if self.unconfirmed > 0 {
            s.push_str(&format!(
                "  ({} more did not reproduce on a fresh database: see unconfirmed/)",
                self.unconfirmed
            ));
        }
        if self.unrepeated_crashes > 0 {
            s.push_str(&format!(
                "  ({} crash(es) did not repeat on a fresh database: kept as found, with what \
                 every session was running)",
                self.unrepeated_crashes
            ));
        }
        s.push('\n');
    }

    /// Where the reproducers are, and a line per unique bug.
    fn render_bugs(&self, s: &mut String) {
        if self.findings > 0 {
            s.push_str(&format!(
                "  reproducers in {} (index: index.md, index.json)\n",
                self.findings_dir
            ));
            for (i, b) in self.bugs.iter().enumerate() {
                if i == 0 || self.bugs[i - 1].bug != b.bug {
                    let same = self.bugs.iter().filter(|o| o.bug == b.bug);
                    s.push_str(&format!(
                        "  bug {}: {} finding(s)\n",
                        b.bug,
                        same.map(|o| o.count).sum::<u64>()
                    ));
                }
                s.push_str(&format!(
                    "    {}  x{:<4} {:<16} {:>3} statements{}  {}{}\n",
                    b.signature,
                    b.count,
                    b.oracle.as_deref().unwrap_or(&b.kind),
                    b.statements,
                    if b.reduced { " (reduced)" } else { "" },
                    b.reproducer,
                    if b.known { "  (known open bug)" } else { "" }
                ));
            }
        }
    }

    /// Known bugs (still open, or fixed), and what went wrong beside the
    /// findings: failed or unstopped workers, warnings, databases left
    /// on the server.
    fn render_known_and_problems(&self, s: &mut String) {
        if self.known_findings > 0 {
            s.push_str(&format!(
                "  known       {} finding(s) of {} known open bug(s) (do not fail the gate)\n",
                self.known_findings,
                self.bugs.iter().filter(|b| b.known).count()
            ));
        }
        for k in self.known_bugs.iter().filter(|k| k.fixed) {
            s.push_str(&format!(
                "  FIXED       known bug {} ({}) is fixed: it no longer reproduces ({})\n",
                k.signature, k.reproducer, k.replay
            ));
        }
        for f in &self.failures {
            s.push_str(&format!("  FAILED      {f}\n"));
        }
        if !self.unstopped_workers.is_empty() {
            let list: Vec<String> = self.unstopped_workers.iter().map(u32::to_string).collect();
            s.push_str(&format!(
                "  unstopped   worker(s) {} were still inside a DBMS call at the end\n",
                list.join(", ")
            ));
        }
        for w in &self.warnings {
            s.push_str(&format!("  warning     {w}\n"));
        }
        if !self.leftover_databases.is_empty() {
            s.push_str(&format!(
                "  left on the server: {} database(s) lancet created but could not drop \
                 (`lancet cleanup` drops them later):\n",
                self.leftover_databases.len()
            ));
            for l in &self.leftover_databases {
                s.push_str(&format!("    {}: {}\n", l.name, l.why));
            }
        }
    }

    /// Findings that are not of a known open bug: what fails a CI gate.
    pub fn new_findings(&self) -> u64 {
        self.findings.saturating_sub(self.known_findings)
    }

    /// Whether lancet could not finish the run: a worker stopped on an
    /// error, or a signal came before the run's own end (an open-ended
    /// run has none, so a signal is how it ends).
    pub fn unfinished(&self) -> bool {
        !self.failures.is_empty()
            || (self.stopped_by == StopReason::Interrupted && !self.open_ended)
    }

    /// The exit status of a run: 1 with new findings (findings of known
    /// open bugs do not count); else 3 if lancet could not finish it; else 0.
    pub fn exit_code(&self) -> u8 {
        if self.new_findings() > 0 {
            1
        } else if self.unfinished() {
            3
        } else {
            0
        }
    }
}
