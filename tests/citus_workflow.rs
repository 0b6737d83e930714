//! The GitHub Actions workflow for a Citus change
//! (configs/ci/citus-gate.github.yml), run as written: its cluster step
//! starts a coordinator and two workers of the suite's Citus 14 on
//! PostgreSQL 18, and its lancet step runs the gate config
//! (configs/citus-ci-gate.toml) against them. Only what a runner has and
//! this machine lacks is stood in for: `sudo` (runuser), `cargo install`
//! (the binary under test is already built) and the ports and binaries
//! (the workflow's own variables).

mod common;
use lancet_testkit::citus::{citus_installed, citus_library};
use std::path::{Path, PathBuf};
use std::process::Command;

const WORKFLOW: &str = "configs/ci/citus-gate.github.yml";

/// The `run: |` block of the step named `name`, unindented.
fn step_script(workflow: &str, name: &str) -> String {
    let mut lines = workflow.lines();
    lines
        .by_ref()
        .find(|l| l.trim() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("no step '{name}' in {WORKFLOW}"));
    let run = lines
        .by_ref()
        .find(|l| l.trim() == "run: |")
        .unwrap_or_else(|| panic!("step '{name}' has no run block"));
    let indent = run.len() - run.trim_start().len() + 2;
    let mut out = String::new();
    for line in lines {
        if !line.trim().is_empty() && line.len() - line.trim_start().len() < indent {
            break;
        }
        out.push_str(line.get(indent..).unwrap_or(""));
        out.push('\n');
    }
    out
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn write_shim(dir: &Path, name: &str, body: &str) {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    Command::new("chmod").arg("+x").arg(&path).status().unwrap();
}

/// Stops the workflow's nodes and removes their data, also when the test fails.
struct Nodes {
    bindir: PathBuf,
    data: PathBuf,
    ports: Vec<u16>,
}

impl Drop for Nodes {
    fn drop(&mut self) {
        for p in &self.ports {
            let _ = Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(self.bindir.join("pg_ctl"))
                .arg("-D")
                .arg(self.data.join(format!("n{p}")))
                .args(["-m", "immediate", "-w", "stop"])
                .output();
        }
        let _ = std::fs::remove_dir_all(&self.data);
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

// Long because: the workflow file's steps, run in order as written.
#[test]
fn the_github_workflow_starts_citus_and_runs_the_gate_as_written() {
    if !citus_installed(18) {
        let lib = citus_library(18).map(|l| l.display().to_string());
        assert!(
            !lancet_testkit::in_ci(),
            "Citus 14 is not installed for PostgreSQL 18 ({lib:?}): tests/run.sh builds it"
        );
        println!("SKIPPED citus workflow: Citus is not installed for PostgreSQL 18");
        return;
    }
    let workflow = std::fs::read_to_string(WORKFLOW).unwrap();
    // docs/ci-gate.md shows the cluster and lancet steps as they are in the file.
    let readme = std::fs::read_to_string("docs/ci-gate.md").unwrap();
    let section = readme
        .split_once("### A CI job for an extension: Citus")
        .map(|(_, s)| s)
        .unwrap();
    let shown = section
        .split_once("```yaml\n")
        .and_then(|(_, s)| s.split_once("```"))
        .map(|(block, _)| block)
        .unwrap();
    assert!(
        workflow.contains(shown),
        "docs/ci-gate.md's workflow excerpt is not in {WORKFLOW}"
    );
    let cluster = step_script(&workflow, "A coordinator and two workers");
    let gate = step_script(&workflow, "lancet");
    assert!(
        gate.contains("lancet fuzz --config ci/citus-ci-gate.toml"),
        "{gate}"
    );

    let bindir = lancet_testkit::bindir_of(18).unwrap();
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let data =
        lancet_testkit::server_root().join(format!("lancet-workflow-{}", std::process::id()));
    let nodes = Nodes {
        bindir: bindir.clone(),
        data: data.clone(),
        ports: ports.clone(),
    };
    let job = tempfile::tempdir().unwrap();
    let shims = job.path().join("shims");
    std::fs::create_dir_all(&shims).unwrap();
    // A runner's sudo: `sudo -u USER CMD` as USER, `sudo CMD` as root (we are).
    write_shim(
        &shims,
        "sudo",
        r#"if [ "$1" = "-u" ]; then u=$2; shift 2; exec runuser -u "$u" -- "$@"; fi; exec "$@""#,
    );
    write_shim(&shims, "cargo", "exit 0");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_lancet"), shims.join("lancet")).unwrap();
    let path = format!(
        "{}:{}",
        shims.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let ports_text = ports
        .iter()
        .map(u16::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    let bash = |script: &str, dir: &Path| {
        Command::new("bash")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env("PATH", &path)
            .env("PGBIN", &bindir)
            .env("PORTS", &ports_text)
            .env("DATA", &data)
            .output()
            .unwrap()
    };

    let o = bash(&cluster, job.path());
    assert!(
        o.status.success(),
        "the cluster step failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );

    // The extension's repository keeps the gate config under ci/.
    let ci = job.path().join("ci");
    std::fs::create_dir_all(&ci).unwrap();
    std::fs::copy("configs/citus-ci-gate.toml", ci.join("citus-ci-gate.toml")).unwrap();
    copy_dir(
        Path::new("configs/known-bugs-citus"),
        &ci.join("known-bugs-citus"),
    );
    let started = std::time::Instant::now();
    let o = bash(&gate, job.path());
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    eprintln!(
        "the gate took {:.1} s:\n{out}",
        started.elapsed().as_secs_f64()
    );
    // 0: no new bug; 1: a new bug, which the gate exists to report (Citus
    // 14.0.1 has some; each is confirmed on a fresh database first).
    let code = o.status.code();
    assert!(matches!(code, Some(0) | Some(1)), "exit {code:?}\n{err}");
    assert!(out.contains("check limit reached"), "{out}\n{err}");
    let junit = std::fs::read_to_string(ci.join("lancet-citus-junit.xml")).unwrap();
    assert!(junit.contains("<testsuite"), "{junit}");
    if code == Some(1) {
        // The findings that fail the gate, as first written: at least one
        // was confirmed on a fresh database (more of one signature are
        // counted without confirming each again), or is a crash.
        let findings = common::run_dir(&job.path().join("lancet-citus-ci")).join("findings");
        let confirmed = common::finding_files(&findings, "sql")
            .iter()
            .filter(|p| !p.to_string_lossy().contains(".reduced."))
            .any(|p| {
                // Confirmed on a fresh database, or a crash (Citus 14's
                // coordinator SIGSEGVs), which stands without a replay.
                let text = std::fs::read_to_string(p).unwrap_or_default();
                text.contains("-- confirmed on a fresh database: yes")
                    || text.contains("-- confirmed on a fresh database: not replayed")
            });
        assert!(
            confirmed,
            "only unconfirmed findings failed the gate\n{out}"
        );
    }
    drop(nodes);
}
