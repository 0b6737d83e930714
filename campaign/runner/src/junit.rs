//! The JUnit XML report of a run (`lancet fuzz --junit PATH`), which CI
//! systems show as test results: one test suite for the run; a test case
//! per oracle, per new bug, per known bug, and for the run itself, so that
//! the report fails exactly when the exit status is not 0.
//!
//! Written with `quick-junit`: JUnit XML has corner cases (escaping,
//! characters XML forbids, what each CI reads) best left to a maintained
//! writer.

use crate::summary::{BugLine, KnownBugLine, Summary};
use anyhow::{bail, Context};
use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
use std::path::Path;
use std::time::Duration;

/// How many lines of a reproducer a failed test case shows.
const REPRODUCER_LINES: usize = 40;

/// Checks before the run that the report can be written at `path`: its
/// directory exists and takes files. A CI gate must not run for an hour
/// and then fail to report.
pub fn check_target(path: &Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "cannot write the JUnit report to {}: the directory {} does not exist",
            path.display(),
            dir.display()
        );
    }
    if path.is_dir() {
        bail!(
            "cannot write the JUnit report to {}: it is a directory",
            path.display()
        );
    }
    // The name `write_synced` writes through, removed at once.
    let mut probe = path.as_os_str().to_os_string();
    probe.push(".tmp");
    std::fs::write(&probe, b"")
        .with_context(|| format!("cannot write the JUnit report to {}", path.display()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// Writes the report of `summary` to `path`, atomically (a reader never
/// sees half a file).
pub fn write(path: &Path, summary: &Summary) -> anyhow::Result<()> {
    let xml = report(summary)
        .to_string()
        .context("cannot serialize the JUnit report")?;
    crate::reproducer::write_synced(path, xml.as_bytes())
}

/// The report of a run.
pub fn report(summary: &Summary) -> Report {
    let class = format!("lancet.{}", summary.dbms);
    let mut suite = TestSuite::new(format!("{} {}", summary.dbms, summary.run_id));
    suite.set_time(Duration::from_secs_f64(summary.elapsed_seconds.max(0.0)));
    suite.add_properties([
        Property::new("dbms_version", summary.dbms_version.as_str()),
        Property::new("seed", summary.seed.to_string()),
        Property::new("threads", summary.threads.to_string()),
        Property::new("checks", summary.checks.to_string()),
        Property::new("findings", summary.findings.to_string()),
        Property::new("known_findings", summary.known_findings.to_string()),
    ]);
    suite.set_system_out(summary.render());
    let mut cases = vec![run_case(summary)];
    cases.extend(summary.oracles.iter().map(|o| oracle_case(summary, o)));
    cases.extend(
        summary
            .bugs
            .iter()
            .filter(|b| !b.known)
            .map(|b| new_bug_case(summary, b)),
    );
    cases.extend(summary.known_bugs.iter().map(known_bug_case));
    for mut case in cases {
        case.set_classname(class.as_str());
        suite.add_test_case(case);
    }
    let mut report = Report::new("lancet");
    report.add_test_suite(suite);
    report
}

/// The run itself: an error when lancet could not finish it (exit 3), so
/// that a cut-short run is never read as a pass.
fn run_case(summary: &Summary) -> TestCase {
    let status = if summary.unfinished() {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Error);
        let mut why = summary.failures.clone();
        if why.is_empty() {
            why.push("interrupted before the run's end (a signal)".into());
        }
        s.set_message(format!(
            "lancet could not finish the run: {}",
            why.join("; ")
        ));
        s
    } else {
        TestCaseStatus::success()
    };
    let mut case = TestCase::new("run", status);
    case.set_system_out(format!(
        "{} checks in {:.1} s: {}",
        summary.checks,
        summary.elapsed_seconds,
        summary.stopped_by.describe()
    ));
    case
}

/// One oracle: passes when it has no new findings.
fn oracle_case(summary: &Summary, oracle: &str) -> TestCase {
    let checks = summary.checks_per_oracle.get(oracle).copied().unwrap_or(0);
    let new: Vec<&BugLine> = summary
        .bugs
        .iter()
        .filter(|b| !b.known && b.oracle.as_deref() == Some(oracle))
        .collect();
    let status = if !new.is_empty() {
        let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
        s.set_message(format!(
            "{} new signature(s), {} finding(s): see the test cases `{oracle}: <signature>`",
            new.len(),
            new.iter().map(|b| b.count).sum::<u64>()
        ));
        s
    } else if checks == 0 {
        let mut s = TestCaseStatus::skipped();
        s.set_message("no check of this oracle ran");
        s
    } else {
        TestCaseStatus::success()
    };
    let mut case = TestCase::new(oracle, status);
    case.set_system_out(format!("{checks} checks"));
    case
}

/// `<oracle>: <signature>` (the kind stands in for the oracle of a
/// finding outside any oracle's check).
fn bug_name(oracle: Option<&str>, kind: &str, signature: &str) -> String {
    format!("{}: {signature}", oracle.unwrap_or(kind))
}

/// A new bug: a failure naming the relation that broke and the reproducer
/// (the reduced one when there is one), with the reproducer's first lines.
fn new_bug_case(summary: &Summary, bug: &BugLine) -> TestCase {
    let path = Path::new(&summary.findings_dir).join(&bug.reproducer);
    let what = match (&bug.relation, bug.oracle.as_deref()) {
        (Some(relation), _) => format!("relation that broke: {relation}"),
        (None, Some(oracle)) => format!("{} during a check of {oracle}", bug.kind),
        (None, None) => bug.kind.clone(),
    };
    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
    status
        .set_message(format!("{what}; reproducer: {}", path.display()))
        .set_type(bug.kind.as_str())
        .set_description(first_lines(&path));
    let mut case = TestCase::new(
        bug_name(bug.oracle.as_deref(), &bug.kind, &bug.signature),
        status,
    );
    case.set_system_out(format!(
        "{} finding(s); reproducer of {} statements{}: {}",
        bug.count,
        bug.statements,
        if bug.reduced { " (reduced)" } else { "" },
        path.display()
    ));
    case
}

/// A known bug: skipped while open, passing once fixed.
fn known_bug_case(bug: &KnownBugLine) -> TestCase {
    let name = bug_name(bug.oracle.as_deref(), &bug.kind, &bug.signature);
    if bug.fixed {
        let mut case = TestCase::new(name, TestCaseStatus::success());
        case.set_system_out(format!("fixed: {}\n{}", bug.reproducer, bug.replay));
        return case;
    }
    let mut status = TestCaseStatus::skipped();
    status.set_message(format!(
        "known open bug {}: {}",
        bug.signature, bug.reproducer
    ));
    let mut case = TestCase::new(name, status);
    case.set_system_out(format!(
        "still fails at start-up: {}\nfindings of it in this run: {}",
        bug.replay, bug.findings
    ));
    case
}

/// The first lines of a reproducer, or why they cannot be read.
fn first_lines(path: &Path) -> String {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let mut lines: Vec<&str> = text.lines().take(REPRODUCER_LINES + 1).collect();
            if lines.len() > REPRODUCER_LINES {
                lines[REPRODUCER_LINES] = "...";
            }
            lines.join("\n")
        }
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}
