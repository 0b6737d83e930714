//! A run's ledger: every database it created and every drop, one JSON
//! line each, synced, so that `lancet cleanup` and the next run can find
//! and drop what a killed run left behind, with the proof of ownership a
//! drop needs.

use anyhow::Context;
use lancet_core::OwnedDatabase;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One line of a ledger.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LedgerLine {
    /// `creating` (before CREATE, no oid yet), `created`, `not-created`
    /// (CREATE failed) or `dropped`.
    pub event: String,
    /// `user@host:port`, never a password.
    pub server: String,
    pub database: OwnedDatabase,
}

/// The ledger file of a run: every database created and every drop, one
/// JSON line each, synced. A live run holds an exclusive lock on it, so
/// `lancet cleanup` and the leftover scan leave a running run alone.
pub struct Ledger {
    file: Mutex<File>,
    path: PathBuf,
}

/// The ledger's file name in a run directory.
pub const LEDGER_FILE: &str = "run.ledger";

impl Ledger {
    /// Creates the ledger in `run_dir` and locks it for this process's life.
    pub fn create(run_dir: &Path) -> anyhow::Result<Ledger> {
        let path = run_dir.join(LEDGER_FILE);
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot create the ledger {}", path.display()))?;
        file.try_lock()
            .map_err(|e| anyhow::anyhow!("cannot lock the ledger {}: {e}", path.display()))?;
        Ok(Ledger {
            file: Mutex::new(file),
            path,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&self, line: &LedgerLine) -> anyhow::Result<()> {
        let mut text = serde_json::to_string(line).context("serializing a ledger line")?;
        text.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        file.write_all(text.as_bytes())
            .and_then(|()| file.sync_data())
            .with_context(|| format!("cannot write the ledger {}", self.path.display()))
    }

    /// Reads a ledger: the databases created and not (yet) dropped, in order.
    pub fn read_open(path: &Path) -> anyhow::Result<Vec<LedgerLine>> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the ledger {}", path.display()))?;
        let mut open: Vec<LedgerLine> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            // A line cut short by a kill is the last one; earlier ones are whole.
            let Ok(line) = serde_json::from_str::<LedgerLine>(raw) else {
                if i + 1 == text.lines().count() {
                    continue;
                }
                anyhow::bail!("{}: line {} is not a ledger line", path.display(), i + 1);
            };
            // `creating` (no oid yet) is replaced by its `created`; a
            // `dropped` or `not-created` closes the name.
            let same =
                |l: &LedgerLine| l.database.name == line.database.name && l.server == line.server;
            match line.event.as_str() {
                "creating" | "created" => {
                    open.retain(|l| !same(l));
                    open.push(line);
                }
                "dropped" | "not-created" => open.retain(|l| !same(l)),
                _ => {}
            }
        }
        Ok(open)
    }

    /// The run directories under `out` that have a ledger, sorted.
    pub fn run_dirs(out: &Path) -> std::io::Result<Vec<PathBuf>> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)?
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join(LEDGER_FILE).exists())
            .collect();
        dirs.sort();
        Ok(dirs)
    }

    /// Whether a live process holds the ledger at `path`.
    pub fn is_live(path: &Path) -> bool {
        match File::open(path) {
            Ok(f) => match f.try_lock() {
                Ok(()) => {
                    let _ = f.unlock();
                    false
                }
                Err(_) => true,
            },
            Err(_) => false,
        }
    }

    /// Appends `dropped` lines (for `lancet cleanup`, on a ledger no run holds).
    pub fn mark_dropped(path: &Path, lines: &[LedgerLine]) -> anyhow::Result<()> {
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .with_context(|| format!("cannot open the ledger {}", path.display()))?;
        for l in lines {
            let line = LedgerLine {
                event: "dropped".into(),
                ..l.clone()
            };
            let mut text = serde_json::to_string(&line)?;
            text.push('\n');
            file.write_all(text.as_bytes())?;
        }
        file.sync_data()
            .with_context(|| format!("cannot write the ledger {}", path.display()))
    }
}
