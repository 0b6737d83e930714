//! The DuckDB subject: the embedded engine, its worker processes, and
//! the `duckdb` shell that replays findings.

use super::{timer_delimited_counts, with_tlp_and_norec, Sqlite};
use crate::common::*;
use crate::promises::Subject;
use std::path::Path;
use std::process::{Command, Stdio};

/// DuckDB, embedded from the libduckdb.so tests/engines.sh installs: its
/// databases run in worker processes, as SQLite's do.
pub struct DuckDb;

impl DuckDb {
    pub fn start() -> Option<DuckDb> {
        lancet_duckdb::locate::library(None)
            .expect("DuckDB's library (tests/run.sh installs it through tests/engines.sh)");
        Some(DuckDb)
    }

    /// Runs `sql` through the `duckdb` shell on a fresh in-memory
    /// database: its rows (as JSON lines), sorted, and what it printed
    /// besides them.
    fn shell(sql: &str) -> Option<(Vec<String>, String)> {
        let cli = duckdb_cli_dir()?.join("duckdb");
        let mut child = Command::new(cli)
            .args([":memory:", "-cmd", ".mode jsonlines"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .ok()?;
        use std::io::Write;
        let written = child.stdin.take().map(|mut i| i.write_all(sql.as_bytes()));
        let out = child.wait_with_output().ok()?;
        written?.ok()?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let (mut rows, other): (Vec<&str>, Vec<&str>) =
            stdout.lines().partition(|l| l.starts_with('{'));
        rows.sort_unstable();
        let printed = format!(
            "{}\n{}",
            other.join("\n"),
            String::from_utf8_lossy(&out.stderr)
        );
        Some((rows.into_iter().map(String::from).collect(), printed))
    }
}

impl Subject for DuckDb {
    fn dbms(&self) -> &'static str {
        "duckdb"
    }
    fn target(&self) -> Vec<String> {
        Vec::new()
    }
    fn clean_run_checks(&self) -> u64 {
        5_000
    }
    fn max_skipped_percent(&self) -> u64 {
        10
    }
    fn kill_sessions(&self, lancet: u32) -> usize {
        Sqlite.kill_sessions(lancet)
    }
    fn stop_session(&self, _lancet: u32) -> Result<Vec<u32>, &'static str> {
        Err(
            "a stopped worker process is stopped outside the engine as often as inside it; \
             a statement past its limit is interrupted (providers/duckdb/tests/connection.rs)",
        )
    }
    fn selftest_oracles(&self) -> Vec<&'static str> {
        with_tlp_and_norec(&[
            "pqs",
            "knobs",
            "perf",
            "transform",
            "stepwise",
            "eet",
            "twins",
        ])
    }
    /// DuckDB 1.5.6 has wrong-result bugs lancet does not steer clear of
    /// (docs/bugs-found.md): every finding must be one the `duckdb` shell
    /// shows. A logic finding: the setup with its first query, and with
    /// its second (the last markers: the header names the queries too),
    /// each on a fresh database, return other rows. An unexpected error:
    /// the shell prints its message.
    fn client_shows(&self, reproducer: &Path, _index: usize) -> Option<bool> {
        let text = std::fs::read_to_string(reproducer).ok()?;
        let record = read_json(&reproducer.with_extension("json"));
        match record["kind"].as_str()? {
            "logic" => {
                let q1 = text.rfind("\n-- query 1")?;
                let q2 = text.rfind("\n-- query 2")?;
                let (setup, first, second) = (&text[..q1], &text[q1..q2], &text[q2..]);
                let (a, _) = Self::shell(&format!("{setup}{first}"))?;
                let (b, _) = Self::shell(&format!("{setup}{second}"))?;
                Some(a != b)
            }
            "unexpected-error" => {
                let message = record["error"]["message"].as_str()?;
                let (_, printed) = Self::shell(&text)?;
                Some(printed.contains(message))
            }
            _ => Some(false),
        }
    }
    /// The `duckdb` shell tests/engines.sh installs, of the library's release.
    fn client_env(&self, _home: &Path) -> Option<Vec<(String, String)>> {
        let dir = duckdb_cli_dir()?;
        let path = std::env::var("PATH").unwrap_or_default();
        Some(vec![("PATH".into(), format!("{}:{path}", dir.display()))])
    }
    fn counting_client(
        &self,
        home: &Path,
        run_line: &str,
    ) -> Option<(String, Vec<(String, String)>)> {
        // One JSON object per row (a value's newline escaped), and the
        // timer line after every statement.
        let line = run_line.replacen(
            "duckdb ",
            "duckdb -cmd '.timer on' -cmd '.mode jsonlines' ",
            1,
        );
        Some((line, self.client_env(home)?))
    }
    fn result_counts(&self, output: &str) -> Vec<usize> {
        timer_delimited_counts(output, |l| l.starts_with('{'))
    }
}
