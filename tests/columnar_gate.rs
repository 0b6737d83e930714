//! The example of docs/gate-your-extension.md, run as written: the campaign
//! file `configs/columnar-gate.toml` gates Citus's columnar access method
//! (the twins oracle, columnar twins of heap tables) on a throwaway
//! PostgreSQL 18 with the suite's Citus build (citus_columnar needs no
//! preloading). Where Citus is missing the test says SKIPPED, except in CI.

mod common;
use common::*;
use lancet_testkit::citus::citus_installed;
use lancet_testkit::{in_ci, PgServer};
use std::path::Path;
use std::time::{Duration, Instant};

const CONFIG: &str = "configs/columnar-gate.toml";
const PAGE: &str = "docs/gate-your-extension.md";

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn the_page_shows_the_campaign_file_the_suite_runs() {
    let page = std::fs::read_to_string(repo(PAGE)).unwrap();
    let config = std::fs::read_to_string(repo(CONFIG)).unwrap();
    assert!(
        page.contains(&format!("```toml\n{config}```")),
        "{PAGE} must show {CONFIG} whole, as it is"
    );
    assert!(page.contains(&format!("lancet fuzz --config {CONFIG} --url ")));
    assert!(page.contains("lancet reduce lancet-columnar-gate/"));
}

#[test]
fn the_columnar_gate_runs_clean_in_under_a_minute_and_its_twins_are_columnar() {
    if !citus_installed(18) {
        assert!(
            !in_ci(),
            "Citus is not installed for PostgreSQL 18, and CI must test it (tests/engines.sh)"
        );
        println!("SKIPPED columnar gate: Citus is not installed for PostgreSQL 18");
        return;
    }
    let start = Instant::now();
    let pg = PgServer::start_major(18).expect("starting a throwaway PostgreSQL 18");
    let work = tempfile::tempdir().unwrap();
    let config = repo(CONFIG);
    let url = pg.url();
    // As the page says, from the working directory the run's `out` is in.
    let gate = lancet()
        .current_dir(work.path())
        .args(["fuzz", "--config", config.to_str().unwrap(), "--url", &url])
        .output()
        .expect("running lancet");
    let stdout = String::from_utf8_lossy(&gate.stdout);
    assert_eq!(gate.status.code(), Some(0), "{stdout}\n{}", stderr(&gate));
    assert!(stdout.contains("per oracle  twins 3"), "{stdout}");
    assert!(stdout.contains("findings    0"), "{stdout}");
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "the gate took {:?} with the server's start",
        start.elapsed()
    );

    // The same file with a planted fault: the twins its reproducers make
    // are columnar, after the extension's setup.
    let out = work.path().join("fault");
    let faulted = run(&[
        "fuzz",
        "--config",
        config.to_str().unwrap(),
        "--url",
        &url,
        "--queries",
        "40",
        "--threads",
        "1",
        "--no-reduce",
        "--inject-fault",
        "drop-row-off-twins",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(faulted.status.code(), Some(1), "{}", stderr(&faulted));
    let findings = finding_files(&run_dir(&out).join("findings"), "sql");
    let first = findings.first().expect("a finding");
    let text = std::fs::read_to_string(first).unwrap();
    assert!(
        text.contains("CREATE EXTENSION IF NOT EXISTS citus_columnar;"),
        "{text}"
    );
    assert!(text.contains(") USING columnar;"), "{text}");
    assert!(text.contains("INSERT INTO lancet_twin."), "{text}");

    // Reduced afterwards, as the page says: on a fresh database, too, the
    // reduced case needs the extension's setup (a database emptied for the
    // next candidate must not keep the extension, or the setup is dropped).
    let json = first.with_extension("json");
    let reduced = run(&[
        "reduce",
        json.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--url",
        &url,
    ]);
    assert_eq!(reduced.status.code(), Some(0), "{}", stderr(&reduced));
    let text = std::fs::read_to_string(first.with_extension("reduced.sql")).unwrap();
    assert!(
        text.contains("CREATE EXTENSION IF NOT EXISTS citus_columnar;"),
        "{text}"
    );
}
