//! A transaction finding on disk: one directory per finding with the
//! schedule as a table (session × step), a script per session and the
//! setup for the DBMS's own client, and `finding.json`, the single file
//! `lancet replay` runs again.

use super::driver::{ScheduleRun, TraceLine};
use anyhow::Context;
use lancet_core::txn::LevelRules;
use lancet_oracles::txn::{Action, Anomaly, Schedule};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Where a schedule came from: the database's RNG and its place in it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ScheduleOrigin {
    pub seed: u64,
    pub thread: u32,
    pub database: u64,
    pub schedule: u64,
}

/// Everything a transaction finding records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TxnFinding {
    /// Always `txn`: tells this file from other findings' records.
    pub oracle: String,
    pub dbms: String,
    pub version: String,
    pub lancet: String,
    /// `lost-update@REPEATABLE READ`: the anomaly's kind and the level,
    /// which is what groups findings into bugs.
    pub signature: String,
    pub rules: LevelRules,
    pub anomalies: Vec<Anomaly>,
    /// An error no level allows, instead of an anomaly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub schedule: Schedule,
    pub trace: Vec<TraceLine>,
    pub final_rows: Vec<(i64, i64)>,
    pub origin: ScheduleOrigin,
    /// How many of the runs of this schedule on fresh tables showed the
    /// anomaly again, of how many.
    pub repeated: (u32, u32),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// For a reduced finding: the statements and rows before, and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced_from: Option<usize>,
    /// The statements that create the table, as this DBMS takes them.
    pub create_table: Vec<String>,
    /// The statements a session's BEGIN step sends.
    pub begin: Vec<String>,
    pub client_command: String,
}

impl TxnFinding {
    /// The signature of a run of a schedule: its first anomaly (or
    /// error) and the level.
    pub fn signature_of(run: &ScheduleRun, rules: &LevelRules) -> String {
        let what = match (&run.failure, run.anomalies.first()) {
            (_, Some(a)) => a.kind.name().to_string(),
            (Some((_, e)), None) => match e.kind {
                lancet_core::FailureKind::ConnectionLost => "crash".to_string(),
                lancet_core::FailureKind::Hang => "hang".to_string(),
                _ => format!("error {}", e.code.as_deref().unwrap_or("?")),
            },
            (None, None) => "none".to_string(),
        };
        format!("{what}@{}", rules.level.sql())
    }

    pub fn load(path: &Path) -> anyhow::Result<TxnFinding> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let finding: TxnFinding = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a transaction finding", path.display()))?;
        anyhow::ensure!(
            finding.oracle == lancet_oracles::txn::NAME,
            "{} is not a transaction finding",
            path.display()
        );
        Ok(finding)
    }

    /// Writes the finding's directory `dir` (created): `finding.json`
    /// first, then the scripts and the table.
    pub fn write(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let json = dir.join("finding.json");
        let text = serde_json::to_string_pretty(self)?;
        write_synced(&json, &text)?;
        let s = &self.schedule;
        let mut setup = self.create_table.clone();
        setup.extend(s.fill_sql());
        write_synced(&dir.join("setup.sql"), &script(&setup))?;
        for session in 0..s.sessions {
            let statements: Vec<String> = s
                .session_steps(session)
                .flat_map(|(_, st)| self.statements_of(st.action))
                .collect();
            write_synced(
                &dir.join(format!("session-{}.sql", session + 1)),
                &script(&statements),
            )?;
        }
        write_synced(&dir.join("schedule.txt"), &self.table())?;
        Ok(json)
    }

    fn statements_of(&self, action: Action) -> Vec<String> {
        match action {
            Action::Begin => self.begin.clone(),
            Action::Commit => vec!["COMMIT".into()],
            Action::Rollback => vec!["ROLLBACK".into()],
            Action::Stmt(op) => vec![op.sql(&self.schedule.table)],
        }
    }

    /// The schedule as people read it: what was seen, then one row per
    /// step with a column per session, then how to run it by hand.
    pub fn table(&self) -> String {
        let s = &self.schedule;
        let mut out = String::new();
        let _ = writeln!(out, "lancet transaction finding: {}", self.signature);
        let _ = writeln!(out, "DBMS: {} {}", self.dbms, self.version);
        let _ = writeln!(
            out,
            "level: {} (rules: reads see {:?}, writes {:?}{}; from {})",
            self.rules.level.sql(),
            self.rules.read_view,
            self.rules.writes,
            if self.rules.serializable {
                ", committed transactions serializable"
            } else {
                ""
            },
            self.rules.source
        );
        if let Some(fault) = &self.fault {
            let _ = writeln!(out, "planted fault: {fault} (not a bug of the DBMS)");
        }
        let _ = writeln!(
            out,
            "repeated: {} of {} runs on a fresh table",
            self.repeated.0, self.repeated.1
        );
        for a in &self.anomalies {
            let _ = writeln!(
                out,
                "\n{} at step {}: {}",
                a.kind.name(),
                a.step + 1,
                a.detail
            );
        }
        if let Some(e) = &self.error {
            let _ = writeln!(out, "\nerror: {e}");
        }
        let _ = writeln!(
            out,
            "\nrows before: {}",
            lancet_oracles::txn::model::show(&s.rows)
        );
        let _ = writeln!(
            out,
            "rows after:  {}",
            lancet_oracles::txn::model::show(&self.final_rows)
        );
        let _ = writeln!(out, "\nstep | {}", session_header(s.sessions));
        for line in &self.trace {
            let mut cells = vec![String::new(); s.sessions];
            let waited = if line.waited { " [waited]" } else { "" };
            cells[line.session] = format!("{} -> {}{waited}", line.sql, line.result);
            let _ = writeln!(out, "{:>4} | {}", line.step + 1, cells.join(" | "));
        }
        let _ = writeln!(
            out,
            "\nBy hand: run setup.sql, then open {} sessions with `{}` (file: -) and type each \
             session's lines of session-N.sql in the step order above. Or: lancet replay finding.json",
            s.sessions, self.client_command
        );
        out
    }
}

fn session_header(n: usize) -> String {
    (1..=n)
        .map(|s| format!("session {s}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

fn script(statements: &[String]) -> String {
    statements.iter().map(|s| format!("{s};\n")).collect()
}

/// Writes `text` to `path` and syncs it: a finding is on disk before the
/// run goes on.
fn write_synced(path: &Path, text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut f =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}
