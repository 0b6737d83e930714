//! What the transaction tests share: a transaction run, its finding
//! records, what it printed, and a record of a planted fault to edit.

use super::*;
use std::path::{Path, PathBuf};

/// `lancet fuzz --oracle txn` on `dbms` at `url`, with `extra`.
pub fn txn(out: &Path, dbms: &str, url: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["--dbms", dbms, "--oracle", "txn", "--threads", "2"];
    if !url.is_empty() {
        args.extend(["--url", url]);
    }
    args.extend_from_slice(extra);
    fuzz_into(out, &args)
}

/// Every finding of a run, by its record `findings/ID.json` (the
/// reduced ones are `ID.reduced.json` beside it).
pub fn finding_records(out: &Path) -> Vec<PathBuf> {
    let mut records: Vec<PathBuf> = files_below(out, ".json")
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("txn-") && !name.ends_with(".reduced.json")
        })
        .collect();
    records.sort();
    records
}

/// A finding's directory of scripts: `ID/` beside `ID.json`.
pub fn scripts_of(record: &Path) -> PathBuf {
    record.with_extension("")
}

/// What a run printed: its summary (stdout) and its log (stderr).
pub fn printed(o: &std::process::Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(o))
}

/// The record of a finding of a planted lost write on `dbms`, for a
/// test to edit.
pub fn a_planted_record(out: &Path, dbms: &str, url: &str) -> serde_json::Value {
    let o = txn(
        out,
        dbms,
        url,
        &[
            "--queries",
            "40",
            "--seed",
            "3",
            "--no-reduce",
            "--inject-fault",
            "txn-lost-write",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", printed(&o));
    read_json(&finding_records(out).remove(0))
}

/// The real isolation bugs of MariaDB 10.11.19 that lancet found, as
/// reduced findings (`docs/bugs-found.md`): what a gate on that server
/// passes as `--known`.
pub fn known_mariadb_bugs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/known-txn-mariadb-10.11")
}

/// A run of `schedules` schedules on MariaDB 10.11.19, whose real
/// isolation bugs (`docs/bugs-found.md`) show in most runs: every finding
/// must be one of them, by its kind, level, setting and the statements
/// the bug needs. Any other finding, and any error of the DBMS, fails;
/// both values of the setting must have run.
pub fn assert_clean_but_known(dbms: &str, url: &str, schedules: u32) {
    let out = tempfile::tempdir().unwrap();
    let n = schedules.to_string();
    let o = txn(out.path(), dbms, url, &["--queries", &n, "--seed", "7"]);
    let err = printed(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    for record in finding_records(out.path()) {
        let r = read_json(&record);
        let signature = r["signature"].as_str().unwrap().to_string();
        assert!(
            known_mariadb_bug(&signature, &r["schedule"]).is_some(),
            "{signature} is no known MariaDB bug: {err}"
        );
    }
    assert!(err.contains("innodb_snapshot_isolation=ON: "), "{err}");
    assert!(err.contains("innodb_snapshot_isolation=OFF: "), "{err}");
}

/// Which of MariaDB 10.11.19's isolation bugs lancet found
/// (`docs/bugs-found.md`) a finding's signature and schedule are of, if
/// any: each by its kind, level and setting, and the statements or
/// index the bug needs.
pub fn known_mariadb_bug(signature: &str, schedule: &serde_json::Value) -> Option<&'static str> {
    let steps = schedule["steps"].to_string();
    let tables =
        std::iter::once(schedule).chain(schedule["more_tables"].as_array().into_iter().flatten());
    let indexed = tables.clone().any(|t| t["index_v"] == true);
    let unique = tables.clone().any(|t| t["unique_v"] == true);
    let si = |on: &str| signature.contains(&format!("[innodb_snapshot_isolation={on}]"));
    let at = |kind: &str, level: &str| signature.starts_with(&format!("{kind}@{level}"));
    if si("ON")
        && (at("lost-update", "REPEATABLE READ") || at("phantom", "REPEATABLE READ"))
        && indexed
    {
        Some("SI: a write or locking read through a secondary index skips the 1020 check")
    } else if si("ON")
        && ["did-not-wait", "lost-own-write", "lost-update"]
            .iter()
            .any(|kind| at(kind, "READ UNCOMMITTED"))
    {
        Some("SI at READ UNCOMMITTED: a write skips a row an open transaction changed")
    } else if si("ON")
        && (at("spurious-conflict", "READ COMMITTED")
            || at("spurious-conflict", "READ UNCOMMITTED"))
        && steps.contains("\"sub\"")
    {
        Some("SI at READ COMMITTED/UNCOMMITTED: an UPDATE with a subquery fails with 1020")
    } else if at("not-serializable", "SERIALIZABLE") && steps.contains("rollback-to") {
        Some("ROLLBACK TO SAVEPOINT releases a SERIALIZABLE read's locks")
    } else if at("phantom", "REPEATABLE READ") && unique {
        Some("REPEATABLE READ through a UNIQUE index returns one row of two")
    } else {
        None
    }
}
