//! The promises lancet makes for every DBMS, each written once against a
//! [`Subject`]: a test per promise per DBMS (see `main.rs`).

use crate::common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// A DBMS under test, as the suite needs to see it: how lancet reaches
/// it, and how to look at it (and break it) from outside.
pub trait Subject {
    /// The `--dbms` name.
    fn dbms(&self) -> &'static str;
    /// The options that point lancet at it (`--url ...`, with a password
    /// where the DBMS takes one); none for an embedded engine.
    fn target(&self) -> Vec<String>;
    /// The password `target` carries, which no output or file may show.
    fn secret(&self) -> Option<&'static str> {
        None
    }
    /// Makes a database lancet did not create, with data; `foreign_intact`
    /// says whether it is still there as it was.
    fn plant_foreign(&self) {}
    fn foreign_intact(&self) -> bool {
        true
    }
    /// The databases on the server whose names look like lancet's.
    fn lancet_databases(&self) -> Vec<String> {
        Vec::new()
    }
    /// How many checks the clean run makes.
    fn clean_run_checks(&self) -> u64;
    /// `None`: a clean run must have no finding at all. `Some`: the
    /// DBMS has wrong-result bugs lancet meets, and each finding's
    /// reproducer must show its disagreement in the DBMS's own client
    /// (the argument numbers the findings, for scratch names).
    fn client_shows(&self, _reproducer: &Path, _index: usize) -> Option<bool> {
        None
    }
    /// The most checks, in percent, a clean run may skip on expected
    /// errors (a generator that floods the DBMS with statements it
    /// refuses tests nothing).
    fn max_skipped_percent(&self) -> u64 {
        15
    }
    /// Kills what runs lancet's statements (server backends or sessions;
    /// an embedded engine's worker processes) under the lancet process
    /// `lancet`; returns how many it killed.
    fn kill_sessions(&self, lancet: u32) -> usize;
    /// Stops (SIGSTOP) the processes running lancet's statements,
    /// returning their pids to continue later (none yet: try again); `Err`
    /// says why this DBMS cannot stop one session alone.
    fn stop_session(&self, lancet: u32) -> Result<Vec<u32>, &'static str>;
    /// The oracles whose planted faults `selftest` must catch here.
    fn selftest_oracles(&self) -> Vec<&'static str>;
    /// Makes a database named like lancet's that no run of lancet made,
    /// with data, and returns a check that it is intact; `Err` for a DBMS
    /// without databases on a server.
    fn plant_lookalike(&self) -> Result<Box<dyn Fn() -> bool + '_>, &'static str> {
        Err("an embedded engine's databases are its own files")
    }
    /// The environment in which the DBMS's own client reaches it as the
    /// reproducers' run line expects (`PGHOST`, `MYSQL_TCP_PORT`, an option
    /// file under `home`, the client on `PATH`); `None` if the client is
    /// not installed here.
    fn client_env(&self, home: &Path) -> Option<Vec<(String, String)>>;
    /// Whether that client is of the engine's own release (a server's),
    /// so a reproducer runs there without error; the `sqlite3` shell on
    /// `PATH` is the system's, older than the SQLite lancet bundles.
    fn client_matches_engine(&self) -> bool {
        true
    }
    /// The run line and environment under which the client says how many
    /// rows each statement returned (psql's footers as they are; MariaDB's
    /// `-vvv` through the option file; the `sqlite3` shell's timer line
    /// after every statement).
    fn counting_client(
        &self,
        home: &Path,
        run_line: &str,
    ) -> Option<(String, Vec<(String, String)>)> {
        Some((run_line.to_string(), self.client_env(home)?))
    }
    /// The row counts of the result sets in what that client printed, in
    /// order.
    fn result_counts(&self, output: &str) -> Vec<usize>;
}

