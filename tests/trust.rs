//! lancet's promises on a real PostgreSQL, each a fault that once broke it:
//! it drops only what it created, every end is a summary within a bound, a
//! hang is a finding, transient conditions are waited out, runs never
//! collide, and no password is ever shown. Each test has its own
//! throwaway server (lancet-testkit), stopped even when the test fails.
//!
//! Over 600 lines on purpose: every promise of issue "Trust" that needs a
//! real server is here, sharing the server and signal helpers; split by
//! promise, each file would repeat them.

mod common;
use common::*;
use lancet_testkit::{PgServer, ServerOptions};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn server_with(options: ServerOptions) -> PgServer {
    PgServer::start_with(options)
        .expect("starting a throwaway PostgreSQL (tests/run.sh installs it)")
}

fn server() -> PgServer {
    server_with(ServerOptions::default())
}

/// Starts `lancet fuzz` on `url` into `out`, with `extra` arguments.
fn spawn_fuzz(url: &str, out: &Path, extra: &[&str], env: &[(&str, &str)]) -> Child {
    lancet()
        .args(["fuzz", "--dbms", "postgres", "--url", url, "--out"])
        .arg(out)
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting lancet")
}

/// Polls `f` until it gives a value, for at most `limit`.
fn eventually<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(start.elapsed() < limit, "{what} within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A backend stopped with SIGSTOP, continued when dropped (also when the
/// test fails), so that the server can shut down.
struct Stopped(u32);

impl Stopped {
    /// Stops a backend in the middle of a statement (one idle at that
    /// moment may have finished its database and never be used again).
    fn busy_lancet_backend(pg: &PgServer) -> Stopped {
        let pid = eventually(Duration::from_secs(30), "a busy lancet backend", || {
            pg.busy_backends("lancet", "lancet_").ok()?.first().copied()
        });
        signal(pid, "STOP");
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-CONT", &self.0.to_string()])
            .status();
    }
}

/// Asserts that the server's `lancet_` databases come to be `expected`. A
/// drop lancet sent just before it exited (a loaded machine) may still be
/// finishing on the server, so it gets a few seconds.
fn settles_to(pg: &PgServer, expected: &[&str]) {
    let start = Instant::now();
    loop {
        let now = pg.databases("lancet_").unwrap();
        if now.iter().map(String::as_str).eq(expected.iter().copied()) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "lancet databases on the server: {now:?}, expected {expected:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn summary_of(out: &Path) -> serde_json::Value {
    read_json(&run_dir(out).join("summary.json"))
}

/// The kinds of a run's findings, leaving out confirmed logic findings:
/// real bugs of this PostgreSQL that a random seed may meet (such as the
/// MAX over a partitioned table with a DEFAULT partition that returns NULL
/// in 15.18, found here), which say nothing about how an outage was met.
fn kinds_of_findings(dir: &Path) -> Vec<String> {
    finding_files(&dir.join("findings"), "json")
        .iter()
        .map(|f| read_json(f))
        .filter(|f| !(f["kind"] == "logic" && f["confirmed"] == true))
        .map(|f| f["kind"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_foreign_database_with_the_very_name_lancet_uses_survives() {
    let pg = server();
    let token = "abcdef012345";
    let name = format!("lancet_{token}w_0_0");
    pg.psql("postgres", "CREATE ROLE other LOGIN CREATEDB")
        .unwrap();
    pg.psql(
        "postgres",
        &format!("CREATE DATABASE \"{name}\" OWNER other"),
    )
    .unwrap();
    pg.psql(
        &name,
        "CREATE TABLE precious (x int); INSERT INTO precious VALUES (42)",
    )
    .unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let child = spawn_fuzz(
        &pg.url(),
        out_dir.path(),
        &[
            "--seed",
            "4242",
            "--threads",
            "1",
            "--timeout",
            "8",
            "--status-interval",
            "0",
        ],
        &[("LANCET_TEST_RUN_TOKEN", token)],
    );
    let out = wait_within(child, Duration::from_secs(60));
    assert!(matches!(out.status.code(), Some(0 | 1)));
    assert!(String::from_utf8_lossy(&out.stdout).contains("lancet run"));
    assert_eq!(pg.psql(&name, "SELECT x FROM precious").unwrap(), "42");
    assert_eq!(
        pg.psql(
            "postgres",
            &format!("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = '{name}'")
        )
        .unwrap(),
        "other"
    );
    // lancet went on under another name, and dropped all of its own.
    assert!(summary_of(out_dir.path())["checks"].as_u64().unwrap() > 0);
    settles_to(&pg, &[&name]);
}

#[test]
fn a_createdb_role_with_autovacuum_and_a_parked_superuser_runs_3_minutes() {
    let pg = server_with(
        ServerOptions::default()
            .setting("autovacuum_naptime", "1s")
            .setting("autovacuum_vacuum_threshold", "5")
            .setting("autovacuum_analyze_threshold", "5")
            .setting("autovacuum_vacuum_scale_factor", "0")
            .setting("autovacuum_analyze_scale_factor", "0"),
    );
    pg.psql("postgres", "CREATE ROLE maker LOGIN CREATEDB")
        .unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let child = spawn_fuzz(
        &pg.url_for("maker", "postgres"),
        out_dir.path(),
        &[
            "--threads",
            "2",
            "--checks-per-database",
            "50",
            "--timeout",
            "180",
            "--status-interval",
            "30",
        ],
        &[],
    );
    // A superuser session parks in lancet's current database: a
    // CREATEDB-only role may not end it, so that database cannot be dropped.
    // (Databases come and go quickly: a park that reached a database lancet
    // was just dropping ends at once, and the next database is tried.)
    let (parked_in, mut parked) = eventually(Duration::from_secs(60), "a parked session", || {
        let database = pg.databases("lancet_").ok()?.into_iter().next()?;
        let mut parked = pg.park(&database, 600).ok()?;
        std::thread::sleep(Duration::from_secs(2));
        parked.is_running().then_some((database, parked))
    });
    let out = wait_within(child, Duration::from_secs(230));
    assert!(parked.is_running(), "the parked session ended early");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stdout}");
    assert!(stdout.contains("timeout reached"), "{stdout}");
    let summary = summary_of(out_dir.path());
    assert!(summary["databases"].as_u64().unwrap() > 10, "{summary}");
    let left: Vec<&str> = summary["leftover_databases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert!(left.contains(&parked_in.as_str()), "{left:?}");
    assert!(
        stdout.contains(&parked_in),
        "the summary names it:\n{stdout}"
    );
    // Once the session leaves, `lancet cleanup` drops it.
    drop(parked);
    pg.psql(
        "postgres",
        &format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{parked_in}'"
        ),
    )
    .unwrap();
    let out = run(&[
        "cleanup",
        "--url",
        &pg.url_for("maker", "postgres"),
        "--out",
        out_dir.path().to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    settles_to(&pg, &[]);
}

#[test]
fn a_stopped_backend_is_a_hang_finding_the_run_goes_on_and_signals_end_it() {
    let pg = server();
    for sig in ["INT", "TERM"] {
        let out_dir = tempfile::tempdir().unwrap();
        let child = spawn_fuzz(
            &pg.url(),
            out_dir.path(),
            &[
                "--threads",
                "1",
                "--timeout",
                "120",
                "--checks-per-database",
                "40",
                "--status-interval",
                "0",
                "--no-reduce",
            ],
            &[],
        );
        let mut stopped = Stopped::busy_lancet_backend(&pg);
        if sig == "INT" {
            // The hang is found, and the run goes on with new databases.
            let run = eventually(Duration::from_secs(30), "the run directory", || {
                std::fs::read_dir(out_dir.path())
                    .ok()?
                    .next()
                    .map(|e| e.unwrap().path())
            });
            // A statement may end between the look at pg_stat_activity and
            // the SIGSTOP, and be its database's last: then the backend is
            // continued and another one stopped.
            let mut attempts = 0;
            eventually(Duration::from_secs(90), "a hang finding", || {
                let hang_at = Instant::now() + Duration::from_secs(25);
                while Instant::now() < hang_at {
                    if kinds_of_findings(&run).contains(&"hang".to_string()) {
                        return Some(());
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                attempts += 1;
                assert!(
                    attempts < 3,
                    "no hang finding after {attempts} stopped backends"
                );
                stopped = Stopped::busy_lancet_backend(&pg);
                None
            });
            std::thread::sleep(Duration::from_secs(6));
        } else {
            // Mid-statement: the signal comes before the hang is detected.
            std::thread::sleep(Duration::from_secs(2));
        }
        let at = Instant::now();
        signal(child.id(), sig);
        let out = wait_within(child, Duration::from_secs(20));
        let took = at.elapsed();
        assert!(took < Duration::from_secs(15), "SIG{sig}: {took:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("interrupted after"), "SIG{sig}: {stdout}");
        let summary = summary_of(out_dir.path());
        if sig == "INT" {
            assert_eq!(out.status.code(), Some(1));
            assert!(summary["databases"].as_u64().unwrap() >= 3, "{summary}");
            let run = run_dir(out_dir.path());
            assert_eq!(kinds_of_findings(&run), vec!["hang"]);
        }
        drop(stopped);
    }
}

#[test]
fn no_free_connection_slots_and_a_stopped_server_are_waited_out() {
    let pg = server();
    // lancet's role, whose connection limit the test lowers to nothing for
    // 10 s: every new connection then fails with 53300, as when another
    // client holds the server's free slots (deterministically: a freed slot
    // cannot go back to lancet first).
    pg.psql("postgres", "CREATE ROLE maker LOGIN CREATEDB")
        .unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let child = spawn_fuzz(
        &pg.url_for("maker", "postgres"),
        out_dir.path(),
        &[
            "--threads",
            "1",
            "--timeout",
            "30",
            "--checks-per-database",
            "20",
            "--status-interval",
            "0",
        ],
        &[],
    );
    std::thread::sleep(Duration::from_secs(4));
    pg.psql("postgres", "ALTER ROLE maker CONNECTION LIMIT 0")
        .unwrap();
    std::thread::sleep(Duration::from_secs(10));
    pg.psql("postgres", "ALTER ROLE maker CONNECTION LIMIT -1")
        .unwrap();
    let out = wait_within(child, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("timeout reached"), "{stdout}");
    assert!(stderr.contains("waiting for the DBMS"), "{stderr}");
    assert!(!stdout.contains("FAILED"), "{stdout}");
    assert!(kinds_of_findings(&run_dir(out_dir.path())).is_empty());

    // The server stopped for 10 s: a statement cut off may be a crash
    // finding; the run waits and goes on to its timeout.
    let out_dir = tempfile::tempdir().unwrap();
    let child = spawn_fuzz(
        &pg.url(),
        out_dir.path(),
        &[
            "--threads",
            "2",
            "--timeout",
            "35",
            "--status-interval",
            "0",
            "--no-reduce",
        ],
        &[],
    );
    std::thread::sleep(Duration::from_secs(5));
    pg.stop().unwrap();
    std::thread::sleep(Duration::from_secs(10));
    pg.start_again().unwrap();
    let restarted = Instant::now();
    let out = wait_within(child, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stdout}");
    assert!(stdout.contains("timeout reached"), "{stdout}");
    assert!(!stdout.contains("FAILED"), "{stdout}");
    assert!(restarted.elapsed() > Duration::from_secs(5));
    for kind in kinds_of_findings(&run_dir(out_dir.path())) {
        assert_eq!(kind, "crash", "only a cut-off statement may be a finding");
    }
    settles_to(&pg, &[]);
}

#[test]
fn two_runs_with_one_seed_in_one_second_on_one_server_keep_apart() {
    let pg = server();
    let out_dir = tempfile::tempdir().unwrap();
    let args = [
        "--seed",
        "99",
        "--threads",
        "1",
        "--timeout",
        "10",
        "--status-interval",
        "0",
    ];
    let a = spawn_fuzz(&pg.url(), out_dir.path(), &args, &[]);
    let b = spawn_fuzz(&pg.url(), out_dir.path(), &args, &[]);
    let (a, b) = (
        wait_within(a, Duration::from_secs(60)),
        wait_within(b, Duration::from_secs(60)),
    );
    assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)));
    let runs: Vec<PathBuf> = std::fs::read_dir(out_dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 2);
    for run in runs {
        let summary = read_json(&run.join("summary.json"));
        assert_eq!(summary["findings"], 0, "a false crash? {summary}");
        assert!(summary["checks"].as_u64().unwrap() > 0);
    }
    settles_to(&pg, &[]);
}

#[test]
fn two_replays_in_separate_pid_namespaces_do_not_collide() {
    let probe = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        eprintln!("skipped: unshare --pid is not permitted here, so PID namespaces cannot be made");
        return;
    }
    let pg = server();
    let out_dir = tempfile::tempdir().unwrap();
    let child = spawn_fuzz(
        &pg.url(),
        out_dir.path(),
        &[
            "--oracle",
            "norec",
            "--inject-fault",
            "miscount",
            "--threads",
            "1",
            "--seed",
            "1",
            "--queries",
            "100",
            "--no-reduce",
            "--status-interval",
            "0",
        ],
        &[],
    );
    let out = wait_within(child, Duration::from_secs(120));
    assert_eq!(
        out.status.code(),
        Some(1),
        "the planted fault must be found"
    );
    let file = finding_files(&run_dir(out_dir.path()).join("findings"), "sql")
        .into_iter()
        .next()
        .unwrap();
    let replay = || {
        Command::new("unshare")
            .args(["--pid", "--fork", "--mount-proc"])
            .arg(env!("CARGO_BIN_EXE_lancet"))
            .args(["replay", "--url", &pg.url()])
            .arg(&file)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (replay(), replay());
    for out in [
        wait_within(a, Duration::from_secs(60)),
        wait_within(b, Duration::from_secs(60)),
    ] {
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        assert!(stdout.contains("still fails"), "{stdout}");
    }
    settles_to(&pg, &[]);
}

#[test]
fn sigterm_leaves_no_database_and_cleanup_drops_a_killed_runs_only() {
    let pg = server();
    let out_dir = tempfile::tempdir().unwrap();
    let two_threads = [
        "--threads",
        "2",
        "--timeout",
        "120",
        "--status-interval",
        "0",
    ];
    let child = spawn_fuzz(&pg.url(), out_dir.path(), &two_threads, &[]);
    eventually(Duration::from_secs(30), "lancet databases", || {
        (pg.databases("lancet_").ok()?.len() >= 2).then_some(())
    });
    std::thread::sleep(Duration::from_secs(2));
    signal(child.id(), "TERM");
    let out = wait_within(child, Duration::from_secs(20));
    assert!(String::from_utf8_lossy(&out.stdout).contains("interrupted after"));
    settles_to(&pg, &[]);

    // A kill -9 leaves databases; cleanup drops those and nothing else.
    pg.psql("postgres", "CREATE ROLE other LOGIN").unwrap();
    pg.psql("postgres", "CREATE DATABASE keepme").unwrap();
    pg.psql("postgres", "CREATE DATABASE lancet_foreign OWNER other")
        .unwrap();
    let killed_out = tempfile::tempdir().unwrap();
    let child = spawn_fuzz(&pg.url(), killed_out.path(), &two_threads, &[]);
    let theirs = eventually(Duration::from_secs(30), "lancet databases", || {
        let dbs: Vec<String> = pg
            .databases("lancet_")
            .ok()?
            .into_iter()
            .filter(|d| d != "lancet_foreign")
            .collect();
        (dbs.len() >= 2).then_some(dbs)
    });
    signal(child.id(), "KILL");
    let _ = wait_within(child, Duration::from_secs(10));
    // A ledger line that names the foreign database (as if a run had it):
    // its owner is another role, so cleanup must refuse it.
    let oid = pg
        .psql(
            "postgres",
            "SELECT oid FROM pg_database WHERE datname = 'lancet_foreign'",
        )
        .unwrap();
    let fake = killed_out.path().join("20260101-000000-s1-000000000000");
    std::fs::create_dir_all(&fake).unwrap();
    std::fs::write(
        fake.join("run.ledger"),
        format!(
            "{{\"event\":\"created\",\"server\":\"postgres@127.0.0.1:{}\",\"database\":{{\"name\":\"lancet_foreign\",\"identity\":\"{oid}\"}}}}\n",
            pg.port()
        ),
    )
    .unwrap();
    let out = run(&[
        "cleanup",
        "--url",
        &pg.url(),
        "--out",
        killed_out.path().to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("refused lancet_foreign"), "{stdout}");
    for db in &theirs {
        assert!(stdout.contains(&format!("dropped {db}")), "{db}: {stdout}");
    }
    let left = pg.databases("").unwrap();
    assert!(left.contains(&"keepme".to_string()) && left.contains(&"lancet_foreign".to_string()));
    settles_to(&pg, &["lancet_foreign"]);
}

#[test]
fn no_password_appears_in_any_output_or_file() {
    let secret = "S3cr3tPW-x9";
    let pg = server_with(ServerOptions::default().password(secret));
    let port = pg.port();
    let forms = [
        format!("postgres://postgres:{secret}@127.0.0.1:{port}/postgres"),
        format!("postgres://postgres@127.0.0.1:{port}/postgres?password={secret}"),
        format!("host=127.0.0.1 port={port} user=postgres password={secret} dbname=postgres"),
    ];
    for (i, url) in forms.iter().enumerate() {
        let out_dir = tempfile::tempdir().unwrap();
        // The third form comes through the environment.
        let (arg_url, env): (Option<&str>, Vec<(&str, &str)>) = if i == 2 {
            (None, vec![("LANCET_PG_URL", url.as_str())])
        } else {
            (Some(url.as_str()), vec![])
        };
        let mut cmd = lancet();
        cmd.args(["fuzz", "--dbms", "postgres", "--out"])
            .arg(out_dir.path())
            .args([
                "--threads",
                "1",
                "--timeout",
                "14",
                "--status-interval",
                "2",
            ])
            .envs(env)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(u) = arg_url {
            cmd.args(["--url", u]);
        }
        let child = cmd.spawn().unwrap();
        if i == 0 {
            // Mid-run errors name the server too: stop it for a while.
            std::thread::sleep(Duration::from_secs(3));
            pg.stop().unwrap();
            std::thread::sleep(Duration::from_secs(3));
            pg.start_again().unwrap();
        }
        let out = wait_within(child, Duration::from_secs(60));
        assert!(matches!(out.status.code(), Some(0 | 1)), "form {i}");
        let everything = format!(
            "{}{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            files_below(out_dir.path(), "")
                .iter()
                .map(
                    |f| String::from_utf8_lossy(&std::fs::read(f).unwrap_or_default()).into_owned()
                )
                .collect::<String>()
        );
        assert!(everything.contains("lancet run"), "form {i}");
        assert!(!everything.contains(secret), "form {i} shows the password");
    }
    // Wrong passwords, malformed strings: refused, and not echoed.
    for url in [
        format!("postgres://postgres:{secret}x@127.0.0.1:{port}/postgres"),
        format!("cdb:{secret}@garbage"),
        format!("host=127.0.0.1 port=notaport password={secret}"),
    ] {
        let out = run(&[
            "fuzz",
            "--dbms",
            "postgres",
            "--url",
            &url,
            "--queries",
            "1",
        ]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{}",
            stderr(&out).replace(secret, "***")
        );
        let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(
            !all.contains(secret),
            "the password is shown: {}",
            all.replace(secret, "***")
        );
    }
}

#[test]
fn a_full_disk_ends_the_run_with_a_summary() {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout == b"0\n");
    if !matches!(root, Ok(true)) {
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    }
    let mnt = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(mnt.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (no privilege in this container)");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(mnt.path().to_path_buf());
    let child = lancet()
        .args([
            "fuzz",
            "--log-statements",
            "--threads",
            "1",
            "--timeout",
            "20",
            "--status-interval",
            "0",
            "--inject-fault",
            "drop-row",
            "--out",
        ])
        .arg(mnt.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_within(child, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        stdout.contains("lancet run"),
        "no summary:\n{stdout}\n{stderr}"
    );
    assert!(matches!(out.status.code(), Some(0 | 1 | 3)), "{stderr}");
    assert!(
        stderr.contains("No space left on device"),
        "the full disk is said:\n{stderr}"
    );
}
