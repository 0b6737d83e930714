//! DuckDB's older releases, the npm registry's libraries tests/engines.sh
//! keeps in its `duckdb-ladder/` (`--duckdb-lib`): the generator, tuned on
//! 1.5, raises no error of its own on 1.3 and 1.4 (every unexpected error
//! is an INTERNAL one, an assertion of DuckDB's), and an INTERNAL error
//! 1.4.4 raises only with some optimizer passes off is a finding whose
//! reproducer turns them off, confirmed, reduced and replayed under them.
//! Skipped where the ladder is not installed.

mod common;
use common::*;
use std::path::PathBuf;

/// The ladder's library of `release`, if tests/engines.sh installed it.
fn library(release: &str) -> Option<PathBuf> {
    let cache = duckdb_cli_dir()?.parent()?.parent()?.to_path_buf();
    let lib = cache
        .join("duckdb-ladder")
        .join(format!("libduckdb-{release}.so"));
    if lib.is_file() {
        Some(lib)
    } else {
        eprintln!("SKIPPED: no {} (run tests/engines.sh)", lib.display());
        None
    }
}

#[test]
fn old_releases_raise_no_error_of_the_generators_making() {
    for release in ["1.3.2-alpha.26", "1.4.4-r.4"] {
        let Some(lib) = library(release) else { return };
        let out_dir = tempfile::tempdir().unwrap();
        let summary = out_dir.path().join("s.json");
        fuzz_into(
            out_dir.path(),
            &[
                "--dbms",
                "duckdb",
                "--duckdb-lib",
                lib.to_str().unwrap(),
                "--oracle",
                "all",
                "--threads",
                "2",
                "--seed",
                "5",
                "--queries",
                "4000",
                "--no-reduce",
                "--summary-json",
                summary.to_str().unwrap(),
            ],
        );
        let s = read_json(&summary);
        assert!(s["checks"].as_u64().unwrap() >= 4000, "{release}: {s}");
        // Unconfirmed findings too: an error of lancet's own making would
        // show there as well.
        let run = run_dir(out_dir.path());
        for dir in ["findings", "unconfirmed"] {
            for record in records_of_kind(&run.join(dir), "unexpected-error") {
                assert_eq!(
                    record["error"]["code"], "INTERNAL",
                    "{release}: an error the generator caused: {}",
                    record["error"]["message"]
                );
            }
        }
    }
}

#[test]
fn an_internal_error_under_knobs_is_reduced_and_replayed_with_its_knobs() {
    let Some(lib) = library("1.4.4-r.4") else {
        return;
    };
    let lib = lib.to_str().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    // A database whose knob checks meet DuckDB 1.4.4's "Unsupported type
    // for NumericValueUnionToValue" (statistics propagation with the
    // expression rewriter off), fixed in 1.5.
    fuzz_into(
        out_dir.path(),
        &[
            "--dbms",
            "duckdb",
            "--duckdb-lib",
            lib,
            "--seed",
            "955300560862",
            "--thread",
            "0",
            "--database",
            "2",
            "--oracle",
            "knobs",
        ],
    );
    let reduced = files_below(out_dir.path(), ".reduced.sql");
    assert!(!reduced.is_empty(), "no reduced finding");
    for sql in &reduced {
        // `ID.reduced.json`, the reduced finding's record.
        let record = read_json(&sql.with_extension("json"));
        assert_eq!(record["kind"], "unexpected-error", "{}", sql.display());
        assert_eq!(record["error"]["code"], "INTERNAL");
        assert!(
            !record["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Stack Trace"),
            "the trace's addresses differ from one process to the next"
        );
        let knobs = &record["queries"][0]["context"]["knobs"]["changes"];
        assert!(knobs.as_array().is_some_and(|k| !k.is_empty()), "{record}");
        // The reduction kept only the knob the error needs
        // (`expression_rewriter`) of those the knob check's query ran
        // under (one to three: the plan-guided choice varies).
        let original = read_json(&sql.with_extension("").with_extension("json"));
        let before = &original["queries"][0]["context"]["knobs"]["changes"];
        assert_eq!(
            knobs,
            &serde_json::json!(["expression_rewriter"]),
            "of {before}"
        );
        assert!(
            before
                .as_array()
                .is_some_and(|b| b.contains(&serde_json::json!("expression_rewriter"))),
            "{before}"
        );
        let text = std::fs::read_to_string(sql).unwrap();
        assert!(text.contains("SET disabled_optimizers = '"), "{text}");
        // It still fails on 1.4.4, under its knobs; 1.5.6 fixed it.
        let replay = run(&["replay", "--duckdb-lib", lib, sql.to_str().unwrap()]);
        assert_eq!(replay.status.code(), Some(1), "{replay:?}");
    }
}
