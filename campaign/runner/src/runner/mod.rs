//! The runner: many threads, each creating databases in turn, each database
//! with its own generator seeded from (run seed, thread, database index).
//! Workers write findings to disk themselves, before going on, and report
//! them to one reporter (the calling thread) over a channel; counters are
//! shared atomics, read by the status line.
//!
//! Every end of a run returns a summary: workers are detached threads, so
//! a worker stuck in a DBMS call that never returns cannot keep the run
//! from ending. After a stop (Ctrl-C, SIGTERM, `--timeout`), the reporter
//! waits at most [`STOP_GRACE`] for the workers, then summarizes without
//! them. A worker that fails stops alone; the others go on.

pub mod child;
mod crash_triage;
mod database;
mod dbms_wait;
mod record;
pub mod recorder;
mod reduce_queue;
mod reducers;
mod report;
mod sessions;
mod worker;

use crate::databases::{Databases, Leftover};
use crate::dedup::Index;
use crate::findings::FindingSource;
use crate::reproducer::FindingWriter;
use crate::run_files::{RunRecord, SampleLog};
use crate::summary::{BugLine, Counters, RunFacts, Summary};
use crossbeam_channel::Sender;
use lancet_core::{Oracle, PreparedSessions, Provider, Rng};
use lancet_engine::Catalog;
use rand::Rng as _;
pub use reduce_queue::ReduceOptions;
use reduce_queue::ReduceQueue;
use report::Event;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The oracles of a run: query oracles with their weights in the
/// rotation, or one oracle that opens sessions of its own (it runs
/// alone).
pub struct OracleSet {
    oracles: Vec<Box<dyn Oracle>>,
    weights: Vec<u32>,
    total: u32,
    sessions: Option<(&'static str, Arc<dyn PreparedSessions>)>,
}

impl OracleSet {
    pub fn new(entries: Vec<(Box<dyn Oracle>, u32)>) -> OracleSet {
        let (oracles, weights): (Vec<_>, Vec<_>) = entries.into_iter().unzip();
        let total = weights.iter().sum::<u32>().max(1);
        OracleSet {
            oracles,
            weights,
            total,
            sessions: None,
        }
    }

    /// A run of the sessions oracle `name`, prepared for the run's DBMS.
    pub fn sessions(name: &'static str, oracle: Box<dyn PreparedSessions>) -> OracleSet {
        OracleSet {
            sessions: Some((name, Arc::from(oracle))),
            ..OracleSet::new(Vec::new())
        }
    }

    /// The run's sessions oracle, if it is one.
    pub fn sessions_oracle(&self) -> Option<&dyn PreparedSessions> {
        self.sessions.as_ref().map(|(_, o)| &**o)
    }

    pub fn names(&self) -> Vec<&'static str> {
        match &self.sessions {
            Some((name, _)) => vec![*name],
            None => self.oracles.iter().map(|o| o.name()).collect(),
        }
    }

