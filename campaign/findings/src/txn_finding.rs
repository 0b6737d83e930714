//! One finding of a transaction campaign on disk: `ID.json` (the record,
//! [`TxnFinding`], the single file `lancet replay` runs again), `ID.sql`
//! (the schedule as one script) and a directory per finding with the
//! schedule as a table (session × step), a script per session and the
//! setup for the DBMS's own client; and what the findings index keeps of
//! it.

use crate::bug::BugCore;
use crate::dedup::Indexed;
use crate::findings::FindingKind;
use anyhow::Context;
pub use lancet_oracles::txn::record::{ScheduleOrigin, TxnFinding};
use std::path::{Path, PathBuf};

/// A transaction finding's record as a file of the findings directory.
pub trait TxnFindingFile: Sized {
    /// Reads a finding's record: `ID.json`, or the `ID.sql` beside it.
    fn load(path: &Path) -> anyhow::Result<Self>;
    /// Writes the finding as `ID.json` (the record, first: on disk before
    /// anything else), `ID.sql` (the whole schedule as one script, the
    /// reproducer the index, store and report show) and the directory
    /// `ID/` (`schedule.txt`, `setup.sql`, `session-N.sql`), all in
    /// `findings_dir`. Returns the `.sql` path, which names the finding.
    fn write(&self, findings_dir: &Path, id: &str) -> anyhow::Result<PathBuf>;
    /// What its signature says it is: an anomaly is a wrong result (a
    /// logic finding); a lost server a crash or hang; else an error no
    /// level allows.
    fn kind(&self) -> FindingKind;
    /// What the findings index keeps of this finding, written at `sql`.
    fn indexed(&self, sql: &Path) -> Indexed;
}

impl TxnFindingFile for TxnFinding {
    fn load(path: &Path) -> anyhow::Result<TxnFinding> {
        let record = if path.extension().is_some_and(|e| e == "sql") {
            path.with_extension("json")
        } else {
            path.to_path_buf()
        };
        let text = std::fs::read_to_string(&record)
            .with_context(|| format!("cannot read {}", record.display()))?;
        let finding: TxnFinding = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a transaction finding", record.display()))?;
        anyhow::ensure!(
            finding.oracle == lancet_oracles::txn::NAME,
            "{} is not a transaction finding",
            record.display()
        );
        Ok(finding)
    }

    fn write(&self, findings_dir: &Path, id: &str) -> anyhow::Result<PathBuf> {
        let json = findings_dir.join(format!("{id}.json"));
        let text = serde_json::to_string_pretty(self)?;
        write_synced(&json, &text)?;
        let sql = findings_dir.join(format!("{id}.sql"));
        write_synced(&sql, &self.script(id))?;
        let dir = findings_dir.join(id);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let s = &self.schedule;
        write_synced(&dir.join("setup.sql"), &self.setup_script())?;
        for session in 0..s.sessions {
            write_synced(
                &dir.join(format!("session-{}.sql", session + 1)),
                &self.session_script(session),
            )?;
        }
        let by_hand = format!(
            "\nBy hand: run setup.sql, then open {} sessions with `{}` (file: -) and type each \
             session's lines of session-N.sql in the step order above. Or: lancet replay ../{id}.json\n",
            s.sessions, self.client_command
        );
        write_synced(&dir.join("schedule.txt"), &(self.table() + &by_hand))?;
        Ok(sql)
    }

    fn kind(&self) -> FindingKind {
        match self.signature.split('@').next().unwrap_or("") {
            "crash" => FindingKind::Crash,
            "hang" => FindingKind::Hang,
            w if w.starts_with("error") => FindingKind::UnexpectedError,
            _ => FindingKind::Logic,
        }
    }

    fn indexed(&self, sql: &Path) -> Indexed {
        let what = self.signature.split('@').next().unwrap_or("");
        let kind = self.kind();
        let detail = self
            .anomalies
            .first()
            .map(|a| a.detail.clone())
            .or_else(|| self.error.clone())
            .unwrap_or_default();
        Indexed {
            signature: self.signature.clone(),
            kind,
            oracle: Some(lancet_oracles::txn::NAME.to_string()),
            relation: Some(if self.session_rules.is_empty() {
                format!("reads and rows as {} allows", self.rules.label())
            } else {
                let labels: Vec<String> = self.session_rules.iter().map(|r| r.label()).collect();
                format!("reads and rows as {} allow", labels.join(", "))
            }),
            size: (
                self.schedule.size(),
                std::fs::metadata(sql).map_or(0, |m| m.len() as usize),
            ),
            // One anomaly is one bug at every level that forbids it.
            core: BugCore {
                key: format!("txn|{what}"),
                constructs: Vec::new(),
                text: format!("{what}: {detail}"),
            },
            hidden_by_knobs: Vec::new(),
            flipped_by_knobs: Vec::new(),
        }
    }
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
