//! Ctrl-C stops a run cleanly: the summary is printed and every finding
//! written so far stays on disk.

mod common;
use common::*;
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_prints_the_summary_and_keeps_findings() {
    let out_dir = tempfile::tempdir().unwrap();
    let child = lancet()
        .args([
            "fuzz",
            "--inject-fault",
            "drop-row",
            "--threads",
            "1",
            "--seed",
            "5",
            "--status-interval",
            "0",
            "--timeout",
            "120",
            "--out",
            out_dir.path().to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first finding on disk.
    let start = Instant::now();
    let findings = loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no finding within 60 s"
        );
        std::thread::sleep(Duration::from_millis(100));
        let Ok(mut entries) = std::fs::read_dir(out_dir.path()) else {
            continue;
        };
        let Some(Ok(run)) = entries.next() else {
            continue;
        };
        let dir = run.path().join("findings");
        if !files_with_ext(&dir, "sql").is_empty() {
            break dir;
        }
    };
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("interrupted"),
        "no summary on stdout:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("findings"), "{stdout}");
    assert_eq!(
        out.status.code(),
        Some(1),
        "findings were written: exit 1\n{stderr}"
    );
    let sqls = finding_files(&findings, "sql");
    let jsons = finding_files(&findings, "json");
    assert!(!sqls.is_empty());
    assert_eq!(sqls.len(), jsons.len(), "every finding has both files");
    for j in jsons {
        read_json(&j); // complete, parseable records: no half-written file
    }
}
