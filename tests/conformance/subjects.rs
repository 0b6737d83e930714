//! The DBMSs the conformance suite runs on, each a [`Subject`]: the
//! embedded SQLite and DuckDB, a throwaway PostgreSQL, MariaDB and Citus
//! cluster (lancet-testkit starts and stops them).

use crate::common::*;
use crate::promises::Subject;
use lancet_testkit::{CitusCluster, MariaDbServer, PgServer};
use std::path::Path;
use std::process::{Command, Stdio};

mod duckdb;
pub use duckdb::DuckDb;

/// A database lancet did not create, named like its own, on any server.
const LOOKALIKE: &str = "lancet_abcdef012345w_0_0";

/// The five TLP oracles and NoREC, which every DBMS runs, and `more`.
fn with_tlp_and_norec(more: &[&'static str]) -> Vec<&'static str> {
    let mut all = vec![
        "tlp-where",
        "tlp-distinct",
        "tlp-group-by",
        "tlp-having",
        "tlp-aggregate",
        "norec",
    ];
    all.extend_from_slice(more);
    all
}

/// Where psql finds a throwaway PostgreSQL: its own environment.
fn pg_client_env(pg: &PgServer) -> Vec<(String, String)> {
    let path = std::env::var("PATH").unwrap_or_default();
    vec![
        ("PATH".into(), format!("{}:{path}", pg.bindir().display())),
        ("PGHOST".into(), "127.0.0.1".into()),
        ("PGPORT".into(), pg.port().to_string()),
        ("PGUSER".into(), "postgres".into()),
    ]
}

/// Row counts from a shell that prints a timer line (`Run Time`) after
/// every statement, its rows before it: the lines `is_row` accepts.
fn timer_delimited_counts(output: &str, is_row: impl Fn(&str) -> bool) -> Vec<usize> {
    let mut counts = Vec::new();
    let mut rows = 0;
    for line in output.lines() {
        if line.starts_with("Run Time") {
            counts.push(rows);
            rows = 0;
        } else if is_row(line) {
            rows += 1;
        }
    }
    counts
}

/// The row counts of psql's footers (`(3 rows)`, `(1 row)`), in order.
fn psql_footers(output: &str) -> Vec<usize> {
    output
        .lines()
        .filter_map(|l| {
            let inner = l.strip_prefix('(')?.strip_suffix(')')?;
            let (n, word) = inner.split_once(' ')?;
            matches!(word, "row" | "rows").then(|| n.parse().ok())?
        })
        .collect()
}

/// SQLite, embedded: its databases run in worker processes.
pub struct Sqlite;

impl Subject for Sqlite {
    fn dbms(&self) -> &'static str {
        "sqlite"
    }
    fn target(&self) -> Vec<String> {
        Vec::new()
    }
    fn clean_run_checks(&self) -> u64 {
        20_000
    }
    fn max_skipped_percent(&self) -> u64 {
        5
    }
    fn kill_sessions(&self, lancet: u32) -> usize {
        child_processes(lancet, "__database-runner")
            .into_iter()
            .filter(|&pid| try_signal(pid, "KILL"))
            .count()
    }
    fn stop_session(&self, _lancet: u32) -> Result<Vec<u32>, &'static str> {
        Err(
            "a stopped worker process is stopped outside the engine as often as inside it; \
             hangs inside SQLite are tested with a library that hangs (tests/crash_isolation.rs)",
        )
    }
    fn selftest_oracles(&self) -> Vec<&'static str> {
        with_tlp_and_norec(&["pqs", "knobs", "perf", "transform", "stepwise", "eet"])
    }
    fn client_env(&self, _home: &Path) -> Option<Vec<(String, String)>> {
        sqlite3_cli().map(|_| Vec::new())
    }
    fn client_matches_engine(&self) -> bool {
        false
    }
    fn counting_client(
        &self,
        home: &Path,
        run_line: &str,
    ) -> Option<(String, Vec<(String, String)>)> {
        // The shell reads no .sqliterc when its input is a file.
        let line = run_line.replacen("sqlite3 ", "sqlite3 -cmd '.timer on' ", 1);
        Some((line, self.client_env(home)?))
    }
    fn result_counts(&self, output: &str) -> Vec<usize> {
        timer_delimited_counts(output, |_| true)
    }
}

/// The `lancet_` databases on a PostgreSQL server.
fn pg_lancet_databases(pg: &PgServer) -> Vec<String> {
    pg.databases(lancet_core::DatabaseId::PREFIX)
        .unwrap()
        .into_iter()
        .filter(|d| d != LOOKALIKE)
        .collect()
}

