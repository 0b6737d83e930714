//! A transaction campaign (`lancet fuzz --oracle txn`): threads, each
//! with a database of its own and a few sessions on it, run schedules
//! drawn from the database's RNG. A schedule that shows an anomaly runs
//! again on a fresh table to see that it repeats, is written at once, and
//! is then reduced to the fewest sessions, statements and rows that still
//! show the same anomaly at the same level.

use super::driver::{Run, ScheduleRun, Sessions, Timing};
use super::finding::{ScheduleOrigin, TxnFinding};
use crate::databases::{Databases, Purpose};
use crate::dedup::Index;
use crate::run_files::SampleLog;
use crate::summary::{Counters, LevelCounts, RunFacts, StopReason, Summary};
use lancet_core::rng::database_rng;
use lancet_core::txn::{IsolationLevel, LevelRules, Transactions};
use lancet_core::{Connection, Provider};
use lancet_oracles::txn::{Schedule, TxnFault, MAX_SESSIONS, NAME};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How the summary names the schedules whose sessions mix levels.
const MIXED: &str = "mixed levels";

/// How a campaign runs.
#[derive(Clone, Debug)]
pub struct TxnOptions {
    /// Names the run in its summary.
    pub run_id: String,
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
    /// A status line this often (`--status-interval`).
    pub status_interval: Option<Duration>,
    /// The run's directory, for `run.json` and a line of counters in
    /// `samples.jsonl` every `sample_interval` (what the findings store
    /// and `lancet report` read); none for a bench or a selftest.
    pub run_dir: Option<PathBuf>,
    pub sample_interval: Duration,
}

impl Default for TxnOptions {
    fn default() -> Self {
        TxnOptions {
            run_id: "txn".into(),
            seed: 0,
            threads: 1,
            timeout: None,
            max_schedules: None,
            levels: Vec::new(),
            fault: None,
            reduce: None,
            timing: Timing::default(),
            schedules_per_database: 500,
            flood_limit: None,
            stop_after_findings: None,
            status_interval: None,
            run_dir: None,
            sample_interval: Duration::from_secs(10),
        }
    }
}

/// What a campaign's threads share.
pub(super) struct Shared<'a> {
    pub(super) databases: &'a Databases,
    pub(super) tx: &'a dyn Transactions,
    pub(super) provider: &'a dyn Provider,
    pub(super) rules: Vec<LevelRules>,
    pub(super) options: &'a TxnOptions,
    pub(super) stop: &'a AtomicBool,
    started: Instant,
    /// Schedules are checks of the one oracle `txn`.
    pub(super) counters: Counters,
    /// The findings index of `dir`: signatures, bugs, flood control.
    pub(super) index: Mutex<Index>,
    pub(super) dir: &'a Path,
    pub(super) reduced: AtomicU64,
    /// Numbers the findings' files.
    pub(super) next_finding: AtomicU64,
    levels: Mutex<BTreeMap<String, LevelCounts>>,
    warnings: Mutex<Vec<String>>,
    failures: Mutex<Vec<String>>,
    /// Threads still running, for the monitor.
    running: AtomicU64,
}

/// Runs the campaign; findings go to `dir` (with its `index.json`), and
/// the summary is the one every run prints.
pub fn run(
    databases: &std::sync::Arc<Databases>,
    provider: &dyn Provider,
    options: &TxnOptions,
    dir: &Path,
    stop: &AtomicBool,
) -> anyhow::Result<Summary> {
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
    let dbms_version = provider
        .version()
        .unwrap_or_else(|e| format!("unknown ({e})"));
    let mut samples = crate::runner::start_run_files(
        options.run_dir.as_deref(),
        &options.run_id,
        options.seed,
        crate::shard::Shard::WHOLE,
        options.threads,
        (provider.name(), &dbms_version),
        &[NAME],
    )?;
    let shared = Shared::new(databases, tx, provider, rules, options, dir, stop);
    let threads = options.threads.max(1);
    shared.running.store(u64::from(threads), Ordering::SeqCst);
    std::thread::scope(|scope| {
        for thread in 0..threads {
            let shared = &shared;
            scope.spawn(move || {
                thread_loop(shared, thread);
                shared.running.fetch_sub(1, Ordering::SeqCst);
            });
        }
        monitor(&shared, samples.as_mut());
    });
    // Drops still waiting (a dropper thread of an earlier run in this
    // process queues them) are made now; what is left is said.
    let leftovers = databases.finish(Duration::from_secs(60));
    let elapsed = shared.started.elapsed();
    if let Some(log) = samples.as_mut() {
        let last = shared.counters.sample(&[NAME], elapsed);
        if let Some(w) = log.append(last) {
            shared.warn(w);
        }
    }
    let stopped_by = shared.stop_reason();
    let facts = RunFacts {
        run_id: &options.run_id,
        dbms: provider.name(),
        dbms_version: &dbms_version,
        seed: options.seed,
        shard: crate::shard::Shard::WHOLE,
        workers: threads,
        oracles: vec![NAME],
        elapsed,
        stopped_by,
        findings_dir: dir,
        open_ended: options.timeout.is_none() && options.max_schedules.is_none(),
    };
    let mut summary = Summary::new(&facts, &shared.counters);
    let index = shared.index.lock().unwrap_or_else(|e| e.into_inner());
    summary.unique_bugs = index.unique() as u64;
    summary.bug_groups = index.bugs().len() as u64;
    summary.bugs = crate::runner::bug_lines(&index, dir);
    summary.reduced = shared.reduced.load(Ordering::Relaxed);
    summary.transactions = take(&shared.levels);
    summary.warnings = take(&shared.warnings);
    summary.failures = take(&shared.failures);
    summary.leftover_databases = leftovers;
    Ok(summary)
}