    /// Splits off the oracles that need a feature `provider` lacks: they
    /// would draw no case. Returns each with the feature it misses.
    pub fn without_unsupported(
        self,
        provider: &dyn lancet_core::Provider,
    ) -> (OracleSet, Vec<(&'static str, lancet_core::Feature)>) {
        let offered = provider.features();
        let mut kept = Vec::new();
        let mut dropped = Vec::new();
        for (oracle, weight) in self.oracles.into_iter().zip(self.weights) {
            match oracle.requires().iter().find(|f| !offered.contains(f)) {
                Some(&missing) => dropped.push((oracle.name(), missing)),
                None => kept.push((oracle, weight)),
            }
        }
        let sessions = self.sessions;
        (
            OracleSet {
                sessions,
                ..OracleSet::new(kept)
            },
            dropped,
        )
    }

    /// The oracles' names with their weights (to rebuild the set in a
    /// child process).
    pub fn entries(&self) -> Vec<(&'static str, u32)> {
        self.oracles
            .iter()
            .map(|o| o.name())
            .zip(self.weights.iter().copied())
            .collect()
    }

    /// Whether the set holds no oracle.
    pub fn is_empty(&self) -> bool {
        self.oracles.is_empty() && self.sessions.is_none()
    }

    pub fn get(&self, i: usize) -> &dyn Oracle {
        &*self.oracles[i]
    }

    /// Picks an oracle; with one oracle no randomness is drawn, so a
    /// database's queries do not depend on how many oracles a run has.
    fn pick(&self, rng: &mut Rng) -> usize {
        if self.oracles.len() == 1 {
            return 0;
        }
        let mut x = rng.random_range(0..self.total);
        for (i, w) in self.weights.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        self.oracles.len() - 1
    }
}

/// How a run is set up.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub run_id: String,
    pub seed: u64,
    /// The part of the campaign this run is: its workers run the campaign
    /// threads the shard owns.
    pub shard: crate::shard::Shard,
    pub threads: u32,
    pub timeout: Option<Duration>,
    /// Stop after this many checks in all.
    pub max_checks: Option<u64>,
    pub checks_per_database: u64,
    /// Run only this (thread, database): regenerate one database exactly.
    pub only_database: Option<(u32, u64)>,
    /// Directory for per-database statement logs (`--log-statements`).
    pub log_dir: Option<PathBuf>,
    /// Directory for findings that did not reproduce on a fresh database.
    pub unconfirmed_dir: PathBuf,
    /// How often to print a status line; `None` for none.
    pub status_interval: Option<Duration>,
    /// Stop the run once this many findings are on disk (`selftest`).
    pub stop_after_findings: Option<u64>,
    /// Reduce confirmed findings on reducer threads as they come; `None`
    /// (`--no-reduce`) keeps findings as found.
    pub reduce: Option<ReduceOptions>,
    /// Flood control: once a signature has this many findings, further
    /// ones are counted in the index but neither confirmed, written nor
    /// reduced (`None`: every finding is written).
    pub flood_limit: Option<u64>,
    /// Time statements by shape (`lancet bench`): the summary's
    /// `slowest_shapes`.
    pub profile_shapes: bool,
    /// The run's directory, for `run.json` and `samples.jsonl` (see
    /// [`crate::run_files`]); `None` (bench, selftest) writes neither.
    pub run_dir: Option<PathBuf>,
    /// How often a throughput sample is written.
    pub sample_interval: Duration,
    /// Run each worker's databases in a child process started so (crash
    /// isolation for embedded engines); `None` runs them on the threads.
    pub child: Option<child::ChildProgram>,
}

/// After a stop, how long the reporter waits for workers to finish their
/// current statement before it summarizes without them. A PostgreSQL
/// statement call ends within its limit (2 s), a cancel margin and a hang
/// grace (about 8 s in all); a database drop within a few seconds more.
pub const STOP_GRACE: Duration = Duration::from_secs(9);

/// At the end, how long failed drops are retried before the databases are
/// named in the summary instead.
const DROP_GRACE: Duration = Duration::from_secs(10);

/// Everything the workers, the reducer and the reporter share.
struct Shared {
    provider: Arc<dyn Provider>,
    /// Every DBMS's description: which parser reads a finding's SQL.
    catalog: &'static Catalog,
    dbms_version: String,
    oracles: Arc<OracleSet>,
    options: RunOptions,
    writer: Arc<FindingWriter>,
    databases: Arc<Databases>,
    counters: Counters,
    stop: Arc<AtomicBool>,
    events: Sender<Event>,
    index: Mutex<Index>,
    /// Confirmed findings waiting for a reducer (unused without reduction).
    reductions: ReduceQueue,
    /// Crash findings waiting for the workers to end, to be replayed
    /// (unused without reduction; see `crash_triage`).
    crashes: Mutex<Vec<crash_triage::CrashWork>>,
    /// Sessions the DBMS ended because another crashed it.
    collateral: Mutex<Vec<crash_triage::Collateral>>,
    /// Until when the reducers may go on once the workers are done: set
    /// when they end by the run's limit.
    finish_reductions_by: Mutex<Option<Instant>>,
    /// Workers still running: how many, and which.
    live_workers: AtomicU32,
    running: Mutex<Vec<u32>>,
    /// Reducer threads still running.
    live_reducers: AtomicU32,
    abort_reduction: AtomicBool,
    reduced: AtomicU64,
    /// A warning about the statement logs is given once.
    log_warned: AtomicBool,
    /// Checks promised to databases running in child processes, which
    /// count their checks themselves: `--queries N` stays exact.
    reserved_checks: AtomicU64,
    /// A sessions oracle's own counts, by label (see
    /// [`lancet_core::SessionsDatabase::tally`]).
    tallies: Mutex<crate::summary::Tallies>,
    /// Numbers a sessions oracle's findings.
    next_sessions_finding: AtomicU64,
}

