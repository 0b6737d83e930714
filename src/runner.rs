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

use crate::databases::{Databases, Leftover, Purpose, Scratch};
use crate::dedup::Index;
use crate::findings::{Finding, FindingKind, FindingWriter, FoundQuery, Origin, WrittenFinding};
use crate::reduce::Reducer;
use crate::summary::{BugLine, Counters, StopReason, Summary};
use crossbeam_channel::{Receiver, Sender};
use lancet_core::compare::same_diff;
use lancet_core::fault::{Fault, FaultyConnection};
use lancet_core::rng::database_rng;
use lancet_core::{
    Case, Connection, DbError, ExecError, FailureKind, Oracle, Provider, Rng, Session, ToSql,
    Verdict,
};
use rand::Rng as _;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The oracles of a run, with their weights in the rotation.
pub struct OracleSet {
    oracles: Vec<Box<dyn Oracle>>,
    weights: Vec<u32>,
    total: u32,
}

impl OracleSet {
    pub fn new(entries: Vec<(Box<dyn Oracle>, u32)>) -> OracleSet {
        let (oracles, weights): (Vec<_>, Vec<_>) = entries.into_iter().unzip();
        let total = weights.iter().sum::<u32>().max(1);
        OracleSet {
            oracles,
            weights,
            total,
        }
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.oracles.iter().map(|o| o.name()).collect()
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
    pub threads: u32,
    pub timeout: Option<Duration>,
    /// Stop after this many checks in all.
    pub max_checks: Option<u64>,
    pub checks_per_database: u64,
    /// Run only this (thread, database): regenerate one database exactly.
    pub only_database: Option<(u32, u64)>,
    pub fault: Option<Fault>,
    /// Directory for per-database statement logs (`--log-statements`).
    pub log_dir: Option<PathBuf>,
    /// Directory for findings that did not reproduce on a fresh database.
    pub unconfirmed_dir: PathBuf,
    /// How often to print a status line; `None` for none.
    pub status_interval: Option<Duration>,
    /// Stop the run once this many findings are on disk (`selftest`).
    pub stop_after_findings: Option<u64>,
    /// Reduce each confirmed finding on a separate thread, with this time
    /// limit per finding; `None` (`--no-reduce`) keeps findings as found.
    pub reduce: Option<Duration>,
}

/// After a stop, how long the reporter waits for workers to finish their
/// current statement before it summarizes without them. A PostgreSQL
/// statement call ends within its limit (2 s), a cancel margin and a hang
/// grace (about 8 s in all); a database drop within a few seconds more.
pub const STOP_GRACE: Duration = Duration::from_secs(9);

/// At the end, how long failed drops are retried before the databases are
/// named in the summary instead.
const DROP_GRACE: Duration = Duration::from_secs(3);

/// A confirmed finding waiting for the reducer thread.
struct ReduceWork {
    finding: Finding,
    written: WrittenFinding,
}

/// Findings queued beyond this many are indexed unreduced (reduce them
/// later with `lancet reduce`): a bug hit in a tight loop must not turn the
/// run into a reduction queue.
const MAX_QUEUED_REDUCTIONS: usize = 32;

enum Event {
    Finding {
        headline: String,
        path: PathBuf,
        confirmed: bool,
    },
    ThreadFailed {
        thread: u32,
        error: String,
    },
    /// A worker waits for the DBMS to come back (or to have room).
    Waiting {
        thread: u32,
        error: String,
    },
    /// Something the user should know that does not stop the run.
    Warning(String),
    Reduced {
        path: PathBuf,
        from: (usize, usize),
        seconds: f64,
        signature: String,
        count: u64,
    },
    ReduceFailed {
        path: PathBuf,
        error: String,
    },
}

/// What one check came to.
enum CheckOutcome {
    Agreed {
        nonempty: bool,
    },
    /// A query raised an expected error (or timed out): the check says nothing.
    Skipped,
    /// The oracle found nothing to test in this database (PQS without an evaluator).
    NoCase,
    /// A finding; the database is abandoned after it.
    Found(Box<Finding>),
}

/// Everything the workers, the reducer and the reporter share.
struct Shared {
    provider: Arc<dyn Provider>,
    dbms_version: String,
    oracles: Arc<OracleSet>,
    options: RunOptions,
    writer: Arc<FindingWriter>,
    databases: Arc<Databases>,
    counters: Counters,
    stop: Arc<AtomicBool>,
    events: Sender<Event>,
    index: Mutex<Index>,
    reductions: Mutex<Option<Sender<ReduceWork>>>,
    /// Workers still running: how many, and which.
    live_workers: AtomicU32,
    running: Mutex<Vec<u32>>,
    reducer_done: AtomicBool,
    abort_reduction: AtomicBool,
    reduced: AtomicU64,
    /// A warning about the statement logs is given once.
    log_warned: AtomicBool,
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

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// What a run needs: the provider and oracles, where findings go, the
/// databases' bookkeeping, and the flag that Ctrl-C and signals set.
pub struct RunSetup {
    pub provider: Arc<dyn Provider>,
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
        oracles,
        options,
        writer,
        databases,
        stop,
    } = setup;
    let dbms_version = provider.version()?;
    let (tx, rx) = crossbeam_channel::unbounded();
    let start = Instant::now();
    let plan: Vec<(u32, Option<u64>)> = match options.only_database {
        Some((thread, database)) => vec![(thread, Some(database))],
        None => (0..options.threads.max(1)).map(|t| (t, None)).collect(),
    };
    let (reduce_tx, reduce_rx) = match options.reduce {
        Some(_) => {
            let (t, r) = crossbeam_channel::unbounded();
            (Some(t), Some(r))
        }
        None => (None, None),
    };
    let shared = Arc::new(Shared {
        provider,
        dbms_version,
        counters: Counters::new(oracles.names().len()),
        oracles,
        index: Mutex::new(Index::new(writer.dir())),
        options,
        writer,
        databases,
        stop,
        events: tx,
        reductions: Mutex::new(reduce_tx),
        live_workers: AtomicU32::new(plan.len() as u32),
        running: Mutex::new(plan.iter().map(|(t, _)| *t).collect()),
        reducer_done: AtomicBool::new(reduce_rx.is_none()),
        abort_reduction: AtomicBool::new(false),
        reduced: AtomicU64::new(0),
        log_warned: AtomicBool::new(false),
    });
    if let (Some(rx), Some(limit)) = (reduce_rx, shared.options.reduce) {
        let s = shared.clone();
        std::thread::Builder::new()
            .name("lancet-reducer".into())
            .spawn(move || {
                reduce_loop(&rx, &s, limit);
                s.reducer_done.store(true, Ordering::SeqCst);
            })
            .map_err(|e| anyhow::anyhow!("cannot start the reducer thread: {e}"))?;
    }
    for (thread, only) in plan.iter().copied() {
        let s = shared.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("lancet-worker-{thread}"))
            .spawn(move || {
                let exit = WorkerExit {
                    shared: s.clone(),
                    thread,
                };
                if let Err(e) = worker(&exit.shared, thread, only) {
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
    let (stop_reason, unstopped) = report(&rx, &shared, start, &mut failures, &mut warnings);
    dropper_stop.store(true, Ordering::SeqCst);
    // Workers still running past the grace are left behind; their
    // databases are listed as leftovers.
    let leftovers: Vec<Leftover> = shared.databases.finish(DROP_GRACE);
    // Drain what came in while the databases were being dropped.
    while let Ok(event) = rx.try_recv() {
        handle(event, &shared, &mut failures, &mut warnings);
    }
    let mut summary = Summary::new(
        &shared.options,
        shared.provider.name(),
        &shared.dbms_version,
        &shared.oracles,
        &shared.counters,
        start.elapsed(),
        stop_reason,
        shared.writer.dir(),
    );
    let index = shared.index.lock().unwrap_or_else(|e| e.into_inner());
    summary.unique_bugs = index.unique() as u64;
    summary.reduced = shared.reduced.load(Ordering::Relaxed);
    summary.bugs = bug_lines(&index, shared.writer.dir());
    summary.failures = failures;
    summary.warnings = warnings;
    summary.unstopped_workers = unstopped;
    summary.leftover_databases = leftovers;
    Ok(summary)
}

fn bug_lines(index: &Index, dir: &std::path::Path) -> Vec<BugLine> {
    let mut lines: Vec<BugLine> = index
        .entries()
        .map(|e| BugLine {
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
        })
        .collect();
    lines.sort_by(|a, b| b.count.cmp(&a.count).then(a.signature.cmp(&b.signature)));
    lines
}

/// The reducer thread: reduces confirmed findings one at a time, writes
/// each reduced reproducer beside its original, and files it in the index.
/// It ends when the workers have ended and the queue is empty, or at a
/// stop; the reduction in progress then finishes (an interrupt cuts it
/// short) and findings still queued stay unreduced.
fn reduce_loop(rx: &Receiver<ReduceWork>, shared: &Shared, limit: Duration) {
    let provider = &*shared.provider;
    let dialect = provider.dialect();
    let reducer = Reducer::new(&shared.databases, shared.options.fault)
        .with_time_limit(limit)
        .with_abort(&shared.abort_reduction);
    loop {
        let work = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(work) => work,
            Err(_) if shared.stopped() || shared.live_workers.load(Ordering::SeqCst) == 0 => {
                if rx.is_empty() || shared.stopped() {
                    return;
                }
                continue;
            }
            Err(_) => continue,
        };
        if shared.stopped() {
            return;
        }
        let name = work
            .written
            .sql
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let outcome = reducer.reduce(&work.finding, &name).and_then(|r| {
            let mut f = r.finding;
            f.signature = Some(crate::dedup::signature(&f, dialect));
            let out = work.written.reduced();
            shared.writer.update(
                &out,
                &f,
                provider.comment_prefix(),
                &provider.client_command(),
            )?;
            let (signature, count) = shared.index.lock().unwrap_or_else(|e| e.into_inner()).add(
                &f,
                dialect,
                &out.sql,
                Some(&work.written.sql),
            )?;
            Ok((out, r.info, signature, count))
        });
        let _ = match outcome {
            Ok((out, info, signature, count)) => {
                shared.reduced.fetch_add(1, Ordering::Relaxed);
                shared.events.send(Event::Reduced {
                    path: out.sql,
                    from: (info.statements_before, info.statements_after),
                    seconds: info.seconds,
                    signature,
                    count,
                })
            }
            Err(e) => shared.events.send(Event::ReduceFailed {
                path: work.written.sql.clone(),
                error: format!("{e:#}"),
            }),
        };
    }
}

/// Prints one event and keeps what the summary needs.
fn handle(event: Event, shared: &Shared, failures: &mut Vec<String>, warnings: &mut Vec<String>) {
    match event {
        Event::Finding {
            headline,
            path,
            confirmed,
        } => {
            if confirmed {
                eprintln!(
                    "lancet: FINDING {headline}\n        reproducer: {}",
                    path.display()
                );
            } else {
                eprintln!(
                    "lancet: a disagreement did not reproduce on a fresh database (kept in {}, not counted)",
                    path.display()
                );
            }
        }
        Event::Reduced {
            path,
            from: (before, after),
            seconds,
            signature,
            count,
        } => {
            let seen = if count > 1 {
                format!("seen {count} times")
            } else {
                "new".to_string()
            };
            eprintln!(
                "lancet: reduced {before} -> {after} statements in {seconds:.1} s; bug {signature} ({seen})\n        reduced reproducer: {}",
                path.display()
            );
        }
        Event::ReduceFailed { path, error } => {
            eprintln!(
                "lancet: could not reduce {}: {error} (the finding is kept as found)",
                path.display()
            );
        }
        Event::ThreadFailed { thread, error } => {
            let others = shared.live_workers.load(Ordering::SeqCst);
            eprintln!(
                "lancet: worker {thread} stopped: {error}{}",
                if others > 0 && !shared.stopped() {
                    format!(" ({others} other worker(s) go on)")
                } else {
                    String::new()
                }
            );
            failures.push(format!("worker {thread}: {error}"));
        }
        Event::Waiting { thread, error } => {
            eprintln!(
                "lancet: worker {thread} waiting for the DBMS: {error} (retrying with back-off; Ctrl-C to stop)"
            );
        }
        Event::Warning(w) => {
            eprintln!("lancet: warning: {w}");
            warnings.push(w);
        }
    }
}

/// The reporter: prints events as they come and a status line every few
/// seconds, and decides when the run is over. Returns why it ended and the
/// workers that had not stopped within [`STOP_GRACE`] of a stop.
fn report(
    rx: &Receiver<Event>,
    shared: &Shared,
    start: Instant,
    failures: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> (StopReason, Vec<u32>) {
    let options = &shared.options;
    let tick = Duration::from_millis(200);
    let mut last_status = Instant::now();
    let mut reason = StopReason::Finished;
    let mut stopped_at: Option<Instant> = None;
    loop {
        match rx.recv_timeout(tick) {
            Ok(event) => handle(event, shared, failures, warnings),
            Err(_) => {
                let workers_done = shared.live_workers.load(Ordering::SeqCst) == 0;
                let reducer_done = shared.reducer_done.load(Ordering::SeqCst);
                if workers_done && reducer_done {
                    break;
                }
            }
        }
        if shared.stopped() {
            let at = *stopped_at.get_or_insert_with(Instant::now);
            if reason == StopReason::Finished {
                reason = StopReason::Interrupted;
            }
            if reason == StopReason::Interrupted {
                shared.abort_reduction.store(true, Ordering::SeqCst);
            }
            if at.elapsed() >= STOP_GRACE {
                break;
            }
        } else if let Some(limit) = options.timeout {
            if start.elapsed() >= limit {
                reason = StopReason::Timeout;
                shared.stop.store(true, Ordering::SeqCst);
            }
        }
        if let Some(every) = options.status_interval {
            if last_status.elapsed() >= every {
                eprintln!("{}", shared.counters.status_line(start.elapsed()));
                last_status = Instant::now();
            }
        }
    }
    while let Ok(event) = rx.try_recv() {
        handle(event, shared, failures, warnings);
    }
    if reason == StopReason::Finished && shared.stopped() {
        reason = StopReason::Interrupted;
    }
    if reason == StopReason::Finished || reason == StopReason::Interrupted {
        if options
            .max_checks
            .is_some_and(|max| shared.counters.checks() >= max)
        {
            reason = StopReason::Checks;
        } else if !failures.is_empty() && !shared.stopped() {
            reason = StopReason::Error;
        }
    }
    let unstopped: Vec<u32> = shared
        .running
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if !unstopped.is_empty() {
        eprintln!(
            "lancet: {} worker(s) did not stop within {} s (a DBMS call that does not return); summarizing without them",
            unstopped.len(),
            STOP_GRACE.as_secs()
        );
    }
    // Workers that ended by themselves (all failed) stop the reducer too.
    shared.stop.store(true, Ordering::SeqCst);
    (reason, unstopped)
}

fn statement_log(
    dir: &std::path::Path,
    thread: u32,
    database: u64,
) -> anyhow::Result<Box<dyn Write + Send>> {
    let path = dir.join(format!("t{thread}-d{database}.sql"));
    let file = std::fs::File::create(&path)
        .map_err(|e| anyhow::anyhow!("cannot create statement log {}: {e}", path.display()))?;
    Ok(Box::new(std::io::BufWriter::new(file)))
}

/// Retries `f` while the DBMS is away or full (crashed, restarting, no
/// free connection slots): with back-off, for as long as it takes, until
/// the run is stopped. Other errors are returned at once.
fn wait_for_dbms<R>(
    shared: &Shared,
    thread: u32,
    mut f: impl FnMut() -> anyhow::Result<R>,
) -> anyhow::Result<R> {
    let mut wait = Duration::from_millis(200);
    let mut said = false;
    loop {
        match f() {
            Ok(r) => return Ok(r),
            Err(e) if !transient(&e) || shared.stopped() => return Err(e),
            Err(e) => {
                if !said {
                    let _ = shared.events.send(Event::Waiting {
                        thread,
                        error: format!("{e:#}"),
                    });
                    said = true;
                }
                let until = Instant::now() + wait;
                while Instant::now() < until && !shared.stopped() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// Whether an error says the DBMS is unreachable or full for now (worth
/// waiting for).
fn transient(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<DbError>()
            .is_some_and(|d| d.kind == FailureKind::ConnectionLost)
    })
}

/// One worker thread: databases `0, 1, 2, ...` (or only `only`).
fn worker(shared: &Shared, thread: u32, only: Option<u64>) -> anyhow::Result<()> {
    let mut index = only.unwrap_or(0);
    let mut idle_databases = 0;
    while !shared.should_stop() {
        let scratch = wait_for_dbms(shared, thread, || {
            shared.databases.create(Purpose::Worker, thread, index)
        });
        let scratch = match scratch {
            Ok(s) => s,
            Err(_) if shared.stopped() => break,
            Err(e) => return Err(e.context("cannot create a database")),
        };
        let cases = run_database(shared, thread, index, scratch)?;
        idle_databases = if cases == Some(0) {
            idle_databases + 1
        } else {
            0
        };
        if idle_databases >= IDLE_DATABASE_LIMIT {
            anyhow::bail!(
                "the oracle(s) {} found nothing to test in {IDLE_DATABASE_LIMIT} databases in a row on {}; \
                 this DBMS or version does not support them",
                shared.oracles.names().join(", "),
                shared.dbms_version
            );
        }
        shared.counters.add_database();
        if only.is_some() {
            break;
        }
        index += 1;
    }
    Ok(())
}

/// After this many databases in a row in which no oracle generated a check,
/// a worker gives up instead of generating databases forever (PQS on a
/// SQLite version its evaluator does not cover).
const IDLE_DATABASE_LIMIT: u32 = 20;

/// Fills and tests one database, then drops it. Returns how many checks
/// its oracles generated, if it ran all its checks (`None` after a
/// finding or a stop).
fn run_database(
    shared: &Shared,
    thread: u32,
    database: u64,
    mut scratch: Scratch<'_>,
) -> anyhow::Result<Option<u64>> {
    let options = &shared.options;
    let mut rng = database_rng(options.seed, thread, database);
    let conn = scratch.take_conn();
    let conn: Box<dyn Connection> = match options.fault {
        Some(f) => Box::new(FaultyConnection::new(conn, f)),
        None => conn,
    };
    let expected = shared.provider.expected_errors();
    let mut session = Session::new(conn, shared.provider.dialect(), expected);
    if let Some(dir) = &options.log_dir {
        match statement_log(dir, thread, database) {
            Ok(log) => session = session.with_log(log),
            Err(e) => warn_log(shared, &format!("{e:#}")),
        }
    }
    let origin = |check: u64| Origin {
        seed: options.seed,
        thread,
        database,
        check,
    };
    let populated = shared.provider.populate(&mut rng, &mut session);
    let mut accounted = session.stats;
    shared
        .counters
        .add_statements(accounted.statements, accounted.dbms_time);
    let schema = match populated {
        Ok(schema) => schema,
        Err(e) => {
            let finding = error_finding(shared, &session, None, origin(0), e);
            finish_log(shared, &mut session);
            drop(session);
            drop(scratch);
            return record(shared, thread, finding, None).map(|()| None);
        }
    };
    let mut generator = shared.provider.query_generator(&schema);
    let mut cases = 0;
    for check in 0..options.checks_per_database {
        if shared.should_stop() {
            finish_log(shared, &mut session);
            return Ok(None);
        }
        let which = shared.oracles.pick(&mut rng);
        let oracle = shared.oracles.get(which);
        let outcome = match oracle.generate(&mut rng, &mut *generator, &mut session) {
            Some(case) => run_check(shared, &mut session, oracle, case, origin(check)),
            None => CheckOutcome::NoCase,
        };
        let stats = session.stats;
        shared.counters.add_statements(
            stats.statements - accounted.statements,
            stats.dbms_time - accounted.dbms_time,
        );
        accounted = stats;
        if !matches!(outcome, CheckOutcome::NoCase) {
            cases += 1;
        }
        match outcome {
            CheckOutcome::Agreed { nonempty } => shared.counters.add_check(which, nonempty),
            CheckOutcome::Skipped => shared.counters.add_skipped(),
            CheckOutcome::NoCase => {}
            CheckOutcome::Found(finding) => {
                shared.counters.add_check(which, true);
                finish_log(shared, &mut session);
                drop(generator);
                // The database is dropped (or its drop queued) before the
                // finding is confirmed on a fresh one.
                drop(session);
                drop(scratch);
                return record(shared, thread, *finding, Some(oracle)).map(|()| None);
            }
        }
    }
    finish_log(shared, &mut session);
    Ok(Some(cases))
}

/// Flushes a database's statement log; a log that cannot be written (a
/// full disk) is said once, not silently emptied.
fn finish_log(shared: &Shared, session: &mut Session) {
    session.flush_log();
    if let Some(e) = session.log_error() {
        warn_log(
            shared,
            &format!("a statement log could not be written: {e}"),
        );
    }
}

fn warn_log(shared: &Shared, what: &str) {
    if !shared.log_warned.swap(true, Ordering::SeqCst) {
        let _ = shared.events.send(Event::Warning(format!(
            "{what} (statement logs of this run are incomplete; said once)"
        )));
    }
}

/// Runs one oracle check on the session's database.
fn run_check(
    shared: &Shared,
    session: &mut Session,
    oracle: &dyn Oracle,
    case: Case,
    origin: Origin,
) -> CheckOutcome {
    let queries = oracle.queries(&case);
    let mut results = Vec::with_capacity(queries.len());
    let mut found = Vec::with_capacity(queries.len());
    for q in &queries {
        let sql = q.query.to_sql(session.dialect());
        match session.query_sql(&sql) {
            Ok(rows) => {
                found.push(FoundQuery {
                    role: q.role.clone(),
                    sql,
                    row_count: Some(rows.len()),
                });
                results.push(rows);
            }
            Err(ExecError::Expected(_)) => return CheckOutcome::Skipped,
            Err(e) => {
                return CheckOutcome::Found(Box::new(error_finding(
                    shared,
                    session,
                    Some(oracle.name()),
                    origin,
                    e,
                )))
            }
        }
    }
    match oracle.compare(&case, &results) {
        Verdict::Agree { nonempty } => CheckOutcome::Agreed { nonempty },
        Verdict::Disagree(d) => CheckOutcome::Found(Box::new(Finding {
            kind: FindingKind::Logic,
            lancet_version: crate::VERSION.to_string(),
            dbms: shared.provider.name().to_string(),
            dbms_version: shared.dbms_version.to_string(),
            oracle: Some(oracle.name().to_string()),
            origin,
            relation: Some(d.relation),
            setup: session.setup().to_vec(),
            queries: found,
            diff: Some(d.diff),
            error: None,
            case: Some(case),
            confirmed: false,
            fault: shared.options.fault.map(|f| f.name().to_string()),
            reduction: None,
            signature: None,
        })),
    }
}

fn error_finding(
    shared: &Shared,
    session: &Session,
    oracle: Option<&str>,
    origin: Origin,
    error: ExecError,
) -> Finding {
    let (kind, sql, error) = match error {
        ExecError::Unexpected { sql, error } => (FindingKind::UnexpectedError, sql, error),
        ExecError::Lost { sql, error } if error.kind == FailureKind::Hang => {
            (FindingKind::Hang, sql, error)
        }
        ExecError::Lost { sql, error } => (FindingKind::Crash, sql, error),
        ExecError::Expected(error) => (FindingKind::UnexpectedError, String::new(), error),
    };
    Finding {
        kind,
        lancet_version: crate::VERSION.to_string(),
        dbms: shared.provider.name().to_string(),
        dbms_version: shared.dbms_version.to_string(),
        oracle: oracle.map(str::to_string),
        origin,
        relation: None,
        setup: session.setup().to_vec(),
        queries: vec![FoundQuery {
            role: "failing statement".into(),
            sql,
            row_count: None,
        }],
        diff: None,
        error: Some(error),
        case: None,
        confirmed: false,
        fault: shared.options.fault.map(|f| f.name().to_string()),
        reduction: None,
        signature: None,
    }
}

/// Whether a finding stands without a replay: a crash or hang would only
/// take the server down again.
fn stands_alone(kind: FindingKind) -> bool {
    matches!(kind, FindingKind::Crash | FindingKind::Hang)
}

/// Writes a finding (to `pending/` until confirmed on a fresh database),
/// confirms it, and reports it.
fn record(
    shared: &Shared,
    thread: u32,
    mut finding: Finding,
    oracle: Option<&dyn Oracle>,
) -> anyhow::Result<()> {
    let comment = shared.provider.comment_prefix();
    let client = shared.provider.client_command();
    let writer = &shared.writer;
    let (path, confirmed) = if stands_alone(finding.kind) {
        let written = writer.write(&finding, comment, &client)?;
        file_finding(shared, &finding, &written)?;
        (written.sql, true)
    } else {
        let pending = writer.write_pending(&finding, comment, &client)?;
        finding.confirmed = confirm(shared, thread, &finding, oracle);
        if finding.confirmed {
            let written = writer.promote(&pending, &finding, comment, &client)?;
            file_finding(shared, &finding, &written)?;
            if let Some(queue) = &*shared.reductions.lock().unwrap_or_else(|e| e.into_inner()) {
                if queue.len() < MAX_QUEUED_REDUCTIONS {
                    let _ = queue.send(ReduceWork {
                        finding: finding.clone(),
                        written: written.clone(),
                    });
                }
            }
            (written.sql, true)
        } else {
            writer.update(&pending, &finding, comment, &client)?;
            let moved = writer.demote(&pending, &shared.options.unconfirmed_dir)?;
            shared.counters.add_unconfirmed();
            (moved.sql, false)
        }
    };
    let _ = shared.events.send(Event::Finding {
        headline: finding.headline(),
        path,
        confirmed,
    });
    Ok(())
}

/// Counts a finding that is on disk among the findings, and indexes it.
fn file_finding(
    shared: &Shared,
    finding: &Finding,
    written: &WrittenFinding,
) -> anyhow::Result<()> {
    shared.counters.add_finding();
    if shared
        .options
        .stop_after_findings
        .is_some_and(|n| shared.counters.findings() >= n)
    {
        shared.stop.store(true, Ordering::SeqCst);
    }
    shared.index.lock().unwrap_or_else(|e| e.into_inner()).add(
        finding,
        shared.provider.dialect(),
        &written.sql,
        None,
    )?;
    Ok(())
}

/// Replays a finding on a fresh database through the same connection stack:
/// a logic finding must disagree again, an error finding must fail again
/// with the same code. Anything else is not reported as a DBMS bug.
fn confirm(shared: &Shared, thread: u32, finding: &Finding, oracle: Option<&dyn Oracle>) -> bool {
    let databases = &shared.databases;
    let Ok(mut scratch) = wait_for_dbms(shared, thread, || {
        databases.create(Purpose::Confirm, thread, databases.next_index())
    }) else {
        return false;
    };
    let conn = scratch.take_conn();
    let mut conn: Box<dyn Connection> = match shared.options.fault {
        Some(f) => Box::new(FaultyConnection::new(conn, f)),
        None => conn,
    };
    let outcome = (|| -> Option<bool> {
        for stmt in &finding.setup {
            conn.execute(stmt).ok()?;
        }
        match (finding.kind, oracle, &finding.case) {
            (FindingKind::Logic, Some(oracle), Some(case)) => {
                let mut results = Vec::new();
                for q in &finding.queries {
                    results.push(conn.query(&q.sql).ok()?);
                }
                Some(matches!(oracle.compare(case, &results),
                    Verdict::Disagree(d) if finding.diff.as_ref().is_some_and(|f| same_diff(f, &d.diff))))
            }
            (FindingKind::UnexpectedError, _, _) => {
                let sql = &finding.queries.first()?.sql;
                let again: Result<(), DbError> = conn.query(sql).map(|_| ());
                Some(matches!(again, Err(e) if e.code == finding.error.as_ref()?.code))
            }
            _ => Some(false),
        }
    })();
    drop(conn);
    drop(scratch);
    outcome.unwrap_or(false)
}
