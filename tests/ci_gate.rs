//! `lancet fuzz` as a CI gate: the JUnit report (`--junit`), known open
//! bugs (`--known`) that do not fail the gate and are reported fixed once
//! they no longer reproduce, and the exit status. SQLite, embedded, with
//! the planted fault `drop-row` standing in for a bug.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// One thread and a fixed seed: the same databases, so the same findings,
/// every time.
const GATE: [&str; 8] = [
    "--oracle",
    "tlp-where",
    "--threads",
    "1",
    "--seed",
    "11",
    "--queries",
    "150",
];

/// Runs the gate into `out`, with `extra` options.
fn gate(out: &Path, extra: &[&str]) -> Output {
    let mut args = GATE.to_vec();
    args.extend_from_slice(extra);
    fuzz_into(out, &args)
}

/// A gate run into `dir/NAME` with its JUnit report at `dir/NAME.xml`.
struct Reported {
    output: Output,
    /// The run's directory.
    run: PathBuf,
    /// The test cases of its report.
    cases: Vec<Case>,
    suite: String,
}

fn gate_reporting(dir: &Path, name: &str, extra: &[&str]) -> Reported {
    let out = dir.join(name);
    let report = dir.join(format!("{name}.xml"));
    let mut args = extra.to_vec();
    args.extend_from_slice(&["--junit", arg(&report)]);
    let output = gate(&out, &args);
    let (suite, cases) = junit(&report);
    Reported {
        output,
        run: run_dir(&out),
        cases,
        suite,
    }
}

fn arg(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// Known bugs as a repository would keep them: the reproducers of a gate
/// run with the planted fault (its findings' files, without `pending/`),
/// copied to `dir/known`.
fn known_bugs(dir: &Path) -> PathBuf {
    let out = dir.join("first");
    let o = gate(&out, &["--inject-fault", "drop-row"]);
    assert_eq!(o.status.code(), Some(1), "a planted fault fails the gate");
    let known = dir.join("known");
    std::fs::create_dir_all(&known).unwrap();
    for entry in std::fs::read_dir(run_dir(&out).join("findings")).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, known.join(p.file_name().unwrap())).unwrap();
        }
    }
    known
}

/// A test case of a JUnit report: its name and what it holds.
#[derive(Debug)]
struct Case {
    name: String,
    /// `failure`, `error` or `skipped`; `None` for a pass.
    outcome: Option<String>,
    message: String,
    text: String,
    system_out: String,
}

/// Parses a JUnit report: the suite's name and its test cases.
fn junit(path: &Path) -> (String, Vec<Case>) {
    let xml =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&xml)
        .unwrap_or_else(|e| panic!("{} is not XML: {e}\n{xml}", path.display()));
    let suites: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    assert_eq!(suites.len(), 1, "one test suite:\n{xml}");
    let name = suites[0].attribute("name").unwrap_or_default().to_string();
    let child_text = |n: roxmltree::Node, tag: &str| {
        n.children()
            .find(|c| c.has_tag_name(tag))
            .and_then(|c| c.text())
            .unwrap_or_default()
            .to_string()
    };
    let cases = suites[0]
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .map(|n| {
            let status = n
                .children()
                .find(|c| ["failure", "error", "skipped"].contains(&c.tag_name().name()));
            Case {
                name: n.attribute("name").unwrap_or_default().to_string(),
                outcome: status.map(|s| s.tag_name().name().to_string()),
                message: status
                    .and_then(|s| s.attribute("message"))
                    .unwrap_or_default()
                    .to_string(),
                text: status
                    .and_then(|s| s.text())
                    .unwrap_or_default()
                    .to_string(),
                system_out: child_text(n, "system-out"),
            }
        })
        .collect();
    (name, cases)
}

fn with_outcome<'a>(cases: &'a [Case], outcome: Option<&str>) -> Vec<&'a Case> {
    cases
        .iter()
        .filter(|c| c.outcome.as_deref() == outcome)
        .collect()
}

#[test]
fn a_new_finding_fails_the_gate_and_the_junit_report_names_its_reproducer() {
    let dir = tempfile::tempdir().unwrap();
    let Reported {
        output,
        run,
        cases,
        suite,
    } = gate_reporting(dir.path(), "out", &["--inject-fault", "drop-row"]);
    assert_eq!(output.status.code(), Some(1));
    let run_id = run.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        suite.contains("sqlite") && suite.contains(&run_id),
        "{suite}"
    );
    let oracle = cases.iter().find(|c| c.name == "tlp-where").unwrap();
    assert_eq!(oracle.outcome.as_deref(), Some("failure"), "{oracle:?}");
    let run_case = cases.iter().find(|c| c.name == "run").unwrap();
    assert_eq!(run_case.outcome, None, "the run itself finished");

    let failures: Vec<&Case> = with_outcome(&cases, Some("failure"))
        .into_iter()
        .filter(|c| c.name != "tlp-where")
        .collect();
    let summary = read_json(&run.join("summary.json"));
    assert_eq!(
        failures.len() as u64,
        summary["unique_bugs"].as_u64().unwrap(),
        "one failed test case per unique bug"
    );
    for f in failures {
        assert!(f.name.starts_with("tlp-where: "), "{f:?}");
        assert!(
            f.message.contains("relation that broke: RS(original)"),
            "{f:?}"
        );
        let path = f
            .message
            .split("reproducer: ")
            .nth(1)
            .unwrap_or_else(|| panic!("no reproducer in {f:?}"));
        assert!(path.ends_with(".sql"), "{path}");
        assert!(Path::new(path).is_file(), "{path} does not exist");
        let signature = f.name.trim_start_matches("tlp-where: ");
        assert!(
            f.text.starts_with("-- lancet") && f.text.contains(signature),
            "the failure holds the reproducer's first lines: {f:?}"
        );
    }
}

