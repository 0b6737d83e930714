//! The runner: many threads, each creating databases in turn, each database
//! with its own generator seeded from (run seed, thread, database index).
//! Workers write findings to disk themselves, before going on, and report
//! them to one reporter (the calling thread) over a channel; counters are
//! shared atomics, read by the status line.

use crate::dedup::Index;
use crate::findings::{Finding, FindingKind, FindingWriter, FoundQuery, Origin, WrittenFinding};
use crate::reduce::Reducer;
use crate::summary::{BugLine, Counters, StopReason, Summary};
use crossbeam_channel::{Receiver, Sender};
use lancet_core::compare::same_diff;
use lancet_core::fault::{Fault, FaultyConnection};
use lancet_core::rng::database_rng;
use lancet_core::{
    Case, Connection, DatabaseId, DbError, ExecError, Oracle, Provider, Rng, Session, ToSql,
    Verdict,
};
use rand::Rng as _;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
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

/// Everything a worker shares with the others.
struct Shared<'a> {
    provider: &'a dyn Provider,
    dbms_version: &'a str,
    oracles: &'a OracleSet,
    options: &'a RunOptions,
    writer: &'a FindingWriter,
    counters: &'a Counters,
    stop: &'a AtomicBool,
    events: Sender<Event>,
    index: &'a Mutex<Index>,
    reductions: Option<Sender<ReduceWork>>,
}

impl Shared<'_> {
    /// Whether workers should stop: interrupted, timed out or (checked
    /// here, so that `--queries N` is exact) the check limit reached.
    fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self
                .options
                .max_checks
                .is_some_and(|max| self.counters.checks() >= max)
    }
}

/// Runs a campaign until a stop condition and returns its summary.
/// `stop` is shared with the Ctrl-C handler.
pub fn run(
    provider: &dyn Provider,
    oracles: &OracleSet,
    options: &RunOptions,
    writer: &FindingWriter,
    stop: &AtomicBool,
) -> anyhow::Result<Summary> {
    let dbms_version = provider.version()?;
    let counters = Counters::new(oracles.names().len());
    let (tx, rx) = crossbeam_channel::unbounded();
    let start = Instant::now();
    let plan: Vec<(u32, Option<u64>)> = match options.only_database {
        Some((thread, database)) => vec![(thread, Some(database))],
        None => (0..options.threads.max(1)).map(|t| (t, None)).collect(),
    };
    let mut failures = Vec::new();
    let index = Mutex::new(Index::new(writer.dir()));
    let abort_reduction = AtomicBool::new(false);
    let reduced = AtomicU64::new(0);
    let (reduce_tx, reduce_rx) = match options.reduce {
        Some(_) => {
            let (t, r) = crossbeam_channel::unbounded();
            (Some(t), Some(r))
        }
        None => (None, None),
    };
    let stop_reason = std::thread::scope(|scope| {
        if let (Some(rx), Some(limit)) = (reduce_rx, options.reduce) {
            let events = tx.clone();
            let (index, abort, reduced) = (&index, &abort_reduction, &reduced);
            std::thread::Builder::new()
                .name("lancet-reducer".into())
                .spawn_scoped(scope, move || {
                    let reducer =
                        Reducer::new(provider, options.fault, &format!("{}x", options.run_id))
                            .with_time_limit(limit)
                            .with_abort(abort);
                    reduce_loop(
                        &rx, &reducer, provider, writer, index, stop, &events, reduced,
                    );
                })
                .expect("spawning the reducer thread");
        }
        for (thread, only) in plan.iter().copied() {
            let shared = Shared {
                provider,
                dbms_version: &dbms_version,
                oracles,
                options,
                writer,
                counters: &counters,
                stop,
                events: tx.clone(),
                index: &index,
                reductions: reduce_tx.clone(),
            };
            std::thread::Builder::new()
                .name(format!("lancet-worker-{thread}"))
                .spawn_scoped(scope, move || {
                    if let Err(e) = worker(&shared, thread, only) {
                        let _ = shared.events.send(Event::ThreadFailed {
                            thread,
                            error: format!("{e:#}"),
                        });
                    }
                })
                .expect("spawning a worker thread");
        }
        drop(tx);
        drop(reduce_tx);
        report(
            &rx,
            options,
            &counters,
            stop,
            &abort_reduction,
            start,
            &mut failures,
        )
    });
    let mut summary = Summary::new(
        options,
        provider.name(),
        &dbms_version,
        oracles,
        &counters,
        start.elapsed(),
        stop_reason,
        writer.dir(),
    );
    let index = index.into_inner().unwrap_or_else(|e| e.into_inner());
    summary.unique_bugs = index.unique() as u64;
    summary.reduced = reduced.load(Ordering::Relaxed);
    summary.bugs = bug_lines(&index, writer.dir());
    if !failures.is_empty() {
        anyhow::bail!("{}", failures.join("; "));
    }
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
/// Once the run stops, the reduction in progress finishes (an interrupt
/// cuts it short) and findings still queued stay unreduced.
#[allow(clippy::too_many_arguments)]
fn reduce_loop(
    rx: &Receiver<ReduceWork>,
    reducer: &Reducer,
    provider: &dyn Provider,
    writer: &FindingWriter,
    index: &Mutex<Index>,
    stop: &AtomicBool,
    events: &Sender<Event>,
    reduced: &AtomicU64,
) {
    let dialect = provider.dialect();
    for work in rx.iter() {
        if stop.load(Ordering::SeqCst) {
            continue;
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
            writer.update(
                &out,
                &f,
                provider.comment_prefix(),
                &provider.client_command(),
            )?;
            let (signature, count) = index.lock().unwrap_or_else(|e| e.into_inner()).add(
                &f,
                dialect,
                &out.sql,
                Some(&work.written.sql),
            )?;
            Ok((out, r.info, signature, count))
        });
        let _ = match outcome {
            Ok((out, info, signature, count)) => {
                reduced.fetch_add(1, Ordering::Relaxed);
                events.send(Event::Reduced {
                    path: out.sql,
                    from: (info.statements_before, info.statements_after),
                    seconds: info.seconds,
                    signature,
                    count,
                })
            }
            Err(e) => events.send(Event::ReduceFailed {
                path: work.written.sql.clone(),
                error: format!("{e:#}"),
            }),
        };
    }
}

