//! `lancet fuzz --oracle txn` and `lancet bench --oracle txn`: the
//! transaction oracle's campaign, which drives several sessions per
//! database instead of checks on one.

use super::*;
use crate::{BenchArgs, FuzzArgs};
use lancet::databases::{Databases, RunToken};
use lancet::registry::CATALOG;
use lancet::txn::{Timing, TxnOptions};
use lancet_core::txn::IsolationLevel;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Whether `--oracle` names the transaction oracle.
pub fn is_txn(oracle: &str) -> bool {
    oracle == lancet_oracles::txn::NAME
}

/// `--txn-levels`: isolation levels by name.
pub fn parse_levels(text: &[String]) -> anyhow::Result<Vec<IsolationLevel>> {
    text.iter()
        .map(
            |t| match t.to_ascii_lowercase().replace(['_', ' '], "-").as_str() {
                "read-uncommitted" | "ru" => Ok(IsolationLevel::ReadUncommitted),
                "read-committed" | "rc" => Ok(IsolationLevel::ReadCommitted),
                "repeatable-read" | "rr" => Ok(IsolationLevel::RepeatableRead),
                "serializable" | "ser" => Ok(IsolationLevel::Serializable),
                other => anyhow::bail!(
                "unknown isolation level '{other}' (read-uncommitted, read-committed, repeatable-read, serializable)"
            ),
            },
        )
        .collect()
}

pub fn fuzz(args: FuzzArgs) -> anyhow::Result<ExitCode> {
    let t = &args.target;
    if let Some(path) = &args.summary_json {
        check_writable(path, "summary")?;
    }
    if let Some(path) = &args.junit {
        lancet::junit::check_target(path)?;
    }
    let store = super::feed::open_store(args.store.url.as_deref())?;
    let provider = make_provider(t)?;
    anyhow::ensure!(
        provider.transactions().is_some(),
        "--oracle txn needs a DBMS whose transactions lancet models (the servers and SQLite); {} \
         is not one",
        provider.name()
    );
    let known = match &args.known {
        Some(dir) => lancet::known::load(dir, provider.name(), provider.dialect(), &CATALOG)?,
        None => Vec::new(),
    };
    let fault = super::fault(&t.inject_fault)?;
    let levels = parse_levels(&args.txn_levels)?;
    let seed = args.seed.unwrap_or_else(default_seed);
    let shard = super::shard::shard_of(&args)?;
    let token = RunToken::new();
    let run_id = lancet::run_id(seed, shard, &token);
    let (run_dir, ledger) = start_run_dir(&args.out, &run_id)?;
    let findings = run_dir.join("findings");
    std::fs::create_dir_all(&findings)
        .with_context(|| format!("cannot create {}", findings.display()))?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let stop = Arc::new(AtomicBool::new(false));
    install_interrupt(stop.clone())?;
    let part = if shard.is_part() {
        format!(
            ", shard {shard} (campaign threads {})",
            super::shard::shard_threads(shard, threads)
        )
    } else {
        String::new()
    };
    eprintln!(
        "lancet: run {run_id}: {} with txn on {threads} thread(s), seed {seed}{part}; output in {}",
        t.dbms,
        run_dir.display()
    );
    let databases = Arc::new(Databases::new(provider.clone(), token, Some(ledger)));
    let known = super::known::replay_known(
        known,
        &databases,
        args.known.as_deref(),
        t.inject_fault.as_deref(),
    )?;
    let options = TxnOptions {
        run_id,
        seed,
        threads,
        shard,
        only_database: args.thread.zip(args.database),
        log_dir: args
            .log_statements
            .then(|| statements_dir(&run_dir))
            .transpose()?,
        timeout: args.timeout.map(Duration::from_secs),
        max_schedules: args.queries,
        levels,
        fault,
        reduce: (!args.no_reduce).then(|| Duration::from_secs(args.reduce_time.max(1))),
        timing: Timing::default(),
        schedules_per_database: t.checks_per_database.unwrap_or(500),
        flood_limit: (args.flood_limit > 0).then_some(args.flood_limit),
        stop_after_findings: None,
        status_interval: (args.status_interval > 0)
            .then(|| Duration::from_secs(args.status_interval)),
        run_dir: Some(run_dir.clone()),
        sample_interval: Duration::from_secs(args.sample_interval.max(1)),
    };
    let feeder = super::feed::start_feeder(store, &run_dir)?;
    let mut summary = lancet::txn::run(&databases, &*provider, &options, &findings, &stop)?;
    known.apply(&mut summary);
    publish(&summary, &run_dir, args.summary_json.as_ref());
    if let Some(path) = &args.junit {
        if let Err(e) = lancet::junit::write(path, &summary) {
            eprintln!("lancet: {e:#}");
        }
    }
    if !super::feed::finish_feeder(feeder, &run_dir) {
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::from(summary.exit_code()))
}

