//! Bad input gives a clear error and a non-zero exit, before any work.

mod common;
use common::*;

#[test]
fn unknown_dbms_is_rejected_with_the_known_names() {
    let out = run(&["fuzz", "--dbms", "oracle9i", "--queries", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("oracle9i") && err.contains("sqlite"), "{err}");
}

#[test]
fn unknown_oracle_is_rejected_with_the_known_names() {
    let out = run(&["fuzz", "--oracle", "magic", "--queries", "1"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("magic") && err.contains("tlp-where"), "{err}");
}

#[test]
fn unwritable_output_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").unwrap();
    let out_arg = file.join("out");
    let out = run(&["fuzz", "--queries", "1", "--out", out_arg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("cannot create") && err.contains("a-file"),
        "{err}"
    );
}

#[test]
fn database_without_seed_and_thread_is_rejected() {
    let out = run(&["fuzz", "--database", "3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--seed"), "{}", stderr(&out));
}

#[test]
fn malformed_expected_errors_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[expected]]\ncode = 1\n").unwrap();
    let out = run(&[
        "fuzz",
        "--queries",
        "1",
        "--expected-errors",
        bad.to_str().unwrap(),
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("bad.toml"), "{err}");
}

#[test]
fn help_lists_every_oracle() {
    let out = lancet().args(["fuzz", "--help"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    for name in lancet_oracles::names() {
        assert!(text.contains(name), "--help does not list {name}:\n{text}");
    }
}

/// `reduce` and `replay --config` read the campaign the finding's run
/// read: one for another DBMS, or one whose expected errors do not
/// parse, is a clear error naming the file, before any work.
#[test]
fn a_campaign_file_for_reduce_and_replay_is_read_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let out = fuzz_planted_drop_row(dir.path(), &["--no-reduce"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let findings = finding_files(&run_dir(dir.path()).join("findings"), "json");
    let finding = findings
        .first()
        .expect("a finding")
        .to_str()
        .unwrap()
        .to_string();
    let other = dir.path().join("other.toml");
    std::fs::write(&other, "dbms = \"duckdb\"\n").unwrap();
    let bad_rules = dir.path().join("rules.toml");
    std::fs::write(&bad_rules, "[[expected]]\ncode = 1\n").unwrap();
    let broken = dir.path().join("broken.toml");
    std::fs::write(
        &broken,
        "dbms = \"sqlite\"\nexpected_errors = \"rules.toml\"\n",
    )
    .unwrap();
    for (command, config, named) in [
        ("replay", &other, "other.toml"),
        ("replay", &broken, "rules.toml"),
        ("reduce", &other, "other.toml"),
        ("reduce", &broken, "rules.toml"),
    ] {
        let out = run(&[command, &finding, "--config", config.to_str().unwrap()]);
        let err = format!("{}{}", stderr(&out), String::from_utf8_lossy(&out.stdout));
        assert_ne!(out.status.code(), Some(0), "{command}: {err}");
        assert!(err.contains(named), "{command} with {named}: {err}");
    }
    let fine = dir.path().join("fine.toml");
    std::fs::write(&fine, "dbms = \"sqlite\"\n").unwrap();
    let out = run(&["replay", &finding, "--config", fine.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "still fails: {}", stderr(&out));
}
