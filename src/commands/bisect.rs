//! `lancet bisect`: replays reproducers on a ladder of builds, oldest
//! first, and says per file where it starts to pass. Files whose bug was
//! fixed by the same release are listed together: likely one bug.

use super::provider_for;
use crate::{BisectArgs, ConnectArgs, IsolationArgs};
use anyhow::{bail, Context};
use lancet::finding_record::FindingRecord;
use lancet::findings::WrongSide;
use lancet::findings::{Finding, FindingKind};
use lancet::registry;
use lancet::replay::{replay, Replayed};
use lancet::wrong_side;
use lancet_engine::{BuildVersion, DbmsDescription};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// One build of the ladder.
struct Build {
    path: PathBuf,
    /// Its engine version, for ordering and naming.
    version: BuildVersion,
}

/// The shared libraries of `dbms`'s engine in `dir`, in version order.
fn ladder(dbms: &DbmsDescription, dir: &Path) -> anyhow::Result<Vec<Build>> {
    let build_version = dbms.in_process.as_ref().map(|e| e.build_version);
    let (Some(build_version), Some(option)) = (build_version, dbms.library_option) else {
        bail!(
            "bisect replays builds of an engine loaded from shared libraries; {} has none",
            dbms.label
        );
    };
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read the build directory {}", dir.display()))?;
    let mut builds = Vec::new();
    for entry in entries {
        let path = entry?.path();
        let is_lib = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .is_some_and(|n| n.ends_with(".so") || n.contains(".so."));
        if !is_lib {
            continue;
        }
        let version = build_version(&path).with_context(|| {
            format!(
                "{} is not a usable {} build (as {option} takes)",
                path.display(),
                dbms.label
            )
        })?;
        builds.push(Build { path, version });
    }
    if builds.is_empty() {
        bail!(
            "no {} shared library (*.so) in {}",
            dbms.label,
            dir.display()
        );
    }
    builds.sort_by_key(|b| b.version.order);
    Ok(builds)
}

/// What one reproducer did on one build.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Fails,
    Passes,
    /// It cannot run there (a set-up statement fails: the release lacks
    /// what the reproducer uses).
    DoesNotRun,
}

/// The builds, by index, a reproducer last fails on and first passes on
/// after that: the release that fixed its bug.
fn fix(outcomes: &[Outcome]) -> Option<(usize, usize)> {
    let i = outcomes.iter().rposition(|o| *o == Outcome::Fails)?;
    let j = outcomes[i + 1..]
        .iter()
        .position(|o| *o == Outcome::Passes)?;
    Some((i, i + 1 + j))
}

/// Where a reproducer's bug went away along the ladder.
fn verdict(builds: &[Build], outcomes: &[Outcome]) -> (String, Option<String>) {
    let last_fail = outcomes.iter().rposition(|o| *o == Outcome::Fails);
    match last_fail {
        None => ("passes on every build it runs on".to_string(), None),
        Some(i) if i + 1 == builds.len() => (
            format!(
                "still fails on the newest build ({})",
                builds[i].version.text
            ),
            Some("still open".to_string()),
        ),
        Some(i) => match fix(outcomes) {
            Some((_, j)) => {
                let fixed = &builds[j].version.text;
                (
                    format!(
                        "last fails on {}, first passes on {fixed}",
                        builds[i].version.text
                    ),
                    Some(format!(
                        "fixed after {}, by {fixed}",
                        builds[i].version.text
                    )),
                )
            }
            None => (
                format!(
                    "last fails on {}; does not run on the newer builds",
                    builds[i].version.text
                ),
                None,
            ),
        },
    }
}

