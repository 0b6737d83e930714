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
/// must be one of them, by its class: a schedule run with
/// `innodb_snapshot_isolation=ON` (its secondary-index, READ UNCOMMITTED
/// and subquery bugs), or `not-serializable` with a ROLLBACK TO
/// SAVEPOINT (the locks it releases), or a REPEATABLE READ `phantom` on
/// a UNIQUE index (its lookup stops at one row of the snapshot). Any
/// other finding, and any error
/// of the DBMS, fails; both values of the setting must have run.
pub fn assert_clean_but_known(dbms: &str, url: &str, schedules: u32) {
    let out = tempfile::tempdir().unwrap();
    let n = schedules.to_string();
    let o = txn(out.path(), dbms, url, &["--queries", &n, "--seed", "7"]);
    let err = printed(&o);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{err}");
    for record in finding_records(out.path()) {
        let r = read_json(&record);
        let signature = r["signature"].as_str().unwrap().to_string();
        let si_on = r["schedule"]["settings"]["innodb_snapshot_isolation"] == "ON";
        let savepoint_rolled_back = r["schedule"]["steps"].to_string().contains("rollback-to");
        let unique_read =
            signature.starts_with("phantom@REPEATABLE READ") && r["schedule"]["unique_v"] == true;
        let known = (si_on && !signature.starts_with("error"))
            || (signature.starts_with("not-serializable@") && savepoint_rolled_back)
            || unique_read;
        assert!(known, "{signature} is no known MariaDB bug: {err}");
    }
    assert!(err.contains("innodb_snapshot_isolation=ON: "), "{err}");
    assert!(err.contains("innodb_snapshot_isolation=OFF: "), "{err}");
}
