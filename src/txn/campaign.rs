//! A transaction campaign (`lancet fuzz --oracle txn`): threads, each
//! with a database of its own and a few sessions on it, run schedules
//! drawn from the database's RNG. A schedule that shows an anomaly runs
//! again on a fresh table to see that it repeats, is written at once, and
//! is then reduced to the fewest sessions, statements and rows that still
//! show the same anomaly at the same level.

use super::bench::open_bench;
use super::options::TxnOptions;
use super::shared::Shared;
use crate::databases::{Databases, Purpose};
use crate::run_files::SampleLog;
use crate::summary::{RunFacts, Summary};
use lancet_core::rng::database_rng;
use lancet_core::txn::{IsolationLevel, LevelRules};
use lancet_core::Provider;
use lancet_oracles::txn::{Schedule, ScheduleOrigin, TxnFault, NAME};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How the summary names the schedules whose sessions mix levels.
const MIXED: &str = "mixed levels";

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
    if let Some(fault) = options.fault.as_ref().filter(|f| TxnFault::of(f).is_none()) {
        let known: Vec<String> = lancet_oracles::txn::faults()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        anyhow::bail!(
            "the planted fault {} does not act on transaction schedules (--oracle {NAME} plants {})",
            fault.name(),
            known.join(", ")
        );
    }
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
        options.shard,
        options.threads,
        (provider.name(), &dbms_version),
        &[NAME],
    )?;
    let shared = Shared::new(databases, tx, provider, rules, options, dir, stop);
    let threads = options.threads.max(1);
    // Each worker runs a campaign thread of the shard, or the one
    // database `--thread/--database` regenerates.
    let plan: Vec<(u32, Option<u64>)> = match options.only_database {
        Some((thread, database)) => vec![(thread, Some(database))],
        None => (0..threads)
            .map(|t| (options.shard.campaign_thread(t), None))
            .collect(),
    };
    shared.running.store(plan.len() as u64, Ordering::SeqCst);
    std::thread::scope(|scope| {
        for (thread, only) in plan {
            let shared = &shared;
            scope.spawn(move || {
                thread_loop(shared, thread, only);
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
        shard: options.shard,
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

/// One database of a thread after another, until the campaign stops. A
/// thread whose databases fail three times in a row stops: a failure of
/// the run.
/// With `only`, that one database of the thread, once.
fn thread_loop(shared: &Shared<'_>, thread: u32, only: Option<u64>) {
    let mut database = only.unwrap_or(0);
    let mut failures = 0;
    while !shared.should_stop() {
        if only.is_some_and(|k| database > k) {
            break;
        }
        match run_database(shared, thread, database) {
            Ok(()) => failures = 0,
            Err(e) => {
                failures += 1;
                let what = format!("thread {thread}, database {database}: {e:#}");
                if failures >= 3 || only.is_some() {
                    let why = if only.is_some() {
                        "the one database asked for"
                    } else {
                        "the third failure in a row: the thread stopped"
                    };
                    shared
                        .failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(format!("{what} ({why})"));
                    return;
                }
                shared.warn(what);
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        database += 1;
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
        let run = bench.run(shared, &schedule)?;
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
