//! Reducing a SQL file from anywhere: a bug report's script, a test case of
//! the DBMS's own. What keeps it interesting is given on the command line:
//! - a check command (as with C-Reduce) that exits 0 while the candidate
//!   file is still interesting; it may edit nothing but must not depend on
//!   the file's name (it gets the path as `{file}` and `$LANCET_REDUCE_FILE`);
//! - or two of the file's queries whose results must keep differing, the
//!   same rows on the same side. Those two queries stand in a relation only
//!   their author knows, so they are kept exactly as written; everything
//!   before and between them is reduced.

use super::ddmin::ddmin;
use super::sql_text::{split_statements, statement_variants};
use super::Direction;
use crate::databases::{Databases, Purpose};
use anyhow::{bail, Context};
use lancet_core::compare::multiset_diff;
use lancet_core::{Dialect, Row};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What makes a candidate interesting.
pub enum Check<'a> {
    /// A shell command; exit status 0 means interesting.
    Command(String),
    /// Statements `first` and `second` (0-based) are queries whose results
    /// must differ as multisets, the same way as in the original.
    Differs {
        databases: &'a Databases,
        first: usize,
        second: usize,
    },
}

/// The outcome of reducing a foreign file.
pub struct ForeignReduction {
    pub statements: Vec<String>,
    pub statements_before: usize,
    pub bytes_before: usize,
    pub tests: u64,
    pub seconds: f64,
    pub complete: bool,
}

impl ForeignReduction {
    /// The reduced file's text: one statement per line (or block).
    pub fn text(&self) -> String {
        let mut out = String::new();
        for s in &self.statements {
            out.push_str(s);
            out.push_str(";\n");
        }
        out
    }

    pub fn bytes(&self) -> usize {
        self.text().len()
    }
}

/// Runs a check command on candidate files in a scratch directory.
struct CommandCheck {
    command: String,
    dir: PathBuf,
    file: PathBuf,
}

impl CommandCheck {
    fn new(command: &str, file_name: &str) -> anyhow::Result<CommandCheck> {
        let dir = std::env::temp_dir().join(format!(
            "lancet-reduce-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create the scratch directory {}", dir.display()))?;
        Ok(CommandCheck {
            command: command.to_string(),
            file: dir.join(file_name),
            dir,
        })
    }