fn target_args(s: &dyn Subject) -> Vec<String> {
    let mut v = vec!["--dbms".to_string(), s.dbms().to_string()];
    v.extend(s.target());
    v
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Everything a run showed or wrote: its output and every text file
/// below its output directory.
fn everything_shown(out: &std::process::Output, dir: &Path) -> String {
    let mut text = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(out));
    for ext in [".sql", ".json", ".md", ".jsonl", ".ledger", ".xml", ".txt"] {
        for f in files_below(dir, ext) {
            text.push_str(&std::fs::read_to_string(f).unwrap_or_default());
        }
    }
    text
}

fn assert_no_secret(s: &dyn Subject, text: &str) {
    if let Some(secret) = s.secret() {
        assert!(!text.contains(secret), "the password was shown");
    }
}

fn assert_nothing_left(s: &dyn Subject) {
    assert_eq!(
        s.lancet_databases(),
        Vec::<String>::new(),
        "lancet left databases behind"
    );
}

/// A run of every oracle: only findings the DBMS's own client shows (none
/// on a DBMS without known bugs), few checks skipped, a database lancet
/// did not create untouched, none of its own left, no password shown.
pub fn clean_run(s: &dyn Subject) {
    s.plant_foreign();
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.json");
    let checks = s.clean_run_checks().to_string();
    let mut args = target_args(s);
    args.extend(
        [
            "--oracle",
            "all",
            "--threads",
            "2",
            "--seed",
            "1",
            "--queries",
            &checks,
            "--no-reduce",
            "--summary-json",
        ]
        .map(String::from),
    );
    args.push(summary.display().to_string());
    let out = fuzz_into(dir.path(), &strs(&args));
    let sum = read_json(&summary);
    assert!(
        sum["checks"].as_u64().unwrap() >= s.clean_run_checks(),
        "{sum}"
    );
    let skipped = sum["skipped_checks"].as_u64().unwrap();
    assert!(
        skipped * 100 <= sum["checks"].as_u64().unwrap() * s.max_skipped_percent(),
        "{skipped} checks skipped: {sum}"
    );
    let findings: Vec<_> = finding_files(&run_dir(dir.path()).join("findings"), "sql")
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("reduced"))
        .collect();
    assert_eq!(
        sum["findings"].as_u64().unwrap() as usize,
        findings.len(),
        "{sum}"
    );
    for (i, f) in findings.iter().enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        match s.client_shows(f, i) {
            None => panic!("a finding on a correct {}:\n{text}", s.dbms()),
            Some(shown) => assert!(shown, "the client does not show this finding:\n{text}"),
        }
    }
    let expected = if findings.is_empty() { 0 } else { 1 };
    assert_eq!(out.status.code(), Some(expected), "{}", stderr(&out));
    assert!(
        s.foreign_intact(),
        "a database lancet did not create changed"
    );
    assert_nothing_left(s);
    assert_no_secret(s, &everything_shown(&out, dir.path()));
}

/// Starts a one-thread TLP run for `seconds` that keeps one database.
fn spawn_long_run(s: &dyn Subject, out: &Path, seconds: u32) -> std::process::Child {
    let mut args = target_args(s);
    args.extend(
        [
            "--oracle",
            "tlp-where",
            "--threads",
            "1",
            "--seed",
            "3",
            "--checks-per-database",
            "100000",
            "--no-reduce",
            "--timeout",
        ]
        .map(String::from),
    );
    args.push(seconds.to_string());
    args.push("--summary-json".into());
    args.push(out.join("summary.json").display().to_string());
    spawn_fuzz(out, &strs(&args))
}

/// The findings of kind `kind` on disk under `out`.
fn findings_of_kind(out: &Path, kind: &str) -> Vec<serde_json::Value> {
    files_below(out, ".json")
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("findings")))
        .map(|p| read_json(&p))
        .filter(|j| j["kind"] == kind)
        .collect()
}