pub fn bisect(args: BisectArgs) -> anyhow::Result<ExitCode> {
    let mut findings = Vec::new();
    for file in &args.files {
        let record = FindingRecord::load(file, &registry::CATALOG)
            .with_context(|| format!("cannot read the reproducer {}", file.display()))?;
        findings.push(record);
    }
    // One engine's builds: the DBMS of the first reproducer, and every
    // other must be for it too.
    let dbms_name = findings.first().map_or("", |f| f.dbms());
    let dbms = registry::describe(dbms_name)?;
    for (file, finding) in args.files.iter().zip(&findings) {
        if finding.dbms() != dbms.name {
            bail!(
                "{}: bisect replays {} builds; this reproducer is for {}",
                file.display(),
                dbms.label,
                finding.dbms()
            );
        }
    }
    let builds = ladder(dbms, &args.libs)?;
    println!(
        "lancet bisect: {} build(s): {}",
        builds.len(),
        builds
            .iter()
            .map(|b| b.version.text.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let databases_of = |build: &Build| {
        let connect = ConnectArgs {
            library: crate::args::library::LibraryArgs::new(
                dbms.library_option.unwrap_or_default(),
                build.path.clone(),
            ),
            url: None,
            config: None,
            no_fault: true,
            isolation: IsolationArgs {
                in_process: args.isolation.in_process,
                worker_memory_mib: args.isolation.worker_memory_mib,
            },
        };
        provider_for(dbms.name, &connect)
    };
    let mut still_open = 0;
    let mut groups: BTreeMap<String, Vec<&Path>> = BTreeMap::new();
    for (file, finding) in args.files.iter().zip(&findings) {
        let mut outcomes = Vec::new();
        let mut marks = String::new();
        for build in &builds {
            let databases = databases_of(build)?;
            let outcome = match replay_any(finding, &databases) {
                Ok(true) => Outcome::Fails,
                Ok(false) => Outcome::Passes,
                Err(_) => Outcome::DoesNotRun,
            };
            marks.push(match outcome {
                Outcome::Fails => 'F',
                Outcome::Passes => '.',
                Outcome::DoesNotRun => '-',
            });
            outcomes.push(outcome);
        }
        let (said, group) = verdict(&builds, &outcomes);
        if group.as_deref() == Some("still open") {
            still_open += 1;
        }
        println!("{}: [{marks}] {said}", file.display());
        let logic = match finding {
            FindingRecord::Query(f) if f.kind == FindingKind::Logic => Some(f),
            _ => None,
        };
        if let (Some((i, j)), Some(finding)) = (fix(&outcomes), logic) {
            let fixed = databases_of(&builds[j])?;
            let truth = wrong_side::by_fixed_release(
                finding,
                &databases_of(&builds[i])?,
                &fixed,
                (&builds[i].version.text, &builds[j].version.text),
            );
            println!("  {}", compare_sides(finding.wrong_side.as_ref(), &truth));
            if args.update_records {
                record_truth(file, truth, &fixed)?;
            }
        }
        if let (true, Some(g)) = (args.update_index, &group) {
            let dir = file
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let mut index = lancet::dedup::Index::load(dir)?;
            if index.set_fixed_in(file, g) {
                index.save()?;
            } else {
                eprintln!(
                    "lancet: {} is not in the index of {}",
                    file.display(),
                    dir.display()
                );
            }
        }
        if let Some(g) = group {
            groups.entry(g).or_default().push(file);
        }
    }
    println!("groups (likely one bug each):");
    for (group, files) in &groups {
        println!("  {group}: {} reproducer(s)", files.len());
        for f in files {
            println!("    {}", f.display());
        }
    }
    println!("legend: F fails, . passes, - does not run (a set-up statement fails on that build)");
    Ok(if still_open > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether a finding of either kind still fails on `databases`' build:
/// a query reproducer by its replay, a sessions oracle's case by that
/// oracle (without a planted fault: bisect asks about the DBMS). An error
/// is a case that cannot run there.
fn replay_any(
    finding: &FindingRecord,
    databases: &lancet::databases::Databases,
) -> anyhow::Result<bool> {
    match finding {
        FindingRecord::Query(f) => Ok(matches!(replay(f, databases)?, Replayed::StillFails { .. })),
        other => {
            let r = other.sessions()?;
            Ok(lancet::sessions_replay::replay(databases, &r.facts.oracle, &r.text, None)?.same)
        }
    }
}

/// The wrong side the fixed release shows, and whether the record's
/// verdict (`said`) agrees with it: one line.
fn compare_sides(said: Option<&WrongSide>, truth: &WrongSide) -> String {
    let named = |w: &WrongSide| w.wrong.join(" and ");
    let truth_text = if truth.wrong.is_empty() {
        format!("wrong side: the fixed release cannot tell: {}", truth.how)
    } else {
        format!("wrong side by the fixed release: {}", named(truth))
    };
    let said_text = match said {
        None => "the record has no verdict".to_string(),
        Some(w) if w.wrong.is_empty() => "the record said: cannot tell".to_string(),
        Some(w) if truth.wrong.is_empty() => format!("the record said: {}", named(w)),
        Some(w) if w.wrong == truth.wrong => format!("the record said the same: {}", named(w)),
        Some(w) if w.wrong.iter().all(|r| truth.wrong.contains(r)) => {
            format!("the record said a part of it: {}", named(w))
        }
        Some(w) => format!("the record said otherwise: {}", named(w)),
    };
    format!("{truth_text} ({said_text})")
}

/// Writes the fixed release's verdict into `file`'s record and header,
/// unless the reproducer is not as lancet wrote it from its record (an
/// edit, or another lancet version): then it stays and a warning says so.
fn record_truth(
    file: &Path,
    truth: WrongSide,
    databases: &lancet::databases::Databases,
) -> anyhow::Result<()> {
    if truth.wrong.is_empty() {
        return Ok(());
    }
    let written = lancet::reproducer::WrittenFinding {
        sql: file.with_extension("sql"),
        json: file.with_extension("json"),
    };
    let provider = databases.provider();
    let (comment, client) = (provider.comment_prefix(), provider.client_command());
    let name = written
        .sql
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut recorded = Finding::load_record(file)?;
    let as_written = lancet::reproducer::render(&recorded, comment, &client, &name);
    if std::fs::read_to_string(&written.sql).ok().as_deref() != Some(as_written.as_str()) {
        eprintln!(
            "lancet: {} is not as lancet wrote it from its record; it keeps its verdict",
            written.sql.display()
        );
        return Ok(());
    }
    recorded.wrong_side = Some(truth);
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    lancet::reproducer::FindingWriter::new(dir)?.update(&written, &recorded, comment, &client)
}
