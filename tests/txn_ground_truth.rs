//! Ground truth for the transaction oracle: published or found isolation
//! bugs that still reproduce on the suite's servers
//! (`docs/isolation-ground-truth.md`), each shown by lancet: its reduced
//! finding replays and still shows the anomaly, and lancet's generator
//! finds it again from a seed.

mod common;
use common::txn::*;
use common::*;
use lancet_testkit::{MariaDbServer, PgServer};
use std::path::Path;

/// Every reduced finding of a real MariaDB bug still shows on 10.11.19:
/// `lancet replay` exits 1 and names the anomaly again.
#[test]
fn mariadb_isolation_bugs_still_reproduce_from_their_findings() {
    if !MariaDbServer::available() {
        eprintln!("SKIPPED: no mariadbd here (tests/run.sh installs mariadb-server)");
        return;
    }
    let db = MariaDbServer::start().expect("a throwaway MariaDB");
    let mut replayed = 0;
    for record in files_below(&known_mariadb_bugs(), ".json") {
        let o = run(&["replay", "--url", &db.url(), record.to_str().unwrap()]);
        let said = printed(&o);
        assert_eq!(o.status.code(), Some(1), "{}: {said}", record.display());
        let signature = read_json(&record)["signature"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            said.contains(&format!("still shows {signature}")),
            "{}: {said}",
            record.display()
        );
        replayed += 1;
    }
    assert_eq!(replayed, 5);
}

/// lancet's generator, with `innodb_snapshot_isolation` drawn per
/// schedule, finds the secondary-index bug (a REPEATABLE READ write
/// through `KEY(v)` skips a row deleted after its snapshot instead of
/// failing with 1020) from a seed, reduced, with the setting named.
#[test]
fn the_generator_finds_the_snapshot_isolation_bug_of_mariadb() {
    if !MariaDbServer::available() {
        eprintln!("SKIPPED: no mariadbd here (tests/run.sh installs mariadb-server)");
        return;
    }
    let db = MariaDbServer::start().expect("a throwaway MariaDB");
    let out = tempfile::tempdir().unwrap();
    let o = txn(
        out.path(),
        "mysql",
        &db.url(),
        &[
            "--txn-levels",
            "repeatable-read",
            "--queries",
            "400",
            "--seed",
            "3",
            "--flood-limit",
            "1",
        ],
    );
    let said = printed(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    let found = finding_records(out.path()).into_iter().find(|r| {
        read_json(r)["signature"]
            .as_str()
            .unwrap()
            .starts_with("lost-update@REPEATABLE READ [innodb_snapshot_isolation=ON]")
    });
    let found = found.unwrap_or_else(|| panic!("not found: {said}"));
    let record = read_json(&found);
    assert_eq!(
        record["schedule"]["settings"]["innodb_snapshot_isolation"],
        "ON"
    );
    let reduced = found.with_extension("reduced.sql");
    let script = std::fs::read_to_string(&reduced).unwrap();
    assert!(
        script.contains("SET SESSION innodb_snapshot_isolation = ON;"),
        "{script}"
    );
    assert!(script.contains("CREATE INDEX"), "{script}");
}

/// InnoDB's documented REPEATABLE READ deviation (a write reads the newest
/// rows, a lost update) is counted by default and, with `--txn-strict`,
/// is a finding of its own kind, named with the setting under which it
/// shows, in a group of its own.
#[test]
fn a_documented_deviation_is_counted_and_reported_under_strict() {
    if !MariaDbServer::available() {
        eprintln!("SKIPPED: no mariadbd here (tests/run.sh installs mariadb-server)");
        return;
    }
    let db = MariaDbServer::start().expect("a throwaway MariaDB");
    let args = [
        "--txn-levels",
        "repeatable-read",
        "--queries",
        "150",
        "--seed",
        "4",
        "--flood-limit",
        "1",
        "--no-reduce",
    ];
    let out = tempfile::tempdir().unwrap();
    let o = txn(out.path(), "mysql", &db.url(), &args);
    let said = printed(&o);
    assert!(said.contains("  deviation write-sees-newer: "), "{said}");
    assert!(finding_records(out.path())
        .iter()
        .all(|r| !read_json(r)["signature"]
            .as_str()
            .unwrap()
            .starts_with("deviation-")));
    let strict = tempfile::tempdir().unwrap();
    let o = txn(
        strict.path(),
        "mysql",
        &db.url(),
        &[&args[..], &["--txn-strict"]].concat(),
    );
    let said = printed(&o);
    assert_eq!(o.status.code(), Some(1), "{said}");
    let found = finding_records(strict.path()).into_iter().any(|r| {
        read_json(&r)["signature"].as_str().unwrap().starts_with(
            "deviation-write-sees-newer@REPEATABLE READ [innodb_snapshot_isolation=OFF]",
        )
    });
    assert!(found, "{said}");
}

/// Found by lancet on PostgreSQL 18.6 (`docs/bugs-found.md`): SERIALIZABLE
/// commits two transactions that have no serial order when one of them
/// read a row by `INSERT ... ON CONFLICT DO NOTHING` (it met the row and
/// inserted nothing) and the other then moved that row away. PostgreSQL
/// 15.20 fails one of them with 40001. The reduced finding still fails
/// on 18 and passes on 15.
#[test]
fn postgres_18_serializable_misses_an_on_conflict_read_that_15_catches() {
    let record = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/known-txn-postgres-18")
        .join("serializable-on-conflict-do-nothing-read-untracked.json");
    let record = record.to_str().unwrap();
    for (major, code, said) in [
        (18, 1, "still shows not-serializable@SERIALIZABLE"),
        (15, 0, "now shows none@SERIALIZABLE"),
    ] {
        let pg = PgServer::start_major(major).expect("PostgreSQL (tests/run.sh installs it)");
        let o = run(&["replay", "--url", &pg.url(), record]);
        let printed = printed(&o);
        assert_eq!(o.status.code(), Some(code), "{major}: {printed}");
        assert!(printed.contains(said), "{major}: {printed}");
    }
}
