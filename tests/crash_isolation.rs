//! Crash isolation: SQLite runs in worker processes, so a library that
//! aborts on some query gives a `crash` finding and the run completes with
//! its summary. The planted fault is a small shim library over Debian's
//! libsqlite3 whose `sqlite3_prepare_v2` aborts when the SQL text holds a
//! trigger; the same shim, preloaded into the `sqlite3` shell, makes the
//! reproducer crash the shell too.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's libsqlite3 (package libsqlite3-0), which the sqlite3 shell uses.
const SYSTEM_LIB: &str = "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0";

/// Generated queries hold it now and then; set-up statements never do.
const TRIGGER: &str = "CROSS JOIN";

const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_stmt sqlite3_stmt;
typedef int (*prepare_fn)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
int sqlite3_prepare_v2(sqlite3 *db, const char *sql, int n, sqlite3_stmt **stmt, const char **tail) {
    static prepare_fn real;
    if (!real) real = (prepare_fn)dlsym(RTLD_NEXT, "sqlite3_prepare_v2");
    size_t len = sql == NULL ? 0 : (n < 0 ? strlen(sql) : (size_t)n);
    if (sql != NULL && memmem(sql, len, TRIGGER, strlen(TRIGGER)) != NULL) { ACTION; }
    return real(db, sql, n, stmt, tail);
}
"#;

/// Builds the crashing library into `dir`, or says why it cannot.
fn crashing_library(dir: &Path) -> Option<PathBuf> {
    faulty_library(dir, "crashy", "abort()")
}

/// Builds a shim that does `action` (C) on the trigger, into `dir`.
fn faulty_library(dir: &Path, name: &str, action: &str) -> Option<PathBuf> {
    if !Path::new(SYSTEM_LIB).exists() {
        eprintln!("note: {SYSTEM_LIB} is missing (install libsqlite3-0); skipping");
        return None;
    }
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, SHIM).unwrap();
    let lib = dir.join(format!("lib{name}.so"));
    let status = Command::new("gcc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(format!("-DTRIGGER=\"{TRIGGER}\""))
        .arg(format!("-DACTION={action}"))
        .arg(&src)
        // Linked against the real library, so that loading the shim loads
        // it too and every other sqlite3_* symbol is found through it.
        .arg("-Wl,--no-as-needed")
        .arg(SYSTEM_LIB)
        .arg("-ldl")
        .status()
        .expect("running gcc");
    assert!(status.success(), "gcc failed to build the crashing shim");
    Some(lib)
}

/// `lancet fuzz` of NoREC on the crashing library with `threads`, seed 4,
/// 1,500 checks and `extra` options: the library, the output directory
/// and lancet's output (`None` where the library cannot be built).
fn fuzz_on_crashing_library(
    tmp: &Path,
    threads: &str,
    extra: &[&str],
) -> Option<(PathBuf, PathBuf, std::process::Output)> {
    let lib = crashing_library(tmp)?;
    let out_dir = tmp.join("out");
    let mut args = vec![
        "--sqlite-lib",
        lib.to_str().unwrap(),
        "--oracle",
        "norec",
        "--threads",
        threads,
        "--seed",
        "4",
        "--queries",
        "1500",
    ];
    args.extend_from_slice(extra);
    let out = fuzz_into(&out_dir, &args);
    Some((lib, out_dir, out))
}

#[test]
fn a_library_that_aborts_gives_crash_findings_and_the_run_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let summary_path = tmp.path().join("s.json");
    let Some((lib, out_dir, out)) = fuzz_on_crashing_library(
        tmp.path(),
        "2",
        &[
            "--no-reduce",
            "--flood-limit",
            "3",
            "--summary-json",
            summary_path.to_str().unwrap(),
        ],
    ) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1), "new findings: exit 1");
    let summary = read_json(&summary_path);
    assert!(summary["checks"].as_u64().unwrap() >= 1500, "{summary}");
    let run = run_dir(&out_dir);
    let findings = finding_files(&run.join("findings"), "json");
    let crashes: Vec<PathBuf> = findings
        .iter()
        .filter(|p| read_json(p)["kind"] == "crash")
        .cloned()
        .collect();
    assert!(!crashes.is_empty(), "no crash finding among {findings:?}");
    // One way of dying is one signature: past the flood limit, crashes are
    // counted, not written.
    assert!(crashes.len() <= 3, "{} crash files", crashes.len());
    assert!(summary["flooded"].as_u64().unwrap() > 0, "{summary}");
    let index = std::fs::read_to_string(run.join("findings/index.md")).unwrap();
    assert!(index.contains("not written"), "{index}");
    for record in &crashes {
        let json = read_json(record);
        let text = json.to_string();
        assert!(text.contains("SIGABRT"), "the crash says how: {text}");
        let sql = record.with_extension("sql");
        let script = std::fs::read_to_string(&sql).unwrap();
        assert!(script.contains(TRIGGER), "{script}");
        // The reproducer crashes SQLite's own shell on the same faulty library.
        if let Some(shell) = sqlite3_cli() {
            let db = tmp.path().join("replay.db");
            let _ = std::fs::remove_file(&db);
            let shell_out = Command::new(shell)
                .env("LD_PRELOAD", &lib)
                .arg(&db)
                .stdin(std::fs::File::open(&sql).unwrap())
                .output()
                .unwrap();
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(
                shell_out.status.signal(),
                Some(6),
                "sqlite3 with the faulty library aborts on {}: {:?}",
                sql.display(),
                shell_out
            );
            // Without the fault, the same file runs to its end.
            let _ = std::fs::remove_file(&db);
            let clean = Command::new(sqlite3_cli().unwrap())
                .arg(&db)
                .stdin(std::fs::File::open(&sql).unwrap())
                .output()
                .unwrap();
            assert!(clean.status.success(), "{clean:?}");
        }
    }
    // Other checks went on around the crashes.
    assert!(
        read_json(&run.join("summary.json"))["checks"]
            .as_u64()
            .unwrap()
            >= 1500
    );
}

