//! `lancet push` and `lancet findings`: feeding a findings store from run
//! directories, and listing the unique bugs of everything in a store.

use crate::{FindingsArgs, PushArgs, ReportArgs, StoreSource};
use anyhow::{bail, Context};
use lancet::store::push::PushState;
use lancet::store::{Store, StoreLocation};
use std::path::PathBuf;
use std::process::ExitCode;

/// The run directories in `paths`: each a run directory (with run.json), or
/// an output directory (`--out`) whose subdirectories are.
pub fn run_dirs(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    for p in paths {
        if p.join(lancet::run_files::RUN_FILE).is_file() {
            dirs.push(p.clone());
            continue;
        }
        let entries = std::fs::read_dir(p)
            .with_context(|| format!("cannot read {} (a run or output directory)", p.display()))?;
        let subdirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|d| d.is_dir())
            .collect();
        let (mut found, other): (Vec<PathBuf>, Vec<PathBuf>) = subdirs
            .into_iter()
            .partition(|d| d.join(lancet::run_files::RUN_FILE).is_file());
        if !other.is_empty() && !found.is_empty() {
            eprintln!(
                "lancet: {} director(ies) in {} have no run.json and are left out (selftest and \
                 bench runs, and runs of a lancet from before run.json)",
                other.len(),
                p.display()
            );
        }
        if found.is_empty() {
            bail!(
                "{} is neither a run directory of lancet fuzz (no run.json) nor a directory of runs",
                p.display()
            );
        }
        found.sort();
        dirs.extend(found);
    }
    Ok(dirs)
}

/// Opens the store a command reads: `--store`, or a store in memory fed
/// from run directories; with both, the directories are pushed first.
pub fn open_source(source: &StoreSource) -> anyhow::Result<Store> {
    let location = match &source.store.url {
        Some(text) => StoreLocation::parse(text)?,
        None if source.runs.is_empty() => {
            bail!("give a store (--store URL or $LANCET_STORE_URL) or run directories to read")
        }
        None => StoreLocation::Sqlite(PathBuf::from(":memory:")),
    };
    let mut store = Store::open(&location).map_err(|e| anyhow::anyhow!("{e}"))?;
    for dir in run_dirs(&source.runs)? {
        let pushed = store.push_run(
            &dir,
            &super::feed::CAMPAIGN_FINDINGS,
            &mut PushState::default(),
        )?;
        say_broken(&pushed.broken);
    }
    Ok(store)
}

