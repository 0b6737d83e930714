//! `lancet selftest`: every oracle must catch its planted fault.

use super::*;
use crate::SelftestArgs;
use lancet::databases::{Databases, RunToken};
use lancet::registry::{self, ProviderOptions};
use lancet::reproducer::FindingWriter;
use lancet::runner::{self, OracleSet, RunOptions, RunSetup};
use lancet_core::{AnyOracle, SessionsRun};
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
        let run = OracleRun {
            args: &args,
            run_id: &run_id,
            provider: &provider,
            databases: &databases,
            stop: &stop,
        };
        let oracle = match registered.oracle {
            AnyOracle::Queries(o) => o,
            AnyOracle::Sessions(o) => {
                // Its faults act in its own driver, not on query rows.
                databases.set_fault(None);
                ran += 1;
                missed.extend(run.sessions_faults(&*o, &run_dir)?);
                continue;
            }
        };
        let name = oracle.name();
        let fault = oracle.planted_fault();
        databases.set_fault(Some(fault.clone()));
        let dir = run_dir.join(name);
        let writer = Arc::new(FindingWriter::new(&dir.join("findings"))?);
        let s = run.under_its_fault(OracleSet::new(vec![(oracle, 1)]), &dir, &writer)?;
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
    /// Runs `oracles` (one oracle), its planted fault already set, until
    /// its first finding or its check limit; writes the summary into `dir`.
    fn under_its_fault(
        &self,
        oracles: OracleSet,
        dir: &std::path::Path,
        writer: &Arc<FindingWriter>,
    ) -> anyhow::Result<lancet::summary::Summary> {
        let args = self.args;
        let name = oracles.names().join(",");
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
            catalog: &lancet::registry::CATALOG,
            provider: self.provider.clone(),
            oracles: Arc::new(oracles),
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

impl OracleRun<'_> {
    /// An oracle that opens sessions of its own, where the DBMS offers
    /// what it needs: each of its planted faults must be caught within
    /// as many checks as the others get (at most 300: a schedule is
    /// slower than a query). Returns the faults missed; prints a line per
    /// fault as the query oracles do.
    fn sessions_faults(
        &self,
        oracle: &dyn lancet_core::SessionsOracle,
        run_dir: &std::path::Path,
    ) -> anyhow::Result<Vec<&'static str>> {
        let name = oracle.name();
        if let Err(e) = oracle.prepare(self.provider.clone(), &SessionsRun::default()) {
            println!(
                "{name:<15} {:<14} {:>7} {:>8}  not supported: {e:#}",
                "-", "n/a", 0
            );
            return Ok(Vec::new());
        }
        let checks = self.args.max_checks.min(300);
        let mut missed = Vec::new();
        for fault in oracle.faults() {
            if self.stop.load(Ordering::SeqCst) {
                break;
            }
            let dir = run_dir.join(name).join(fault.name());
            let writer = Arc::new(FindingWriter::new(&dir)?);
            let prepared = oracle.prepare(
                self.provider.clone(),
                &SessionsRun {
                    fault: Some(fault.clone()),
                    ..SessionsRun::default()
                },
            )?;
            let options = RunOptions {
                max_checks: Some(checks),
                timeout: Some(Duration::from_secs(300)),
                stop_after_findings: Some(1),
                ..plain_options(
                    format!("{}-{name}-{}", self.run_id, fault.name()),
                    self.args.seed,
                    1,
                    checks,
                    &dir,
                )
            };
            let s = runner::run(RunSetup {
                catalog: &lancet::registry::CATALOG,
                provider: self.provider.clone(),
                oracles: Arc::new(OracleSet::sessions(name, prepared)),
                options,
                writer,
                databases: self.databases.clone(),
                stop: self.stop.clone(),
            })?;
            self.stop.store(false, Ordering::SeqCst);
            let caught = s.findings > 0;
            let first = s
                .bugs
                .first()
                .map(|b| format!("{} ({})", dir.join(&b.reproducer).display(), b.signature))
                .unwrap_or_default();
            println!(
                "{name:<15} {:<14} {:>7} {:>8}  {first}",
                fault.name(),
                if caught { "yes" } else { "NO" },
                s.checks,
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
}
