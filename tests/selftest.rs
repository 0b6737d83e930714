//! `lancet selftest` proves every oracle catches its planted fault, each
//! within 2,000 checks, and leaves runnable reproducers.

mod common;
use common::*;

#[test]
fn every_oracle_catches_its_planted_fault() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = run(&["selftest", "--out", out_dir.path().to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "selftest failed:\n{stdout}");
    for name in lancet_oracles::query_names() {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{stdout}"));
        let fields: Vec<&str> = line.split_whitespace().collect();
        if name == "dist-vs-local" {
            // It needs twins of the tables (Citus); SQLite has none.
            assert_eq!(fields[2], "n/a", "{line}");
            continue;
        }
        assert_eq!(fields[2], "yes", "{name} missed its fault: {line}");
        let checks: u64 = fields[3].parse().unwrap();
        assert!(checks <= 2000, "{name} needed {checks} checks");
        let reproducer = std::path::Path::new(fields[4]);
        let script = std::fs::read_to_string(reproducer).unwrap();
        // The SQL runs as a whole; `.testctrl` lines (knob settings) are
        // the sqlite3 shell's own commands.
        let sql: String = script
            .lines()
            .filter(|l| !l.starts_with('.'))
            .map(|l| format!("{l}\n"))
            .collect();
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        conn.execute_batch(&sql)
            .unwrap_or_else(|e| panic!("{} does not run: {e}", reproducer.display()));
    }
    // An oracle with sessions of its own: a line per planted fault, each
    // caught, its reproducer on disk.
    for r in lancet_oracles::all() {
        let lancet_core::AnyOracle::Sessions(oracle) = r.oracle else {
            continue;
        };
        for fault in oracle.faults() {
            let line = stdout
                .lines()
                .find(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > 4 && f[0] == oracle.name() && f[1] == fault.name()
                })
                .unwrap_or_else(|| panic!("no line for {}: {stdout}", fault.name()));
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(fields[2], "yes", "{} missed: {line}", fault.name());
            assert!(std::path::Path::new(fields[4]).exists(), "{line}");
        }
    }
}
