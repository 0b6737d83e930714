//! One worker thread: creates databases in turn, fills each from its own
//! seeded RNG, runs oracle checks on it through the one check executor,
//! and hands findings to [`super::record`].

use super::record::record;
use super::report::Event;
use super::Shared;
use crate::databases::{Purpose, Scratch};
use crate::findings::{Finding, Origin};
use lancet_core::rng::database_rng;
use lancet_core::{run_check, CheckOutcome, DbError, FailureKind, GenerateContext, Session};
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How many statement logs of databases that ended without a finding each
/// thread keeps (the newest): a long campaign's logs stay bounded, and the
/// logs of databases with findings, or the one running when a run stopped,
/// are all kept.
pub const CLEAN_LOGS_KEPT: usize = 16;

fn statement_log_path(dir: &std::path::Path, thread: u32, database: u64) -> std::path::PathBuf {
    dir.join(format!("t{thread}-d{database}.sql"))
}

/// The statement log of one database (`--log-statements`).
fn statement_log(
    dir: &std::path::Path,
    thread: u32,
    database: u64,
) -> anyhow::Result<Box<dyn Write + Send>> {
    let path = statement_log_path(dir, thread, database);
    let file = std::fs::File::create(&path)
        .map_err(|e| anyhow::anyhow!("cannot create statement log {}: {e}", path.display()))?;
    Ok(Box::new(std::io::BufWriter::new(file)))
}

/// Retries `f` while the DBMS is away or full (crashed, restarting, no
/// free connection slots): with back-off, for as long as it takes, until
/// the run is stopped. Other errors are returned at once.
pub(super) fn wait_for_dbms<R>(
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
pub(super) fn worker(shared: &Shared, thread: u32, only: Option<u64>) -> anyhow::Result<()> {
    let mut index = only.unwrap_or(0);
    let mut idle_databases = 0;
    // Statement logs of this thread's databases that ended without a
    // finding, oldest first: only the last few are kept.
    let mut clean_logs: std::collections::VecDeque<std::path::PathBuf> = Default::default();
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
        if let (Some(_), Some(dir)) = (cases, &shared.options.log_dir) {
            clean_logs.push_back(statement_log_path(dir, thread, index));
            while clean_logs.len() > CLEAN_LOGS_KEPT {
                if let Some(old) = clean_logs.pop_front() {
                    let _ = std::fs::remove_file(old);
                }
            }
        }
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
    if let Some(dir) = &options.log_dir {
        match statement_log(dir, thread, database) {
            Ok(log) => scratch.session().set_log(log),
            Err(e) => warn_log(shared, &format!("{e:#}")),
        }
    }
    let origin = |check: u64| Origin {
        seed: options.seed,
        thread,
        database,
        check,
    };
    let source = shared.finding_source();
    let session = scratch.session();
    if options.profile_shapes {
        session.shapes = Some(Default::default());
    }
    let populated = shared.provider.populate(&mut rng, session);
    let mut accounted = session.stats;
    if let Some(shapes) = &mut session.shapes {
        shared.counters.add_shapes(std::mem::take(shapes));
    }
    shared
        .counters
        .add_statements(accounted.statements, accounted.dbms_time);
    let generated = match populated {
        Ok(generated) => generated,
        Err(e) => {
            let finding = Finding::failure(&source, None, origin(0), session.setup().to_vec(), e);
            finish_log(shared, session);
            drop(scratch);
            return record(shared, thread, finding).map(|()| None);
        }
    };
    let mut generator = generated.query_generator();
    let knobs = shared.provider.knobs();
    let mut cases = 0;
    for check in 0..options.checks_per_database {
        if shared.should_stop() {
            finish_log(shared, session);
            return Ok(None);
        }
        let which = shared.oracles.pick(&mut rng);
        let oracle = shared.oracles.get(which);
        let case = oracle.generate(&mut GenerateContext {
            rng: &mut rng,
            generator: &mut *generator,
            data: &mut *session,
            knobs: &knobs,
        });
        let found = match case {
            None => None,
            Some(case) => {
                cases += 1;
                match run_check(session, oracle, &case) {
                    Ok(CheckOutcome::Agreed { nonempty, .. }) => {
                        shared.counters.add_check(which, nonempty);
                        None
                    }
                    Ok(CheckOutcome::Skipped(_)) => {
                        shared.counters.add_skipped();
                        None
                    }
                    Ok(CheckOutcome::Disagreed {
                        disagreement,
                        queries,
                    }) => Some(Finding::logic(
                        &source,
                        origin(check),
                        session.setup().to_vec(),
                        case,
                        disagreement,
                        &queries,
                    )),
                    Ok(CheckOutcome::Failed(e)) => Some(Finding::failure(
                        &source,
                        Some(oracle.name()),
                        origin(check),
                        session.setup().to_vec(),
                        e,
                    )),
                    // The oracle cannot build queries from the case it just
                    // drew: a bug of lancet's, not of the DBMS.
                    Err(e) => {
                        anyhow::bail!("oracle {} drew a case it cannot run: {e}", oracle.name())
                    }
                }
            }
        };
        if let Some(shapes) = &mut session.shapes {
            shared.counters.add_shapes(std::mem::take(shapes));
        }
        let stats = session.stats;
        shared.counters.add_statements(
            stats.statements - accounted.statements,
            stats.dbms_time - accounted.dbms_time,
        );
        accounted = stats;
        if let Some(finding) = found {
            shared.counters.add_check(which, true);
            finish_log(shared, session);
            drop(generator);
            // The database is dropped (or its drop queued) before the
            // finding is confirmed on a fresh one.
            drop(scratch);
            return record(shared, thread, finding).map(|()| None);
        }
    }
    finish_log(shared, session);
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