impl Shared {
    /// Whether workers should stop: interrupted, timed out or (checked
    /// here, so that `--queries N` is exact) the check limit reached.
    fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self
                .options
                .max_checks
                .is_some_and(|max| self.counters.checks() >= max)
    }

    /// Reserves checks for one database run in a child: `None` without a
    /// check limit, else how many it may count (0: none are left for now).
    fn reserve_checks(&self) -> Option<u64> {
        let max = self.options.max_checks?;
        let want = self.options.checks_per_database;
        let mut got = 0;
        let _ = self
            .reserved_checks
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |r| {
                got = max.saturating_sub(r).min(want);
                Some(r + got)
            });
        Some(got)
    }

    /// Gives back what a database did not use of its reservation.
    fn release_checks(&self, unused: u64) {
        self.reserved_checks.fetch_sub(unused, Ordering::SeqCst);
    }

    /// Counts a finding that is on disk; the run stops once it has as
    /// many as it asked for (`selftest`).
    fn count_finding(&self) {
        self.counters.add_finding();
        if self
            .options
            .stop_after_findings
            .is_some_and(|n| self.counters.findings() >= n)
        {
            self.stop.store(true, Ordering::SeqCst);
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// What this run's findings say about where they came from.
    fn finding_source(&self) -> FindingSource<'_> {
        FindingSource {
            provider: &*self.provider,
            dbms_version: &self.dbms_version,
            fault: self.databases.fault(),
        }
    }
}

/// What a run needs: the provider and oracles, where findings go, the
/// databases' bookkeeping, and the flag that Ctrl-C and signals set.
pub struct RunSetup {
    pub provider: Arc<dyn Provider>,
    /// The DBMSs the binary knows (the registry's list, as a value).
    pub catalog: &'static Catalog,
    pub oracles: Arc<OracleSet>,
    pub options: RunOptions,
    pub writer: Arc<FindingWriter>,
    pub databases: Arc<Databases>,
    pub stop: Arc<AtomicBool>,
}

/// Marks a worker as ended however it ends, a panic included.
struct WorkerExit {
    shared: Arc<Shared>,
    thread: u32,
}

impl Drop for WorkerExit {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.shared.events.send(Event::ThreadFailed {
                thread: self.thread,
                error: "the worker panicked (a bug of lancet's; see the message above)".into(),
            });
        }
        self.shared
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|t| *t != self.thread);
        self.shared.live_workers.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Runs a campaign until a stop condition and returns its summary. Fails
