//! Campaign files: `lancet fuzz --config FILE` takes its settings from TOML,
//! the command line wins, and a malformed file is a clear error.

mod common;
use common::*;

#[test]
fn a_campaign_file_sets_the_run_and_the_command_line_wins() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let file = dir.path().join("c.toml");
    std::fs::write(
        &file,
        format!(
            "dbms = \"sqlite\"\noracle = \"tlp-where\"\nthreads = 1\nseed = 77\nqueries = 5000\nout = \"{}\"\n",
            out.display()
        ),
    )
    .unwrap();
    let summary = dir.path().join("s.json");
    let o = run(&[
        "fuzz",
        "--config",
        file.to_str().unwrap(),
        "--queries",
        "150",
        "--status-interval",
        "0",
        "--summary-json",
        summary.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let s = read_json(&summary);
    assert_eq!(s["seed"], 77);
    assert_eq!(s["threads"], 1);
    assert_eq!(s["checks"], 150, "--queries on the command line wins");
    assert_eq!(s["oracles"][0], "tlp-where");
    assert!(out.exists(), "out from the file");
}

#[test]
fn a_malformed_campaign_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    for (text, expected) in [
        ("threads = 1\nbogus = 2\n", "unknown field `bogus`"),
        ("threads = \"two\"\n", "not a valid campaign file"),
        ("dbms = \"oracle\"\n", "unknown dbms 'oracle'"),
    ] {
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, text).unwrap();
        let o = run(&["fuzz", "--config", file.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{text}");
        assert!(stderr(&o).contains(expected), "{text}: {}", stderr(&o));
    }
    let o = run(&["fuzz", "--config", "/no/such/campaign.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot read the campaign file"));
}

/// A fleet's campaign file: `shard_count` (the index from the pod's
/// JOB_COMPLETION_INDEX) and a `store` relative to the file.
#[test]
fn a_campaign_file_sets_the_shard_count_and_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let file = dir.path().join("fleet.toml");
    std::fs::write(
        &file,
        format!(
            "seed = 5\nthreads = 1\nqueries = 200\nshard_count = 3\nstore = \"fleet.sqlite\"\nout = \"{}\"\n",
            out.display()
        ),
    )
    .unwrap();
    let o = lancet()
        .args([
            "fuzz",
            "--config",
            file.to_str().unwrap(),
            "--status-interval",
            "0",
        ])
        .env("JOB_COMPLETION_INDEX", "1")
        .env_remove("LANCET_STORE_URL")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("shard 1/3"), "{err}");
    assert!(
        dir.path().join("fleet.sqlite").is_file(),
        "the store beside the campaign file"
    );
    assert!(err.contains("the run is stored"), "{err}");
}
