//! The counters a run's workers bump while it goes (relaxed atomics:
//! statistics), and the status line read from them.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;
/// Counters shared by all workers. Relaxed atomics: they are statistics.
pub struct Counters {
    pub(super) checks: AtomicU64,
    pub(super) nonempty: AtomicU64,
    pub(super) skipped: AtomicU64,
    pub(super) statements: AtomicU64,
    pub(super) databases: AtomicU64,
    pub(super) findings: AtomicU64,
    pub(super) unconfirmed: AtomicU64,
    pub(super) unrepeated_crashes: AtomicU64,
    pub(super) flooded: AtomicU64,
    /// DBMS time by statement shape, merged from the sessions.
    pub(super) shapes: std::sync::Mutex<lancet_core::ShapeTimes>,
    pub(super) dbms_nanos: AtomicU64,
    pub(super) per_oracle: Vec<AtomicU64>,
    /// Plans run for the first time in their database (plan coverage).
    pub(super) plans: AtomicU64,
}

impl Counters {
    pub fn new(oracles: usize) -> Counters {
        Counters {
            checks: AtomicU64::new(0),
            nonempty: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            statements: AtomicU64::new(0),
            databases: AtomicU64::new(0),
            findings: AtomicU64::new(0),
            unconfirmed: AtomicU64::new(0),
            unrepeated_crashes: AtomicU64::new(0),
            flooded: AtomicU64::new(0),
            shapes: std::sync::Mutex::new(lancet_core::ShapeTimes::new()),
            dbms_nanos: AtomicU64::new(0),
            per_oracle: (0..oracles).map(|_| AtomicU64::new(0)).collect(),
            plans: AtomicU64::new(0),
        }
    }

    pub fn checks(&self) -> u64 {
        self.checks.load(Relaxed)
    }
    pub fn add_check(&self, oracle: usize, nonempty: bool) {
        self.checks.fetch_add(1, Relaxed);
        self.per_oracle[oracle].fetch_add(1, Relaxed);
        if nonempty {
            self.nonempty.fetch_add(1, Relaxed);
        }
    }
    /// `n` checks of one oracle at once, `nonempty` of them on rows.
    pub fn add_checks(&self, oracle: usize, n: u64, nonempty: u64) {
        self.checks.fetch_add(n, Relaxed);
        self.per_oracle[oracle].fetch_add(n, Relaxed);
        self.nonempty.fetch_add(nonempty, Relaxed);
    }
    pub fn add_plans(&self, n: u64) {
        self.plans.fetch_add(n, Relaxed);
    }
    pub fn add_skipped_many(&self, n: u64) {
        self.skipped.fetch_add(n, Relaxed);
    }
    pub fn add_skipped(&self) {
        self.skipped.fetch_add(1, Relaxed);
    }
    pub fn add_statements(&self, n: u64, dbms_time: Duration) {
        self.statements.fetch_add(n, Relaxed);
        self.dbms_nanos.fetch_add(
            u64::try_from(dbms_time.as_nanos()).unwrap_or(u64::MAX),
            Relaxed,
        );
    }
    pub fn add_database(&self) {
        self.databases.fetch_add(1, Relaxed);
    }
    pub fn findings(&self) -> u64 {
        self.findings.load(Relaxed)
    }
    pub fn add_finding(&self) {
        self.findings.fetch_add(1, Relaxed);
    }
    /// A written finding that flood control removed after its reduction.
    pub fn remove_finding(&self) {
        self.findings.fetch_sub(1, Relaxed);
    }
    pub fn add_unconfirmed(&self) {
        self.unconfirmed.fetch_add(1, Relaxed);
    }
    /// A crash finding whose replay on a fresh database did not crash the
    /// DBMS again: kept as found, counted apart.
    pub fn add_unrepeated_crash(&self) {
        self.unrepeated_crashes.fetch_add(1, Relaxed);
    }
    /// Merges a session's time by statement shape.
    pub fn add_shapes(&self, shapes: lancet_core::ShapeTimes) {
        if shapes.is_empty() {
            return;
        }
        let mut all = self.shapes.lock().unwrap_or_else(|e| e.into_inner());
        for (shape, (n, t)) in shapes {
            let e = all.entry(shape).or_default();
            e.0 += n;
            e.1 += t;
        }
    }
    pub fn add_flooded(&self) {
        self.flooded.fetch_add(1, Relaxed);
    }

    /// The counters now, for `samples.jsonl` (`oracles` names the
    /// per-oracle counters in order).
    pub fn sample(&self, oracles: &[&str], elapsed: Duration) -> crate::run_files::Sample {
        crate::run_files::Sample {
            seq: 0,
            elapsed: elapsed.as_secs_f64(),
            unix: crate::run_files::unix_now(),
            checks: self.checks(),
            skipped: self.skipped.load(Relaxed),
            nonempty: self.nonempty.load(Relaxed),
            statements: self.statements.load(Relaxed),
            databases: self.databases.load(Relaxed),
            findings: self.findings.load(Relaxed),
            plans: self.plans.load(Relaxed),
            per_oracle: oracles
                .iter()
                .zip(&self.per_oracle)
                .map(|(name, n)| (name.to_string(), n.load(Relaxed)))
                .collect(),
        }
    }

    /// The line printed every few seconds.
    pub fn status_line(&self, elapsed: Duration) -> String {
        let secs = elapsed.as_secs_f64().max(1e-9);
        let checks = self.checks();
        let statements = self.statements.load(Relaxed);
        format!(
            "lancet: {:>6.0}s  {} checks ({:.0}/s)  {} statements ({:.0}/s)  {} databases  {} findings  {:.0}% non-empty",
            elapsed.as_secs_f64(),
            checks,
            checks as f64 / secs,
            statements,
            statements as f64 / secs,
            self.databases.load(Relaxed),
            self.findings.load(Relaxed),
            100.0 * share(self.nonempty.load(Relaxed), checks),
        )
    }
}

/// `part` of `whole` (0 when `whole` is 0).
pub(super) fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}
