//! `lancet selftest`: every oracle must catch its planted fault.

use super::*;
use crate::SelftestArgs;
use lancet::databases::{Databases, RunToken};
use lancet::registry::{self, ProviderOptions};
use lancet::reproducer::FindingWriter;
use lancet::runner::{self, OracleSet, RunOptions, RunSetup};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub fn selftest(args: SelftestArgs) -> anyhow::Result<ExitCode> {
    let provider: Arc<dyn lancet_core::Provider> = Arc::from(registry::provider(
        &args.dbms,
        &ProviderOptions {
            expected_errors: args.expected_errors.clone(),
            url: args.url.clone(),
            workers: super::workers(&args.dbms, &args.isolation)?,
            ..ProviderOptions::default()
        },
    )?);
    let token = RunToken::new();
    let run_id = format!(
        "selftest-{}",
        lancet::run_id(args.seed, lancet::shard::Shard::WHOLE, &token)
    );
    let (run_dir, ledger) = start_run_dir(&args.out, &run_id)?;
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = install_interrupt(stop.clone())?;
    println!(
        "lancet selftest: {} ({}); each oracle must catch its planted fault within {} checks",
        args.dbms,
        provider.version()?,
        args.max_checks
    );
    println!(
        "{:<15} {:<14} {:>7} {:>8}  reproducer",
        "oracle", "fault", "caught", "checks"
    );
    let databases = Arc::new(Databases::new(provider.clone(), token, Some(ledger)));
    let all = lancet_oracles::all();
    let total = all.len();
    let (mut missed, mut ran, mut broken) = (Vec::new(), 0, Vec::new());
    for registered in all {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        let name = registered.oracle.name();
        let fault = registered.oracle.planted_fault();
        databases.set_fault(Some(fault.clone()));
        let dir = run_dir.join(name);
        let writer = Arc::new(FindingWriter::new(&dir.join("findings"))?);
        let run = OracleRun {
            args: &args,
            run_id: &run_id,
            provider: &provider,
            databases: &databases,
            stop: &stop,
        };
        let s = run.under_its_fault(registered.oracle, &dir, &writer)?;
        if interrupted.load(Ordering::SeqCst) && s.findings == 0 {
            println!(
                "{name:<15} {:<14} {:>7} {:>8}  interrupted",
                fault.name(),
                "-",
                s.checks
            );
            break;
        }
        ran += 1;
        // An oracle this DBMS offers nothing to (PQS without an evaluator).
        if s.findings == 0
            && s.failures
                .iter()
                .any(|f| f.contains("found nothing to test"))
        {
            println!(
                "{:<15} {:<14} {:>7} {:>8}  not supported on {}: no checks generated",
                name,
                fault.name(),
                "n/a",
                0,
                args.dbms
            );
            stop.store(false, Ordering::SeqCst);
            continue;
        }
        let caught = s.findings > 0;
        let reproducer = if caught {
            lancet::reproducer::first_reproducer(writer.dir())
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        } else if !s.failures.is_empty() {
            broken.push(format!("{name}: {}", s.failures.join("; ")));
            missed.push(name);
            format!("could not run: {}", s.failures.join("; "))
        } else {
            missed.push(name);
            String::new()
        };
        println!(
            "{:<15} {:<14} {:>7} {:>8}  {}",
            name,
            fault.name(),
            if caught { "yes" } else { "NO" },
            s.checks,
            reproducer
        );
        for l in &s.leftover_databases {
            println!("  left on the server: {}: {}", l.name, l.why);
        }
        stop.store(false, Ordering::SeqCst);
    }
    // The transaction oracle, where the DBMS has transactions lancet
    // models: each of its faults within as many schedules as checks.
    if provider.transactions().is_some() && !interrupted.load(Ordering::SeqCst) {
        let schedules = args.max_checks.min(300);
        missed.extend(super::txn::selftest(
            &*provider, &databases, args.seed, schedules, &run_dir, &stop,
        )?);
    }
    if ran < total {
        println!(
            "selftest interrupted: {ran} of {total} oracles ran; this proves nothing about the others"
        );
        return Ok(ExitCode::from(3));
    }
    if missed.is_empty() {
        println!("selftest passed: every oracle caught its fault");
        Ok(ExitCode::SUCCESS)
    } else if !broken.is_empty() {
        println!("selftest FAILED: {} could not run", broken.join("; "));
        Ok(ExitCode::from(3))
    } else {
        println!("selftest FAILED: {} missed their fault", missed.join(", "));
        Ok(ExitCode::from(1))
    }
}

/// What every oracle's run in a selftest shares.
struct OracleRun<'a> {
    args: &'a SelftestArgs,
    run_id: &'a str,
    provider: &'a Arc<dyn lancet_core::Provider>,
    databases: &'a Arc<Databases>,
    stop: &'a Arc<AtomicBool>,
}

impl OracleRun<'_> {
    /// Runs `oracle` alone, its planted fault already set, until its first
    /// finding or its check limit; writes the summary into `dir`.
    fn under_its_fault(
        &self,
        oracle: Box<dyn lancet_core::Oracle>,
        dir: &std::path::Path,
        writer: &Arc<FindingWriter>,
    ) -> anyhow::Result<lancet::summary::Summary> {
        let args = self.args;
        let name = oracle.name();
        let options = RunOptions {
            max_checks: Some(args.max_checks),
            // A safety net: an oracle that generates no checks here would run forever.
            timeout: Some(Duration::from_secs(120)),
            stop_after_findings: Some(1),
            child: database_child(
                &args.dbms,
                &Default::default(),
                args.expected_errors.as_deref(),
                &args.isolation,
            )?,
            ..plain_options(format!("{}-{name}", self.run_id), args.seed, 1, 200, dir)
        };
        let s = runner::run(RunSetup {
            provider: self.provider.clone(),
            oracles: Arc::new(OracleSet::new(vec![(oracle, 1)])),
            options,
            writer: writer.clone(),
            databases: self.databases.clone(),
            stop: self.stop.clone(),
        })?;
        let _ = std::fs::write(
            dir.join("summary.json"),
            serde_json::to_string_pretty(&s).unwrap_or_default(),
        );
        Ok(s)
    }
}