    fn interesting(&self, text: &str) -> anyhow::Result<bool> {
        std::fs::write(&self.file, text)
            .with_context(|| format!("cannot write {}", self.file.display()))?;
        let path = self.file.display().to_string();
        let status = Command::new("sh")
            .arg("-c")
            .arg(self.command.replace("{file}", &path))
            .current_dir(&self.dir)
            .env("LANCET_REDUCE_FILE", &path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .with_context(|| format!("cannot run the check command `{}`", self.command))?;
        Ok(status.success())
    }
}

impl Drop for CommandCheck {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn script(statements: &[String]) -> String {
    statements.iter().map(|s| format!("{s};\n")).collect()
}

/// Runs the statements on a fresh database and returns the results of the
/// two compared queries; other statements may fail (a foreign file may
/// expect errors), the compared queries may not.
fn run_pair(
    databases: &Databases,
    statements: &[String],
    first: usize,
    second: usize,
) -> Option<(Vec<Row>, Vec<Row>)> {
    let mut scratch = databases
        .create(Purpose::Reduce, 0, databases.next_index())
        .ok()?;
    let conn = scratch.conn();
    let mut results = (None, None);
    for (i, s) in statements.iter().enumerate() {
        if i == first || i == second {
            let rows = conn.query(s).ok();
            if rows.is_none() {
                break;
            }
            if i == first {
                results.0 = rows;
            } else {
                results.1 = rows;
            }
        } else {
            let _ = conn.execute(s);
        }
    }
    drop(scratch);
    Some((results.0?, results.1?))
}

/// Reduces `text` under `check`.
pub fn reduce_foreign(
    text: &str,
    file_name: &str,
    dialect: Dialect,
    check: &Check,
    time_limit: Duration,
    abort: Option<&AtomicBool>,
) -> anyhow::Result<ForeignReduction> {
    let start = Instant::now();
    let statements = split_statements(text, dialect);
    if statements.is_empty() {
        bail!("{file_name} holds no SQL statements");
    }
    let tests = AtomicU64::new(0);
    let stopped = AtomicBool::new(false);
    let over = || {
        let o = start.elapsed() >= time_limit || abort.is_some_and(|a| a.load(Ordering::Relaxed));
        if o {
            stopped.store(true, Ordering::Relaxed);
        }
        o
    };
    // Items carry their original position so the compared queries can be
    // found (and kept) whatever else is removed.
    let items: Vec<(usize, String)> = statements.iter().cloned().enumerate().collect();
    let command = match check {
        Check::Command(cmd) => Some(CommandCheck::new(cmd, file_name)?),
        Check::Differs { .. } => None,
    };
    let pinned: Vec<usize> = match check {
        Check::Differs { first, second, .. } => {
            for i in [first, second] {
                if *i >= statements.len() {
                    bail!(
                        "--check-differs names statement {} but {file_name} has {} statements",
                        i + 1,
                        statements.len()
                    );
                }
            }
            vec![*first, *second]
        }
        Check::Command(_) => vec![],
    };
    let direction = match check {
        Check::Differs {
            databases,
            first,
            second,
        } => {
            let (a, b) = run_pair(databases, &statements, *first, *second).with_context(|| {
                format!(
                    "statements {} and {} of {file_name} do not both run as queries",
                    first + 1,
                    second + 1
                )
            })?;
            let diff = multiset_diff(&a, &b);
            if diff.is_empty() {
                bail!(
                    "statements {} and {} of {file_name} return the same rows: nothing to keep",
                    first + 1,
                    second + 1
                );
            }
            Some(Direction::of(&diff))
        }
        Check::Command(_) => None,
    };
    let test = |cand: &[(usize, String)]| -> bool {
        tests.fetch_add(1, Ordering::Relaxed);
        let texts: Vec<String> = cand.iter().map(|(_, s)| s.clone()).collect();
        match check {
            Check::Command(_) => command
                .as_ref()
                .is_some_and(|c| c.interesting(&script(&texts)).unwrap_or(false)),
            Check::Differs { databases, .. } => {
                let pos = |orig: usize| cand.iter().position(|(i, _)| *i == orig);
                let (Some(f), Some(s)) = (pos(pinned[0]), pos(pinned[1])) else {
                    return false;
                };
                match run_pair(databases, &texts, f, s) {
                    Some((a, b)) => {
                        let diff = multiset_diff(&a, &b);
                        !diff.is_empty() && Some(Direction::of(&diff)) == direction
                    }
                    None => false,
                }
            }
        }
    };
    if let Some(c) = &command {
        if !c.interesting(text)? {
            bail!(
                "the check command does not accept the original file (it must exit 0 on {file_name})"
            );
        }
    }
    let mut current = items;
    loop {
        let before = current.clone();
        // Whole statements; the compared queries always stay.
        let (kept, movable): (Vec<_>, Vec<_>) =
            current.into_iter().partition(|(i, _)| pinned.contains(i));
        let reduced = ddmin(movable, |cand| {
            if over() {
                return None;
            }
            let mut all: Vec<(usize, String)> = cand.iter().cloned().chain(kept.clone()).collect();
            all.sort_by_key(|(i, _)| *i);
            Some(test(&all))
        });
        current = reduced.into_iter().chain(kept).collect();
        current.sort_by_key(|(i, _)| *i);
        // Each statement simplified in place.
        let mut k = 0;
        while k < current.len() && !over() {
            if pinned.contains(&current[k].0) {
                k += 1;
                continue;
            }
            let mut improved = false;
            for v in statement_variants(&current[k].1, dialect) {
                if over() {
                    break;
                }
                let mut trial = current.clone();
                trial[k].1 = v;
                if test(&trial) {
                    current = trial;
                    improved = true;
                    break;
                }
            }
            if !improved {
                k += 1;
            }
        }
        if stopped.load(Ordering::Relaxed) || current == before {
            break;
        }
    }
    Ok(ForeignReduction {
        statements: current.into_iter().map(|(_, s)| s).collect(),
        statements_before: statements.len(),
        bytes_before: script(&statements).len(),
        tests: tests.load(Ordering::Relaxed),
        seconds: start.elapsed().as_secs_f64(),
        complete: !stopped.load(Ordering::Relaxed),
    })
}