fn take<T: Default>(m: &Mutex<T>) -> T {
    std::mem::take(&mut *m.lock().unwrap_or_else(|e| e.into_inner()))
}

/// While the threads run: a status line every `--status-interval` and a
/// sample every `sample_interval`.
fn monitor(shared: &Shared<'_>, mut samples: Option<&mut SampleLog>) {
    let mut next_status = shared.options.status_interval;
    let mut next_sample = shared.options.sample_interval;
    while shared.running.load(Ordering::SeqCst) > 0 {
        std::thread::sleep(Duration::from_millis(100));
        let elapsed = shared.started.elapsed();
        if let Some(at) = next_status.filter(|at| elapsed >= *at) {
            eprintln!("{}", shared.counters.status_line(elapsed));
            next_status = shared.options.status_interval.map(|every| at + every);
        }
        if let Some(log) = samples.as_deref_mut() {
            if elapsed >= next_sample {
                if let Some(w) = log.append(shared.counters.sample(&[NAME], elapsed)) {
                    shared.warn(w);
                }
                next_sample += shared.options.sample_interval.max(Duration::from_secs(1));
            }
        }
    }
}

impl<'a> Shared<'a> {
    fn new(
        databases: &'a Databases,
        tx: &'a dyn Transactions,
        provider: &'a dyn Provider,
        rules: Vec<LevelRules>,
        options: &'a TxnOptions,
        dir: &'a Path,
        stop: &'a AtomicBool,
    ) -> Shared<'a> {
        Shared {
            databases,
            tx,
            provider,
            rules,
            options,
            stop,
            started: Instant::now(),
            counters: Counters::new(1),
            index: Mutex::new(Index::new(dir)),
            dir,
            reduced: AtomicU64::new(0),
            next_finding: AtomicU64::new(0),
            levels: Mutex::new(BTreeMap::new()),
            warnings: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            running: AtomicU64::new(0),
        }
    }

    fn timed_out(&self) -> bool {
        self.options
            .timeout
            .is_some_and(|t| self.started.elapsed() >= t)
    }

    fn schedules_done(&self) -> bool {
        self.options
            .max_schedules
            .is_some_and(|m| self.counters.checks() >= m)
    }

    pub(super) fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.timed_out()
            || self.schedules_done()
            || self
                .options
                .stop_after_findings
                .is_some_and(|m| self.counters.findings() >= m)
    }

    /// Why the run ended, once it has.
    fn stop_reason(&self) -> StopReason {
        if self.stop.load(Ordering::Relaxed) {
            StopReason::Interrupted
        } else if self.schedules_done() {
            StopReason::Checks
        } else if self.timed_out() {
            StopReason::Timeout
        } else if !self
            .failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
        {
            StopReason::Error
        } else {
            StopReason::Finished
        }
    }

    pub(super) fn warn(&self, what: String) {
        log::warn!("{what}");
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
    }

    /// The rules of each session of `schedule`, by its level and mode.
    pub(super) fn rules_for(&self, schedule: &Schedule) -> Vec<&LevelRules> {
        (0..schedule.sessions)
            .map(|s| {
                let (level, mode) = schedule.level_of(s);
                self.rules
                    .iter()
                    .find(|r| r.level == level && r.mode.as_deref() == mode)
                    .expect("schedules are drawn at the levels of `rules`")
            })
            .collect()
    }
}

