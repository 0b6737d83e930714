//! Helpers shared by the integration tests: run the real `lancet` binary.
#![allow(dead_code)]

pub mod citus_psql;
pub mod txn;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn lancet() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lancet"))
}

/// Runs lancet with `args`, returning its output; prints it on failure to help debugging.
pub fn run(args: &[&str]) -> Output {
    let out = lancet().args(args).output().expect("running lancet");
    eprintln!(
        "$ lancet {}\nstatus: {:?}\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn read_json(path: &Path) -> serde_json::Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parsing {}: {e}", path.display()))
}

/// The single run directory lancet created under `out`.
pub fn run_dir(out: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .expect("reading the output directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(
        dirs.len(),
        1,
        "expected one run directory in {}",
        out.display()
    );
    dirs.pop().unwrap()
}

/// Files in `dir` with extension `ext`, sorted.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .map(|e| e.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == ext))
            .collect(),
        Err(_) => vec![],
    };
    v.sort();
    v
}

/// A findings directory's finding files with extension `ext`: without the
/// run's index (`index.json`, `index.md`).
pub fn finding_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    files_with_ext(dir, ext)
        .into_iter()
        .filter(|p| {
            !p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("index."))
        })
        .collect()
}

/// The JSON records of kind `kind` in a findings directory, reduced ones
/// included.
pub fn records_of_kind(dir: &Path, kind: &str) -> Vec<serde_json::Value> {
    finding_files(dir, "json")
        .iter()
        .map(|f| read_json(f))
        .filter(|j| j["kind"] == kind)
        .collect()
}

/// The directory of the `duckdb` command-line shell tests/engines.sh
/// installs (`LANCET_DUCKDB_CLI`, else its cache), if it is there.
pub fn duckdb_cli_dir() -> Option<PathBuf> {
    if let Some(cli) = std::env::var_os("LANCET_DUCKDB_CLI").filter(|v| !v.is_empty()) {
        return PathBuf::from(cli).parent().map(Path::to_path_buf);
    }
    let cache = match std::env::var_os("LANCET_CACHE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None if std::env::var("USER").as_deref() == Ok("root") || Path::new("/root").exists() => {
            PathBuf::from("/var/cache/lancet")
        }
        None => PathBuf::from(std::env::var_os("HOME")?).join(".cache/lancet"),
    };
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&cache)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("duckdb-cli-"))
                && p.join("bin/duckdb").is_file()
        })
        .collect();
    dirs.sort();
    dirs.pop().map(|d| d.join("bin"))
}

/// The sqlite3 command-line shell, if installed.
pub fn sqlite3_cli() -> Option<PathBuf> {
    let out = Command::new("sqlite3").arg("--version").output().ok()?;
    out.status.success().then(|| PathBuf::from("sqlite3"))
}

/// Runs `lancet fuzz ARGS --status-interval 0 --out OUT`.
pub fn fuzz_into(out: &Path, args: &[&str]) -> Output {
    let mut all = vec!["fuzz"];
    all.extend_from_slice(args);
    all.extend_from_slice(&[
        "--status-interval",
        "0",
        "--out",
        out.to_str().expect("UTF-8 path"),
    ]);
    run(&all)
}

/// `fuzz_into` with TLP WHERE and the planted `drop-row` fault, one
/// thread, seed 11, 2,000 checks (it finds at once), and `extra` first
/// (`--sqlite-lib PATH`, `--no-reduce`): the planted-fault finding that
/// several tests start from.
pub fn fuzz_planted_drop_row(out: &Path, extra: &[&str]) -> Output {
    let mut args = extra.to_vec();
    args.extend_from_slice(&[
        "--oracle",
        "tlp-where",
        "--inject-fault",
        "drop-row",
        "--threads",
        "1",
        "--seed",
        "11",
        "--queries",
        "2000",
    ]);
    fuzz_into(out, &args)
}

/// Starts `lancet fuzz --status-interval 0 --out OUT ARGS` with its
/// output piped, for tests that signal it.
pub fn spawn_fuzz(out: &Path, extra: &[&str]) -> std::process::Child {
    let mut args = vec![
        "fuzz",
        "--status-interval",
        "0",
        "--out",
        out.to_str().expect("UTF-8 path"),
    ];
    args.extend_from_slice(extra);
    lancet()
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting lancet")
}

/// Sends `kill -SIG` to a process that may have ended meanwhile; whether
/// it got the signal.
pub fn try_signal(pid: u32, sig: &str) -> bool {
    Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Sends `kill -SIG` to a process.
pub fn signal(pid: u32, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig} {pid}");
}

/// Waits for `child` at most `limit`; kills it and fails past that. A
/// test must never hang.
pub fn wait_within(mut child: std::process::Child, limit: std::time::Duration) -> Output {
    let start = std::time::Instant::now();
    while child.try_wait().expect("waiting for lancet").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("lancet's output");
            panic!(
                "lancet did not end within {limit:?}:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("lancet's output");
    eprintln!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Every file below `dir` whose name ends in `suffix`.
pub fn files_below(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for p in entries.map(|e| e.expect("directory entry").path()) {
        if p.is_dir() {
            found.extend(files_below(&p, suffix));
        } else if p.to_string_lossy().ends_with(suffix) {
            found.push(p);
        }
    }
    found
}

/// Runs `lancet selftest` on a server and asserts that each of `oracles`
/// caught its planted fault; returns what it printed.
pub fn selftest_catches(dbms: &str, url: &str, out: &Path, oracles: &[&str]) -> String {
    let output = run(&[
        "selftest",
        "--dbms",
        dbms,
        "--url",
        url,
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    for name in oracles {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{stdout}"));
        assert!(line.split_whitespace().nth(2) == Some("yes"), "{line}");
    }
    stdout
}

/// Runs `fuzz` with seed 4242, 40 checks per database and statement logs,
/// plus `extra`; returns the run's statement log directory.
pub fn fuzz_logged(out: &Path, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "fuzz",
        "--seed",
        "4242",
        "--checks-per-database",
        "40",
        "--log-statements",
        "--status-interval",
        "0",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run(&args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    run_dir(out).join("statements")
}

/// The processes whose parent is `parent` and whose command line has
/// `needle`.
pub fn child_processes(parent: u32, needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The parent pid is the second field after the command in parentheses.
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            let ppid = after
                .split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u32>().ok());
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            ppid == Some(parent) && String::from_utf8_lossy(&cmdline).contains(needle)
        })
        .collect()
}