/// only before anything ran (the DBMS's version cannot be read); after
/// that, every end is a summary that says what failed.
pub fn run(setup: RunSetup) -> anyhow::Result<Summary> {
    let RunSetup {
        provider,
        catalog,
        oracles,
        options,
        writer,
        databases,
        stop,
    } = setup;
    // An oracle with sessions of its own runs each database on its worker
    // thread (its sessions are threads of their own): no child processes,
    // and no checks promised to them, which it would never give back.
    let options = match oracles.sessions_oracle() {
        Some(_) => RunOptions {
            child: None,
            ..options
        },
        None => options,
    };
    let dbms_version = provider.version()?;
    let (tx, rx) = crossbeam_channel::unbounded();
    let start = Instant::now();
    let mut samples = start_run_files(
        options.run_dir.as_deref(),
        &options.run_id,
        options.seed,
        options.shard,
        options.threads,
        (provider.name(), &dbms_version),
        &oracles.names(),
    )?;
    let plan: Vec<(u32, Option<u64>)> = match options.only_database {
        Some((thread, database)) => vec![(thread, Some(database))],
        None => (0..options.threads.max(1))
            .map(|t| (options.shard.campaign_thread(t), None))
            .collect(),
    };
    let shared = Arc::new(Shared {
        provider,
        catalog,
        dbms_version,
        counters: Counters::new(oracles.names().len()),
        oracles,
        index: Mutex::new(Index::new(writer.dir())),
        options,
        writer,
        databases,
        stop,
        events: tx,
        reductions: ReduceQueue::default(),
        crashes: Mutex::new(Vec::new()),
        collateral: Mutex::new(Vec::new()),
        finish_reductions_by: Mutex::new(None),
        live_workers: AtomicU32::new(plan.len() as u32),
        running: Mutex::new(plan.iter().map(|(t, _)| *t).collect()),
        live_reducers: AtomicU32::new(0),
        abort_reduction: AtomicBool::new(false),
        reduced: AtomicU64::new(0),
        log_warned: AtomicBool::new(false),
        reserved_checks: AtomicU64::new(0),
        tallies: Mutex::new(Default::default()),
        next_sessions_finding: AtomicU64::new(0),
    });
    spawn_reducers(&shared)?;
    spawn_workers(&shared, &plan);
    let dropper_stop = Arc::new(AtomicBool::new(false));
    if shared.provider.server().is_some() {
        if let Err(e) = shared.databases.dropper(dropper_stop.clone()) {
            let _ = shared.events.send(Event::Warning(format!(
                "cannot start the dropper thread: {e}"
            )));
        }
    }
    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    let (stop_reason, unstopped) = report::report(
        &rx,
        &shared,
        start,
        samples.as_mut(),
        &mut failures,
        &mut warnings,
    );
    dropper_stop.store(true, Ordering::SeqCst);
    // Workers still running past the grace are left behind; their
    // databases are listed as leftovers.
    let leftovers: Vec<Leftover> = shared.databases.finish(DROP_GRACE);
    // Drain what came in while the databases were being dropped.
    while let Ok(event) = rx.try_recv() {
        report::handle(event, &shared, &mut failures, &mut warnings);
    }
    let options = &shared.options;
    let facts = RunFacts {
        run_id: &options.run_id,
        dbms: shared.provider.name(),
        dbms_version: &shared.dbms_version,
        seed: options.seed,
        shard: options.shard,
        workers: plan.len() as u32,
        oracles: shared.oracles.names(),
        elapsed: start.elapsed(),
        stopped_by: stop_reason,
        findings_dir: shared.writer.dir(),
        open_ended: options.timeout.is_none()
            && options.max_checks.is_none()
            && options.only_database.is_none(),
    };
    if let Some(log) = samples.as_mut() {
        let last = shared
            .counters
            .sample(&shared.oracles.names(), start.elapsed());
        warnings.extend(log.append(last));
    }
    let mut summary = Summary::new(&facts, &shared.counters);
    let index = shared.index.lock().unwrap_or_else(|e| e.into_inner());
    summary.unique_bugs = index.unique() as u64;
    summary.bug_groups = index.bugs().len() as u64;
    summary.reduced = shared.reduced.load(Ordering::Relaxed);
    if shared.options.reduce.is_some() {
        let why = match stop_reason {
            crate::summary::StopReason::Interrupted => "the run was interrupted",
            _ => "the finishing time ran out (--finish-reductions)",
        };
        let untriaged = crash_triage::take_waiting(&shared).len() as u64;
        summary.unreduced = shared.reductions.close(why, untriaged);
    }
    summary.bugs = bug_lines(&index, shared.writer.dir());
    summary.failures = failures;
    summary.warnings = warnings;
    summary.tallies =
        std::mem::take(&mut *shared.tallies.lock().unwrap_or_else(|e| e.into_inner()));
    summary.unstopped_workers = unstopped;
    summary.leftover_databases = leftovers;
    Ok(summary)
}

