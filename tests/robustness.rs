//! Every end of a run is a summary, runs never share a directory, and bad
//! input is refused before anything runs: each a fault that used to break
//! lancet, on the embedded SQLite (the PostgreSQL ones are in trust.rs).

mod common;
use common::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

#[test]
fn sigterm_and_sighup_end_a_run_with_its_summary() {
    for sig in ["TERM", "HUP"] {
        let out_dir = tempfile::tempdir().unwrap();
        let child = spawn_fuzz(
            out_dir.path(),
            &[
                "--threads",
                "2",
                "--timeout",
                "300",
                "--inject-fault",
                "drop-row",
            ],
        );
        std::thread::sleep(Duration::from_millis(1500));
        signal(child.id(), sig);
        let out = wait_within(child, Duration::from_secs(15));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("interrupted after"),
            "SIG{sig}: no summary:\n{stdout}"
        );
        assert!(matches!(out.status.code(), Some(0 | 1)), "SIG{sig}");
        let run = run_dir(out_dir.path());
        read_json(&run.join("summary.json"));
        assert!(
            files_below(&run, ".tmp").is_empty(),
            "SIG{sig}: {:?}",
            files_below(&run, ".tmp")
        );
        // Nothing waits for confirmation among, or beside, the findings.
        let pending = run.join("findings").join("pending");
        assert!(
            finding_files(&pending, "sql").is_empty(),
            "SIG{sig}: unconfirmed findings left in {}",
            pending.display()
        );
    }
}

#[test]
fn two_runs_with_one_seed_in_one_second_keep_their_own_directories() {
    let out_dir = tempfile::tempdir().unwrap();
    let args = ["--seed", "7", "--threads", "1", "--queries", "500"];
    let a = spawn_fuzz(out_dir.path(), &args);
    let b = spawn_fuzz(out_dir.path(), &args);
    let (a, b) = (
        wait_within(a, Duration::from_secs(60)),
        wait_within(b, Duration::from_secs(60)),
    );
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)));
    let mut runs: Vec<PathBuf> = std::fs::read_dir(out_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for run in &runs {
        let summary = read_json(&run.join("summary.json"));
        assert_eq!(summary["checks"], 500, "{}", run.display());
        assert!(run.file_name().unwrap().to_string_lossy().contains("-s7-"));
    }
}

