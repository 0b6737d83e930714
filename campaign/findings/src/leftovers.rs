//! What killed runs left in an output directory, recognised at the next
//! start: half-written files (`*.tmp`), findings that were waiting for
//! confirmation (`findings/pending/`), and databases their ledgers list as
//! created and not dropped. A run directory whose ledger a live process
//! holds is left alone.

use crate::reproducer::PENDING_DIR;
use lancet_databases::databases::{Ledger, LEDGER_FILE};
use std::path::{Path, PathBuf};

/// Where pending findings of a killed run are moved: out of `findings/`,
/// so that they are never taken for confirmed ones.
pub const INTERRUPTED_DIR: &str = "interrupted";

/// What one killed run left.
#[derive(Debug, Default)]
pub struct RunLeftovers {
    pub run_dir: PathBuf,
    /// `*.tmp` files removed.
    pub partial_files: usize,
    /// Unconfirmed findings moved to `interrupted/`.
    pub unconfirmed: usize,
    /// Databases the ledger lists as created and not dropped.
    pub databases: usize,
}

impl RunLeftovers {
    fn is_empty(&self) -> bool {
        self.partial_files == 0 && self.unconfirmed == 0 && self.databases == 0
    }

    /// One line for stderr.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.unconfirmed > 0 {
            parts.push(format!(
                "{} finding(s) it had not confirmed (moved to {}/, not reported)",
                self.unconfirmed, INTERRUPTED_DIR
            ));
        }
        if self.partial_files > 0 {
            parts.push(format!(
                "{} half-written file(s) (*.tmp, removed)",
                self.partial_files
            ));
        }
        if self.databases > 0 {
            parts.push(format!(
                "{} database(s) it may have left on the server (`lancet cleanup --url ...` drops them)",
                self.databases
            ));
        }
        format!(
            "lancet: earlier run {} ended without finishing: {}",
            self.run_dir.display(),
            parts.join("; ")
        )
    }
}

/// Scans the run directories under `out` that no live process holds and
/// tidies what can be tidied. Errors reading are skipped: this is advice.
pub fn scan(out: &Path) -> Vec<RunLeftovers> {
    let Ok(dirs) = Ledger::run_dirs(out) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for dir in dirs {
        let ledger = dir.join(LEDGER_FILE);
        if Ledger::is_live(&ledger) {
            continue;
        }
        let mut left = RunLeftovers {
            run_dir: dir.clone(),
            ..RunLeftovers::default()
        };
        left.partial_files = remove_tmp_files(&dir, 3);
        left.unconfirmed = move_pending(&dir);
        left.databases = Ledger::read_open(&ledger).map_or(0, |open| open.len());
        if !left.is_empty() {
            found.push(left);
        }
    }
    found
}

/// Removes `*.tmp` files up to `depth` levels below `dir`; returns how many.
fn remove_tmp_files(dir: &Path, depth: u32) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            if depth > 0 {
                n += remove_tmp_files(&p, depth - 1);
            }
        } else if p.extension().is_some_and(|x| x == "tmp") && std::fs::remove_file(&p).is_ok() {
            n += 1;
        }
    }
    n
}

/// Moves `findings/pending/*` to `interrupted/`; returns how many findings
/// (counted by their files' stems) moved.
fn move_pending(dir: &Path) -> usize {
    let pending = dir.join("findings").join(PENDING_DIR);
    let Ok(entries) = std::fs::read_dir(&pending) else {
        return 0;
    };
    let target = dir.join(INTERRUPTED_DIR);
    let mut stems = std::collections::BTreeSet::new();
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if std::fs::create_dir_all(&target).is_err() {
            break;
        }
        if let Some(name) = p.file_name() {
            if std::fs::rename(&p, target.join(name)).is_ok() {
                if let Some(stem) = p.file_stem() {
                    stems.insert(stem.to_os_string());
                }
            }
        }
    }
    let _ = std::fs::remove_dir(&pending);
    stems.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_runs_leftovers_are_recognised_once() {
        let out = tempfile::tempdir().unwrap();
        let run = out.path().join("20260101-000000-s1-abc");
        let pending = run.join("findings").join(PENDING_DIR);
        std::fs::create_dir_all(&pending).unwrap();
        std::fs::write(run.join(LEDGER_FILE), "").unwrap();
        std::fs::write(pending.join("0001-norec-t0-d1.sql"), "x").unwrap();
        std::fs::write(pending.join("0001-norec-t0-d1.json"), "{}").unwrap();
        std::fs::write(run.join("findings").join("index.json.tmp"), "").unwrap();
        let found = scan(out.path());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].unconfirmed, 1);
        assert_eq!(found[0].partial_files, 1);
        assert!(run
            .join(INTERRUPTED_DIR)
            .join("0001-norec-t0-d1.sql")
            .exists());
        assert!(!pending.exists());
        assert!(found[0].describe().starts_with("lancet: earlier run"));
        // Tidied: nothing to say the second time.
        assert!(scan(out.path()).is_empty());
        // A live run is left alone.
        let live = out.path().join("live");
        std::fs::create_dir_all(live.join("findings").join(PENDING_DIR)).unwrap();
        let _ledger = Ledger::create(&live).unwrap();
        std::fs::write(live.join("x.tmp"), "").unwrap();
        assert!(scan(out.path()).is_empty());
        assert!(live.join("x.tmp").exists());
    }
}