/// One database of a thread after another, until the campaign stops. A
/// thread whose databases fail three times in a row stops: a failure of
/// the run.
fn thread_loop(shared: &Shared<'_>, thread: u32) {
    let mut database = 0u64;
    let mut failures = 0;
    while !shared.should_stop() {
        match run_database(shared, thread, database) {
            Ok(()) => failures = 0,
            Err(e) => {
                failures += 1;
                let what = format!("thread {thread}, database {database}: {e:#}");
                if failures >= 3 {
                    shared
                        .failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!(
                            "{what} (the third failure in a row: the thread stopped)"
                        ));
                    return;
                }
                shared.warn(what);
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        database += 1;
    }
}

/// A database with its sessions: the schedules run on it.
pub(super) struct Bench<'a> {
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
    let sessions = Sessions::open(tx, MAX_SESSIONS, || tx.open_session(&owned))?;
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
    pub(super) fn run(
        &mut self,
        shared: &Shared<'_>,
        schedule: &Schedule,
        fault: Option<TxnFault>,
    ) -> anyhow::Result<ScheduleRun> {
        let rules = shared.rules_for(schedule);
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
    let levels: Vec<(IsolationLevel, Option<String>)> = shared
        .rules
        .iter()
        .map(|r| (r.level, r.mode.clone()))
        .collect();
    let placements = shared.tx.placements();
    let locking_reads = shared.tx.locking_reads();
    let mut bench = open_bench(shared, Purpose::Worker, thread, database)?;
    shared.counters.add_database();
    for index in 0..shared.options.schedules_per_database {
        if shared.should_stop() {
            break;
        }
        let schedule = Schedule::generate(&mut rng, &levels, &placements, locking_reads);
        let started = Instant::now();
        let run = bench.run(shared, &schedule, shared.options.fault)?;
        shared
            .counters
            .add_statements(run.trace.len() as u64, started.elapsed());
        shared.counters.add_check(0, !run.final_rows.is_empty());
        {
            let mut levels = shared.levels.lock().unwrap_or_else(|e| e.into_inner());
            let label = if schedule.is_mixed() {
                MIXED.to_string()
            } else {
                schedule.label_of(0)
            };
            let counts = levels.entry(label).or_default();
            counts.schedules += 1;
            counts.undetermined += u64::from(run.undetermined.is_some());
            counts.committed += run.committed as u64;
            counts.conflicts += run.conflicts as u64;
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
        super::record::record(shared, &mut bench, schedule, run, origin)?;
        if lost {
            // The sessions are gone with the server: a fresh database.
            break;
        }
    }
    Ok(())
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
    let modeled = tx.levels();
    let mut rules: Vec<LevelRules> = Vec::new();
    for s in 0..finding.schedule.sessions {
        let (level, mode) = finding.schedule.level_of(s);
        let r = modeled
            .iter()
            .find(|r| r.level == level && r.mode.as_deref() == mode)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} does not model {}",
                    provider.name(),
                    finding.schedule.label_of(s)
                )
            })?;
        if !rules.contains(r) {
            rules.push(r.clone());
        }
    }
    anyhow::ensure!(
        (1..=MAX_SESSIONS).contains(&finding.schedule.sessions)
            && finding.schedule.steps.iter().all(|s| s.session < finding.schedule.sessions),
        "the schedule has {} sessions (steps of sessions up to {}); lancet drives 1 to {MAX_SESSIONS}",
        finding.schedule.sessions,
        finding.schedule.steps.iter().map(|s| s.session + 1).max().unwrap_or(0),
    );
    let fault = finding.fault.as_deref().and_then(TxnFault::by_name);
    let options = TxnOptions {
        seed: finding.origin.seed,
        levels: rules.iter().map(|r| r.level).collect(),
        fault,
        timing,
        schedules_per_database: 1,
        ..TxnOptions::default()
    };
    let stop = AtomicBool::new(false);
    let shared = Shared::new(
        databases,
        tx,
        provider,
        rules,
        &options,
        Path::new("."),
        &stop,
    );
    let mut bench = open_bench(&shared, Purpose::Replay, 0, databases.next_index())?;
    let run = bench.run(&shared, &finding.schedule, fault)?;
    Ok((TxnFinding::signature_of(&run, &finding.schedule), run))
}