/// Schedules per second at each thread count.
pub fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let t = &args.target;
    let provider = make_provider(t)?;
    let levels = parse_levels(&[])?;
    let scratch = std::env::temp_dir().join(format!("lancet-bench-txn-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    println!(
        "lancet bench: {} {}, oracle txn, {} s per measurement",
        provider.name(),
        provider.version()?,
        args.seconds
    );
    println!("threads  schedules  schedules/s  undetermined  findings");
    let stop = Arc::new(AtomicBool::new(false));
    install_interrupt(stop.clone())?;
    let databases = Arc::new(Databases::new(provider.clone(), RunToken::new(), None));
    for &threads in &args.threads {
        let options = TxnOptions {
            seed: args.seed,
            threads,
            timeout: Some(Duration::from_secs(args.seconds)),
            levels: levels.clone(),
            schedules_per_database: 100_000,
            ..TxnOptions::default()
        };
        let s = lancet::txn::run(&databases, &*provider, &options, &scratch, &stop)?;
        let undetermined: u64 = s.transactions.values().map(|c| c.undetermined).sum();
        println!(
            "{threads:>7}  {:>9}  {:>11.1}  {undetermined:>12}  {:>8}",
            s.checks, s.checks_per_second, s.findings
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(ExitCode::SUCCESS)
}

/// `selftest`'s part for the transaction oracle: each of its planted
/// faults must be caught within `max_schedules` schedules. Returns the
/// faults missed; prints a line per fault as the other oracles do.
pub fn selftest(
    provider: &dyn lancet_core::Provider,
    databases: &Arc<Databases>,
    seed: u64,
    max_schedules: u64,
    dir: &std::path::Path,
    stop: &AtomicBool,
) -> anyhow::Result<Vec<&'static str>> {
    let mut missed = Vec::new();
    for fault in lancet_oracles::txn::faults() {
        let findings = dir.join(lancet_oracles::txn::NAME).join(fault.name());
        std::fs::create_dir_all(&findings)
            .with_context(|| format!("cannot create {}", findings.display()))?;
        let options = TxnOptions {
            seed,
            timeout: Some(Duration::from_secs(300)),
            max_schedules: Some(max_schedules),
            fault: Some(fault.clone()),
            schedules_per_database: max_schedules,
            stop_after_findings: Some(1),
            ..TxnOptions::default()
        };
        let s = lancet::txn::run(databases, provider, &options, &findings, stop)?;
        let caught = s.findings > 0;
        let first = s
            .bugs
            .first()
            .map(|b| {
                format!(
                    "{} ({})",
                    findings.join(&b.reproducer).display(),
                    b.signature
                )
            })
            .unwrap_or_default();
        println!(
            "{:<15} {:<14} {:>7} {:>8}  {}",
            lancet_oracles::txn::NAME,
            fault.name(),
            if caught { "yes" } else { "NO" },
            s.checks,
            first
        );
        for w in &s.warnings {
            println!("  {w}");
        }
        if !caught {
            missed.push(fault.name());
        }
    }
    Ok(missed)
}