/// A crash is reduced like any other finding, once the workers are done
/// (each candidate that still crashes takes the DBMS down again): to the
/// statement that crashes, which still crashes the shell.
#[test]
fn a_crash_is_reduced_after_the_workers_end() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((lib, out_dir, out)) = fuzz_on_crashing_library(tmp.path(), "2", &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let findings = run_dir(&out_dir).join("findings");
    let reduced: Vec<PathBuf> = finding_files(&findings, "json")
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".reduced.") && read_json(p)["kind"] == "crash")
        .collect();
    assert!(!reduced.is_empty(), "no crash was reduced");
    for record in &reduced {
        let json = read_json(record);
        let before = json["reduction"]["statements_before"].as_u64().unwrap();
        let after = json["reduction"]["statements_after"].as_u64().unwrap();
        assert!(after < before && after <= 3, "{before} -> {after}");
        let sql = record.with_extension("sql");
        let script = std::fs::read_to_string(&sql).unwrap();
        assert!(script.contains(TRIGGER), "{script}");
        if let Some(shell) = sqlite3_cli() {
            let shell_out = Command::new(shell)
                .env("LD_PRELOAD", &lib)
                .arg(":memory:")
                .stdin(std::fs::File::open(&sql).unwrap())
                .output()
                .unwrap();
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(shell_out.status.signal(), Some(6), "{}", sql.display());
        }
    }
}

#[test]
fn in_process_the_statement_log_holds_the_statement_that_crashed() {
    let tmp = tempfile::tempdir().unwrap();
    let Some((_, out_dir, out)) =
        fuzz_on_crashing_library(tmp.path(), "1", &["--in-process", "--log-statements"])
    else {
        return;
    };
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(6),
        "in process, lancet dies with the library"
    );
    let logs = files_below(&run_dir(&out_dir), ".sql");
    let last = logs
        .iter()
        .filter_map(|p| {
            let text = std::fs::read_to_string(p).ok()?;
            text.lines()
                .rev()
                .find(|l| !l.starts_with("--"))
                .map(str::to_string)
        })
        .find(|l| l.contains(TRIGGER));
    assert!(
        last.is_some(),
        "the statement that crashed is the last one logged: {logs:?}"
    );
}

/// A worker that cannot go on (here: its SQLite process crashed and no new
/// one can be started, because lancet's executable is gone) stops alone;
/// the run ends with its summary and the failures named (exit 1: it wrote
/// crash findings first, which wins over exit 3).
#[test]
fn a_worker_that_cannot_go_on_stops_alone_and_the_run_ends_with_its_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(lib) = crashing_library(tmp.path()) else {
        return;
    };
    let exe = tmp.path().join("lancet-copy");
    std::fs::copy(env!("CARGO_BIN_EXE_lancet"), &exe).unwrap();
    let out_dir = tmp.path().join("out");
    let child = Command::new(&exe)
        .args(["fuzz", "--sqlite-lib"])
        .arg(&lib)
        .args([
            "--oracle",
            "norec",
            "--threads",
            "2",
            "--seed",
            "4",
            "--timeout",
            "60",
            "--no-reduce",
            "--status-interval",
            "0",
            "--out",
        ])
        .arg(&out_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Both worker threads have their SQLite processes by now.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    std::fs::remove_file(&exe).unwrap();
    let out = wait_within(child, std::time::Duration::from_secs(90));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{}", stderr(&out));
    assert!(stdout.contains("FAILED"), "{stdout}");
    let summary = read_json(&run_dir(&out_dir).join("summary.json"));
    assert_eq!(
        summary["failures"].as_array().unwrap().len(),
        2,
        "{summary}"
    );
}

/// A library that hangs on some query (ignoring SQLite's interrupt) gives
/// a `hang` finding: the worker process is killed once a statement has run
/// far past the time limit, and the run goes on with a new one.
#[test]
fn a_library_that_hangs_gives_hang_findings_and_the_run_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(lib) = faulty_library(tmp.path(), "hangy", "for (;;) pause()") else {
        return;
    };
    let out_dir = tmp.path().join("out");
    let out = fuzz_into(
        &out_dir,
        &[
            "--sqlite-lib",
            lib.to_str().unwrap(),
            "--oracle",
            "norec",
            "--threads",
            "1",
            "--seed",
            "4",
            "--timeout",
            "25",
            "--no-reduce",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run = run_dir(&out_dir);
    let hangs: Vec<PathBuf> = finding_files(&run.join("findings"), "json")
        .into_iter()
        .filter(|p| read_json(p)["kind"] == "hang")
        .collect();
    assert!(!hangs.is_empty(), "no hang finding");
    let script = std::fs::read_to_string(hangs[0].with_extension("sql")).unwrap();
    assert!(script.contains(TRIGGER), "{script}");
    let summary = read_json(&run.join("summary.json"));
    assert!(summary["checks"].as_u64().unwrap() > 20, "{summary}");
    // A statement hanging when the run stops does not hold it up.
    assert_eq!(
        summary["unstopped_workers"],
        serde_json::json!([]),
        "{summary}"
    );
}