/// The reporter: prints findings as they come and a status line every few
/// seconds, and decides when the run is over.
fn report(
    rx: &Receiver<Event>,
    options: &RunOptions,
    counters: &Counters,
    stop: &AtomicBool,
    abort_reduction: &AtomicBool,
    start: Instant,
    failures: &mut Vec<String>,
) -> StopReason {
    let tick = Duration::from_millis(200);
    let mut last_status = Instant::now();
    let mut reason = StopReason::Finished;
    loop {
        match rx.recv_timeout(tick) {
            Ok(Event::Finding {
                headline,
                path,
                confirmed,
            }) => {
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
            Ok(Event::Reduced {
                path,
                from: (before, after),
                seconds,
                signature,
                count,
            }) => {
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
            Ok(Event::ReduceFailed { path, error }) => {
                eprintln!(
                    "lancet: could not reduce {}: {error} (the finding is kept as found)",
                    path.display()
                );
            }
            Ok(Event::ThreadFailed { thread, error }) => {
                eprintln!("lancet: worker {thread} stopped: {error}");
                failures.push(format!("worker {thread}: {error}"));
                stop.store(true, Ordering::SeqCst);
                reason = StopReason::Error;
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                if reason == StopReason::Finished {
                    if options
                        .max_checks
                        .is_some_and(|max| counters.checks() >= max)
                    {
                        reason = StopReason::Checks;
                    } else if stop.load(Ordering::SeqCst) {
                        reason = StopReason::Interrupted;
                    }
                }
                return reason;
            }
        }
        if !stop.load(Ordering::SeqCst) {
            if let Some(limit) = options.timeout {
                if start.elapsed() >= limit {
                    reason = StopReason::Timeout;
                    stop.store(true, Ordering::SeqCst);
                }
            }
        } else if reason == StopReason::Finished {
            reason = StopReason::Interrupted;
        }
        if reason == StopReason::Interrupted {
            abort_reduction.store(true, Ordering::SeqCst);
        }
        if let Some(every) = options.status_interval {
            if last_status.elapsed() >= every {
                eprintln!("{}", counters.status_line(start.elapsed()));
                last_status = Instant::now();
            }
        }
    }
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

/// Retries `f` while a server is away (crashed, restarting): with backoff,
/// for up to [`RECONNECT_LIMIT`], then gives up with the last error.
fn with_retry<R>(shared: &Shared, mut f: impl FnMut() -> anyhow::Result<R>) -> anyhow::Result<R> {
    let start = Instant::now();
    let mut wait = Duration::from_millis(200);
    loop {
        match f() {
            Ok(r) => return Ok(r),
            Err(e) if !connection_lost(&e) => return Err(e),
            Err(e) if start.elapsed() >= RECONNECT_LIMIT || shared.stop.load(Ordering::Relaxed) => {
                return Err(e.context(format!(
                    "the DBMS did not come back within {} s",
                    RECONNECT_LIMIT.as_secs()
                )))
            }
            Err(_) => {
                std::thread::sleep(wait);
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}

/// Whether an error says the DBMS is unreachable (worth waiting for).
fn connection_lost(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<DbError>()
            .is_some_and(|d| d.kind == lancet_core::FailureKind::ConnectionLost)
    })
}

/// How long a worker waits for a server to come back after a crash.
const RECONNECT_LIMIT: Duration = Duration::from_secs(60);

fn connect(
    shared: &Shared,
    id: &DatabaseId,
) -> anyhow::Result<(Box<dyn Connection>, lancet_core::OwnedDatabase)> {
    let created = with_retry(shared, || shared.provider.create_database(id))?;
    let conn = created.conn;
    Ok((
        match shared.options.fault {
            Some(f) => Box::new(FaultyConnection::new(conn, f)),
            None => conn,
        },
        created.owned,
    ))
}

/// One worker thread: databases `0, 1, 2, ...` (or only `only`).
fn worker(shared: &Shared, thread: u32, only: Option<u64>) -> anyhow::Result<()> {
    let mut index = only.unwrap_or(0);
    let mut idle_databases = 0;
    while !shared.should_stop() {
        let id = DatabaseId {
            run: shared.options.run_id.clone(),
            thread,
            index,
        };
        let (cases, owned) = run_database(shared, &id)?;
        with_retry(shared, || shared.provider.drop_database(&owned))?;
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

/// Creates, fills and tests one database. Returns how many checks its
/// oracles generated, if it ran all its checks (`None` after a finding or a stop).
fn run_database(
    shared: &Shared,
    id: &DatabaseId,
) -> anyhow::Result<(Option<u64>, lancet_core::OwnedDatabase)> {
    let (conn, owned) = connect(shared, id)?;
    Ok((run_on(shared, id, conn)?, owned))
}

fn run_on(
    shared: &Shared,
    id: &DatabaseId,
    conn: Box<dyn Connection>,
) -> anyhow::Result<Option<u64>> {
    let options = shared.options;
    let mut rng = database_rng(options.seed, id.thread, id.index);
    let expected = shared.provider.expected_errors();
    let mut session = Session::new(conn, shared.provider.dialect(), expected);
    if let Some(dir) = &options.log_dir {
        session = session.with_log(statement_log(dir, id.thread, id.index)?);
    }
    let origin = |check: u64| Origin {
        seed: options.seed,
        thread: id.thread,
        database: id.index,
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
            session.flush_log();
            return record(shared, id, finding, None).map(|()| None);
        }
    };
    let mut generator = shared.provider.query_generator(&schema);
    let mut cases = 0;
    for check in 0..options.checks_per_database {
        if shared.should_stop() {
            session.flush_log();
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
                session.flush_log();
                return record(shared, id, *finding, Some(oracle)).map(|()| None);
            }
        }
    }
    session.flush_log();
    Ok(Some(cases))
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

/// Writes a finding, confirms it on a fresh database, and reports it.
fn record(
    shared: &Shared,
    id: &DatabaseId,
    mut finding: Finding,
    oracle: Option<&dyn Oracle>,
) -> anyhow::Result<()> {
    let comment = shared.provider.comment_prefix();
    let client = shared.provider.client_command();
    let written = shared.writer.write(&finding, comment, &client)?;
    finding.confirmed = confirm(shared, id, &finding, oracle);
    let (path, confirmed) = if finding.confirmed || finding.kind == FindingKind::Crash {
        shared.writer.update(&written, &finding, comment, &client)?;
        shared.counters.add_finding();
        if shared
            .options
            .stop_after_findings
            .is_some_and(|n| shared.counters.findings() >= n)
        {
            shared.stop.store(true, Ordering::SeqCst);
        }
        shared.index.lock().unwrap_or_else(|e| e.into_inner()).add(
            &finding,
            shared.provider.dialect(),
            &written.sql,
            None,
        )?;
        // A crash is filed as it is: replaying it would crash the server again.
        if let Some(queue) = &shared.reductions {
            if finding.kind != FindingKind::Crash && queue.len() < MAX_QUEUED_REDUCTIONS {
                let _ = queue.send(ReduceWork {
                    finding: finding.clone(),
                    written: written.clone(),
                });
            }
        }
        (written.sql, true)
    } else {
        shared.writer.update(&written, &finding, comment, &client)?;
        let moved = shared
            .writer
            .demote(&written, &shared.options.unconfirmed_dir)?;
        shared.counters.add_unconfirmed();
        (moved.sql, false)
    };
    let _ = shared.events.send(Event::Finding {
        headline: finding.headline(),
        path,
        confirmed,
    });
    Ok(())
}

/// Replays a finding on a fresh database through the same connection stack:
/// a logic finding must disagree again, an error finding must fail again
/// with the same code. Anything else is not reported as a DBMS bug.
fn confirm(
    shared: &Shared,
    id: &DatabaseId,
    finding: &Finding,
    oracle: Option<&dyn Oracle>,
) -> bool {
    if finding.kind == FindingKind::Crash {
        return false;
    }
    let replay_id = DatabaseId {
        run: format!("{}r", id.run),
        ..id.clone()
    };
    let Ok((mut conn, owned)) = connect(shared, &replay_id) else {
        return false;
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
    let _ = shared.provider.drop_database(&owned);
    outcome.unwrap_or(false)
}
