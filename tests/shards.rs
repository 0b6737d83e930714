//! Shards of one campaign (`--shard I/N`) split its databases: two shards
//! never generate the same database, and a shard's finding regenerates
//! from seed, thread and database without naming the shard.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Each database's statement log by file name (`t3-d7.sql`).
fn logs(dir: &Path) -> BTreeMap<String, String> {
    files_with_ext(dir, "sql")
        .into_iter()
        .map(|f| {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&f).unwrap())
        })
        .collect()
}

#[test]
fn two_shards_never_generate_the_same_database() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let shard0 = logs(&fuzz_logged(
        a.path(),
        &["--shard", "0/2", "--threads", "2", "--queries", "600"],
    ));
    let shard1 = logs(&fuzz_logged(
        b.path(),
        &["--shard", "1/2", "--threads", "2", "--queries", "600"],
    ));
    assert!(
        shard0.len() >= 8 && shard1.len() >= 8,
        "{} and {} databases",
        shard0.len(),
        shard1.len()
    );
    // Shard 0 runs the campaign's even threads, shard 1 the odd ones.
    assert!(
        shard0
            .keys()
            .all(|n| n.starts_with("t0-") || n.starts_with("t2-")),
        "{:?}",
        shard0.keys()
    );
    assert!(
        shard1
            .keys()
            .all(|n| n.starts_with("t1-") || n.starts_with("t3-")),
        "{:?}",
        shard1.keys()
    );
    // No database of one is a database of the other: compare what
    // generates them (the schema and data before the first query).
    let setup = |log: &String| -> String {
        log.lines()
            .take_while(|l| !l.trim_start().to_ascii_uppercase().starts_with("SELECT"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for (n0, l0) in &shard0 {
        for (n1, l1) in &shard1 {
            assert_ne!(
                setup(l0),
                setup(l1),
                "{n0} of shard 0 and {n1} of shard 1 are one database"
            );
        }
    }
    // A shard's database regenerates from seed, thread and database alone.
    let (name, original) = shard1
        .iter()
        .find(|(n, _)| n.starts_with("t3-d2."))
        .expect("shard 1 ran campaign thread 3's database 2");
    let c = tempfile::tempdir().unwrap();
    let single = logs(&fuzz_logged(
        c.path(),
        &["--thread", "3", "--database", "2"],
    ));
    assert_eq!(
        single.get(name.as_str()),
        Some(original),
        "{name} regenerated differently"
    );
}

#[test]
fn shard_options_are_checked() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().to_str().unwrap();
    for (args, says) in [
        (vec!["--shard", "1/2"], "needs --seed"),
        (vec!["--shard", "2/2", "--seed", "1"], "out of range"),
        (vec!["--shard", "half", "--seed", "1"], "I/N"),
        (
            vec!["--shard-count", "3", "--seed", "1"],
            "JOB_COMPLETION_INDEX",
        ),
        (
            vec![
                "--shard",
                "0/2",
                "--seed",
                "1",
                "--thread",
                "1",
                "--database",
                "0",
            ],
            "shard 1/2",
        ),
    ] {
        let mut all = vec!["fuzz", "--out", dir, "--queries", "10"];
        all.extend(args.iter().copied());
        let o = run(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
    }
    // In a pod of an Indexed Job, the index comes from the environment.
    let o = lancet()
        .args([
            "fuzz",
            "--out",
            dir,
            "--queries",
            "50",
            "--seed",
            "1",
            "--shard-count",
            "3",
        ])
        .args(["--threads", "1", "--status-interval", "0"])
        .env("JOB_COMPLETION_INDEX", "2")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("shard 2/3 (campaign threads 2)"),
        "{}",
        stderr(&o)
    );
}