/// A session killed under lancet is a crash finding with its setup, and
/// the run goes on with new databases.
pub fn killed_session_is_a_crash_finding(s: &dyn Subject) {
    // An engine's worker process killed outside the engine is lancet's
    // loss, not the DBMS's crash: the worker goes on in a new process, and
    // stops after 3 such losses in a row (lancet failing there). On a
    // loaded machine kills can land outside the engine that often; such a
    // run proves nothing either way and is tried again.
    for attempt in 1..=3 {
        let dir = tempfile::tempdir().unwrap();
        let child = spawn_long_run(s, dir.path(), 25);
        let start = Instant::now();
        let mut killed = 0;
        // Until a crash is on disk.
        while start.elapsed() < Duration::from_secs(20)
            && findings_of_kind(dir.path(), "crash").is_empty()
        {
            std::thread::sleep(Duration::from_millis(500));
            killed += s.kill_sessions(child.id());
        }
        assert!(killed > 0, "no lancet session to kill");
        let out = wait_within(child, Duration::from_secs(90));
        let all_outside = out.status.code() == Some(3)
            && String::from_utf8_lossy(&out.stdout).contains("died outside the DBMS")
            && findings_of_kind(dir.path(), "crash").is_empty();
        if all_outside && attempt < 3 {
            eprintln!("attempt {attempt}: every kill landed outside the engine; again");
            continue;
        }
        return assert_killed_run(s, dir.path(), out);
    }
}