pub fn push(args: PushArgs) -> anyhow::Result<ExitCode> {
    let Some(text) = &args.source.store.url else {
        bail!("lancet push needs --store URL (or $LANCET_STORE_URL)");
    };
    if args.source.runs.is_empty() {
        bail!("lancet push needs the run directories to push");
    }
    let location = StoreLocation::parse(text)?;
    let mut store = Store::open(&location).map_err(|e| anyhow::anyhow!("{e}"))?;
    for dir in run_dirs(&args.source.runs)? {
        let mut state = PushState::default();
        let pushed = store.push_run(&dir, &super::feed::CAMPAIGN_FINDINGS, &mut state)?;
        say_broken(&pushed.broken);
        println!(
            "lancet push: {}: {} finding(s) in the store ({} new, {} removed), {} sample(s) sent",
            dir.display(),
            state.findings(),
            pushed.findings,
            pushed.removed,
            pushed.samples
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// One line per finding record a push left out (or whose reduction it
/// left out) because it does not read: the rest of the run went in.
fn say_broken(broken: &[String]) {
    for b in broken {
        eprintln!("lancet: skipped {b}");
    }
}

/// A listing piped into `head` ends quietly when the pipe closes: this
/// command starts no child process, so the default action is safe here.
fn quiet_broken_pipe() {
    // SAFETY: restores the default disposition of one signal before any
    // thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn date(unix: u64) -> String {
    lancet::utc_time(unix)
}

pub fn findings(args: FindingsArgs) -> anyhow::Result<ExitCode> {
    quiet_broken_pipe();
    let mut store = open_source(&args.source)?;
    let runs = store.runs()?;
    let bugs = store.bugs()?;
    if let Some(sig) = &args.show {
        let mut candidates: Vec<&lancet_fleet::store::read::BugSummary> = bugs
            .iter()
            .filter(|b| b.signature.starts_with(sig.as_str()))
            .collect();
        if candidates.is_empty() {
            // A bug: its smallest signature's reproducer.
            candidates = bugs
                .iter()
                .filter(|b| b.bug.starts_with(sig.as_str()))
                .collect();
            candidates.sort_by_key(|b| {
                b.smallest
                    .as_ref()
                    .map_or((u64::MAX, u64::MAX), |f| (f.statements, f.bytes))
            });
            candidates.truncate(1);
        }
        let Some(bug) = candidates.first() else {
            bail!("no bug or signature {sig} in {}", store.name());
        };
        let Some(f) = &bug.smallest else {
            bail!("bug {} has no reproducer on record", bug.signature);
        };
        match store.reproducer(&f.run_id, &f.file)? {
            Some(sql) => print!("{sql}"),
            None => bail!("the reproducer of {} is gone from the store", bug.signature),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let shards = runs.iter().filter(|r| r.shard_count > 1).count();
    let hosts: std::collections::BTreeSet<&str> = runs.iter().map(|r| r.host.as_str()).collect();
    let grouped = lancet_fleet::store::read::group_into_bugs(&bugs);
    println!(
        "lancet findings: {} bug(s) under {} signature(s) in {} run(s) ({shards} of them shards) on {} host(s), from {}",
        grouped.len(),
        bugs.len(),
        runs.len(),
        hosts.len(),
        store.name()
    );
    for bug in &grouped {
        print_bug(bug);
    }
    if !bugs.is_empty() {
        println!("(lancet findings --show BUG-OR-SIGNATURE prints its smallest reproducer)");
    }
    Ok(ExitCode::SUCCESS)
}

/// One bug: its core, then its signatures, one line each.
fn print_bug(bug: &lancet_fleet::store::read::Bug<'_>) {
    println!();
    println!(
        "bug {}: {} finding(s) under {} signature(s)",
        bug.bug,
        bug.count,
        bug.signatures.len()
    );
    if !bug.core.is_empty() {
        println!("  {}", one_line(bug.core, 160));
    }
    println!(
        "  {:<16} {:>6} {:>4}  {:<14} {:<20} {:<20} {:>5}  smallest reproducer",
        "signature", "count", "runs", "oracle/kind", "first seen (UTC)", "last seen (UTC)", "stmts"
    );
    for b in &bug.signatures {
        let (stmts, place) = match &b.smallest {
            Some(f) => (
                f.statements.to_string(),
                format!("{}/findings/{}", f.run_id, f.reproducer_file()),
            ),
            None => ("-".into(), "(not written: past the flood limit)".into()),
        };
        println!(
            "  {:<16} {:>6} {:>4}  {:<14} {:<20} {:<20} {:>5}  {}",
            b.signature,
            b.count,
            b.runs,
            b.oracle.as_deref().unwrap_or(&b.kind),
            date(b.first_seen),
            date(b.last_seen),
            stmts,
            place
        );
        for g in &b.groups {
            println!("  {:<16} group: {g}", "");
        }
    }
}

/// `text` on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &flat[..at]),
        None => flat,
    }
}

pub fn report(args: ReportArgs) -> anyhow::Result<ExitCode> {
    let out = &args.output;
    super::check_writable(out, "report")?;
    let mut store = open_source(&args.source)?;
    let data = lancet::report::ReportData::read(&mut store)?;
    let html = lancet::report::render(&data, lancet::run_files::unix_now())?;
    lancet::reproducer::write_synced(out, html.as_bytes())?;
    println!(
        "lancet report: {} ({} run(s), {} bug(s) under {} signature(s), {} KiB)",
        out.display(),
        data.runs.len(),
        lancet::store::read::group_into_bugs(&data.bugs).len(),
        data.bugs.len(),
        html.len() / 1024
    );
    Ok(ExitCode::SUCCESS)
}
