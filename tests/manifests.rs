//! The fleet manifests in configs/fleet/ run as written: the arguments of
//! the Kubernetes Indexed Job's lancet container, in a pod's environment
//! (JOB_COMPLETION_INDEX, LANCET_PG_URL, LANCET_STORE_URL), start a shard
//! against PostgreSQL that feeds the store; the CI matrix's command line
//! is accepted too.

mod common;
use common::*;
use lancet_testkit::PgServer;

/// The `args:` list of the manifest's lancet container: the lines `- ...`
/// after `args:` up to the next key.
fn container_args(manifest: &str) -> Vec<String> {
    let mut args = Vec::new();
    let mut inside = false;
    for line in manifest.lines() {
        let t = line.trim();
        if t == "args:" {
            inside = true;
            continue;
        }
        if inside {
            match t.strip_prefix("- ") {
                Some(arg) => args.push(arg.to_string()),
                None => break,
            }
        }
    }
    args
}

#[test]
fn the_indexed_job_runs_a_shard_that_feeds_the_store() {
    let manifest = std::fs::read_to_string("configs/fleet/k8s-indexed-job.yaml").unwrap();
    let args = container_args(&manifest);
    assert_eq!(args.first().map(String::as_str), Some("fuzz"), "{args:?}");
    assert!(args.iter().any(|a| a == "--shard-count=4"), "{args:?}");
    assert!(
        manifest.contains("completions: 4"),
        "--shard-count must equal completions"
    );
    let pg = PgServer::start().expect("starting a throwaway PostgreSQL (tests/run.sh installs it)");
    pg.psql("postgres", "CREATE DATABASE store").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // The pod's arguments, with a short run and a local --out instead.
    let mut pod: Vec<String> = args
        .into_iter()
        .filter(|a| !a.starts_with("--timeout") && !a.starts_with("--out"))
        .collect();
    pod.extend(["--queries=300".into(), "--status-interval=0".into()]);
    pod.push(format!("--out={}", out.display()));
    let o = lancet()
        .args(&pod)
        .env("JOB_COMPLETION_INDEX", "3")
        .env("LANCET_PG_URL", pg.url())
        .env("LANCET_STORE_URL", pg.url_for("postgres", "store"))
        .env("HOSTNAME", "lancet-campaign-3-abcde")
        .output()
        .unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("shard 3/4"), "{err}");
    assert!(err.contains("the run is stored"), "{err}");
    let stored = pg
        .psql(
            "store",
            "SELECT shard_index || '/' || shard_count || ' ' || host || ' ' || (summary IS NOT NULL) FROM lancet_runs",
        )
        .unwrap();
    assert_eq!(stored.trim(), "3/4 lancet-campaign-3-abcde true");
}

#[test]
fn the_ci_matrix_command_line_is_accepted() {
    let workflow = std::fs::read_to_string("configs/fleet/ci-matrix.yml").unwrap();
    assert!(workflow.contains("shard: [0, 1, 2, 3]"));
    assert!(workflow.contains("--shard ${{ matrix.shard }}/4"));
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let out = dir.path().join("out");
    for shard in ["0/4", "3/4"] {
        let o = lancet()
            .args([
                "fuzz",
                "--shard",
                shard,
                "--seed",
                "17",
                "--timeout",
                "3000",
                "--threads",
                "2",
            ])
            .args(["--queries", "400", "--status-interval", "0"])
            .arg(format!("--out={}", out.display()))
            .env("LANCET_STORE_URL", &store)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    }
    let o = lancet()
        .arg("findings")
        .env("LANCET_STORE_URL", &store)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let listing = String::from_utf8_lossy(&o.stdout);
    assert!(
        listing.contains("in 2 run(s) (2 of them shards)"),
        "{listing}"
    );
    let html = dir.path().join("lancet-report.html");
    let o = lancet()
        .args(["report", "-o"])
        .arg(&html)
        .env("LANCET_STORE_URL", &store)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(html.is_file());
}
