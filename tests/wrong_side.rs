//! The wrong side of a logic finding, named where it can be decided: a
//! fault of an optimization (rows dropped only while every knob is on) is
//! named by the DBMS with every optimization off, with what the query
//! should return; a fault that no knob hides cannot be told; PQS's relation
//! names its pivot query by itself; stepwise, whose run with every
//! optimization off is no independent witness, says it cannot tell. A
//! reduced reproducer also shows what the tables it reads hold after its
//! setup. (Against the releases that fixed real bugs:
//! `tests/sqlite_ladder.rs`.)

mod common;
use common::*;

/// The reduced finding records of a run of `oracle` under `fault`.
fn reduced_records(oracle: &str, fault: &str, seed: &str) -> Vec<(serde_json::Value, String)> {
    let tmp = tempfile::tempdir().unwrap();
    let out = fuzz_into(
        tmp.path(),
        &[
            "--dbms",
            "sqlite",
            "--oracle",
            oracle,
            "--inject-fault",
            fault,
            "--threads",
            "1",
            "--seed",
            seed,
            "--queries",
            "300",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let findings = run_dir(tmp.path()).join("findings");
    let records: Vec<(serde_json::Value, String)> = finding_files(&findings, "json")
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".reduced."))
        .map(|p| {
            let sql = std::fs::read_to_string(p.with_extension("sql")).unwrap();
            (read_json(&p), sql)
        })
        .collect();
    assert!(!records.is_empty(), "no finding was reduced");
    records
}

#[test]
fn a_fault_of_an_optimization_is_named_with_what_the_query_should_return() {
    for (record, sql) in reduced_records("tlp-where", "drop-row-under-default-knobs", "11") {
        let side = &record["wrong_side"];
        let wrong: Vec<&str> = side["wrong"]
            .as_array()
            .unwrap_or_else(|| panic!("no wrong side: {record}"))
            .iter()
            .filter_map(|r| r.as_str())
            .collect();
        assert!(!wrong.is_empty(), "{side}");
        // The fault drops one row of each query it hits: the first wrong
        // query should return one row more than lancet saw.
        let saw = record["queries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["role"] == wrong[0])
            .and_then(|q| q["row_count"].as_u64())
            .unwrap();
        assert_eq!(side["expected_rows"].as_u64(), Some(saw + 1), "{side}");
        assert!(sql.contains("-- wrong: query "), "{sql}");
        assert!(
            sql.contains(&format!("should return {} rows", saw + 1)),
            "{sql}"
        );
    }
}

/// Every reduced finding of `oracle` under `fault` says lancet cannot
/// tell, for a reason that contains `why`.
fn assert_cannot_tell(oracle: &str, fault: &str, seed: &str, why: &str) {
    for (record, sql) in reduced_records(oracle, fault, seed) {
        let side = &record["wrong_side"];
        assert_eq!(side["wrong"].as_array().map(Vec::len), Some(0), "{side}");
        assert!(side["how"].as_str().unwrap().contains(why), "{side}");
        assert!(sql.contains("-- wrong side: lancet cannot tell: "), "{sql}");
    }
}

#[test]
fn a_fault_no_knob_hides_cannot_be_told() {
    assert_cannot_tell(
        "tlp-where",
        "drop-row",
        "11",
        "stays with every optimization off",
    );
}

#[test]
fn pqs_names_its_pivot_query_by_its_relation() {
    for (record, sql) in reduced_records("pqs", "drop-row", "5") {
        let side = &record["wrong_side"];
        assert_eq!(side["wrong"][0], "pivot query", "{side}");
        assert!(
            sql.contains("-- wrong: query 1 (pivot query); by the oracle's relation"),
            "{sql}"
        );
    }
}

/// With every optimization off the one statement is evaluated step by step
/// like the materialized steps: that run would blame whichever side it
/// did not share a path with, so stepwise names no side.
#[test]
fn stepwise_cannot_tell_for_every_optimization_off_is_no_witness() {
    assert_cannot_tell(
        "stepwise",
        "drop-row-in-derived",
        "3",
        "every optimization off is no witness for stepwise",
    );
}

/// The knob differential's knobs side already runs with switches off, so
/// every switch off is no witness of which side is wrong either.
#[test]
fn the_knob_differential_cannot_tell_for_every_optimization_off_is_no_witness() {
    assert_cannot_tell(
        "knobs",
        "drop-row-under-default-knobs",
        "11",
        "every optimization off is no witness for knobs",
    );
}
