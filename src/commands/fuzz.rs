//! `lancet fuzz` and `lancet bench`: a campaign, and the same campaign
//! timed at several thread counts.

use super::feed::{finish_feeder, open_store, start_feeder, STORE_GRACE, STORE_INTERVAL};
use super::shard::{shard_of, shard_threads};
use super::*;
use crate::{BenchArgs, FuzzArgs};
use lancet::databases::{Databases, RunToken};
use lancet::registry::CATALOG;
use lancet::reproducer::FindingWriter;
use lancet::runner::{self, RunOptions, RunSetup};
use lancet::shard::Shard;
use lancet::store::feed::Feeder;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub fn fuzz(args: FuzzArgs) -> anyhow::Result<ExitCode> {
    let t = &args.target;
    if let Some(path) = &args.summary_json {
        check_writable(path, "summary")?;
    }
    if let Some(path) = &args.junit {
        lancet::junit::check_target(path)?;
    }
    let store = open_store(args.store.url.as_deref())?;
    let provider = make_provider(t)?;
    let known = match &args.known {
        Some(dir) => lancet::known::load(dir, provider.name(), provider.dialect(), &CATALOG)?,
        None => Vec::new(),
    };
    let sessions = sessions_run(
        &t.inject_fault,
        &super::TxnArgs {
            levels: args.txn_levels.clone(),
            strict: args.txn_strict,
        },
        (!args.no_reduce).then(|| Duration::from_secs(args.reduce_time.max(1))),
    )?;
    let (oracles, not_here) = oracles_for(&t.oracle, &provider, &sessions)?;
    let oracles = Arc::new(oracles);
    let shard = shard_of(&args)?;
    let seed = args.seed.unwrap_or_else(default_seed);
    let token = RunToken::new();
    let run_id = lancet::run_id(seed, shard, &token);
    let (run_dir, ledger) = start_run_dir(&args.out, &run_id)?;
    let writer = Arc::new(FindingWriter::new(&run_dir.join("findings"))?);
    let options = run_options(&args, &run_id, seed, shard, &run_dir)?;
    let threads = options.threads;
    let stop = Arc::new(AtomicBool::new(false));
    install_interrupt(stop.clone())?;
    let part = if shard.is_part() {
        format!(
            ", shard {shard} (campaign threads {})",
            shard_threads(shard, threads)
        )
    } else {
        String::new()
    };
    eprintln!(
        "lancet: run {run_id}: {} with {}{not_here} on {threads} thread(s), seed {seed}{part}; output in {}",
        t.dbms,
        oracles.names().join(", "),
        run_dir.display()
    );
    let databases = Arc::new(Databases::new(provider.clone(), token, Some(ledger)));
    // A sessions oracle's planted fault acts in its own driver (it has it
    // from `sessions`), and known bugs of its kind replay under it.
    let own_fault = match oracles.sessions_oracle() {
        Some(_) => t.inject_fault.as_deref(),
        None => {
            databases.set_fault(query_fault(&t.inject_fault)?);
            None
        }
    };
    let known = super::known::replay_known(known, &databases, args.known.as_deref(), own_fault)?;
    let feeder = start_feeder(store, &run_dir)?;
    let mut summary = runner::run(RunSetup {
        catalog: &lancet::registry::CATALOG,
        provider,
        oracles,
        options,
        writer,
        databases,
        stop,
    })?;
    known.apply(&mut summary);
    publish(&summary, &run_dir, args.summary_json.as_ref());
    if let Some(path) = &args.junit {
        if let Err(e) = lancet::junit::write(path, &summary) {
            eprintln!("lancet: {e:#}");
        }
    }
    if !finish_feeder(feeder, &run_dir) {
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::from(summary.exit_code()))
}

/// The run's options from the command line: its limits, statement logs
/// (whose directory this creates), reduction, flood control and shard.
fn run_options(
    args: &FuzzArgs,
    run_id: &str,
    seed: u64,
    shard: Shard,
    run_dir: &Path,
) -> anyhow::Result<RunOptions> {
    let t = &args.target;
    let log_dir = args
        .log_statements
        .then(|| statements_dir(run_dir))
        .transpose()?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    Ok(RunOptions {
        timeout: args.timeout.map(Duration::from_secs),
        max_checks: args.queries,
        only_database: args.thread.zip(args.database),
        log_dir,
        status_interval: (args.status_interval > 0)
            .then(|| Duration::from_secs(args.status_interval)),
        reduce: (!args.no_reduce).then(|| lancet::runner::ReduceOptions {
            per_finding: Duration::from_secs(args.reduce_time.max(1)),
            reducers: args.reducers.unwrap_or_else(|| {
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
                threads.clamp(1, cores.max(1))
            }),
            finish: Duration::from_secs(args.finish_reductions),
        }),
        flood_limit: (args.flood_limit > 0).then_some(args.flood_limit),
        child: target_child(t)?,
        shard,
        run_dir: Some(run_dir.to_path_buf()),
        sample_interval: Duration::from_secs(args.sample_interval.max(1)),
        ..plain_options(
            run_id.to_string(),
            seed,
            threads,
            checks_per_database(t)?,
            run_dir,
        )
    })
}

pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let t = &args.target;
    let provider = make_provider(t)?;
    let store = open_store(args.store.as_deref())?.map(|(location, _)| location);
    let token = RunToken::new();
    let tag = token.to_string();
    let scratch = std::env::temp_dir().join(format!("lancet-bench-{token}"));
    println!(
        "lancet bench: {} ({}), oracle {}, {} s per measurement",
        t.dbms,
        provider.version()?,
        t.oracle,
        args.seconds
    );
    // `all` is measured as a whole and oracle by oracle.
    let sessions = sessions_run(&t.inject_fault, &super::TxnArgs::default(), None)?;
    let (everything, _) = oracles_for(&t.oracle, &provider, &sessions)?;
    let mut measured: Vec<String> = vec![t.oracle.clone()];
    if t.oracle == "all" {
        measured.extend(everything.names().iter().map(|n| n.to_string()));
    }
    print_bench_header();
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = install_interrupt(stop.clone())?;
    let databases = Arc::new(Databases::new(provider.clone(), token, None));
    if everything.sessions_oracle().is_none() {
        databases.set_fault(query_fault(&t.inject_fault)?);
    }
    let mut slowest = Vec::new();
    let mut findings = 0;
    'measure: for oracle in &measured {
        for &threads in &args.threads {
            let run_id = match store {
                // Unique in a store that several benches feed.
                Some(_) => format!("bench-{tag}-{oracle}-{threads}"),
                None => format!("bench-{oracle}-{threads}"),
            };
            let run_dir = scratch.join(&run_id);
            let writer = Arc::new(FindingWriter::new(&run_dir.join("findings"))?);
            let feeder = match &store {
                Some(location) => Some(Feeder::start(
                    location.clone(),
                    None,
                    run_dir.clone(),
                    &super::feed::CAMPAIGN_FINDINGS,
                    STORE_INTERVAL,
                )?),
                None => None,
            };
            let options = RunOptions {
                timeout: Some(Duration::from_secs(args.seconds)),
                profile_shapes: true,
                child: target_child(t)?,
                run_dir: feeder.as_ref().map(|_| run_dir.clone()),
                ..plain_options(
                    run_id,
                    args.seed,
                    threads,
                    checks_per_database(t)?,
                    &scratch,
                )
            };
            let s = runner::run(RunSetup {
                catalog: &lancet::registry::CATALOG,
                provider: provider.clone(),
                oracles: Arc::new(oracles_for(oracle, &provider, &sessions)?.0),
                options,
                writer,
                databases: databases.clone(),
                stop: stop.clone(),
            })?;
            print_bench_row(oracle, threads, &s);
            if let Some(feeder) = feeder {
                write_summary(&s, &run_dir, None);
                let outcome = feeder.finish(STORE_GRACE);
                if !outcome.complete {
                    println!("         STORE {}", outcome.error.unwrap_or_default());
                }
            }
            findings += s.findings;
            if oracle == &t.oracle && threads == *args.threads.last().unwrap_or(&1) {
                slowest = s.slowest_shapes.clone();
            }
            if interrupted.load(Ordering::SeqCst) {
                break 'measure;
            }
            stop.store(false, Ordering::SeqCst);
        }
    }
    println!(
        "where the DBMS time goes ({}, {} thread(s); statements counted with their round trip):",
        t.oracle,
        args.threads.last().unwrap_or(&1)
    );
    for l in &slowest {
        println!(
            "  {:>5.1}%  {:>9} statements  {:>9.0} us each  {}",
            100.0 * l.share,
            l.statements,
            l.mean_us,
            l.shape
        );
    }
    // A finding is a finding, even in a benchmark: its reproducers stay.
    if findings > 0 {
        println!(
            "lancet bench: {findings} finding(s); their reproducers are kept in {}",
            scratch.display()
        );
    } else {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    Ok(ExitCode::SUCCESS)
}

/// The two header lines of `lancet bench`'s table.
fn print_bench_header() {
    println!(
        "{:<14} {:>7} {:>9} {:>11} {:>8} {:>10} {:>8} {:>10} {:>9} {:>8}",
        "oracle",
        "threads",
        "checks/s",
        "statements",
        "stmts/",
        "non-empty",
        "skipped",
        "DBMS time",
        "findings",
        "plans/"
    );
    println!(
        "{:<14} {:>7} {:>9} {:>11} {:>8} {:>10} {:>8} {:>10} {:>9} {:>8}",
        "", "", "", "/s", "check", "", "", "", "", "1k chk"
    );
}

/// One measurement of `lancet bench` (an oracle at a thread count) as a
/// row of its table, and the run's failures below it.
fn print_bench_row(oracle: &str, threads: u32, s: &lancet::summary::Summary) {
    let attempts = (s.checks + s.skipped_checks).max(1) as f64;
    println!(
        "{:<14} {:>7} {:>9.0} {:>11.0} {:>8.2} {:>9.0}% {:>7.1}% {:>9.0}% {:>9} {:>8.0}",
        oracle,
        threads,
        s.checks_per_second,
        s.statements_per_second,
        s.statements as f64 / s.checks.max(1) as f64,
        100.0 * s.nonempty_share,
        100.0 * s.skipped_checks as f64 / attempts,
        100.0 * s.dbms_time_share,
        s.findings,
        1000.0 * s.distinct_plans as f64 / s.checks.max(1) as f64
    );
    for f in &s.failures {
        println!("         FAILED {f}");
    }
}
