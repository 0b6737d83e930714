//! A transaction campaign (`lancet fuzz --oracle txn`): threads, each
//! with a database of its own and a few sessions on it, run schedules
//! drawn from the database's RNG. A schedule that shows an anomaly runs
//! again on a fresh table to see that it repeats, is written at once, and
//! is then reduced to the fewest sessions, statements and rows that still
//! show the same anomaly at the same level.

use super::driver::{Run, ScheduleRun, Sessions, Timing};
use super::finding::{ScheduleOrigin, TxnFinding};
use crate::databases::{Databases, Purpose};
use lancet_core::rng::database_rng;
use lancet_core::txn::{IsolationLevel, LevelRules, Transactions};
use lancet_core::{Connection, Provider};
use lancet_oracles::txn::{Schedule, TxnFault};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How a campaign runs.
#[derive(Clone, Debug)]
pub struct TxnOptions {
    pub seed: u64,
    pub threads: u32,
    pub timeout: Option<Duration>,
    /// Stop after this many schedules in all.
    pub max_schedules: Option<u64>,
    /// Only these levels (all the provider models if empty).
    pub levels: Vec<IsolationLevel>,
    pub fault: Option<TxnFault>,
    /// Time for reducing one finding; `None`: no reduction.
    pub reduce: Option<Duration>,
    pub timing: Timing,
    pub schedules_per_database: u64,
    /// Flood control (`--flood-limit`): past this many findings of one
    /// signature, further ones are counted, not written or reduced.
    pub flood_limit: Option<u64>,
    /// Stop once this many findings are written (`selftest`).
    pub stop_after_findings: Option<u64>,
}

/// What a campaign came to.
#[derive(Debug, Default)]
pub struct TxnSummary {
    pub schedules: u64,
    /// Per level: schedules run, undetermined, transactions committed,
    /// conflicts.
    pub per_level: BTreeMap<String, [u64; 4]>,
    /// Findings by the kind of anomaly (one bug shows at every level
    /// that forbids it): their signatures (kind@level) and directories.
    pub bugs: BTreeMap<String, Vec<(String, PathBuf)>>,
    pub elapsed: Duration,
    /// Setup failures that ended a thread's database early.
    pub warnings: Vec<String>,
    /// Findings past the flood limit, by signature: counted only.
    pub flooded: BTreeMap<String, u64>,
}

impl TxnSummary {
    pub fn findings(&self) -> usize {
        self.bugs.values().map(Vec::len).sum()
    }

    /// The summary as the run prints it.
    pub fn render(&self) -> String {
        let mut out = format!(
            "transactions: {} schedules in {:.1} s ({:.1} schedules/s)\n",
            self.schedules,
            self.elapsed.as_secs_f64(),
            self.schedules as f64 / self.elapsed.as_secs_f64().max(1e-9)
        );
        for (level, [n, undetermined, committed, conflicts]) in &self.per_level {
            out.push_str(&format!(
                "  {level}: {n} schedules, {committed} transactions committed, {conflicts} conflicts, {undetermined} undetermined\n"
            ));
        }
        out.push_str(&format!(
            "findings {} in {} bugs\n",
            self.findings(),
            self.bugs.len()
        ));
        for (kind, found) in &self.bugs {
            let mut levels: Vec<&str> = found
                .iter()
                .map(|(sig, _)| sig.split('@').nth(1).unwrap_or(""))
                .collect();
            levels.sort();
            levels.dedup();
            out.push_str(&format!(
                "  {kind} ({}): {} finding(s), first {}\n",
                levels.join(", "),
                found.len(),
                found[0].1.display()
            ));
        }
        for (sig, n) in &self.flooded {
            out.push_str(&format!(
                "  {sig}: {n} more, over the flood limit (counted, not written)\n"
            ));
        }
        for w in &self.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        out
    }
}

/// What a campaign's threads share.
struct Shared<'a> {
    databases: &'a Databases,
    tx: &'a dyn Transactions,
    provider: &'a dyn Provider,
    rules: Vec<LevelRules>,
    options: &'a TxnOptions,
    dir: &'a Path,
    stop: &'a AtomicBool,
    started: Instant,
    schedules: AtomicU64,
    findings: AtomicU64,
    summary: Mutex<TxnSummary>,
}