#[test]
fn known_open_bugs_met_again_do_not_fail_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let known = known_bugs(dir.path());
    let again = &["--inject-fault", "drop-row", "--known", arg(&known)];
    let Reported {
        output, run, cases, ..
    } = gate_reporting(dir.path(), "again", again);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(0),
        "known bugs do not fail the gate"
    );
    let summary = read_json(&run.join("summary.json"));
    let findings = summary["findings"].as_u64().unwrap();
    assert!(findings > 0, "the bugs were met again");
    assert_eq!(summary["known_findings"].as_u64(), Some(findings));
    assert!(
        stdout.contains(&format!("{findings} finding(s) of "))
            && stdout.contains("known open bug(s) (do not fail the gate)"),
        "{stdout}"
    );
    // They are written as usual.
    assert!(!finding_files(&run.join("findings"), "sql").is_empty());

    assert!(
        with_outcome(&cases, Some("failure")).is_empty(),
        "{cases:?}"
    );
    let skipped = with_outcome(&cases, Some("skipped"));
    assert_eq!(
        skipped.len(),
        summary["known_bugs"].as_array().unwrap().len()
    );
    for s in skipped {
        let signature = s.name.trim_start_matches("tlp-where: ");
        let prefix = format!("known open bug {signature}: ");
        let path = s
            .message
            .strip_prefix(&prefix)
            .unwrap_or_else(|| panic!("{s:?}"));
        assert!(Path::new(path).starts_with(&known), "{path}");
        assert!(Path::new(path).is_file(), "{path}");
    }
}

#[test]
fn a_known_bug_that_no_longer_reproduces_is_reported_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let known = known_bugs(dir.path());
    // Without the planted fault, the "bugs" are gone.
    let Reported {
        output, run, cases, ..
    } = gate_reporting(dir.path(), "fixed", &["--known", arg(&known)]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("is fixed: it no longer reproduces"),
        "{stdout}"
    );
    let summary = read_json(&run.join("summary.json"));
    let bugs = summary["known_bugs"].as_array().unwrap();
    assert!(!bugs.is_empty());
    assert!(bugs.iter().all(|b| b["fixed"] == true), "{bugs:?}");

    assert!(with_outcome(&cases, Some("skipped")).is_empty());
    let fixed: Vec<&Case> = cases
        .iter()
        .filter(|c| c.system_out.starts_with("fixed: "))
        .collect();
    assert_eq!(fixed.len(), bugs.len(), "{cases:?}");
    assert!(fixed.iter().all(|c| c.outcome.is_none()), "fixed bugs pass");
}

#[test]
fn bad_gate_paths_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");

    let report = dir.path().join("no-such-dir").join("report.xml");
    let o = gate(&out, &["--junit", arg(&report)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(arg(&report)), "{}", stderr(&o));

    let missing = dir.path().join("no-such-known");
    let o = gate(&out, &["--known", arg(&missing)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(arg(&missing)) && stderr(&o).contains("does not exist"),
        "{}",
        stderr(&o)
    );

    let known = dir.path().join("known");
    std::fs::create_dir_all(&known).unwrap();
    let bad = known.join("0001-tlp-where-t0-d0.json");
    std::fs::write(&bad, "{\"kind\": \"logic\"").unwrap();
    std::fs::write(bad.with_extension("sql"), "SELECT 1;\n").unwrap();
    let o = gate(&out, &["--known", arg(&known)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("0001-tlp-where-t0-d0"),
        "{}",
        stderr(&o)
    );

    assert!(!out.exists(), "nothing ran");

    // An empty directory of known bugs is fine.
    std::fs::remove_file(&bad).unwrap();
    std::fs::remove_file(bad.with_extension("sql")).unwrap();
    let o = gate(&out, &["--known", arg(&known)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn a_campaign_file_names_the_report_and_the_known_bugs_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    known_bugs(dir.path()); // into dir/known, beside the campaign file
    let campaign = dir.path().join("gate.toml");
    std::fs::write(
        &campaign,
        "oracle = \"tlp-where\"\nthreads = 1\nseed = 11\nqueries = 150\njunit = \"report.xml\"\nknown = \"known\"\n",
    )
    .unwrap();
    let o = fuzz_into(
        &dir.path().join("out"),
        &["--config", arg(&campaign), "--inject-fault", "drop-row"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let (_, cases) = junit(&dir.path().join("report.xml"));
    assert!(!with_outcome(&cases, Some("skipped")).is_empty());
}

/// Sends SIGTERM to a run a second after it started; returns its output.
fn terminated(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["--threads", "1"];
    args.extend_from_slice(extra);
    let child = spawn_fuzz(out, &args);
    std::thread::sleep(Duration::from_millis(1000));
    signal(child.id(), "TERM");
    wait_within(child, Duration::from_secs(20))
}

#[test]
fn a_gate_run_cut_short_by_a_signal_exits_3_and_its_report_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.xml");
    let o = terminated(
        &dir.path().join("bounded"),
        &["--timeout", "300", "--junit", arg(&report)],
    );
    assert_eq!(o.status.code(), Some(3), "it could not finish");
    let (_, cases) = junit(&report);
    let run = cases.iter().find(|c| c.name == "run").unwrap();
    assert_eq!(run.outcome.as_deref(), Some("error"), "{run:?}");
    assert!(run.message.contains("interrupted"), "{run:?}");

    // A run with no end of its own ends by a signal: that is no failure.
    let o = terminated(&dir.path().join("open"), &[]);
    assert_eq!(o.status.code(), Some(0));
}