fn pg_plant_foreign(pg: &PgServer) {
    pg.psql("postgres", "CREATE DATABASE keepme").unwrap();
    pg.psql(
        "keepme",
        "CREATE TABLE precious (x int); INSERT INTO precious VALUES (42)",
    )
    .unwrap();
}

/// lancet's backends that are testing: their last statement read a
/// generated table (a backend still preparing its database is not: a
/// loss there is retried, not a finding).
const TESTING_BACKENDS: &str = "FROM pg_stat_activity WHERE datname LIKE 'lancet\\_%' \
     AND pid <> pg_backend_pid() AND query ~ '\\mt[0-9]+\\M'";

fn pg_kill(pg: &PgServer) -> usize {
    pg.psql(
        "postgres",
        &format!("SELECT count(pg_terminate_backend(pid)) {TESTING_BACKENDS}"),
    )
    .unwrap()
    .parse()
    .unwrap_or(0)
}

/// Stops every backend on a lancet database: whichever the run uses next
/// does not answer.
fn pg_stop(pg: &PgServer) -> Vec<u32> {
    let pids: Vec<u32> = pg
        .psql(
            "postgres",
            &format!("SELECT string_agg(pid::text, ' ') {TESTING_BACKENDS}"),
        )
        .unwrap()
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    // A backend may end between the lookup and the signal.
    pids.into_iter()
        .filter(|&pid| try_signal(pid, "STOP"))
        .collect()
}

fn pg_lookalike(pg: &PgServer) -> Box<dyn Fn() -> bool + '_> {
    pg.psql("postgres", &format!("CREATE DATABASE {LOOKALIKE}"))
        .unwrap();
    pg.psql(
        LOOKALIKE,
        "CREATE TABLE precious (x int); INSERT INTO precious VALUES (7)",
    )
    .unwrap();
    Box::new(move || pg.psql(LOOKALIKE, "SELECT x FROM precious").ok().as_deref() == Some("7"))
}

/// The URL of `pg` with a password, which trust authentication ignores.
fn pg_url_with_password(pg: &PgServer) -> String {
    format!(
        "postgres://postgres:{PG_SECRET}@127.0.0.1:{}/postgres",
        pg.port()
    )
}

const PG_SECRET: &str = "s3cret-conformance";

/// PostgreSQL, a throwaway server of the default major.
pub struct Postgres(pub PgServer);

impl Postgres {
    pub fn start() -> Option<Postgres> {
        Some(Postgres(PgServer::start().expect(
            "starting a throwaway PostgreSQL (tests/run.sh installs it)",
        )))
    }
}

impl Subject for Postgres {
    fn dbms(&self) -> &'static str {
        "postgres"
    }
    fn target(&self) -> Vec<String> {
        vec!["--url".into(), pg_url_with_password(&self.0)]
    }
    fn secret(&self) -> Option<&'static str> {
        Some(PG_SECRET)
    }
    fn plant_foreign(&self) {
        pg_plant_foreign(&self.0);
    }
    fn foreign_intact(&self) -> bool {
        self.0
            .psql("keepme", "SELECT x FROM precious")
            .ok()
            .as_deref()
            == Some("42")
    }
    fn lancet_databases(&self) -> Vec<String> {
        pg_lancet_databases(&self.0)
    }
    fn clean_run_checks(&self) -> u64 {
        20_000
    }
    fn max_skipped_percent(&self) -> u64 {
        10
    }
    fn kill_sessions(&self, _lancet: u32) -> usize {
        pg_kill(&self.0)
    }
    fn stop_session(&self, _lancet: u32) -> Result<Vec<u32>, &'static str> {
        Ok(pg_stop(&self.0))
    }
    fn selftest_oracles(&self) -> Vec<&'static str> {
        with_tlp_and_norec(&["pqs", "knobs", "perf", "transform", "stepwise", "eet"])
    }
    fn plant_lookalike(&self) -> Result<Box<dyn Fn() -> bool + '_>, &'static str> {
        Ok(pg_lookalike(&self.0))
    }
    fn client_env(&self, _home: &Path) -> Option<Vec<(String, String)>> {
        Some(pg_client_env(&self.0))
    }
    fn result_counts(&self, output: &str) -> Vec<usize> {
        psql_footers(output)
    }
}

/// MariaDB, a throwaway server (Debian's package).
pub struct MariaDb(pub MariaDbServer);

/// The password of the testkit's `lancet` account on MariaDB.
const MARIADB_SECRET: &str = "lancet-pw";

impl MariaDb {
    pub fn start() -> Option<MariaDb> {
        if !MariaDbServer::available() {
            eprintln!("SKIPPED: no mariadbd here (tests/run.sh installs mariadb-server)");
            return None;
        }
        Some(MariaDb(
            MariaDbServer::start().expect("starting a throwaway MariaDB"),
        ))
    }

