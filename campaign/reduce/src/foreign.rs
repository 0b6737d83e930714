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
use anyhow::{bail, Context};
use lancet_core::compare::multiset_diff;
use lancet_core::{Dialect, Row};
use lancet_databases::databases::{Databases, Purpose};
use lancet_engine::Catalog;
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
    catalog: &Catalog,
    check: &Check,
    time_limit: Duration,
    abort: Option<&AtomicBool>,
) -> anyhow::Result<ForeignReduction> {
    let budget = Budget {
        start: Instant::now(),
        time_limit,
        abort,
        stopped: AtomicBool::new(false),
    };
    let statements = split_statements(text, dialect, catalog);
    if statements.is_empty() {
        bail!("{file_name} holds no SQL statements");
    }
    // Items carry their original position so the compared queries can be
    // found (and kept) whatever else is removed.
    let items: Vec<(usize, String)> = statements.iter().cloned().enumerate().collect();
    let tester = Tester::new(check, &statements, file_name)?;
    if let Some(c) = &tester.command {
        if !c.interesting(text)? {
            bail!(
                "the check command does not accept the original file (it must exit 0 on {file_name})"
            );
        }
    }
    let mut current = items;
    loop {
        let before = current.clone();
        current = drop_statements(current, &tester, &budget);
        current = simplify_statements(current, &tester, &budget, dialect, catalog);
        if budget.stopped.load(Ordering::Relaxed) || current == before {
            break;
        }
    }
    Ok(ForeignReduction {
        statements: current.into_iter().map(|(_, s)| s).collect(),
        statements_before: statements.len(),
        bytes_before: script(&statements).len(),
        tests: tester.tests.load(Ordering::Relaxed),
        seconds: budget.start.elapsed().as_secs_f64(),
        complete: !budget.stopped.load(Ordering::Relaxed),
    })
}

/// The time a reduction may take, and whether it ran out (or was
/// aborted) before the reduction was done.
struct Budget<'a> {
    start: Instant,
    time_limit: Duration,
    abort: Option<&'a AtomicBool>,
    stopped: AtomicBool,
}

impl Budget<'_> {
    /// Whether the time is up or the reduction aborted; remembered, so
    /// that the result says it is incomplete.
    fn over(&self) -> bool {
        let o = self.start.elapsed() >= self.time_limit
            || self.abort.is_some_and(|a| a.load(Ordering::Relaxed));
        if o {
            self.stopped.store(true, Ordering::Relaxed);
        }
        o
    }
}

/// Tells whether a candidate (statements with their original positions)
/// is still interesting under a [`Check`], and counts the candidates.
struct Tester<'c, 'a> {
    check: &'c Check<'a>,
    /// The scratch directory of a check command.
    command: Option<CommandCheck>,
    /// The original positions of the compared queries, which every
    /// candidate keeps (none for a check command).
    pinned: Vec<usize>,
    /// Which way the compared queries' results differ in the original.
    direction: Option<Direction>,
    tests: AtomicU64,
}

impl<'c, 'a> Tester<'c, 'a> {
    /// Sets up `check` on the file's `statements`: a check command's
    /// scratch directory, or the compared queries and how their results
    /// differ (an error if they are not queries, or do not differ).
    fn new(
        check: &'c Check<'a>,
        statements: &[String],
        file_name: &str,
    ) -> anyhow::Result<Tester<'c, 'a>> {
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
                let (a, b) =
                    run_pair(databases, statements, *first, *second).with_context(|| {
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
        Ok(Tester {
            check,
            command,
            pinned,
            direction,
            tests: AtomicU64::new(0),
        })
    }

    /// Whether `cand` is still interesting: the check command accepts it,
    /// or the compared queries, both still in it, still differ the same way.
    fn interesting(&self, cand: &[(usize, String)]) -> bool {
        self.tests.fetch_add(1, Ordering::Relaxed);
        let texts: Vec<String> = cand.iter().map(|(_, s)| s.clone()).collect();
        match self.check {
            Check::Command(_) => self
                .command
                .as_ref()
                .is_some_and(|c| c.interesting(&script(&texts)).unwrap_or(false)),
            Check::Differs { databases, .. } => {
                let pos = |orig: usize| cand.iter().position(|(i, _)| *i == orig);
                let (Some(f), Some(s)) = (pos(self.pinned[0]), pos(self.pinned[1])) else {
                    return false;
                };
                match run_pair(databases, &texts, f, s) {
                    Some((a, b)) => {
                        let diff = multiset_diff(&a, &b);
                        !diff.is_empty() && Some(Direction::of(&diff)) == self.direction
                    }
                    None => false,
                }
            }
        }
    }
}

/// Drops whole statements (ddmin) while the candidate stays interesting;
/// the compared queries always stay.
fn drop_statements(
    current: Vec<(usize, String)>,
    tester: &Tester,
    budget: &Budget,
) -> Vec<(usize, String)> {
    let (kept, movable): (Vec<_>, Vec<_>) = current
        .into_iter()
        .partition(|(i, _)| tester.pinned.contains(i));
    let reduced = ddmin(movable, |cand| {
        if budget.over() {
            return None;
        }
        let mut all: Vec<(usize, String)> = cand.iter().cloned().chain(kept.clone()).collect();
        all.sort_by_key(|(i, _)| *i);
        Some(tester.interesting(&all))
    });
    let mut current: Vec<(usize, String)> = reduced.into_iter().chain(kept).collect();
    current.sort_by_key(|(i, _)| *i);
    current
}

/// Simplifies each statement in place (but the compared queries): the
/// first of its variants that keeps the candidate interesting replaces it,
/// and its own variants are tried next.
fn simplify_statements(
    mut current: Vec<(usize, String)>,
    tester: &Tester,
    budget: &Budget,
    dialect: Dialect,
    catalog: &Catalog,
) -> Vec<(usize, String)> {
    let mut k = 0;
    while k < current.len() && !budget.over() {
        if tester.pinned.contains(&current[k].0) {
            k += 1;
            continue;
        }
        let mut improved = false;
        for v in statement_variants(&current[k].1, dialect, catalog) {
            if budget.over() {
                break;
            }
            let mut trial = current.clone();
            trial[k].1 = v;
            if tester.interesting(&trial) {
                current = trial;
                improved = true;
                break;
            }
        }
        if !improved {
            k += 1;
        }
    }
    current
}