/// Runs the campaign; findings go under `dir`.
pub fn run(
    databases: &std::sync::Arc<Databases>,
    provider: &dyn Provider,
    options: &TxnOptions,
    dir: &Path,
    stop: &AtomicBool,
) -> anyhow::Result<TxnSummary> {
    let tx = provider.transactions().ok_or_else(|| {
        anyhow::anyhow!(
            "--oracle {} needs a DBMS whose transactions lancet models; {} is not one of them",
            lancet_oracles::txn::NAME,
            provider.name()
        )
    })?;
    let rules: Vec<LevelRules> = tx
        .levels()
        .into_iter()
        .filter(|r| options.levels.is_empty() || options.levels.contains(&r.level))
        .collect();
    anyhow::ensure!(
        !rules.is_empty(),
        "{} models none of the levels asked for",
        provider.name()
    );
    let shared = Shared {
        databases,
        tx,
        provider,
        rules,
        options,
        dir,
        stop,
        started: Instant::now(),
        schedules: AtomicU64::new(0),
        findings: AtomicU64::new(0),
        summary: Mutex::new(TxnSummary::default()),
    };
    std::thread::scope(|scope| {
        for thread in 0..options.threads.max(1) {
            let shared = &shared;
            scope.spawn(move || thread_loop(shared, thread));
        }
    });
    let mut summary = shared
        .summary
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    // Drops still waiting (a dropper thread of an earlier run in this
    // process queues them) are made now; what is left is said.
    for left in databases.finish(Duration::from_secs(60)) {
        summary
            .warnings
            .push(format!("left on the server: {}: {}", left.name, left.why));
    }
    summary.schedules = shared.schedules.load(Ordering::Relaxed);
    summary.elapsed = shared.started.elapsed();
    Ok(summary)
}

impl Shared<'_> {
    fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self
                .options
                .timeout
                .is_some_and(|t| self.started.elapsed() >= t)
            || self
                .options
                .max_schedules
                .is_some_and(|m| self.schedules.load(Ordering::Relaxed) >= m)
            || self
                .options
                .stop_after_findings
                .is_some_and(|m| self.findings.load(Ordering::Relaxed) >= m)
    }

    fn warn(&self, what: String) {
        log::warn!("{what}");
        self.summary
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .warnings
            .push(what);
    }

    fn rules_for(&self, level: IsolationLevel) -> &LevelRules {
        self.rules
            .iter()
            .find(|r| r.level == level)
            .expect("schedules are drawn at the levels of `rules`")
    }
}

/// One database of a thread after another, until the campaign stops.
fn thread_loop(shared: &Shared<'_>, thread: u32) {
    let mut database = 0u64;
    let mut failures = 0;
    while !shared.should_stop() {
        match run_database(shared, thread, database) {
            Ok(()) => failures = 0,
            Err(e) => {
                failures += 1;
                shared.warn(format!("thread {thread}, database {database}: {e:#}"));
                if failures >= 3 {
                    return;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        database += 1;
    }
}

/// A database with its sessions: the schedules run on it.
struct Bench<'a> {
    /// First, so that the sessions close before the database is dropped.
    sessions: Sessions,
    /// A session of its own that makes the table and reads the final
    /// rows.
    observer: Option<Box<dyn Connection>>,
    tx: &'a dyn Transactions,
    scratch: crate::databases::Scratch<'a>,
}

impl Drop for Bench<'_> {
    fn drop(&mut self) {
        self.sessions.close();
        drop(self.observer.take());
        self.tx.release(self.scratch.owned());
    }
}

fn open_bench<'a>(
    shared: &Shared<'a>,
    purpose: Purpose,
    thread: u32,
    index: u64,
) -> anyhow::Result<Bench<'a>> {
    let scratch = shared.databases.create(purpose, thread, index)?;
    let owned = scratch.owned().clone();
    let tx = shared.tx;
    let sessions = Sessions::open(tx, 3, || tx.open_session(&owned))?;
    let mut observer = tx.open_session(&owned)?;
    for sql in tx.session_setup() {
        observer
            .execute(&sql)
            .map_err(|e| anyhow::anyhow!("session setup `{sql}` failed: {e}"))?;
    }
    Ok(Bench {
        scratch,
        sessions,
        observer: Some(observer),
        tx,
    })
}