    /// Runs `sql` through the `mariadb` client in `db`; its rows, sorted.
    fn client_rows(&self, db: &str, sql: &str) -> Option<Vec<String>> {
        let mut child = Command::new("mariadb")
            .args(["-h", "127.0.0.1", "-P", &self.0.port().to_string()])
            .args([
                "-u",
                "lancet",
                &format!("-p{MARIADB_SECRET}"),
                "-N",
                "-B",
                db,
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the mariadb client");
        use std::io::Write;
        let written = child.stdin.take().map(|mut i| i.write_all(sql.as_bytes()));
        let out = child.wait_with_output().ok()?;
        written?.ok()?;
        if !out.status.success() {
            eprintln!(
                "mariadb client failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            return None;
        }
        let mut rows: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        rows.sort();
        Some(rows)
    }
}

impl Subject for MariaDb {
    fn dbms(&self) -> &'static str {
        "mysql"
    }
    fn target(&self) -> Vec<String> {
        vec!["--url".into(), self.0.url()]
    }
    fn secret(&self) -> Option<&'static str> {
        Some(MARIADB_SECRET)
    }
    fn plant_foreign(&self) {
        self.0
            .sql("CREATE DATABASE keepme; CREATE TABLE keepme.precious (x INT); INSERT INTO keepme.precious VALUES (42)")
            .unwrap();
    }
    fn foreign_intact(&self) -> bool {
        self.0.sql("SELECT x FROM keepme.precious").ok().as_deref() == Some("42")
    }
    fn lancet_databases(&self) -> Vec<String> {
        self.0
            .databases(lancet_core::DatabaseId::PREFIX)
            .unwrap()
            .into_iter()
            .filter(|d| d != LOOKALIKE)
            .collect()
    }
    fn clean_run_checks(&self) -> u64 {
        20_000
    }
    /// MariaDB 10.11 has logic bugs a clean run meets (docs/bugs-found.md):
    /// the reproducer's setup, then its two queries each in a session of
    /// its own (with the setup's SET lines and the temporary tables it
    /// materializes); their rows must differ.
    fn client_shows(&self, reproducer: &Path, index: usize) -> Option<bool> {
        let text = std::fs::read_to_string(reproducer).ok()?;
        let record = read_json(&reproducer.with_extension("json"));
        if record["kind"] != "logic" {
            return Some(false);
        }
        // The last markers: the header names the queries too.
        let q1 = text.rfind("\n-- query 1")?;
        let q2 = text.rfind("\n-- query 2")?;
        let (setup, first, second) = (&text[..q1], &text[q1..q2], &text[q2..]);
        let settings: String = setup
            .lines()
            .filter(|l| l.starts_with("SET ") || l.starts_with("CREATE TEMPORARY TABLE "))
            .map(|l| format!("{l}\n"))
            .collect();
        let db = format!("lancet_check{index}");
        self.client_rows("test", &format!("CREATE DATABASE {db};"))?;
        self.client_rows(&db, setup)?;
        let a = self.client_rows(&db, &format!("{settings}{first}"));
        let b = self.client_rows(&db, &format!("{settings}{second}"));
        self.client_rows("test", &format!("DROP DATABASE {db};"))?;
        Some(a.is_some() && b.is_some() && a != b)
    }
    fn kill_sessions(&self, _lancet: u32) -> usize {
        let ids = self
            .0
            .sql("SELECT ID FROM information_schema.PROCESSLIST WHERE DB LIKE 'lancet\\_%'")
            .unwrap();
        ids.lines()
            .filter(|l| !l.is_empty())
            .filter(|id| self.0.sql(&format!("KILL {id}")).is_ok())
            .count()
    }
    fn stop_session(&self, _lancet: u32) -> Result<Vec<u32>, &'static str> {
        Err("MariaDB runs every session as a thread of one process: no session can be stopped alone")
    }
    fn selftest_oracles(&self) -> Vec<&'static str> {
        with_tlp_and_norec(&["pqs", "knobs", "perf", "eet", "twins"])
    }
    fn plant_lookalike(&self) -> Result<Box<dyn Fn() -> bool + '_>, &'static str> {
        self.0
            .sql(&format!(
                "CREATE DATABASE {LOOKALIKE}; CREATE TABLE {LOOKALIKE}.precious (x INT); \
                 INSERT INTO {LOOKALIKE}.precious VALUES (7)"
            ))
            .unwrap();
        Ok(Box::new(move || {
            self.0
                .sql(&format!("SELECT x FROM {LOOKALIKE}.precious"))
                .ok()
                .as_deref()
                == Some("7")
        }))
    }
    fn client_env(&self, home: &Path) -> Option<Vec<(String, String)>> {
        let options = format!("[client]\nuser=lancet\npassword={MARIADB_SECRET}\n");
        std::fs::write(home.join(".my.cnf"), options).ok()?;
        Some(vec![
            ("HOME".into(), home.display().to_string()),
            ("MYSQL_HOST".into(), "127.0.0.1".into()),
            ("MYSQL_TCP_PORT".into(), self.0.port().to_string()),
        ])
    }
    fn counting_client(
        &self,
        home: &Path,
        run_line: &str,
    ) -> Option<(String, Vec<(String, String)>)> {
        let env = self.client_env(home)?;
        // -vvv: "N rows in set" or "Empty set" after every result.
        let options = format!(
            "[client]\nuser=lancet\npassword={MARIADB_SECRET}\n[mysql]\nverbose\nverbose\nverbose\n"
        );
        std::fs::write(home.join(".my.cnf"), options).ok()?;
        Some((run_line.to_string(), env))
    }
    fn result_counts(&self, output: &str) -> Vec<usize> {
        output
            .lines()
            .filter_map(|l| {
                if l.starts_with("Empty set") {
                    return Some(0);
                }
                let (n, rest) = l.split_once(' ')?;
                (rest.starts_with("rows in set") || rest.starts_with("row in set"))
                    .then(|| n.parse().ok())?
            })
            .collect()
    }
}