/// What [`killed_session_is_a_crash_finding`] requires of its run.
fn assert_killed_run(s: &dyn Subject, dir: &Path, out: std::process::Output) {
    assert_eq!(
        out.status.code(),
        Some(1),
        "a crash is a finding: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    let crashes = findings_of_kind(dir, "crash");
    assert!(!crashes.is_empty(), "a crash finding on disk");
    assert!(!crashes[0]["setup"].as_array().unwrap().is_empty());
    let sum = read_json(&dir.join("summary.json"));
    assert!(
        sum["databases"].as_u64().unwrap() >= 2,
        "the run went on: {sum}"
    );
    assert_nothing_left(s);
}

/// A session stopped inside a statement is a hang finding within the
/// statement bound, and the run goes on.
pub fn stopped_session_is_a_hang_finding(s: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn_long_run(s, dir.path(), 40);
    let start = Instant::now();
    let mut stopped = Vec::new();
    while start.elapsed() < Duration::from_secs(15) && stopped.is_empty() {
        std::thread::sleep(Duration::from_millis(300));
        match s.stop_session(child.id()) {
            Ok(pids) => stopped = pids,
            Err(why) => {
                eprintln!("SKIPPED for {}: {why}", s.dbms());
                let _ = wait_within(child, Duration::from_secs(90));
                return;
            }
        }
    }
    assert!(!stopped.is_empty(), "no lancet session to stop");
    // The bound: the statement limit, the cancel and the grace (about 9 s
    // on a server), with room for a loaded machine.
    let found = Instant::now();
    while findings_of_kind(dir.path(), "hang").is_empty()
        && found.elapsed() < Duration::from_secs(25)
    {
        std::thread::sleep(Duration::from_millis(200));
    }
    let took = found.elapsed();
    for pid in stopped {
        try_signal(pid, "CONT");
    }
    assert!(
        took < Duration::from_secs(25),
        "no hang finding within 25 s"
    );
    let out = wait_within(child, Duration::from_secs(90));
    assert_eq!(out.status.code(), Some(1), "a hang is a finding");
    let sum = read_json(&dir.path().join("summary.json"));
    assert!(
        sum["databases"].as_u64().unwrap() >= 2,
        "the run went on: {sum}"
    );
    assert_nothing_left(s);
}

/// `selftest` catches every oracle's planted fault and leaves nothing.
pub fn selftest_catches_every_planted_fault(s: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["selftest".to_string()];
    args.extend(target_args(s));
    args.extend(["--out".to_string(), dir.path().display().to_string()]);
    let out = run(&strs(&args));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for name in s.selftest_oracles() {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{stdout}"));
        assert_eq!(line.split_whitespace().nth(2), Some("yes"), "{line}");
    }
    assert_nothing_left(s);
    assert_no_secret(s, &everything_shown(&out, dir.path()));
}

/// One seed regenerates the same databases: two runs log the same
/// statements, database by database.
pub fn one_seed_regenerates_the_same_databases(s: &dyn Subject) {
    let logs = |dir: &Path| {
        let mut extra = target_args(s);
        extra.extend(["--threads", "1", "--queries", "120"].map(String::from));
        fuzz_logged(dir, &strs(&extra))
    };
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (logs_a, logs_b) = (logs(a.path()), logs(b.path()));
    let files = files_with_ext(&logs_a, "sql");
    assert!(files.len() >= 2, "several databases: {}", files.len());
    for f in files {
        let name = f.file_name().unwrap();
        // Error messages in the log name the run's own database
        // (`lancet_<token>w_0_0`), which is new in every run; and a
        // distributed engine reports whichever shard failed first, so
        // only the code of an error is the same in both runs.
        let read = |p: &Path| {
            let text = std::fs::read_to_string(p).unwrap_or_default();
            errors_by_code(&without_database_names(&text))
        };
        assert_eq!(read(&f), read(&logs_b.join(name)), "{name:?} differs");
    }
    assert_nothing_left(s);
}

/// `text` with each logged error (`-- error: [CODE] message`) cut to its
/// code: Citus names the value of the shard that failed first (22P02 for
/// `-123` in one run, `123` in the next), which is not the statement's.
fn errors_by_code(text: &str) -> String {
    text.lines()
        .map(|line| match line.strip_prefix("-- error: [") {
            Some(rest) => match rest.find(']') {
                Some(end) => format!("-- error: [{}]", &rest[..end]),
                None => line.to_string(),
            },
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with each name of a database lancet made (`lancet_` and a run's
/// token) replaced by `lancet_DB`.
fn without_database_names(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("lancet_") {
        out.push_str(&rest[..i]);
        let after = &rest[i + "lancet_".len()..];
        let token = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..token];
        if name.contains('w') && name.chars().take(12).all(|c| c.is_ascii_hexdigit()) {
            out.push_str("lancet_DB");
        } else {
            out.push_str("lancet_");
            out.push_str(name);
        }
        rest = &after[token..];
    }
    out.push_str(rest);
    out
}

/// `cleanup` after a run drops nothing it did not create: a database
/// named like lancet's, made by someone else, stays with its data.
pub fn cleanup_drops_only_its_own(s: &dyn Subject) {
    let intact = match s.plant_lookalike() {
        Ok(check) => check,
        Err(why) => {
            eprintln!("SKIPPED for {}: {why}", s.dbms());
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let mut args = target_args(s);
    args.extend(["--threads", "1", "--queries", "100", "--seed", "5"].map(String::from));
    let out = fuzz_into(dir.path(), &strs(&args));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let mut args = vec!["cleanup".to_string()];
    args.extend(target_args(s));
    args.extend(["--out".to_string(), dir.path().display().to_string()]);
    let out = run(&strs(&args));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(intact(), "cleanup touched a database it did not create");
    assert_no_secret(s, &everything_shown(&out, dir.path()));
}

/// Every expected error the provider uses (its built-in rules, a
/// flavor's included, as it loads them) names the statement kinds it is
/// expected of, the DBMS's error code and why: none is expected of every
/// statement, and none is told by a message alone.
pub fn expected_errors_are_keyed_by_statement_kind(s: &dyn Subject) {
    let target = s.target();
    let url = target
        .iter()
        .position(|a| a == "--url")
        .and_then(|i| target.get(i + 1))
        .cloned();
    let provider = lancet::registry::provider(
        s.dbms(),
        &lancet::registry::ProviderOptions {
            url,
            ..Default::default()
        },
    )
    .expect("the provider opens");
    let rules = &provider.expected_errors().rules;
    assert!(!rules.is_empty(), "{} has no expected error", s.dbms());
    for r in rules {
        assert!(
            !r.statements.is_empty(),
            "{} is expected of every statement",
            r.code
        );
        assert!(!r.code.trim().is_empty(), "a rule without a code");
        assert!(!r.why.trim().is_empty(), "{} does not say why", r.code);
    }
}

/// A reproducer's run line (`-- run:`) works as written, twice in a row,
/// with the DBMS's own client taking the server from its usual
/// environment: it makes its own scratch database and drops it first, and
/// asks for no password the client's settings give.
///
/// The same reproducer's header counts rows as the client shows them
/// ([`header_counts_are_the_clients`]).
pub fn the_run_line_runs_twice(s: &dyn Subject) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let Some(env) = s.client_env(home.path()) else {
        eprintln!("SKIPPED for {}: its client is not installed here", s.dbms());
        return;
    };
    let (findings, sql) = planted_finding(s, dir.path());
    header_counts_are_the_clients(s, &findings, &sql);
    let line = run_line(&sql);
    assert!(
        !line.contains("127.0.0.1"),
        "the run line names the tester's server: {line}"
    );
    let run_it = || {
        let out = std::process::Command::new("sh")
            .args(["-c", &line])
            .current_dir(&findings)
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success() || !s.client_matches_engine(),
            "{line}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let first = run_it();
    assert_eq!(
        run_it(),
        first,
        "the second run shows something else: {line}"
    );
}

/// A finding of TLP WHERE under the planted fault `drop-row`, unreduced:
/// the findings directory and its first reproducer.
fn planted_finding(s: &dyn Subject, dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let mut args = target_args(s);
    args.extend(
        [
            "--oracle",
            "tlp-where",
            "--inject-fault",
            "drop-row",
            "--threads",
            "1",
            "--seed",
            "3",
            "--queries",
            "400",
            "--no-reduce",
        ]
        .map(String::from),
    );
    let out = fuzz_into(dir, &strs(&args));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let findings = run_dir(dir).join("findings");
    let sql = finding_files(&findings, "sql")
        .into_iter()
        .next()
        .expect("a finding");
    (findings, sql)
}

/// A reproducer's run line (`-- run:`).
fn run_line(sql: &Path) -> String {
    std::fs::read_to_string(sql)
        .unwrap()
        .lines()
        .find_map(|l| l.split_once(" run: ").map(|(_, r)| r.to_string()))
        .expect("a run line")
}

/// The row counts a reproducer's header gives are what the DBMS's own
/// client shows when the reproducer runs: counted from the rows compared,
/// not from the results before normalisation. The one query the planted
/// fault hit is off by the row it dropped, and by nothing else.
fn header_counts_are_the_clients(s: &dyn Subject, findings: &Path, sql: &Path) {
    let home = tempfile::tempdir().unwrap();
    let Some((line, env)) = s.counting_client(home.path(), &run_line(sql)) else {
        return;
    };
    let record = read_json(&sql.with_extension("json"));
    let header: Vec<usize> = record["queries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|q| q["row_count"].as_u64())
        .map(|n| n as usize)
        .collect();
    let out = std::process::Command::new("sh")
        .args(["-c", &line])
        .current_dir(findings)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    let counts = s.result_counts(&printed);
    assert!(
        counts.len() >= header.len(),
        "{line}: {} result sets for {} queries\n{printed}",
        counts.len(),
        header.len()
    );
    let client = &counts[counts.len() - header.len()..];
    let off: Vec<(usize, usize)> = header
        .iter()
        .zip(client)
        .filter(|(h, c)| h != c)
        .map(|(h, c)| (*h, *c))
        .collect();
    assert!(
        off.len() == 1 && off[0].1 == off[0].0 + 1,
        "header {header:?}, client {client:?}: only the query the fault hit may differ, by one row"
    );
}