impl Bench<'_> {
    fn run(
        &mut self,
        shared: &Shared<'_>,
        schedule: &Schedule,
        fault: Option<TxnFault>,
    ) -> anyhow::Result<ScheduleRun> {
        let rules = shared.rules_for(schedule.level);
        let run = Run {
            tx: shared.tx,
            rules,
            schedule,
            timing: shared.options.timing,
            fault,
        };
        let owned = self.scratch.owned().clone();
        let tx = shared.tx;
        let mut open = || -> anyhow::Result<Box<dyn Connection>> {
            let mut conn = tx.open_session(&owned)?;
            for sql in tx.session_setup() {
                conn.execute(&sql).map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            Ok(conn)
        };
        let observer = self
            .observer
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("the observer session is closed"))?;
        run.execute(&mut **observer, &self.sessions, &mut open)
    }
}

fn run_database(shared: &Shared<'_>, thread: u32, database: u64) -> anyhow::Result<()> {
    let mut rng = database_rng(shared.options.seed, thread, database);
    let levels: Vec<IsolationLevel> = shared.rules.iter().map(|r| r.level).collect();
    let mut bench = open_bench(shared, Purpose::Worker, thread, database)?;
    for index in 0..shared.options.schedules_per_database {
        if shared.should_stop() {
            break;
        }
        let schedule = Schedule::generate(&mut rng, &levels);
        let run = bench.run(shared, &schedule, shared.options.fault)?;
        shared.schedules.fetch_add(1, Ordering::Relaxed);
        {
            let mut summary = shared.summary.lock().unwrap_or_else(|e| e.into_inner());
            let entry = summary
                .per_level
                .entry(schedule.level.sql().to_string())
                .or_default();
            entry[0] += 1;
            entry[1] += u64::from(run.undetermined.is_some());
            entry[2] += run.committed as u64;
            entry[3] += run.conflicts as u64;
        }
        if run.anomalies.is_empty() && run.failure.is_none() {
            continue;
        }
        let origin = ScheduleOrigin {
            seed: shared.options.seed,
            thread,
            database,
            schedule: index,
        };
        let lost = run
            .failure
            .as_ref()
            .is_some_and(|(_, e)| e.kind != lancet_core::FailureKind::Statement);
        record(shared, &mut bench, schedule, run, origin)?;
        if lost {
            // The sessions are gone with the server: a fresh database.
            break;
        }
    }
    Ok(())
}

