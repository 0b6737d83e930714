//! Reduction, replay and deduplication, end to end through the binary:
//! - selftest findings reduce to at most 8 statements, each in under 30 s;
//!   `sqlite3` runs them; `lancet replay` says they still fail with the
//!   planted fault and pass on the real SQLite;
//! - every reproducer the reducer writes during a run still breaks its
//!   relation when replayed (and passes without the fault: the reducer
//!   made no bug of its own);
//! - SQL from elsewhere shrinks under --check-cmd and --check-differs;
//! - bad input gets a clear error.

mod common;
use common::*;
use std::path::{Path, PathBuf};

fn unreduced_sql(dir: &Path) -> Vec<PathBuf> {
    files_with_ext(dir, "sql")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".reduced.sql"))
        .collect()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn selftest_findings_reduce_to_at_most_8_statements_and_replay() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(&["selftest", "--out", out_dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let run_path = run_dir(out_dir.path());
    let mut reduced = Vec::new();
    for oracle in lancet_oracles::query_names() {
        if oracle == "dist-vs-local" {
            continue; // no twins on SQLite: tests/citus.rs reduces its findings
        }
        if oracle == "perf" {
            // Performance findings are not reduced (each candidate would be
            // timed); tests/optimizer_oracles.rs checks their reproducers.
            continue;
        }
        let findings = run_path.join(oracle).join("findings");
        let originals = unreduced_sql(&findings);
        assert_eq!(originals.len(), 1, "{oracle}: one finding expected");
        let out = reduce_file(&originals[0]);
        assert_eq!(out.status.code(), Some(0), "{oracle}: reduce failed");
        let path = findings.join(
            originals[0]
                .file_name()
                .unwrap()
                .to_string_lossy()
                .replace(".sql", ".reduced.sql"),
        );
        let record = read_json(&path.with_extension("json"));
        let info = &record["reduction"];
        let statements = info["statements_after"].as_u64().unwrap();
        let seconds = info["seconds"].as_f64().unwrap();
        eprintln!(
            "{oracle}: {} -> {statements} statements, {} -> {} bytes, {seconds:.2} s",
            info["statements_before"], info["bytes_before"], info["bytes_after"]
        );
        assert!(statements <= 8, "{oracle}: {statements} statements");
        assert!(seconds < 30.0, "{oracle}: {seconds} s");
        if let Some(cli) = sqlite3_cli() {
            let db = out_dir.path().join(format!("{oracle}.db"));
            let status = std::process::Command::new(cli)
                .arg(&db)
                .stdin(std::fs::File::open(&path).unwrap())
                .output()
                .unwrap();
            assert!(
                status.status.success() && status.stderr.is_empty(),
                "sqlite3 cannot run {}: {}",
                path.display(),
                String::from_utf8_lossy(&status.stderr)
            );
        }
        reduced.push(path);
    }
    assert_replays_fail_with_fault_and_pass_without("selftest", &reduced);
}

/// `lancet replay` says every file still fails with its planted fault
/// (exit 1), and passes on the real SQLite (exit 0): the reducer kept the
/// relation broken, and made no bug of its own.
fn assert_replays_fail_with_fault_and_pass_without(what: &str, files: &[PathBuf]) {
    let paths: Vec<&str> = files.iter().map(|p| p.to_str().unwrap()).collect();
    let mut args = vec!["replay"];
    args.extend(&paths);
    let with_fault = run(&args);
    assert_eq!(with_fault.status.code(), Some(1), "{what}");
    assert_eq!(
        stdout(&with_fault).matches(": still fails").count(),
        files.len(),
        "{what}: a reduced reproducer no longer breaks its relation"
    );
    args.push("--no-fault");
    let real = run(&args);
    assert_eq!(
        real.status.code(),
        Some(0),
        "{what}: a reduced reproducer fails on the real SQLite: the reducer made a bug"
    );
    assert_eq!(stdout(&real).matches(": passes").count(), files.len());
}

fn reduce_file(file: &Path) -> std::process::Output {
    run(&["reduce", file.to_str().unwrap()])
}

#[test]
fn every_reduced_reproducer_of_a_run_still_breaks_its_relation() {
    for (oracle, fault) in [
        ("all", "drop-row"),
        ("norec", "miscount"),
        ("pqs", "empty-result"),
    ] {
        let out_dir = tempfile::tempdir().unwrap();
        let out = fuzz_into(
            out_dir.path(),
            &[
                "--oracle",
                oracle,
                "--inject-fault",
                fault,
                "--threads",
                "1",
                "--seed",
                "11",
                "--queries",
                "400",
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{oracle}: findings expected");
        let findings = run_dir(out_dir.path()).join("findings");
        let reduced: Vec<PathBuf> = files_with_ext(&findings, "sql")
            .into_iter()
            .filter(|p| p.to_string_lossy().ends_with(".reduced.sql"))
            .collect();
        assert!(!reduced.is_empty(), "{oracle}: nothing was reduced");
        assert_replays_fail_with_fault_and_pass_without(oracle, &reduced);
        // The index counts every confirmed finding once (those past the
        // flood limit are counted, not written).
        let index = read_json(&findings.join("index.json"));
        let total: u64 = index
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["count"].as_u64().unwrap() - e["not_written"].as_u64().unwrap_or(0))
            .sum();
        assert_eq!(total as usize, unreduced_sql(&findings).len());
        assert!(findings.join("index.md").exists());
        assert!(stderr(&out).contains("lancet: reduced "));
    }
}

#[test]
fn no_reduce_keeps_findings_as_found() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = fuzz_into(
        out_dir.path(),
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
            "200",
            "--no-reduce",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let findings = run_dir(out_dir.path()).join("findings");
    assert!(!files_with_ext(&findings, "sql")
        .iter()
        .any(|p| p.to_string_lossy().contains(".reduced.")));
    assert!(findings.join("index.json").exists());
    assert!(stdout(&out).contains("bug(s) under"));
}

const PADDED: &str = "\
-- a script from a bug report, padded with unrelated statements
CREATE TABLE pad (x INTEGER, y TEXT);
INSERT INTO pad VALUES (1, 'a'), (2, 'b;c'), (3, 'd');
CREATE TABLE t (a INTEGER, b TEXT);
INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four');
CREATE INDEX pad_y ON pad (y);
UPDATE pad SET y = 'z' WHERE x > 1;
CREATE VIEW v AS SELECT a + 1 AS w FROM t WHERE b <> 'two';
SELECT count(*) FROM pad;
SELECT w FROM v WHERE w > 2 ORDER BY w;
";

#[test]
fn a_foreign_file_shrinks_under_a_check_command() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("padded.sql");
    std::fs::write(&file, PADDED).unwrap();
    let Some(cli) = sqlite3_cli() else {
        panic!("the sqlite3 shell is needed (tests/run.sh installs it)");
    };
    // Interesting while SQLite's own shell prints 5 on a line (w = 4 + 1).
    let out = run(&[
        "reduce",
        file.to_str().unwrap(),
        "--dbms",
        "sqlite",
        "--check-cmd",
        &format!("{} :memory: < {{file}} | grep -qx 5", cli.display()),
    ]);
    assert_eq!(out.status.code(), Some(0));
    let reduced = std::fs::read_to_string(dir.path().join("padded.reduced.sql")).unwrap();
    let statements = reduced.matches(";\n").count();
    assert!(statements <= 4, "{reduced}");
    assert!(reduced.len() < PADDED.len() / 2, "{reduced}");
    assert!(!reduced.contains("pad"), "{reduced}");
    // A check that rejects the original is an error, not a silent no-op.
    let out = run(&[
        "reduce",
        file.to_str().unwrap(),
        "--dbms",
        "sqlite",
        "--check-cmd",
        "false",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("does not accept the original"));
}

#[test]
fn a_foreign_file_shrinks_keeping_two_queries_different() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pair.sql");
    // The two queries differ because of the row with b = 'two'.
    let script = format!("{PADDED}SELECT a FROM t;\nSELECT a FROM t WHERE b <> 'two';\n");
    std::fs::write(&file, &script).unwrap();
    let out = run(&[
        "reduce",
        file.to_str().unwrap(),
        "--dbms",
        "sqlite",
        "--check-differs",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let reduced = std::fs::read_to_string(dir.path().join("pair.reduced.sql")).unwrap();
    // The compared queries are kept exactly; the rest shrinks to the table
    // and the one row that makes them differ.
    assert!(reduced.contains("SELECT a FROM t;\nSELECT a FROM t WHERE b <> 'two';\n"));
    assert_eq!(reduced.matches(";\n").count(), 4, "{reduced}");
    assert!(reduced.contains("'two'"));
}

#[test]
fn bad_reproducers_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("broken.json");
    std::fs::write(&json, "{ not json").unwrap();
    for cmd in ["reduce", "replay"] {
        let out = run(&[cmd, json.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let text = format!("{}{}", stdout(&out), stderr(&out));
        assert!(text.contains("not a valid lancet finding record"), "{text}");
    }
    let sql = dir.path().join("foreign.sql");
    std::fs::write(&sql, "SELECT 1;").unwrap();
    let out = run(&["reduce", sql.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not a lancet reproducer"));
    let out = run(&["replay", dir.path().join("missing.sql").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
}

/// Reduction keeps pace: with one reducer and a few seconds to finish,
/// every confirmed finding is either reduced or counted unreduced with a
/// reason, and the first finding of each signature goes before repeats.
#[test]
fn every_finding_is_reduced_or_said_why_not() {
    let out_dir = tempfile::tempdir().unwrap();
    let summary = out_dir.path().join("summary.json");
    let out = fuzz_into(
        out_dir.path(),
        &[
            "--oracle",
            "tlp-where",
            "--inject-fault",
            "drop-row",
            "--threads",
            "2",
            "--seed",
            "7",
            "--queries",
            "1500",
            "--reducers",
            "1",
            "--finish-reductions",
            "3",
            "--summary-json",
            summary.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let s = read_json(&summary);
    let findings = s["findings"].as_u64().unwrap();
    let reduced = s["reduced"].as_u64().unwrap();
    let unreduced: u64 = s["unreduced"]
        .as_object()
        .map_or(0, |m| m.values().filter_map(|v| v.as_u64()).sum());
    assert!(findings >= 3 && reduced >= 1, "{s}");
    assert_eq!(reduced + unreduced, findings, "{s}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("{reduced} reduced")), "{text}");
}
