//! Every command takes a transaction finding as it takes a query finding
//! (issue 42): `reduce`, `replay`, `findings`, the store and `report`,
//! `fuzz`'s campaign options (shards, regeneration, statement logs,
//! JUnit, known bugs) and `bisect`'s answer, each on embedded SQLite.

mod common;
use common::txn::*;
use common::*;
use std::path::{Path, PathBuf};

/// A query finding of a planted dropped row on embedded SQLite, not
/// reduced: its record `findings/ID.json`.
fn a_query_record(out: &Path) -> PathBuf {
    let o = fuzz_into(
        out,
        &[
            "--oracle",
            "tlp-where",
            "--threads",
            "1",
            "--queries",
            "400",
            "--seed",
            "5",
            "--no-reduce",
            "--inject-fault",
            "drop-row",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", printed(&o));
    let mut records: Vec<PathBuf> = files_below(out, ".json")
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("findings")))
        .filter(|p| !p.ends_with("index.json"))
        .collect();
    records.sort();
    records.remove(0)
}

/// `lancet reduce` takes a transaction finding as it takes a query
/// finding (a `lancet selftest` finding was refused: "missing field
/// `check`"): the schedule of a planted lost write reduces to fewer
/// statements and rows that still show it, written beside it; reduced
/// again, it is said to be reduced already, exit 0. The query finding
/// beside it reduces too.
#[test]
fn reduce_takes_a_transaction_finding_and_a_query_finding() {
    let out = tempfile::tempdir().unwrap();
    let txn_dir = out.path().join("txn");
    let before = a_planted_record(&txn_dir, "sqlite", "");
    let record = finding_records(&txn_dir).remove(0);
    let o = run(&["reduce", record.to_str().unwrap()]);
    let said = printed(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    let reduced_path = record.with_extension("reduced.json");
    assert!(said.contains("reduced txn-"), "{said}");
    let reduced = read_json(&reduced_path);
    let size = |r: &serde_json::Value| {
        r["schedule"]["steps"].as_array().unwrap().len()
            + r["schedule"]["rows"].as_array().unwrap().len()
    };
    assert!(size(&reduced) < size(&before), "{said}");
    assert_eq!(reduced["signature"], before["signature"]);
    assert!(reduced_path.with_extension("sql").exists());
    let o = run(&["reduce", reduced_path.to_str().unwrap()]);
    let said = printed(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert!(said.contains("is already reduced"), "{said}");
    let query = a_query_record(&out.path().join("query"));
    let o = run(&["reduce", query.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", printed(&o));
    assert!(query.with_extension("reduced.json").exists());
}

/// `lancet replay` reads a transaction finding and a query finding
/// through one path: given both, it replays both (each still fails
/// under its planted fault) and passes both without it.
#[test]
fn replay_takes_a_transaction_finding_and_a_query_finding() {
    let out = tempfile::tempdir().unwrap();
    let txn_dir = out.path().join("txn");
    a_planted_record(&txn_dir, "sqlite", "");
    let txn_record = finding_records(&txn_dir).remove(0);
    let query = a_query_record(&out.path().join("query"));
    let files = [txn_record.to_str().unwrap(), query.to_str().unwrap()];
    let o = run(&["replay", files[0], files[1]]);
    let said = printed(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(said.contains("2 reproducer(s): 2 still fail"), "{said}");
    let o = run(&["replay", "--no-fault", files[0], files[1]]);
    let said = printed(&o);
    assert_eq!(o.status.code(), Some(0), "{said}");
    assert!(said.contains("0 still fail, 2 pass"), "{said}");
}

/// `lancet findings` over run directories reads a transaction run's
/// records and a query run's alike, from their indexes and, where a run
/// was killed before it saved its index, from the records themselves;
/// `lancet push` files both in a store and `lancet report` shows both.
#[test]
fn findings_store_and_report_take_a_transaction_run_and_a_query_run() {
    let out = tempfile::tempdir().unwrap();
    let runs = out.path().join("runs");
    let txn = a_planted_record(&runs, "sqlite", "");
    let query = a_query_record(&runs);
    let query_signature = read_json(&query)["signature"].as_str().unwrap().to_string();
    let txn_signature = txn["signature"].as_str().unwrap().to_string();
    for without_index in [false, true] {
        if without_index {
            for index in files_below(&runs, "index.json") {
                std::fs::remove_file(index).unwrap();
            }
        }
        let listed = run(&["findings", runs.to_str().unwrap()]);
        let list = String::from_utf8_lossy(&listed.stdout).into_owned();
        assert_eq!(listed.status.code(), Some(0), "{list}{}", stderr(&listed));
        assert!(
            list.contains(&txn_signature),
            "{txn_signature} not in:\n{list}"
        );
        assert!(
            list.contains(&query_signature[..12]),
            "{query_signature} not in:\n{list}"
        );
    }
    // The store and the report take both kinds the same way: pushed into
    // an SQLite store, both signatures are in the report's page.
    let store = out.path().join("store.db");
    let pushed = run(&[
        "push",
        "--store",
        store.to_str().unwrap(),
        runs.to_str().unwrap(),
    ]);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let page = out.path().join("report.html");
    let reported = run(&[
        "report",
        "--store",
        store.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    assert_eq!(reported.status.code(), Some(0), "{}", stderr(&reported));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains(&txn_signature),
        "{txn_signature} not in the report"
    );
    assert!(
        html.contains(&query_signature[..12]),
        "{query_signature} not in the report"
    );
}

/// The campaign options of `fuzz` hold for transactions as for queries:
/// shard 1 of 2 runs the odd campaign threads (its findings name them);
/// `--thread T --database K` regenerates a finding's schedule (the same
/// signature at the same place); `--log-statements` writes each
/// session's statements; `--junit` writes its report.
#[test]
fn shards_regeneration_statement_logs_and_junit_hold_for_transactions() {
    let out = tempfile::tempdir().unwrap();
    let junit = out.path().join("junit.xml");
    let sharded = out.path().join("sharded");
    let fault = ["--inject-fault", "txn-lost-write", "--no-reduce"];
    // One thread: shard 1/2's campaign thread 1 (with two, thread 3 could
    // use up the 40 schedules before thread 1 opened its sessions).
    let mut args = vec!["--dbms", "sqlite", "--oracle", "txn", "--threads", "1"];
    args.extend(["--shard", "1/2", "--seed", "3", "--queries", "40"]);
    args.extend(fault);
    args.extend(["--log-statements", "--junit", junit.to_str().unwrap()]);
    let o = fuzz_into(&sharded, &args);
    assert_eq!(o.status.code(), Some(1), "{}", printed(&o));
    let records = finding_records(&sharded);
    assert!(!records.is_empty(), "{}", printed(&o));
    for r in &records {
        let thread = read_json(r)["origin"]["thread"].as_u64().unwrap();
        assert_eq!(
            thread % 2,
            1,
            "{}: thread {thread} is not shard 1/2's",
            r.display()
        );
    }
    let logs = files_below(&sharded, ".sql")
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("statements")))
        .collect::<Vec<_>>();
    assert!(logs.iter().any(|p| p.ends_with("t1-d0-s1.sql")), "{logs:?}");
    let session =
        std::fs::read_to_string(logs.iter().find(|p| p.ends_with("t1-d0-s1.sql")).unwrap())
            .unwrap();
    assert!(
        session.contains("BEGIN") && session.contains("COMMIT;"),
        "{session}"
    );
    let report = std::fs::read_to_string(&junit).unwrap();
    assert!(
        report.contains("<testsuite") && report.contains("txn"),
        "{report}"
    );

    let first = read_json(&records[0]);
    let (thread, database) = (
        first["origin"]["thread"].as_u64().unwrap().to_string(),
        first["origin"]["database"].as_u64().unwrap().to_string(),
    );
    let again = out.path().join("again");
    let mut args = vec![
        "--seed",
        "3",
        "--thread",
        &thread,
        "--database",
        &database,
        "--queries",
        "40",
    ];
    args.extend(fault);
    let o = txn(&again, "sqlite", "", &args);
    assert_eq!(o.status.code(), Some(1), "{}", printed(&o));
    let found: Vec<(serde_json::Value, serde_json::Value)> = finding_records(&again)
        .iter()
        .map(|r| {
            let j = read_json(r);
            (j["origin"].clone(), j["signature"].clone())
        })
        .collect();
    assert!(
        found.contains(&(first["origin"].clone(), first["signature"].clone())),
        "{:?} not regenerated: {found:?}",
        first["origin"]
    );
}

/// A transaction fault acts in the driver, not on query rows: a query
/// campaign given one is a clear error, not a run that cannot catch it.
#[test]
fn a_transaction_fault_on_a_query_oracle_is_a_clear_error() {
    let out = tempfile::tempdir().unwrap();
    let o = fuzz_into(
        out.path(),
        &[
            "--oracle",
            "tlp-where",
            "--queries",
            "5",
            "--inject-fault",
            "txn-lost-write",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", printed(&o));
    assert!(
        stderr(&o).contains("not on query rows: use it with --oracle txn"),
        "{}",
        stderr(&o)
    );
}

/// `--known` on a transaction run (a CI gate's known open bugs): the
/// findings of a planted lost write, kept as known, make a second run
/// with the same fault pass the gate with its findings counted as known;
/// without the fault the schedules no longer show their anomaly, and the
/// known bugs are reported fixed.
#[test]
fn known_transaction_bugs_pass_the_gate_while_open_and_are_reported_fixed() {
    let out = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| {
        let dir = out.path().join(name);
        // One thread, so that both runs meet the same schedules in the
        // same order (with two, a timing-dependent anomaly of the second
        // run could be a signature the first did not show).
        let mut args = vec![
            "--dbms",
            "sqlite",
            "--oracle",
            "txn",
            "--threads",
            "1",
            "--seed",
            "3",
            "--queries",
            "40",
            "--no-reduce",
        ];
        args.extend_from_slice(extra);
        let o = fuzz_into(&dir, &args);
        let summary = read_json(&run_dir(&dir).join("summary.json"));
        (o, summary)
    };
    let fault = ["--inject-fault", "txn-lost-write"];
    let (o, first) = run("first", &fault);
    assert_eq!(o.status.code(), Some(1), "{}", printed(&o));
    let known = out.path().join("known");
    std::fs::create_dir_all(&known).unwrap();
    for entry in std::fs::read_dir(run_dir(&out.path().join("first")).join("findings")).unwrap() {
        let p = entry.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, known.join(p.file_name().unwrap())).unwrap();
        }
    }
    let signatures: Vec<String> = first["bugs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["signature"].as_str().unwrap().to_string())
        .collect();
    assert!(!signatures.is_empty(), "{first}");
    let known_arg = known.to_str().unwrap();

    let (o, again) = run("again", &[fault[0], fault[1], "--known", known_arg]);
    let err = printed(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "known bugs do not fail the gate: {err}"
    );
    assert!(err.contains(" still open, 0 fixed"), "{err}");
    let findings = again["findings"].as_u64().unwrap();
    assert!(findings > 0, "the bugs were met again: {again}");
    assert_eq!(again["known_findings"].as_u64(), Some(findings), "{again}");
    // One known bug per record kept, each with a signature of the first run.
    let kept = finding_records(&known).len();
    let bugs = again["known_bugs"].as_array().unwrap();
    assert_eq!(bugs.len(), kept, "{again}");
    assert!(
        bugs.iter()
            .all(|b| signatures.iter().any(|s| b["signature"] == s.as_str())),
        "{bugs:?}"
    );
    assert!(
        bugs.iter()
            .all(|b| b["fixed"] == false && b["oracle"] == "txn"),
        "{bugs:?}"
    );

    let (o, fixed) = run("fixed", &["--known", known_arg]);
    let err = printed(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("0 still open"), "{err}");
    assert!(err.contains("is fixed: it no longer reproduces"), "{err}");
    let bugs = fixed["known_bugs"].as_array().unwrap();
    assert_eq!(bugs.len(), kept, "{fixed}");
    assert!(bugs.iter().all(|b| b["fixed"] == true), "{bugs:?}");
}
