//! The stress oracle (`--oracle txn-stress`) against SQLite, PostgreSQL
//! 18 and MariaDB 10.11: correct DBMSs give clean rounds at every level,
//! and the planted fault (a committed write never sent) breaks an
//! invariant that is caught, written with a script per session, reduced,
//! and replayed by `lancet replay`.

mod common;
use common::txn::printed;
use common::*;
use lancet_testkit::{MariaDbServer, PgServer};
use std::path::{Path, PathBuf};

/// `lancet fuzz --oracle txn-stress` on `dbms` at `url` with `extra`,
/// its temporary files (SQLite's database files) in `tmp`.
fn stress(out: &Path, tmp: &Path, dbms: &str, url: &str, extra: &[&str]) -> std::process::Output {
    let mut cmd = lancet();
    cmd.env("TMPDIR", tmp).args([
        "fuzz",
        "--dbms",
        dbms,
        "--oracle",
        "txn-stress",
        "--threads",
        "1",
        "--status-interval",
        "0",
        "--out",
    ]);
    cmd.arg(out);
    if !url.is_empty() {
        cmd.args(["--url", url]);
    }
    cmd.args(extra).output().unwrap()
}

/// The records of a run's findings (not their reduced forms).
fn records(out: &Path) -> Vec<PathBuf> {
    let mut r: Vec<PathBuf> = files_below(out, ".json")
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("txn-stress-") && !name.ends_with(".reduced.json")
        })
        .collect();
    r.sort();
    r
}

/// `rounds` rounds run clean, with every level in `levels` drawn.
fn assert_clean(dbms: &str, url: &str, rounds: u32, levels: &[&str]) {
    let out = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let n = rounds.to_string();
    let o = stress(
        out.path(),
        tmp.path(),
        dbms,
        url,
        &["--queries", &n, "--seed", "7"],
    );
    let err = printed(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("  findings    0\n"), "{err}");
    for level in levels {
        let line = err
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{level}: ")))
            .unwrap_or_else(|| panic!("no line for {level}: {err}"));
        assert!(line.contains(" rounds, "), "{line}");
        assert!(!line.contains(" 0 committed"), "{line}");
    }
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().contains(".sqlite"))
        .collect();
    assert!(left.is_empty(), "database files left: {left:?}");
}

/// The planted fault is caught, its finding written as files a person
/// runs, and reduced: the record of the first finding.
fn assert_fault_caught(out: &Path, dbms: &str, url: &str, extra: &[&str]) -> PathBuf {
    let tmp = tempfile::tempdir().unwrap();
    // One finding of each signature is confirmed and reduced (a round
    // on PostgreSQL takes seconds: its deadlock check waits 1 s).
    let mut args = vec![
        "--queries",
        "6",
        "--seed",
        "3",
        "--reduce-time",
        "20",
        "--flood-limit",
        "1",
        "--inject-fault",
        "txn-stress-dropped-write",
    ];
    args.extend_from_slice(extra);
    let o = stress(out, tmp.path(), dbms, url, &args);
    let err = printed(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let found = records(out);
    assert!(!found.is_empty(), "{err}");
    for record in &found {
        let r = read_json(record);
        let signature = r["signature"].as_str().unwrap();
        let invariant = signature.split('@').next().unwrap();
        assert!(
            ["bank-total", "balance", "counter", "read-total"].contains(&invariant),
            "{signature}"
        );
        assert_eq!(r["fault"], "txn-stress-dropped-write");
        assert!(!r["violations"].as_array().unwrap().is_empty());
    }
    let first = &found[0];
    let dir = first.with_extension("");
    for file in ["setup.sql", "session-1.sql", "transactions.txt"] {
        assert!(dir.join(file).exists(), "{file} in {}", dir.display());
    }
    let text = std::fs::read_to_string(dir.join("transactions.txt")).unwrap();
    assert!(
        text.contains("planted fault: txn-stress-dropped-write"),
        "{text}"
    );
    assert!(text.contains("expected "), "{text}");
    let session = std::fs::read_to_string(dir.join("session-1.sql")).unwrap();
    assert!(session.contains("(not sent (planted fault)"), "{session}");
    let script = std::fs::read_to_string(first.with_extension("sql")).unwrap();
    assert!(
        script.starts_with("-- run: lancet replay txn-stress-"),
        "{script}"
    );
    assert!(script.contains("\n-- session 1\n"), "{script}");
    // Some finding was reduced to fewer statements.
    let reduced: Vec<PathBuf> = found
        .iter()
        .map(|r| r.with_extension("reduced.json"))
        .filter(|r| r.exists())
        .collect();
    assert!(!reduced.is_empty(), "none reduced: {err}");
    first.clone()
}

/// A finding replays from its record: with its fault it shows again
/// (a reduced one, whose session 1 commits alone), without it not.
fn assert_replays(record: &Path, url: &str) {
    let reduced = record.with_extension("reduced.json");
    let file = if reduced.exists() {
        reduced
    } else {
        record.to_path_buf()
    };
    let mut args = vec!["replay"];
    if !url.is_empty() {
        args.extend(["--url", url]);
    }
    let path = file.to_str().unwrap();
    let o = run(&[&args[..], &[path]].concat());
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        stdout.contains("txn-stress-dropped-write"),
        "{stdout}{}",
        stderr(&o)
    );
    let o = run(&[&args[..], &["--no-fault", path]].concat());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        stderr(&o)
    );
}

#[test]
fn sqlite_runs_clean_and_catches_the_planted_fault() {
    assert_clean(
        "sqlite",
        "",
        40,
        &["SERIALIZABLE", "SERIALIZABLE (immediate)"],
    );
    let out = tempfile::tempdir().unwrap();
    let record = assert_fault_caught(out.path(), "sqlite", "", &[]);
    assert_replays(&record, "");
}

#[test]
fn postgres_18_runs_clean_and_catches_the_planted_fault() {
    let pg = PgServer::start_major(18).expect("PostgreSQL 18 (tests/run.sh installs it)");
    assert_clean(
        "postgres",
        &pg.url(),
        16,
        &["READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"],
    );
    let out = tempfile::tempdir().unwrap();
    let record = assert_fault_caught(out.path(), "postgres", &pg.url(), &["--txn-levels", "rc"]);
    assert_replays(&record, &pg.url());
    assert!(pg.databases("lancet_").unwrap().is_empty());
}

#[test]
fn mariadb_runs_clean_and_catches_the_planted_fault() {
    if !MariaDbServer::available() {
        eprintln!("SKIPPED: no mariadbd here (tests/run.sh installs mariadb-server)");
        return;
    }
    let db = MariaDbServer::start().expect("a throwaway MariaDB");
    assert_clean(
        "mysql",
        &db.url(),
        40,
        &[
            "READ UNCOMMITTED",
            "READ COMMITTED",
            "REPEATABLE READ",
            "SERIALIZABLE",
        ],
    );
    let out = tempfile::tempdir().unwrap();
    let record = assert_fault_caught(out.path(), "mysql", &db.url(), &[]);
    assert_replays(&record, &db.url());
}
