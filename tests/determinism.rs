//! A seed regenerates everything: the same seed gives the same statements,
//! and `--seed S --thread T --database K` regenerates one database exactly.

mod common;
use common::*;
use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

#[test]
fn same_seed_gives_identical_statement_logs() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let logs_a = fuzz_logged(a.path(), &["--threads", "1", "--queries", "200"]);
    let logs_b = fuzz_logged(b.path(), &["--threads", "1", "--queries", "200"]);
    let files = files_with_ext(&logs_a, "sql");
    assert!(
        files.len() >= 5,
        "expected several databases, got {}",
        files.len()
    );
    for f in files {
        let name = f.file_name().unwrap();
        assert_eq!(read(&f), read(&logs_b.join(name)), "{name:?} differs");
    }
}

#[test]
fn thread_and_database_regenerate_one_database() {
    let full = tempfile::tempdir().unwrap();
    let logs = fuzz_logged(full.path(), &["--threads", "1", "--queries", "200"]);
    let one = tempfile::tempdir().unwrap();
    let single = fuzz_logged(one.path(), &["--thread", "0", "--database", "3"]);
    let regenerated = files_with_ext(&single, "sql");
    assert_eq!(regenerated.len(), 1);
    let original = read(&logs.join("t0-d3.sql"));
    assert!(original.lines().count() > 50);
    assert_eq!(read(&regenerated[0]), original);
}

/// A long campaign's statement logs stay bounded: only the newest logs of
/// databases without findings are kept (16 per thread).
#[test]
fn statement_logs_of_clean_databases_are_bounded() {
    let out = tempfile::tempdir().unwrap();
    let logs = fuzz_logged(out.path(), &["--threads", "1", "--queries", "4000"]);
    let files = files_with_ext(&logs, "sql");
    assert!(
        (10..=17).contains(&files.len()),
        "{} statement logs kept of about 100 databases",
        files.len()
    );
    // The newest are the ones kept: consecutive databases at the end of
    // the run (about a hundred; oracles that draw no case in some checks
    // make it a few more).
    let index = |f: &std::path::PathBuf| -> u64 {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        name.trim_start_matches("t0-d")
            .trim_end_matches(".sql")
            .parse()
            .unwrap()
    };
    let indices: Vec<u64> = files.iter().map(index).collect();
    let (lo, hi) = (
        *indices.iter().min().unwrap(),
        *indices.iter().max().unwrap(),
    );
    assert!(hi >= 90 && hi - lo < 20, "{files:?}");
}

/// A finding of the `all` rotation regenerates by the line its reproducer
/// gives: the rotation draws the check again, which the finding's oracle
/// alone would not (it draws other checks from the database's RNG).
#[test]
fn a_finding_of_the_rotation_regenerates_by_its_header_line() {
    let first_finding = |out: &Path| -> (serde_json::Value, String) {
        let findings = run_dir(out).join("findings");
        let mut records: Vec<_> = finding_files(&findings, "json")
            .into_iter()
            .filter(|p| !p.to_string_lossy().ends_with(".reduced.json"))
            .collect();
        records.sort();
        let record = read_json(&records[0]);
        let script = read(&records[0].with_extension("sql"));
        (record, script)
    };
    let full = tempfile::tempdir().unwrap();
    let args = [
        "--oracle",
        "all",
        "--inject-fault",
        "dml-touches-extra-row",
        "--seed",
        "7",
        "--threads",
        "1",
        "--queries",
        "600",
        "--no-reduce",
    ];
    fuzz_into(full.path(), &args);
    let (record, script) = first_finding(full.path());
    assert_eq!(record["oracle"], "dqe");
    let line = script
        .lines()
        .find_map(|l| l.strip_prefix("-- regenerate: lancet "))
        .expect("a regenerate line");
    assert!(line.contains(" --oracle all"), "{line}");
    let again = tempfile::tempdir().unwrap();
    let mut regenerate: Vec<&str> = line.split_whitespace().skip(1).collect();
    regenerate.push("--no-reduce");
    fuzz_into(again.path(), &regenerate);
    let (regenerated, _) = first_finding(again.path());
    assert_eq!(regenerated["origin"], record["origin"]);
    assert_eq!(regenerated["signature"], record["signature"]);
}