#[test]
fn an_interrupted_selftest_says_so_and_exits_non_zero() {
    let out_dir = tempfile::tempdir().unwrap();
    let mut child = lancet()
        .args([
            "selftest",
            "--out",
            out_dir.path().to_str().unwrap(),
            "--max-checks",
            "2000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The header comes once the signal handler is in place.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut header = String::new();
    stdout.read_line(&mut header).unwrap();
    assert!(header.starts_with("lancet selftest"), "{header}");
    signal(child.id(), "INT");
    let mut rest = String::new();
    for line in stdout.lines() {
        rest.push_str(&line.unwrap());
        rest.push('\n');
    }
    let out = wait_within(child, Duration::from_secs(30));
    assert!(
        rest.contains("selftest interrupted"),
        "an interrupted selftest must say so:\n{rest}"
    );
    assert!(!rest.contains("selftest passed"), "{rest}");
    assert_eq!(out.status.code(), Some(3), "{rest}");
}

#[test]
fn campaign_files_get_the_same_checks_as_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    for (text, says) in [
        ("threads = 0\n", "threads must be from 1 to 1024"),
        ("threads = 5000\n", "threads must be from 1 to 1024"),
        ("checks_per_database = 0\n", "checks_per_database"),
    ] {
        let file = dir.path().join("c.toml");
        std::fs::write(&file, text).unwrap();
        let out = run(&[
            "fuzz",
            "--config",
            file.to_str().unwrap(),
            "--out",
            dir.path().join("out").to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        let err = stderr(&out);
        assert!(
            err.contains(says) && err.contains("c.toml"),
            "{text}: {err}"
        );
        assert!(!dir.path().join("out").exists(), "{text}: a run started");
    }
}

#[test]
fn bad_paths_and_counts_are_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir").join("s.json");
    let out = run(&[
        "fuzz",
        "--queries",
        "100000",
        "--summary-json",
        missing.to_str().unwrap(),
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no-such-dir"), "{}", stderr(&out));
    assert!(!dir.path().join("out").exists(), "the run started anyway");
    for args in [
        &["bench", "--threads", "0", "--seconds", "1"][..],
        &["fuzz", "--checks-per-database", "0", "--queries", "1"][..],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stdout).is_empty(), "{args:?}");
    }
}

#[test]
fn a_killed_runs_leftovers_are_recognised_at_the_next_start() {
    let out_dir = tempfile::tempdir().unwrap();
    // What a kill -9 leaves: an unconfirmed finding, a half-written file.
    let dead = out_dir.path().join("20260101-000000-s1-000000000000");
    let pending = dead.join("findings").join("pending");
    std::fs::create_dir_all(&pending).unwrap();
    std::fs::write(dead.join("run.ledger"), "").unwrap();
    std::fs::write(pending.join("0001-tlp-where-t0-d3.sql"), "SELECT 1;").unwrap();
    std::fs::write(pending.join("0001-tlp-where-t0-d3.json"), "{}").unwrap();
    std::fs::write(dead.join("findings").join("index.json.tmp"), "{").unwrap();
    let out = fuzz_into(out_dir.path(), &["--queries", "50", "--threads", "1"]);
    assert_eq!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains("lancet: earlier run") && err.contains("1 finding(s) it had not confirmed"),
        "{err}"
    );
    assert!(dead
        .join("interrupted")
        .join("0001-tlp-where-t0-d3.sql")
        .exists());
    assert!(finding_files(&dead.join("findings"), "sql").is_empty());
    assert!(files_below(&dead, ".tmp").is_empty());
}

/// A finding with a planted fault, unreduced, and its run directory.
fn one_finding(out: &Path) -> PathBuf {
    let o = fuzz_into(
        out,
        &[
            "--oracle",
            "tlp-where",
            "--inject-fault",
            "drop-row",
            "--threads",
            "1",
            "--seed",
            "3",
            "--queries",
            "300",
            "--no-reduce",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    finding_files(&run_dir(out).join("findings"), "sql")
        .into_iter()
        .next()
        .expect("a finding")
}

#[test]
fn replay_reads_the_sql_as_edited_and_refuses_what_no_longer_fits() {
    let out_dir = tempfile::tempdir().unwrap();
    let sql = one_finding(out_dir.path());
    let json = sql.with_extension("json");
    let text = std::fs::read_to_string(&sql).unwrap();
    // A setup statement added by hand is run.
    let marker = "\n-- query 1";
    let at = text.find(marker).expect("the queries' comment");
    let edited = format!(
        "{}\nCREATE TABLE added_by_hand (x);\nCREATE TABLE added_by_hand (x);{}",
        &text[..at],
        &text[at..]
    );
    std::fs::write(&sql, &edited).unwrap();
    let o = run(&["replay", sql.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "the edit is run: its error shows");
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(said.contains("added_by_hand"), "{said}");
    // Truncated: the compared queries are gone.
    std::fs::write(&sql, &text[..at]).unwrap();
    let o = run(&["replay", sql.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(said.contains("no longer matches its record"), "{said}");
    let o = run(&["reduce", sql.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no longer matches its record"));
    // Restored, but the record names another oracle: refused, not judged
    // under the wrong relation.
    std::fs::write(&sql, &text).unwrap();
    let record = std::fs::read_to_string(&json).unwrap();
    std::fs::write(
        &json,
        record.replace("\"oracle\": \"tlp-where\"", "\"oracle\": \"tlp-distinct\""),
    )
    .unwrap();
    let o = run(&["replay", sql.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let said = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(said.contains("does not fit its oracle"), "{said}");
    assert!(!said.contains("Some("), "{said}");
    // The record as written replays.
    std::fs::write(&json, &record).unwrap();
    let o = run(&["replay", sql.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "still fails with its fault");
}

/// An oracle the provider cannot serve is refused before the run: PQS has
/// no evaluator for a library of unknown build. (A worker that cannot go
/// on mid-run: tests/crash_isolation.rs.)
#[test]
fn an_oracle_the_provider_cannot_serve_is_refused_at_start() {
    let Some(lib) = [
        "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0",
        "/usr/lib/aarch64-linux-gnu/libsqlite3.so.0",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists()) else {
        eprintln!("skipped: no system libsqlite3 to load");
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let out = fuzz_into(
        out_dir.path(),
        &["--sqlite-lib", lib, "--oracle", "pqs", "--threads", "2"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no oracle of 'pqs' can run") && stderr(&out).contains("pivot rows"),
        "{}",
        stderr(&out)
    );
}

/// Even with one seed, one second and one (forced) token, two runs get
/// two directories: a run directory is created, never reused.
#[test]
fn two_runs_with_one_run_id_get_two_directories() {
    let out_dir = tempfile::tempdir().unwrap();
    let spawn = || {
        lancet()
            .env("LANCET_TEST_RUN_TOKEN", "0123456789ab")
            .args([
                "fuzz",
                "--seed",
                "7",
                "--threads",
                "1",
                "--queries",
                "300",
                "--status-interval",
                "0",
                "--out",
            ])
            .arg(out_dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    let (a, b) = (
        wait_within(a, Duration::from_secs(60)),
        wait_within(b, Duration::from_secs(60)),
    );
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)));
    let runs: Vec<PathBuf> = std::fs::read_dir(out_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for run in &runs {
        assert_eq!(read_json(&run.join("summary.json"))["checks"], 300);
    }
}

/// One broken record does not block the rest: `findings` and `report`
/// skip a truncated record with one line naming the broken file and go on;
/// a truncated reduced record costs only the reduction; a report that
/// fails leaves no file behind.
#[test]
fn a_broken_record_is_skipped_with_one_line_and_a_failed_report_leaves_no_file() {
    let out = tempfile::tempdir().unwrap();
    let first = one_finding(out.path());
    let findings = first.parent().unwrap().to_path_buf();
    let all = finding_files(&findings, "json");
    assert!(all.len() >= 2, "two findings at least: {all:?}");
    // A reduced record cut short beside the first finding, and the second
    // finding's own record cut short.
    let reduced = first.with_extension("reduced.json");
    std::fs::copy(
        first.with_extension("sql"),
        first.with_extension("reduced.sql"),
    )
    .unwrap();
    std::fs::write(&reduced, r#"{"kind": "logic", "sql"#).unwrap();
    std::fs::write(&all[1], r#"{"kind": "lo"#).unwrap();
    let dir = run_dir(out.path());
    let listed = run(&["findings", dir.to_str().unwrap()]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let err = stderr(&listed);
    assert!(
        err.contains(&format!("skipped {}", all[1].display())),
        "{err}"
    );
    assert!(
        err.contains(&format!("skipped {}", reduced.display())),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(stdout.contains("bug(s) under"), "{stdout}");
    // A report of a directory that is no run fails and writes nothing.
    let html = out.path().join("report.html");
    let failed = run(&[
        "report",
        "--output",
        html.to_str().unwrap(),
        "/nonexistent-run",
    ]);
    assert_eq!(failed.status.code(), Some(2), "{}", stderr(&failed));
    assert!(!html.exists(), "a failed report left a file behind");
    let ok = run(&[
        "report",
        "--output",
        html.to_str().unwrap(),
        dir.to_str().unwrap(),
    ]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(std::fs::metadata(&html).unwrap().len() > 1000);
}
