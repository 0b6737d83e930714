//! `--sqlite-lib PATH`: lancet tests a libsqlite3 loaded at run time (here
//! Debian's, SQLite 3.40.1, which the sqlite3 shell depends on) instead of
//! the bundled SQLite, names it in summaries and findings, and refuses a
//! file it cannot use with exit status 2.

mod common;
use common::*;
use std::path::Path;

/// Debian's libsqlite3 (package libsqlite3-0), SQLite 3.40.1.
const SYSTEM_LIB: &str = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";

fn system_lib() -> Option<&'static str> {
    if Path::new(SYSTEM_LIB).exists() {
        Some(SYSTEM_LIB)
    } else {
        eprintln!("note: {SYSTEM_LIB} is missing (install libsqlite3-0); skipping");
        None
    }
}

/// The clean run uses NoREC: SQLite 3.40.1 has logic bugs fixed in later
/// releases that the TLP oracles find within a few thousand checks (the
/// HAVING variant most often: `x NOT IN (SELECT real_column)` in HAVING
/// converts a text group key to a number in the result), so a run with
/// every oracle is clean only for lucky seeds, and any change to the
/// generators would make it fail. NoREC found nothing in 150,000 checks.
#[test]
fn three_thousand_checks_through_the_system_library_find_nothing() {
    let Some(lib) = system_lib() else { return };
    let out_dir = tempfile::tempdir().unwrap();
    let summary_path = out_dir.path().join("s.json");
    let out = fuzz_into(
        out_dir.path(),
        &[
            "--sqlite-lib",
            lib,
            "--oracle",
            "norec",
            "--threads",
            "2",
            "--seed",
            "1",
            "--queries",
            "3000",
            "--summary-json",
            summary_path.to_str().unwrap(),
        ],
    );
    let summary = read_json(&summary_path);
    assert!(summary["checks"].as_u64().unwrap() >= 3000, "{summary}");
    assert_eq!(summary["findings"], 0, "findings on 3.40.1: {summary}");
    assert_eq!(summary["unconfirmed"], 0, "{summary}");
    assert_eq!(out.status.code(), Some(0));
    let version = summary["dbms_version"].as_str().unwrap();
    assert!(
        version.starts_with("SQLite 3.40.1 (source id 2022-12-28"),
        "the summary names the loaded library, not the bundled one: {version}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("SQLite 3.40.1"));
}

#[test]
fn findings_name_the_loaded_library() {
    let Some(lib) = system_lib() else { return };
    let out_dir = tempfile::tempdir().unwrap();
    let out = fuzz_planted_drop_row(out_dir.path(), &["--sqlite-lib", lib]);
    assert_eq!(out.status.code(), Some(1), "the planted fault is caught");
    let findings = run_dir(out_dir.path()).join("findings");
    let sqls = files_with_ext(&findings, "sql");
    assert!(!sqls.is_empty());
    let script = std::fs::read_to_string(&sqls[0]).unwrap();
    assert!(
        script.contains("-- DBMS: sqlite SQLite 3.40.1 (source id 2022-12-28"),
        "{script}"
    );
    let record = read_json(&files_with_ext(&findings, "json")[0]);
    assert!(
        record.to_string().contains("SQLite 3.40.1"),
        "the finding record names 3.40.1: {record}"
    );
    // The reproducer runs in the shell of the same release.
    if let Some(cli) = sqlite3_cli() {
        let db = out_dir.path().join("new.db");
        let status = std::process::Command::new(cli)
            .arg("-bail")
            .arg(&db)
            .stdin(std::fs::File::open(&sqls[0]).unwrap())
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
    }
}

#[test]
fn a_missing_library_is_a_clear_error() {
    let out = run(&[
        "fuzz",
        "--sqlite-lib",
        "/no/such/libsqlite3.so",
        "--queries",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("lancet: error: cannot load SQLite library /no/such/libsqlite3.so: "),
        "{err}"
    );
    assert!(err.contains("No such file"), "{err}");
    // bench takes the option too.
    let out = run(&[
        "bench",
        "--sqlite-lib",
        "/no/such/libsqlite3.so",
        "--seconds",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("cannot load SQLite library"));
}

#[test]
fn a_library_that_is_not_sqlite_is_a_clear_error() {
    // Any shared library without SQLite's functions: the test binary's
    // own libc will do.
    let libc = [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ]
    .into_iter()
    .find(|p| Path::new(p).exists());
    let Some(libc) = libc else {
        eprintln!("note: no libc.so.6 found; skipping");
        return;
    };
    let out = run(&["fuzz", "--sqlite-lib", libc, "--queries", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("cannot load SQLite library {libc}: "))
            && err.contains("no function sqlite3_"),
        "{err}"
    );
}