/// Writes `run.json` and opens the throughput samples, for a run with a
/// directory of its own (`dir`); `dbms` is its name and version.
pub(crate) fn start_run_files(
    dir: Option<&std::path::Path>,
    run_id: &str,
    seed: u64,
    shard: crate::shard::Shard,
    threads: u32,
    dbms: (&str, &str),
    oracles: &[&str],
) -> anyhow::Result<Option<SampleLog>> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    RunRecord {
        run_id: run_id.to_string(),
        lancet_version: crate::VERSION.to_string(),
        dbms: dbms.0.to_string(),
        dbms_version: dbms.1.to_string(),
        seed,
        shard,
        threads,
        oracles: oracles.iter().map(|n| n.to_string()).collect(),
        started_unix: crate::run_files::unix_now(),
        host: crate::run_files::host_name(),
    }
    .save(dir)?;
    Ok(Some(SampleLog::new(dir)))
}

/// Starts the reducer threads, if the run reduces.
fn spawn_reducers(shared: &Arc<Shared>) -> anyhow::Result<()> {
    // A sessions oracle reduces its findings on its own database's
    // thread, with its sessions: the queue stays empty.
    if shared.oracles.sessions_oracle().is_some() {
        return Ok(());
    }
    if let Some(reduce) = shared.options.reduce.clone() {
        for i in 0..reduce.reducers.max(1) {
            let s = shared.clone();
            s.live_reducers.fetch_add(1, Ordering::SeqCst);
            let spawned = std::thread::Builder::new()
                .name(format!("lancet-reducer-{i}"))
                .spawn(move || {
                    reducers::reduce_loop(&s, reduce.per_finding);
                    s.live_reducers.fetch_sub(1, Ordering::SeqCst);
                });
            if let Err(e) = spawned {
                shared.live_reducers.fetch_sub(1, Ordering::SeqCst);
                anyhow::ensure!(i > 0, "cannot start a reducer thread: {e}");
            }
        }
    }
    Ok(())
}

/// Starts one worker thread per planned thread; a thread that cannot
/// start is a failure of the run, and the others go on.
fn spawn_workers(shared: &Arc<Shared>, plan: &[(u32, Option<u64>)]) {
    for (thread, only) in plan.iter().copied() {
        let s = shared.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("lancet-worker-{thread}"))
            .spawn(move || {
                let exit = WorkerExit {
                    shared: s.clone(),
                    thread,
                };
                if let Err(e) = worker::worker(&exit.shared, thread, only) {
                    let _ = exit.shared.events.send(Event::ThreadFailed {
                        thread,
                        error: format!("{e:#}"),
                    });
                }
            });
        if let Err(e) = spawned {
            shared
                .running
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|t| *t != thread);
            shared.live_workers.fetch_sub(1, Ordering::SeqCst);
            let _ = shared.events.send(Event::ThreadFailed {
                thread,
                error: format!("cannot start the worker thread: {e}"),
            });
        }
    }
}

/// The summary's lines: a signature each, ordered by bug (most findings
/// first) so that one bug's signatures stand together.
pub(crate) fn bug_lines(index: &Index, dir: &std::path::Path) -> Vec<BugLine> {
    index
        .bugs()
        .into_iter()
        .flat_map(|(bug, entries)| {
            entries.into_iter().map(move |e| BugLine {
                bug: bug.clone(),
                signature: e.signature.clone(),
                count: e.count,
                kind: e.kind.name().to_string(),
                oracle: e.oracle.clone(),
                statements: e.statements,
                reduced: e.reduced,
                reproducer: e
                    .reproducer
                    .strip_prefix(dir)
                    .unwrap_or(&e.reproducer)
                    .display()
                    .to_string(),
                relation: e.relation.clone(),
                known: false,
            })
        })
        .collect()
}