/// Confirms, writes and reduces one finding.
fn record(
    shared: &Shared<'_>,
    bench: &mut Bench<'_>,
    schedule: Schedule,
    run: ScheduleRun,
    origin: ScheduleOrigin,
) -> anyhow::Result<()> {
    let rules = shared.rules_for(schedule.level).clone();
    let signature = TxnFinding::signature_of(&run, &rules);
    if let Some(limit) = shared.options.flood_limit {
        let mut summary = shared.summary.lock().unwrap_or_else(|e| e.into_inner());
        let kind = signature.split('@').next().unwrap_or("");
        let written = summary.bugs.get(kind).map_or(0, |found| {
            found.iter().filter(|(sig, _)| *sig == signature).count() as u64
        });
        if written >= limit {
            *summary.flooded.entry(signature).or_default() += 1;
            return Ok(());
        }
    }
    let fault = shared.options.fault;
    // Runs again on a fresh table, so the finding says how often it shows.
    let mut repeated = 0;
    const AGAIN: u32 = 2;
    for _ in 0..AGAIN {
        if let Ok(again) = bench.run(shared, &schedule, fault) {
            if TxnFinding::signature_of(&again, &rules) == signature {
                repeated += 1;
            }
        }
    }
    let n = shared.findings.fetch_add(1, Ordering::Relaxed);
    let id = format!(
        "txn-{n:04}-{}",
        signature.replace(['@', ' '], "-").to_ascii_lowercase()
    );
    let dir = shared.dir.join(&id);
    let finding = make_finding(
        shared,
        &rules,
        signature.clone(),
        &schedule,
        &run,
        origin,
        (repeated, AGAIN),
        None,
    );
    finding.write(&dir)?;
    shared
        .summary
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .bugs
        .entry(signature.split('@').next().unwrap_or("").to_string())
        .or_default()
        .push((signature.clone(), dir.clone()));
    eprintln!("lancet: transaction finding {signature}: {}", dir.display());
    if let Some(budget) = shared.options.reduce {
        if let Some((small, small_run)) = reduce(shared, bench, &schedule, &signature, budget) {
            let reduced = make_finding(
                shared,
                &rules,
                signature,
                &small,
                &small_run,
                origin,
                (1, 1),
                Some(schedule.size()),
            );
            reduced.write(&dir.join("reduced"))?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn make_finding(
    shared: &Shared<'_>,
    rules: &LevelRules,
    signature: String,
    schedule: &Schedule,
    run: &ScheduleRun,
    origin: ScheduleOrigin,
    repeated: (u32, u32),
    reduced_from: Option<usize>,
) -> TxnFinding {
    TxnFinding {
        oracle: lancet_oracles::txn::NAME.to_string(),
        dbms: shared.provider.name().to_string(),
        version: shared
            .provider
            .version()
            .unwrap_or_else(|e| format!("unknown ({e})")),
        lancet: crate::VERSION.to_string(),
        signature,
        rules: rules.clone(),
        anomalies: run.anomalies.clone(),
        error: run.failure.as_ref().map(|(step, e)| match *step {
            // The read of the final rows after the schedule.
            usize::MAX => format!("the final read: {e}"),
            step => format!("step {}: {e}", step + 1),
        }),
        schedule: schedule.clone(),
        trace: run.trace.clone(),
        final_rows: run.final_rows.clone(),
        origin,
        repeated,
        fault: shared.options.fault.map(|f| f.name().to_string()),
        reduced_from,
        create_table: shared.tx.create_table(&schedule.table, schedule.index_v),
        begin: shared.tx.begin(schedule.level),
        client_command: shared.tx.client_command(),
    }
}

/// Greedy reduction: the first candidate that still shows `signature`
/// replaces the schedule, until none does or the time is up.
fn reduce(
    shared: &Shared<'_>,
    bench: &mut Bench<'_>,
    schedule: &Schedule,
    signature: &str,
    budget: Duration,
) -> Option<(Schedule, ScheduleRun)> {
    let rules = shared.rules_for(schedule.level).clone();
    let deadline = Instant::now() + budget;
    let mut best: Option<(Schedule, ScheduleRun)> = None;
    let mut current = schedule.clone();
    'outer: loop {
        for candidate in lancet_oracles::txn::shrink::candidates(&current) {
            if Instant::now() >= deadline || shared.stop.load(Ordering::Relaxed) {
                break 'outer;
            }
            // Timing-dependent anomalies get a second try.
            for _ in 0..2 {
                let Ok(run) = bench.run(shared, &candidate, shared.options.fault) else {
                    continue;
                };
                if TxnFinding::signature_of(&run, &rules) == signature {
                    current = candidate.clone();
                    best = Some((candidate, run));
                    continue 'outer;
                }
            }
        }
        break;
    }
    best
}

/// Runs a finding's schedule again (`lancet replay`): the signature it
/// shows now and the run.
pub fn replay(
    databases: &Databases,
    provider: &dyn Provider,
    finding: &TxnFinding,
    timing: Timing,
) -> anyhow::Result<(String, ScheduleRun)> {
    let tx = provider
        .transactions()
        .ok_or_else(|| anyhow::anyhow!("{} has no transactions lancet models", provider.name()))?;
    let rules = tx
        .levels()
        .into_iter()
        .find(|r| r.level == finding.schedule.level)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "{} does not model {}",
                provider.name(),
                finding.schedule.level.sql()
            )
        })?;
    let fault = finding.fault.as_deref().and_then(TxnFault::by_name);
    let options = TxnOptions {
        seed: finding.origin.seed,
        threads: 1,
        timeout: None,
        max_schedules: None,
        levels: vec![rules.level],
        fault,
        reduce: None,
        timing,
        schedules_per_database: 1,
        flood_limit: None,
        stop_after_findings: None,
    };
    let stop = AtomicBool::new(false);
    let shared = Shared {
        databases,
        tx,
        provider,
        rules: vec![rules.clone()],
        options: &options,
        dir: Path::new("."),
        stop: &stop,
        started: Instant::now(),
        schedules: AtomicU64::new(0),
        findings: AtomicU64::new(0),
        summary: Mutex::new(TxnSummary::default()),
    };
    let mut bench = open_bench(&shared, Purpose::Replay, 0, databases.next_index())?;
    let run = bench.run(&shared, &finding.schedule, fault)?;
    Ok((TxnFinding::signature_of(&run, &rules), run))
}
