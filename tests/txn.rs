//! The transaction oracle (`--oracle txn`) against real servers:
//! PostgreSQL 15 and 18, MariaDB 10.11 and Citus 14, each a throwaway
//! server on 127.0.0.1. Correct servers give clean runs; each planted
//! fault (a stale snapshot, a lost write, a lock not taken) is caught,
//! written as a schedule with a script per session, reduced, and replayed
//! by `lancet replay`.

mod common;
use common::txn::*;
use common::*;
use lancet_testkit::{CitusCluster, MariaDbServer, PgServer};
use std::path::Path;

/// A clean run of `schedules` schedules: exit 0, no finding, and at most
/// one schedule in 20 undetermined.
fn assert_clean(dbms: &str, url: &str, schedules: u32) {
    let out = tempfile::tempdir().unwrap();
    let n = schedules.to_string();
    let o = txn(out.path(), dbms, url, &["--queries", &n, "--seed", "7"]);
    let err = printed(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("  findings    0\n"), "{err}");
    assert!(finding_records(out.path()).is_empty());
    // Every level ran, and the driver could place nearly every step.
    for level in ["READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE"] {
        let Some(line) = err.lines().find(|l| l.trim_start().starts_with(level)) else {
            assert_eq!(dbms, "citus", "no line for {level}: {err}");
            continue;
        };
        let undetermined: u64 = line
            .split(", ")
            .find_map(|p| p.strip_suffix(" undetermined"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        let run: u64 = line
            .split(": ")
            .nth(1)
            .and_then(|p| p.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{line}"));
        assert!(undetermined * 20 <= run, "{line}");
    }
    // Citus has one level; elsewhere some schedules mix them.
    if dbms != "citus" {
        assert!(err.contains("  mixed levels: "), "{err}");
    }
}

/// Each planted fault is caught within 80 schedules (200 on SQLite): among its findings
/// is one of the kinds that name what the fault does (others follow
/// from it: a write never sent holds no lock either), and none is an
/// error of the DBMS.
fn assert_faults_caught(dbms: &str, url: &str) {
    let expect: [(&str, &[&str]); 3] = [
        (
            "txn-stale-snapshot",
            &["non-repeatable-read", "phantom", "lost-own-write"],
        ),
        (
            "txn-lost-write",
            &["lost-update", "wrong-final-state", "lost-own-write"],
        ),
        ("txn-no-lock", &["did-not-wait", "dirty-read"]),
    ];
    // SQLite's schedules take a millisecond, and with no row locks its
    // no-lock fault shows as a dirty read less often.
    let schedules = if dbms == "sqlite" { "200" } else { "80" };
    for (fault, kinds) in expect {
        let out = tempfile::tempdir().unwrap();
        let o = txn(
            out.path(),
            dbms,
            url,
            &[
                "--queries",
                schedules,
                "--seed",
                "3",
                "--no-reduce",
                "--inject-fault",
                fault,
            ],
        );
        let err = printed(&o);
        assert_eq!(o.status.code(), Some(1), "{fault}: {err}");
        let records = finding_records(out.path());
        let mut named = false;
        for r in &records {
            let d = scripts_of(r);
            let record = read_json(r);
            assert_eq!(record["fault"], fault);
            let signature = record["signature"].as_str().unwrap();
            assert!(!signature.starts_with("error"), "{fault} gave {signature}");
            named |= kinds.contains(&signature.split('@').next().unwrap());
            let table = std::fs::read_to_string(d.join("schedule.txt")).unwrap();
            assert!(table.contains("planted fault"), "{table}");
        }
        assert!(named, "{fault}: none of {kinds:?} in {err}");
    }
}

#[test]
fn postgres_18_runs_clean_and_catches_every_planted_fault() {
    let pg = PgServer::start_major(18).expect("PostgreSQL 18 (tests/run.sh installs it)");
    assert_clean("postgres", &pg.url(), 400);
    assert_faults_caught("postgres", &pg.url());
    assert!(pg.databases("lancet_").unwrap().is_empty());
}

#[test]
fn postgres_15_runs_clean() {
    let pg = PgServer::start_major(15).expect("PostgreSQL 15 (tests/run.sh installs it)");
    assert_clean("postgres", &pg.url(), 400);
}

#[test]
fn mariadb_runs_clean_and_catches_every_planted_fault() {
    if !MariaDbServer::available() {
        eprintln!("SKIPPED: no mariadbd here (tests/run.sh installs mariadb-server)");
        return;
    }
    let db = MariaDbServer::start().expect("a throwaway MariaDB");
    assert_clean_but_known("mysql", &db.url(), 400);
    assert_faults_caught("mysql", &db.url());
}

#[test]
fn citus_runs_clean_over_distributed_and_reference_tables_and_sees_a_lock_not_taken() {
    let Some(cluster) = CitusCluster::start_or_skip("citus txn") else {
        return;
    };
    assert_clean("citus", &cluster.url(), 150);
    let out = tempfile::tempdir().unwrap();
    let o = txn(
        out.path(),
        "citus",
        &cluster.url(),
        &[
            "--queries",
            "80",
            "--seed",
            "3",
            "--no-reduce",
            "--inject-fault",
            "txn-no-lock",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // Schedules run over both placements, and the fault shows on both.
    let setups: Vec<String> = finding_records(out.path())
        .iter()
        .map(|r| std::fs::read_to_string(scripts_of(r).join("setup.sql")).unwrap())
        .collect();
    for placement in ["create_distributed_table", "create_reference_table"] {
        assert!(
            setups.iter().any(|s| s.contains(placement)),
            "no finding over a table made by {placement}: {setups:?}"
        );
    }
    let signatures: Vec<String> = finding_records(out.path())
        .iter()
        .map(|r| read_json(r)["signature"].as_str().unwrap().to_string())
        .collect();
    assert!(
        signatures.iter().any(|s| s.ends_with(" on reference")),
        "{signatures:?}"
    );
}

/// A finding is written with its table and scripts, reduced to fewer
/// steps, and `lancet replay` shows the same anomaly again from the
/// single file, twice; with `--no-fault` the correct server passes.
#[test]
fn a_finding_reduces_and_replays_from_its_single_file() {
    let pg = PgServer::start_major(18).expect("PostgreSQL 18");
    let out = tempfile::tempdir().unwrap();
    let o = txn(
        out.path(),
        "postgres",
        &pg.url(),
        &[
            "--queries",
            "40",
            "--seed",
            "5",
            "--reduce-time",
            "30",
            "--inject-fault",
            "txn-no-lock",
            "--txn-levels",
            "read-committed",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let found = &finding_records(out.path())[0];
    let dir = scripts_of(found);
    for file in ["schedule.txt", "setup.sql", "session-1.sql"] {
        assert!(dir.join(file).exists(), "{file} in {}", dir.display());
    }
    let script = std::fs::read_to_string(found.with_extension("sql")).unwrap();
    assert!(script.starts_with("-- run: lancet replay txn-"), "{script}");
    assert!(script.contains("-- step 1, session "), "{script}");
    let reduced = found.with_extension("reduced.json");
    assert!(reduced.exists(), "not reduced: {}", found.display());
    let steps = |r: &Path| read_json(r)["schedule"]["steps"].as_array().unwrap().len();
    assert!(
        steps(&reduced) < steps(found),
        "{} !< {}",
        steps(&reduced),
        steps(found)
    );
    let record = read_json(&reduced);
    assert_eq!(record["rules"]["level"], "read-committed");
    let table = std::fs::read_to_string(scripts_of(&reduced).join("schedule.txt")).unwrap();
    assert!(table.contains("step | session 1"), "{table}");
    // The run's index, summary.json and run.json: what the store reads.
    let findings_dir = found.parent().unwrap();
    let index = read_json(&findings_dir.join("index.json"));
    assert_eq!(index[0]["oracle"], "txn", "{index}");
    assert_eq!(index[0]["reduced"], true, "{index}");
    let summary = read_json(&findings_dir.parent().unwrap().join("summary.json"));
    assert_eq!(summary["oracles"][0], "txn", "{summary}");
    assert!(summary["tallies"]["READ COMMITTED"]["schedules"].as_u64() > Some(0));
    assert!(findings_dir.parent().unwrap().join("run.json").exists());

    // The `.sql` names the finding as well as its record.
    let file = reduced.with_extension("sql");
    for _ in 0..2 {
        let o = run(&["replay", "--url", &pg.url(), file.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
        assert_eq!(o.status.code(), Some(1), "{stdout}");
        assert!(
            stdout.contains("still fails [with planted fault txn-no-lock]"),
            "{stdout}"
        );
    }
    let o = run(&[
        "replay",
        "--no-fault",
        "--url",
        &pg.url(),
        file.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// SQLite's one level in WAL mode, `BEGIN DEFERRED` and `BEGIN
/// IMMEDIATE`, sessions on a shared file: 3,000 schedules run clean, every fault is caught, and no file is left.
#[test]
fn sqlite_runs_clean_and_catches_every_planted_fault() {
    // A temporary directory of its own, where the sessions' files go.
    let tmp = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let o = lancet()
        .env("TMPDIR", tmp.path())
        .args([
            "fuzz",
            "--dbms",
            "sqlite",
            "--oracle",
            "txn",
            "--threads",
            "2",
        ])
        .args([
            "--queries",
            "3000",
            "--seed",
            "9",
            "--status-interval",
            "0",
            "--out",
        ])
        .arg(out.path())
        .output()
        .unwrap();
    let err = printed(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("  findings    0\n"), "{err}");
    assert!(err.contains("SERIALIZABLE: "), "{err}");
    assert!(err.contains("SERIALIZABLE (immediate): "), "{err}");
    assert!(err.contains("mixed levels: "), "{err}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().contains(".sqlite"))
        .collect();
    assert!(left.is_empty(), "database files left: {left:?}");
    assert_faults_caught("sqlite", "");
}

/// A finding's record edited to more sessions than lancet drives (or
/// steps of a session it does not have) is refused with a clear error
/// by `lancet replay`, not run into a panic.
#[test]
fn a_record_with_too_many_sessions_is_a_clear_error() {
    let out = tempfile::tempdir().unwrap();
    let mut json = a_planted_record(out.path(), "sqlite", "");
    json["schedule"]["sessions"] = serde_json::json!(5);
    let edited = out.path().join("edited.json");
    std::fs::write(&edited, json.to_string()).unwrap();
    let o = run(&["replay", edited.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let said = printed(&o);
    assert!(
        said.contains("cannot replay: the schedule has 5 sessions") && said.contains("1 to 4"),
        "{said}"
    );
}

/// Two statements wait for one row; the DBMS lets the first in its
/// queue through once the holder commits, and the other then waits for
/// that one's transaction. The first in the queue is the session with
/// the higher number, so a driver that awaited the freed statements one
/// by one in session order waited on the second until PostgreSQL's lock
/// timeout ended it. Every transaction commits, none with a conflict.
#[test]
fn two_waiters_for_one_row_both_commit_in_queue_order() {
    let pg = PgServer::start_major(18).expect("PostgreSQL 18");
    let out = tempfile::tempdir().unwrap();
    let mut json = a_planted_record(out.path(), "postgres", &pg.url());
    let update = |session: u32, set: i64| serde_json::json!({"session": session, "action": {"stmt": {"update": [{"key": 1}, {"set": set}]}}});
    let step =
        |session: u32, action: &str| serde_json::json!({"session": session, "action": action});
    json["fault"] = serde_json::Value::Null;
    json["schedule"] = serde_json::json!({
        "table": "lancet_txn",
        "index_v": false,
        "rows": [[1, 10]],
        "level": "read-committed",
        "sessions": 3,
        "steps": [
            step(2, "begin"), update(2, 20),
            step(1, "begin"), update(1, 30),
            step(0, "begin"), update(0, 40),
            step(2, "commit"), step(1, "commit"), step(0, "commit"),
        ],
    });
    let edited = out.path().join("queue.json");
    std::fs::write(&edited, json.to_string()).unwrap();
    let o = run(&["replay", "--url", &pg.url(), edited.to_str().unwrap()]);
    let said = printed(&o);
    assert!(
        said.contains("3 committed, 0 ended in a conflict"),
        "{said}"
    );
}

/// A DBMS without transactions lancet models (DuckDB, for now) and an
/// unknown level are clear errors.
#[test]
fn an_embedded_dbms_or_an_unknown_level_is_a_clear_error() {
    let out = tempfile::tempdir().unwrap();
    if std::env::var_os("LANCET_DUCKDB_LIB").is_some() {
        let o = fuzz_into(
            out.path(),
            &["--dbms", "duckdb", "--oracle", "txn", "--queries", "5"],
        );
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("needs a DBMS whose transactions lancet models"),
            "{}",
            stderr(&o)
        );
    }
    let pg = PgServer::start_major(18).expect("PostgreSQL 18");
    let o = txn(
        out.path(),
        "postgres",
        &pg.url(),
        &["--txn-levels", "snapshot", "--queries", "5"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown isolation level 'snapshot'"),
        "{}",
        stderr(&o)
    );
}

/// A server that goes away in the middle of a schedule is a `crash`
/// finding at once, and the run ends with its summary.
#[test]
fn a_server_gone_mid_schedule_is_a_crash_finding_and_the_run_ends_with_its_summary() {
    let pg = PgServer::start_major(18).expect("PostgreSQL 18");
    let out = tempfile::tempdir().unwrap();
    let url = pg.url();
    let child = spawn_fuzz(
        out.path(),
        &[
            "--dbms",
            "postgres",
            "--url",
            &url,
            "--oracle",
            "txn",
            "--threads",
            "2",
            "--timeout",
            "60",
            "--no-reduce",
        ],
    );
    std::thread::sleep(std::time::Duration::from_secs(4));
    pg.stop().unwrap();
    let o = wait_within(child, std::time::Duration::from_secs(200));
    let err = printed(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("  findings    "), "no summary: {err}");
    let signatures: Vec<String> = finding_records(out.path())
        .iter()
        .map(|r| read_json(r)["signature"].as_str().unwrap().to_string())
        .collect();
    assert!(
        signatures.iter().any(|s| s.starts_with("crash@")),
        "{signatures:?}\n{err}"
    );
}

/// SQLite's sessions run in worker processes: one killed in the middle of
/// a schedule (as a crash of the library would end it) is a `crash`
/// finding, and the run goes on to its end and its summary. A kill that
/// lands on a worker between uses (the pool's, the observer's) is no
/// finding, so workers are killed one at a time until one is.
#[test]
fn a_killed_sqlite_session_worker_is_a_crash_finding_and_the_run_goes_on() {
    let out = tempfile::tempdir().unwrap();
    let child = spawn_fuzz(
        out.path(),
        &[
            "--dbms",
            "sqlite",
            "--oracle",
            "txn",
            "--threads",
            "1",
            // A check limit, not a time-out, ends the run: the database
            // the crash ended early gives back the checks it did not run
            // (a sessions run promises none to child processes).
            "--queries",
            "12000",
            "--checks-per-database",
            "500",
            "--timeout",
            "150",
            "--no-reduce",
        ],
    );
    let lancet_pid = child.id();
    let crash_found = || {
        finding_records(out.path()).iter().any(|r| {
            read_json(r)["signature"]
                .as_str()
                .unwrap_or("")
                .starts_with("crash@")
        })
    };
    std::thread::sleep(std::time::Duration::from_secs(3));
    let mut kills = 0;
    for _ in 0..25 {
        if crash_found() {
            break;
        }
        let killed = child_processes(lancet_pid, "__engine-worker")
            .last()
            .is_some_and(|&pid| try_signal(pid, "KILL"));
        kills += u32::from(killed);
        // After a kill, time for the run to get back into schedules: three
        // kills in a row during a database's set-up (not a check, so no
        // crash finding) stop the thread, on a slow or loaded machine.
        std::thread::sleep(std::time::Duration::from_secs(if killed { 3 } else { 1 }));
    }
    let o = wait_within(child, std::time::Duration::from_secs(200));
    let err = printed(&o);
    assert!(kills > 0, "no worker process to kill: {err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("  findings    "), "no summary: {err}");
    assert!(crash_found(), "{kills} kills, no crash finding: {err}");
    assert!(err.contains("check limit reached"), "{err}");
    // The run went on after the crash, with new workers.
    let schedules: u64 = err
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("SERIALIZABLE: "))
        .and_then(|l| l.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(schedules > 1000, "{err}");
}

/// On an engine that breaks a rule in most schedules, flood control
/// writes (and reduces) at most `--flood-limit` findings per signature
/// and counts the rest; every written finding is reduced.
#[test]
fn a_buggy_engine_gives_reduced_findings_and_flood_control_counts_the_rest() {
    let out = tempfile::tempdir().unwrap();
    let o = txn(
        out.path(),
        "sqlite",
        "",
        &[
            "--queries",
            "150",
            "--seed",
            "11",
            "--reduce-time",
            "5",
            "--flood-limit",
            "2",
            "--inject-fault",
            "txn-lost-write",
        ],
    );
    let err = printed(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("counted, not written: --flood-limit"), "{err}");
    let mut per_signature = std::collections::BTreeMap::<String, usize>::new();
    for r in finding_records(out.path()) {
        let sig = read_json(&r)["signature"].as_str().unwrap().to_string();
        *per_signature.entry(sig).or_default() += 1;
        assert!(
            r.with_extension("reduced.json").exists(),
            "not reduced: {}",
            r.display()
        );
    }
    assert!(per_signature.values().all(|&n| n <= 3), "{per_signature:?}");
}

/// Transaction findings are a run's findings like any other: in its
/// index, its summary.json, the findings store (`--store`) and the
/// report, grouped into one bug per anomaly whatever the level.
#[test]
fn transaction_findings_reach_the_store_and_the_report() {
    let out = tempfile::tempdir().unwrap();
    let store = out.path().join("store.sqlite");
    let o = txn(
        out.path(),
        "sqlite",
        "",
        &[
            "--queries",
            "60",
            "--seed",
            "11",
            "--reduce-time",
            "3",
            "--inject-fault",
            "txn-lost-write",
            "--store",
            store.to_str().unwrap(),
        ],
    );
    let err = printed(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("the run is stored"), "{err}");
    let records = finding_records(out.path());
    assert!(!records.is_empty(), "{err}");
    let signature = read_json(&records[0])["signature"]
        .as_str()
        .unwrap()
        .to_string();
    let listed = run(&["findings", "--store", store.to_str().unwrap()]);
    let list = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert_eq!(listed.status.code(), Some(0), "{list}{}", stderr(&listed));
    assert!(list.contains(&signature), "{signature} not in:\n{list}");
    let shown = run(&[
        "findings",
        "--store",
        store.to_str().unwrap(),
        "--show",
        &signature,
    ]);
    let text = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(text.contains("-- run: lancet replay txn-"), "{text}");
    let html = out.path().join("r.html");
    let o = run(&[
        "report",
        "--store",
        store.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains(&signature), "no {signature} in the report");
    // A run killed before it saved its index: its findings on disk are
    // still read (run directories are pushed to a fresh store first).
    let findings_dir = records[0].parent().unwrap();
    std::fs::remove_file(findings_dir.join("index.json")).unwrap();
    let listed = run(&["findings", findings_dir.parent().unwrap().to_str().unwrap()]);
    let list = String::from_utf8_lossy(&listed.stdout).into_owned();
    assert_eq!(listed.status.code(), Some(0), "{list}{}", stderr(&listed));
    assert!(list.contains(&signature), "{signature} not in:\n{list}");
}
