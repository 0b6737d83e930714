//! Findings written before cases named their oracle (lancet 0.1.0 records:
//! `predicate` and `pivot` beside `query`) still replay and reduce: users
//! keep reproducers of open bugs for months, and a CI gate replays them.

mod common;

use common::run;
use std::path::{Path, PathBuf};

/// A copy of the fixture records in a temporary directory (reduction
/// writes beside its input).
fn fixtures(dir: &Path) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/untagged-cases");
    let mut records = Vec::new();
    for name in ["norec", "pqs"] {
        for ext in ["json", "sql"] {
            let file = format!("{name}.{ext}");
            std::fs::copy(src.join(&file), dir.join(&file)).expect("copy a fixture");
        }
        records.push(dir.join(format!("{name}.json")));
    }
    records
}

#[test]
fn untagged_records_replay_and_reduce() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let records = fixtures(dir.path());
    let mut args = vec!["replay"];
    let paths: Vec<String> = records.iter().map(|p| p.display().to_string()).collect();
    args.extend(paths.iter().map(String::as_str));
    let out = run(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("2 reproducer(s): 2 still fail, 0 pass, 0 cannot be replayed"),
        "{stdout}\n{}",
        common::stderr(&out)
    );

    // The PQS record (case with a pivot row) reduces, and the reduced
    // record is written in the tagged form.
    let out = run(&["reduce", &paths[1], "--time-limit", "30"]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    let reduced = common::read_json(&dir.path().join("pqs.reduced.json"));
    assert_eq!(reduced["case"]["oracle"], "pqs");
    assert_eq!(reduced["case"]["inputs"]["kind"], "pivot");
}

/// A record whose case lacks what its oracle needs (edited by hand) is
/// refused with a message that says what is missing: never a panic.
#[test]
fn a_case_missing_its_pivot_is_refused_clearly() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let records = fixtures(dir.path());
    let pqs = &records[1];
    let mut record = common::read_json(pqs);
    record["case"]
        .as_object_mut()
        .expect("the case is an object")
        .remove("pivot");
    std::fs::write(pqs, record.to_string()).expect("rewrite the record");
    let path = pqs.display().to_string();
    let out = run(&["replay", &path]);
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        common::stderr(&out)
    );
    assert!(!out.status.success(), "{all}");
    assert!(all.contains("has no pivot row"), "{all}");
    assert!(!all.contains("panicked"), "{all}");
}