/// Citus, a coordinator and two workers of the Citus line on PostgreSQL
/// `major` (18: 14.0.1, 15: 13.2.2).
pub struct Citus(pub CitusCluster);

impl Citus {
    pub fn start(major: u32) -> Option<Citus> {
        CitusCluster::start_or_skip_major("citus conformance", major).map(Citus)
    }
}

impl Subject for Citus {
    fn dbms(&self) -> &'static str {
        "citus"
    }
    fn target(&self) -> Vec<String> {
        vec!["--url".into(), pg_url_with_password(&self.0.coordinator)]
    }
    fn secret(&self) -> Option<&'static str> {
        Some(PG_SECRET)
    }
    fn plant_foreign(&self) {
        self.0.nodes().for_each(pg_plant_foreign);
    }
    fn foreign_intact(&self) -> bool {
        self.0
            .nodes()
            .all(|n| n.psql("keepme", "SELECT x FROM precious").ok().as_deref() == Some("42"))
    }
    fn lancet_databases(&self) -> Vec<String> {
        self.0.nodes().flat_map(pg_lancet_databases).collect()
    }
    fn clean_run_checks(&self) -> u64 {
        if self.0.coordinator.major() >= 17 {
            6000
        } else {
            2000
        }
    }
    /// Citus refuses some joins of distributed tables, most of them
    /// made by transform's and eet's rewrites of co-located joins (seed 1
    /// skipped 8.4% on Citus 14.0.1 over PostgreSQL 18); Citus 13.2 over
    /// PostgreSQL 15 also refuses outer joins with pseudoconstant quals
    /// (13.7%, 274 of 2,001, with all sixteen oracles).
    fn max_skipped_percent(&self) -> u64 {
        if self.0.coordinator.major() >= 17 {
            12
        } else {
            15
        }
    }
    /// Citus has wrong-result bugs lancet does not steer clear of
    /// (docs/bugs-found.md): every finding must be one psql shows.
    fn client_shows(&self, reproducer: &Path, _index: usize) -> Option<bool> {
        let text = std::fs::read_to_string(reproducer).ok()?;
        Some(crate::common::citus_psql::psql_shows(&self.0, &text))
    }
    fn kill_sessions(&self, _lancet: u32) -> usize {
        pg_kill(&self.0.coordinator)
    }
    fn stop_session(&self, _lancet: u32) -> Result<Vec<u32>, &'static str> {
        Ok(pg_stop(&self.0.coordinator))
    }
    fn selftest_oracles(&self) -> Vec<&'static str> {
        with_tlp_and_norec(&["dist-vs-local", "knobs", "perf", "transform", "stepwise"])
    }
    fn plant_lookalike(&self) -> Result<Box<dyn Fn() -> bool + '_>, &'static str> {
        Ok(pg_lookalike(&self.0.coordinator))
    }
    fn client_env(&self, _home: &Path) -> Option<Vec<(String, String)>> {
        Some(pg_client_env(&self.0.coordinator))
    }
    fn result_counts(&self, output: &str) -> Vec<usize> {
        psql_footers(output)
    }
}
