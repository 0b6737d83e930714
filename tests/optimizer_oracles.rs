//! The optimizer oracles: the knob differential catches a fault that only
//! the default configuration shows and localizes it to one knob; the
//! performance oracle catches a default plan that is slow but right, and
//! writes both plans into a reproducer that runs as a whole.

mod common;
use common::*;

#[test]
fn knobs_catches_a_fault_of_the_default_configuration_and_localizes_it_to_one_knob() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = fuzz_into(
        out_dir.path(),
        &[
            "--oracle",
            "knobs",
            "--inject-fault",
            "drop-row-under-default-knobs",
            "--threads",
            "1",
            "--seed",
            "3",
            "--queries",
            "2000",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "findings give exit status 1");
    let run = run_dir(out_dir.path());
    let summary = read_json(&run.join("summary.json"));
    assert!(summary["findings"].as_u64().unwrap() >= 1);
    assert!(
        summary["distinct_plans"].as_u64().unwrap() > 0,
        "plan coverage is counted"
    );
    let findings = run.join("findings");
    let reduced: Vec<_> = finding_files(&findings, "json")
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".reduced."))
        .collect();
    assert!(!reduced.is_empty(), "the finding is reduced");
    let record = read_json(&reduced[0]);
    assert_eq!(record["oracle"], "knobs");
    let flipped = record["flipped_by_knobs"].as_array().expect("localized");
    assert_eq!(
        flipped.len(),
        1,
        "any one knob off hides this fault, so localization ends at one: {flipped:?}"
    );
    let settings = record["case"]["inputs"]["settings"].as_array().unwrap();
    assert_eq!(settings.len(), 2, "the defaults and the localized setting");
    let script = std::fs::read_to_string(reduced[0].with_extension("sql")).unwrap();
    assert!(script.contains("-- localized: the result differs with only these knob changes"));
    assert!(script.contains(".testctrl optimizations"));
    let index = std::fs::read_to_string(findings.join("index.md")).unwrap();
    assert!(
        index.contains("disagrees with only the knob change(s) `"),
        "{index}"
    );
}

#[test]
fn perf_catches_a_slow_default_plan_and_writes_both_plans() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = fuzz_into(
        out_dir.path(),
        &[
            "--oracle",
            "perf",
            "--inject-fault",
            "sleep-under-default-knobs",
            "--threads",
            "1",
            "--seed",
            "3",
            // Each check the fault hits sleeps 200 ms per run: a few
            // dozen checks find it (selftest needs a handful).
            "--queries",
            "60",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "findings give exit status 1");
    let run = run_dir(out_dir.path());
    let findings = run.join("findings");
    let jsons = finding_files(&findings, "json");
    assert!(!jsons.is_empty());
    let record = read_json(&jsons[0]);
    assert_eq!(record["kind"], "performance");
    assert_eq!(record["confirmed"], true, "timed again on a fresh database");
    let medians = record["timing"]["medians_ms"].as_array().unwrap();
    assert_eq!(medians[0][0], "defaults");
    assert!(medians[0][1].as_f64().unwrap() >= 200.0);
    let sql = jsons[0].with_extension("sql");
    let script = std::fs::read_to_string(&sql).unwrap();
    assert!(script.contains("-- lancet 0.1.0 finding: performance"));
    assert_eq!(
        script.matches("EXPLAIN QUERY PLAN ").count(),
        2,
        "both plans: {script}"
    );
    // The reproducer, EXPLAINs included, runs as a whole on the bundled
    // SQLite it was found on (Debian's sqlite3 shell may be older than the
    // functions it uses).
    // (`.testctrl` lines are the shell's; the SQL runs without them.)
    let sql_only: String = script
        .lines()
        .filter(|l| !l.starts_with('.'))
        .map(|l| format!("{l}\n"))
        .collect();
    let conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(&sql_only)
        .unwrap_or_else(|e| panic!("reproducer {} does not run: {e}", sql.display()));
}
