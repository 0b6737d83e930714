//! One worker thread: runs databases in turn ([`super::database`], on this
//! thread or in the thread's child process) and hands their findings to
//! [`super::record`].

use super::child::ChildRunner;
use super::database::{
    run_database as run_plan, statement_log_path, DatabaseEnd, DatabasePlan, Progress,
};
use super::dbms_wait::wait_for_dbms;
use super::record::record;
use super::report::warn_log;
use super::Shared;
use crate::databases::Purpose;
use std::time::Duration;

/// How many statement logs of databases that ended without a finding each
/// thread keeps (the newest): a long campaign's logs stay bounded, and the
/// logs of databases with findings, or the one running when a run stopped,
/// are all kept.
pub const CLEAN_LOGS_KEPT: usize = 16;

/// A child process that died outside the engine ([`DatabaseEnd::Lost`]).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct LostOutsideTheEngine(String);

/// A database of a sessions oracle that failed (its sessions could not
/// open, a schedule's table could not be made): the worker goes on with
/// the next unless it keeps happening.
#[derive(Debug, thiserror::Error)]
#[error("{0:#}")]
struct DatabaseFailed(anyhow::Error);

/// After this many databases in a row lost with their child process
/// outside the engine, the worker stops: lancet itself is failing there.
const LOST_LIMIT: u32 = 3;

/// One worker thread: databases `0, 1, 2, ...` (or only `only`).
pub(super) fn worker(shared: &Shared, thread: u32, only: Option<u64>) -> anyhow::Result<()> {
    let mut index = only.unwrap_or(0);
    let mut idle_databases = 0;
    // Statement logs of this thread's databases that ended without a
    // finding, oldest first: only the last few are kept.
    let mut clean_logs: std::collections::VecDeque<std::path::PathBuf> = Default::default();
    // The child process this thread's databases run in, if the run
    // isolates its engine; started on first use, and again after a crash.
    let mut child: Option<ChildRunner> = None;
    let mut lost_in_a_row = 0;
    while !shared.should_stop() {
        // A database in a child counts its own checks: it gets a share of
        // what `--queries` leaves, which no other can take.
        let budget = match shared.options.child {
            Some(_) => shared.reserve_checks(),
            None => None,
        };
        if budget == Some(0) {
            // All left is promised to databases running on other threads.
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        let cases = match run_database(shared, thread, index, budget, &mut child) {
            Err(e) if e.is::<LostOutsideTheEngine>() && lost_in_a_row < LOST_LIMIT => {
                lost_in_a_row += 1;
                warn_log(
                    shared,
                    &format!("worker {thread}, database {index}: {e}; the worker goes on in a new process"),
                );
                index += 1;
                continue;
            }
            Err(e)
                if e.is::<DatabaseFailed>() && only.is_none() && lost_in_a_row + 1 < LOST_LIMIT =>
            {
                lost_in_a_row += 1;
                let _ = shared.events.send(super::report::Event::Warning(format!(
                    "thread {thread}, database {index}: {e}"
                )));
                std::thread::sleep(Duration::from_secs(1));
                index += 1;
                continue;
            }
            end => end?,
        };
        lost_in_a_row = 0;
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

/// Where a database run on this thread reports: the run's shared counters.
struct InThread<'a> {
    shared: &'a Shared,
}

impl Progress for InThread<'_> {
    fn should_stop(&self) -> bool {
        self.shared.should_stop()
    }
    fn check(&mut self, oracle: usize, nonempty: bool) {
        self.shared.counters.add_check(oracle, nonempty);
    }
    fn skipped(&mut self) {
        self.shared.counters.add_skipped();
    }
    fn statements(&mut self, count: u64, dbms_time: Duration) {
        self.shared.counters.add_statements(count, dbms_time);
    }
    fn shapes(&mut self, shapes: lancet_core::ShapeTimes) {
        self.shared.counters.add_shapes(shapes);
    }
    fn plans(&mut self, new: u64) {
        self.shared.counters.add_plans(new);
    }
    fn warn(&mut self, what: String) {
        warn_log(self.shared, &what);
    }
}

/// Fills and tests one database, then drops it: on this thread, or in a
/// child process when the run isolates its engine. Returns how many checks
/// its oracles generated, if it ran all its checks (`None` after a finding
/// or a stop).
fn run_database(
    shared: &Shared,
    thread: u32,
    database: u64,
    budget: Option<u64>,
    child: &mut Option<ChildRunner>,
) -> anyhow::Result<Option<u64>> {
    if let Some(oracle) = shared.oracles.sessions_oracle() {
        return run_sessions_database(shared, oracle, thread, database);
    }
    let end = if let Some(program) = &shared.options.child {
        let mut used = 0;
        let end = match child {
            Some(r) => Ok(r),
            None => ChildRunner::start(program, shared).map(|r| child.insert(r)),
        }
        .and_then(|runner| runner.run_database(shared, thread, database, budget, &mut used));
        if let Some(budget) = budget {
            // What this database did not use goes back.
            shared.release_checks(budget.saturating_sub(used));
        }
        if child.as_ref().is_some_and(|r| !r.is_alive()) {
            *child = None;
        }
        end?
    } else {
        let scratch = wait_for_dbms(shared, thread, || {
            shared.databases.create(Purpose::Worker, thread, database)
        });
        let mut scratch = match scratch {
            Ok(s) => s,
            Err(_) if shared.stopped() => return Ok(None),
            Err(e) => return Err(e.context("cannot create a database")),
        };
        let plan = DatabasePlan {
            provider: &*shared.provider,
            oracles: &shared.oracles,
            source: shared.finding_source(),
            seed: shared.options.seed,
            thread,
            database,
            checks_per_database: shared.options.checks_per_database,
            log_dir: shared.options.log_dir.as_deref(),
            profile_shapes: shared.options.profile_shapes,
        };
        let end = run_plan(&plan, &mut InThread { shared }, scratch.session());
        // The database is dropped (or its drop queued) before a finding is
        // confirmed on a fresh one.
        drop(scratch);
        end?
    };
    match end {
        DatabaseEnd::Done { cases } => Ok(Some(cases)),
        DatabaseEnd::Stopped => Ok(None),
        DatabaseEnd::Lost(e) => Err(anyhow::Error::new(LostOutsideTheEngine(e))),
        DatabaseEnd::Found(finding) => record(shared, thread, *finding).map(|()| None),
    }
}

/// One database of a sessions oracle, on this thread: the oracle opens
/// its sessions on it and runs its checks; the database is dropped after.
/// A database that fails is said and the thread goes on with the next,
/// unless it is the third in a row (then the worker stops, a failure of
/// the run) or the one database asked for.
fn run_sessions_database(
    shared: &Shared,
    oracle: &dyn lancet_core::PreparedSessions,
    thread: u32,
    database: u64,
) -> anyhow::Result<Option<u64>> {
    let scratch = wait_for_dbms(shared, thread, || {
        shared.databases.create(Purpose::Worker, thread, database)
    });
    let scratch = match scratch {
        Ok(s) => s,
        Err(_) if shared.stopped() => return Ok(None),
        Err(e) => return Err(e.context("cannot create a database")),
    };
    let ran = super::sessions::run_database(shared, oracle, scratch.owned(), thread, database);
    drop(scratch);
    match ran {
        Ok(()) => Ok(Some(1)),
        Err(e) => Err(anyhow::Error::new(DatabaseFailed(e))),
    }
}
