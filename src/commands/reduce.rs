//! `lancet reduce` and `lancet replay`: shrinking a finding (or a SQL file
//! from elsewhere), and replaying reproducers on a fresh database.

use super::*;
use crate::{Compared, ReduceArgs, ReplayArgs};
use anyhow::{bail, Context};
use lancet::finding_record::FindingRecord;
use lancet::reproducer::FindingWriter;
use lancet::sessions_record::SessionsRecord;
use lancet_core::knobs::describe_changes;
use lancet_core::Reduction;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

pub fn reduce(args: ReduceArgs) -> anyhow::Result<ExitCode> {
    let stop = Arc::new(AtomicBool::new(false));
    install_interrupt(stop.clone())?;
    let limit = Duration::from_secs(args.time_limit.max(1));
    let name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if args.check_cmd.is_some() || args.check_differs.is_some() {
        return reduce_foreign_file(args, &name, limit, &stop);
    }
    if args.dbms.is_some() {
        bail!("--dbms is for SQL files from elsewhere, with --check-cmd or --check-differs; a lancet reproducer names its DBMS");
    }
    reduce_finding(args, &name, limit, &stop)
}

/// `lancet reduce FILE.sql --check-cmd ...` or `--check-differs`: a SQL
/// file from elsewhere, kept interesting by the user's check.
fn reduce_foreign_file(
    args: ReduceArgs,
    name: &str,
    limit: Duration,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<ExitCode> {
    let dbms = args
        .dbms
        .as_deref()
        .context("--dbms is needed to reduce a SQL file with --check-cmd or --check-differs")?;
    let databases = provider_for(dbms, &args.connect)?;
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let dialect = databases.provider().dialect();
    let check = match (&args.check_cmd, &args.check_differs) {
        (Some(cmd), _) => lancet::reduce::foreign::Check::Command(cmd.clone()),
        (None, Some(compared)) => {
            let (first, second) = match *compared {
                Compared::Pair(i, j) => (i, j),
                Compared::Last => {
                    let n =
                        lancet::script::split_statements(&text, dialect, &registry::CATALOG).len();
                    if n < 2 {
                        bail!(
                            "{} has fewer than two statements to compare",
                            args.file.display()
                        );
                    }
                    (n - 2, n - 1)
                }
            };
            lancet::reduce::foreign::Check::Differs {
                databases: &databases,
                first,
                second,
            }
        }
        (None, None) => unreachable!("checked above"),
    };
    let r = lancet::reduce::foreign::reduce_foreign(
        &text,
        name,
        dialect,
        &registry::CATALOG,
        &check,
        limit,
        Some(stop),
    )?;
    let out = args.out.unwrap_or_else(|| reduced_path(&args.file, "sql"));
    lancet::reproducer::write_synced(&out, r.text().as_bytes())?;
    println!(
        "reduced {name}: {} -> {} statements ({} -> {} bytes) in {:.1} s, {} candidates tried{}\nwritten to {}",
        r.statements_before,
        r.statements.len(),
        r.bytes_before,
        r.bytes(),
        r.seconds,
        r.tests,
        if r.complete { "" } else { " (stopped early: time limit or Ctrl-C)" },
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// `lancet reduce FINDING.json`: a finding of lancet's, reduced keeping
/// its oracle's relation, then explained (see `reduce::explain`).
fn reduce_finding(
    args: ReduceArgs,
    name: &str,
    limit: Duration,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<ExitCode> {
    let finding = match FindingRecord::load(&args.file, &registry::CATALOG)? {
        FindingRecord::Query(finding) => finding,
        other => return reduce_sessions(args, other.sessions()?, name, limit, stop),
    };
    let databases = provider_for(&finding.dbms, &args.connect)?;
    let provider = databases.provider();
    lancet::replay::check_case(&finding, provider.dialect())?;
    databases.set_fault(lancet::replay::recorded_fault(
        &finding,
        args.connect.no_fault,
    )?);
    let reducer = lancet::reduce::Reducer::new(&databases, &registry::CATALOG)
        .with_time_limit(limit)
        .with_abort(stop);
    let sql_name = name.replace(".json", ".sql");
    let r = reducer.reduce(&finding, &sql_name)?;
    let mut reduced = r.finding;
    if !stop.load(std::sync::atomic::Ordering::SeqCst) {
        lancet::reduce::explain(&mut reduced, &databases);
    }
    let out_sql = args.out.unwrap_or_else(|| reduced_path(&args.file, "sql"));
    let written = lancet::reproducer::WrittenFinding {
        json: out_sql.with_extension("json"),
        sql: out_sql,
    };
    let dir = written.sql.parent().unwrap_or(std::path::Path::new("."));
    let writer = FindingWriter::new(dir)?;
    lancet::dedup::write_reduced(
        &writer,
        &written,
        &mut reduced,
        provider,
        &registry::CATALOG,
    )?;
    let i = &r.info;
    println!(
        "reduced {name}: {} -> {} statements ({} -> {} bytes) in {:.1} s, {} candidates tried{}\nsignature {}\nwritten to {}",
        i.statements_before,
        i.statements_after,
        i.bytes_before,
        i.bytes_after,
        i.seconds,
        i.tests,
        if i.complete { "" } else { " (stopped early: time limit or Ctrl-C)" },
        reduced.signature.as_deref().unwrap_or(""),
        written.sql.display()
    );
    if !reduced.hidden_by_knobs.is_empty() {
        println!(
            "the disagreement vanishes with any one of these knob changes: {}",
            describe_changes(&reduced.hidden_by_knobs)
        );
    }
    if !reduced.flipped_by_knobs.is_empty() {
        println!(
            "localized: the result differs with only these knob changes: {}",
            describe_changes(&reduced.flipped_by_knobs)
        );
    }
    if let Some(w) = &reduced.wrong_side {
        match w.wrong.as_slice() {
            [] => println!("wrong side: lancet cannot tell ({})", w.how),
            roles => println!("wrong: {} ({})", roles.join(", "), w.how),
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let mut failing = 0;
    let mut broken = 0;
    for file in &args.files {
        let finding = match FindingRecord::load(file, &registry::CATALOG) {
            Ok(FindingRecord::Query(finding)) => Ok(finding),
            Ok(other) => {
                match other
                    .sessions()
                    .and_then(|f| replay_sessions(file, f, &args.connect))
                {
                    Ok(true) => failing += 1,
                    Ok(false) => {}
                    Err(e) => {
                        broken += 1;
                        println!("{}: cannot replay: {e:#}", file.display());
                    }
                }
                continue;
            }
            Err(e) => Err(e),
        };
        let outcome = finding.and_then(|finding| {
            let databases = provider_for(&finding.dbms, &args.connect)?;
            let fault = lancet::replay::recorded_fault(&finding, args.connect.no_fault)?;
            lancet::replay::check_case(&finding, databases.provider().dialect())?;
            let note = fault
                .as_ref()
                .map(|f| format!(" [with planted fault {}]", f.name()))
                .unwrap_or_default();
            databases.set_fault(fault);
            Ok((lancet::replay::replay(&finding, &databases)?, note))
        });
        match outcome {
            Ok((lancet::replay::Replayed::StillFails { why, .. }, note)) => {
                failing += 1;
                println!("{}: still fails{note}: {why}", file.display());
            }
            Ok((lancet::replay::Replayed::Passes(why), note)) => {
                println!("{}: passes{note}: {why}", file.display());
            }
            Err(e) => {
                broken += 1;
                println!("{}: cannot replay: {e:#}", file.display());
            }
        }
    }
    println!(
        "{} reproducer(s): {failing} still fail, {} pass, {broken} cannot be replayed",
        args.files.len(),
        args.files.len() - failing - broken
    );
    Ok(if failing > 0 {
        ExitCode::from(1)
    } else if broken > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

/// Runs the case of a finding of an oracle that opens sessions of its own
/// (a transaction schedule) again (`lancet replay`), by that oracle, and
/// says what it shows now: whether it still fails.
fn replay_sessions(
    file: &std::path::Path,
    finding: &SessionsRecord,
    connect: &ConnectArgs,
) -> anyhow::Result<bool> {
    let facts = &finding.facts;
    let fault = facts.fault.as_deref().filter(|_| !connect.no_fault);
    let note = fault
        .map(|f| format!(" [with planted fault {f}]"))
        .unwrap_or_default();
    let databases = provider_for(&facts.dbms, connect)?;
    let shown = lancet::sessions_replay::replay(&databases, &facts.oracle, &finding.text, fault)?;
    if shown.same {
        println!("{}: still fails{note}: {}", file.display(), shown.said);
    } else {
        println!("{}: passes: {}", file.display(), shown.said);
    }
    Ok(shown.same)
}

/// `lancet reduce ID.json` of a finding of an oracle that opens sessions
/// of its own: its case reduced by its oracle (a transaction schedule:
/// the fewest sessions, steps and rows that still show its signature),
/// written beside it as `ID.reduced.json` (with `ID.reduced.sql` and its
/// directory of scripts); a case already reduced is said so.
fn reduce_sessions(
    args: ReduceArgs,
    finding: &SessionsRecord,
    name: &str,
    limit: Duration,
    stop: &Arc<AtomicBool>,
) -> anyhow::Result<ExitCode> {
    let facts = &finding.facts;
    let fault = facts.fault.as_deref().filter(|_| !args.connect.no_fault);
    let databases = provider_for(&facts.dbms, &args.connect)?;
    let started = std::time::Instant::now();
    let reduction = lancet::sessions_replay::reduce(
        &databases,
        &facts.oracle,
        &finding.text,
        fault,
        limit,
        stop,
    )?;
    match reduction {
        Reduction::Smaller { record, said } => {
            let out_sql = args.out.unwrap_or_else(|| reduced_path(&args.file, "sql"));
            let dir = out_sql.parent().unwrap_or(std::path::Path::new("."));
            let id = out_sql
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .context("the output needs a file name")?;
            let written = FindingRecord::write_sessions_as(&record, dir, &id)?;
            println!(
                "reduced {name}: {said}, in {:.1} s\nsignature {}\nwritten to {}",
                started.elapsed().as_secs_f64(),
                facts.signature,
                written.sql.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        Reduction::Already(said) => {
            println!("{name} is already reduced: {said}");
            Ok(ExitCode::SUCCESS)
        }
        Reduction::NotShown(said) => bail!("{name} does not reproduce: {said}"),
    }
}
