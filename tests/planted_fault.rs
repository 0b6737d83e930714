//! The standard test of an oracle: a connection wrapper that drops a row
//! from some results must make TLP report a finding, and the reproducer
//! must be a complete script that SQLite's own shell runs.

mod common;
use common::*;

#[test]
fn tlp_where_catches_a_dropped_row_and_writes_a_runnable_reproducer() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = fuzz_planted_drop_row(out_dir.path(), &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "findings must give exit status 1"
    );
    let run = run_dir(out_dir.path());
    let summary = read_json(&run.join("summary.json"));
    assert!(summary["findings"].as_u64().unwrap() >= 1);
    assert!(summary["checks"].as_u64().unwrap() <= 2000);

    let findings = run.join("findings");
    let jsons = finding_files(&findings, "json");
    let sqls = finding_files(&findings, "sql");
    assert!(!jsons.is_empty() && jsons.len() == sqls.len());

    let record = read_json(&jsons[0]);
    assert_eq!(record["kind"], "logic");
    assert_eq!(record["oracle"], "tlp-where");
    assert_eq!(record["confirmed"], true);
    assert_eq!(record["fault"], "drop-row");
    assert!(record["origin"]["seed"].as_u64() == Some(11));
    let counts: Vec<u64> = record["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["row_count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts.len(), 2);
    // A dropped row changes one count, or, when the fault hit both
    // queries, leaves a different row missing from each.
    let diff = &record["diff"];
    let sides = |side: &str| diff[side].as_array().map_or(0, Vec::len);
    assert!(
        counts[0] != counts[1] || (sides("only_in_first") > 0 && sides("only_in_second") > 0),
        "a dropped row shows in the counts or the diff: {record}"
    );

    let script = std::fs::read_to_string(&sqls[0]).unwrap();
    assert!(script.contains("-- oracle: tlp-where"));
    assert!(script.contains("relation that broke"));
    assert!(script.contains("rows only in"));
    assert!(script.contains("UNION ALL"));

    // The reproducer runs as a whole on a fresh database. The fault lives in
    // lancet, so on the real SQLite the two queries agree; what matters is
    // that the script is complete and valid.
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(&script)
        .unwrap_or_else(|e| panic!("reproducer {} does not run: {e}", sqls[0].display()));
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
            "sqlite3 new.db < finding.sql failed: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    } else {
        eprintln!("note: sqlite3 shell not installed; checked the reproducer with the bundled library only");
    }
}

/// Runs `oracle` with `fault` on embedded SQLite and checks that it
/// reports a finding whose reproducer runs as a whole script (with the
/// bundled library the run used: Debian's older shell lacks functions
/// the generator uses on 3.54).
fn oracle_catches(oracle: &str, fault: &str, max_checks: &str) -> Vec<String> {
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
            "5",
            "--queries",
            max_checks,
            "--no-reduce",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{oracle} missed {fault}: {}",
        stderr(&out)
    );
    let run = run_dir(out_dir.path());
    let findings = run.join("findings");
    let record = read_json(&finding_files(&findings, "json")[0]);
    assert_eq!(record["oracle"], oracle);
    assert_eq!(record["fault"], fault);
    let mut scripts = Vec::new();
    for sql in finding_files(&findings, "sql") {
        let script = std::fs::read_to_string(&sql).unwrap();
        assert!(script.contains("-- query 1 (") && script.contains("-- query 2 ("));
        rusqlite::Connection::open_in_memory()
            .unwrap()
            .execute_batch(&script)
            .unwrap_or_else(|e| panic!("reproducer {} does not run: {e}", sql.display()));
        scripts.push(script);
    }
    scripts
}

#[test]
fn transform_and_stepwise_catch_a_row_dropped_from_derived_tables() {
    oracle_catches("transform", "drop-row-in-derived", "2000");
    oracle_catches("stepwise", "drop-row-in-derived", "2000");
}

#[test]
fn transform_catches_a_row_duplicated_in_cross_joins() {
    oracle_catches("transform", "duplicate-row-in-cross-joins", "2000");
}

#[test]
fn coddtest_catches_a_row_dropped_beside_a_scalar_subquery() {
    oracle_catches("coddtest", "drop-row-beside-scalar-subquery", "2000");
}

#[test]
fn dqe_catches_dml_that_touches_an_extra_row() {
    // Its reproducer runs the DML inside BEGIN ... ROLLBACK as a whole
    // script (checked by `oracle_catches`), and names the relation's two
    // sides by the queries each combines, not as query 1 and query 2.
    for script in oracle_catches("dqe", "dml-touches-extra-row", "2000") {
        let sides: Vec<&str> = script
            .lines()
            .filter(|l| l.starts_with("-- rows only in "))
            .collect();
        assert!(!sides.is_empty(), "{script}");
        for side in sides {
            assert!(!side.starts_with("-- rows only in query "), "{side}");
        }
    }
}

#[test]
fn eet_catches_a_row_dropped_with_a_redundant_case() {
    oracle_catches("eet", "drop-row-with-redundant-case", "2000");
}
