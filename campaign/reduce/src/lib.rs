//! Reduction: shrinking a finding to the few statements a maintainer needs.
//!
//! A logic finding is reduced on two levels, each candidate replayed on a
//! fresh database:
//! - the setup statements, by delta debugging and then statement by
//!   statement (INSERT rows, column options, expressions: [`sql_text`]);
//! - the oracle's *inputs* (its [`Case`]): the oracle proposes simpler cases
//!   ([`Oracle::shrink`]) and rebuilds its queries from them, so the two
//!   compared queries always stand in the oracle's relation. They are never
//!   edited apart, which could make them differ by construction.
//!
//! A candidate counts only if it breaks the same relation in the same
//! direction: the same side keeps the extra rows, and a count that was too
//! high stays too high. An error finding must fail with the same code, a
//! crash must lose the connection again. Files from elsewhere (`lancet
//! reduce FILE.sql`) are reduced as text under a check ([`foreign`]).
//!
//! Owns the reducer of findings ([`Reducer`]), its passes over setup
//! statements and cases, delta debugging ([`ddmin`]) and SQL text
//! simplification ([`sql_text`]). Its own crate, above lancet-findings
//! (the record, the judgment a candidate must keep, replay, localization,
//! the wrong side) and lancet-databases (fresh databases per candidate),
//! and below the binary, whose runner queues reductions and whose
//! `lancet reduce` command runs one. Depends also on lancet-core (cases,
//! checks, `Oracle::shrink`) and lancet-engine (the DBMS catalog, handed
//! down: which parser reads a setup statement). May not touch: the
//! registry or any provider, the runner's threads and queue, the findings
//! index (a reduced finding is written and indexed by its caller).

pub mod ddmin;
pub mod foreign;
mod passes;
pub mod sql_text;
mod target;
pub use lancet_findings::judge::Direction;
use lancet_findings::judge::Symptom;
use passes::Budget;
use target::Target;

/// How long a reducer waits for a DBMS that went away (a server restarting
/// after a candidate crashed it) before a candidate counts as not holding.
const DBMS_BACK_WITHIN: Duration = Duration::from_secs(60);

use lancet_core::{
    run_check, run_check_with_knobs_off, Case, CheckOutcome, Disagreement, Oracle, Session,
};
use lancet_databases::databases::{Databases, Purpose};
use lancet_engine::Catalog;
use lancet_findings::findings::{found_queries, Finding, FindingKind, FoundQuery, ReductionInfo};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Replays candidates on fresh databases of one provider.
pub struct Reducer<'a> {
    databases: &'a Databases,
    /// Which parser reads the setup's statements (their DBMS's).
    catalog: Catalog,
    time_limit: Duration,
    abort: Option<&'a AtomicBool>,
    /// Whether candidates may run on a database an earlier candidate used
    /// (emptied by the provider): off for the first and the final replay,
    /// which must show the bug on a database made for it.
    reuse: std::cell::Cell<bool>,
    /// Whether the finding's setup had statements the provider derives
    /// from the others (Citus's twins): candidates are then reduced
    /// without them, and every candidate gets them anew.
    derive: std::cell::Cell<bool>,
}

/// The outcome of one reduction.
pub struct Reduction {
    pub finding: Finding,
    pub info: ReductionInfo,
}

impl<'a> Reducer<'a> {
    /// Candidates run on fresh `databases`, through the planted fault
    /// they wrap connections in (the one the finding was made with, if
    /// any: it is part of how the finding reproduces); `catalog` gives
    /// the parser that reads their DBMS's statements.
    pub fn new(databases: &'a Databases, catalog: &Catalog) -> Reducer<'a> {
        Reducer {
            databases,
            catalog: *catalog,
            time_limit: Duration::from_secs(60),
            abort: None,
            reuse: std::cell::Cell::new(false),
            derive: std::cell::Cell::new(false),
        }
    }

    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// Stop early (keeping the best so far) when `flag` is set.
    pub fn with_abort(mut self, flag: &'a AtomicBool) -> Self {
        self.abort = Some(flag);
        self
    }

    /// Runs `f` on a fresh database through the same connection stack as
    /// the run (the planted fault included), then drops the database.
    /// `None` if no database could be made.
    /// A DBMS that is away (a server restarting after a candidate crashed
    /// it) is waited for, up to [`DBMS_BACK_WITHIN`].
    fn on_fresh_database<R>(&self, f: impl FnOnce(&mut Session) -> R) -> Option<R> {
        let index = self.databases.next_index();
        let deadline = Instant::now() + DBMS_BACK_WITHIN;
        let mut wait = Duration::from_millis(100);
        let mut scratch = loop {
            let made = if self.reuse.get() {
                self.databases.create_reusable(Purpose::Reduce, 0, index)
            } else {
                self.databases.create(Purpose::Reduce, 0, index)
            };
            match made {
                Ok(scratch) => break scratch,
                Err(e)
                    if lancet_databases::databases::dbms_is_away(&e)
                        && Instant::now() + wait < deadline
                        && !self.abort.is_some_and(|a| a.load(Ordering::SeqCst)) =>
                {
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(2));
                }
                Err(_) => return None,
            }
        };
        Some(f(scratch.session()))
    }

    /// Whether a crash finding's statements, replayed whole on a fresh
    /// database, crash the DBMS again.
    pub fn crash_repeats(&self, crash: &Finding) -> bool {
        let target = Target::Failure(Symptom::of(crash), failing_knobs(crash));
        let mut budget = Budget::new(Instant::now() + self.time_limit, self.abort);
        self.reproduce(crash, &target, &mut budget).is_ok()
    }

    /// Reduces a finding. Fails if the finding does not reproduce at all.
    pub fn reduce(&self, original: &Finding, from_file: &str) -> anyhow::Result<Reduction> {
        let logic = match original.kind {
            FindingKind::Logic => Some(lancet_findings::replay::oracle_and_case(original)?),
            FindingKind::Performance => {
                anyhow::bail!(
                    "a performance finding is not reduced: each candidate would be timed, slowly and with noise"
                )
            }
            FindingKind::Hang => {
                anyhow::bail!("a hang is not reduced: each candidate could hang the server again")
            }
            _ => None,
        };
        let symptom = Symptom::of(original);
        let mut target = match &logic {
            Some((oracle, _)) => Target::Logic {
                oracle: &**oracle,
                symptom,
                hiding_knob: lancet_findings::localize::first_knob_that_hides(
                    original,
                    self.databases,
                ),
            },
            None => Target::Failure(symptom, failing_knobs(original)),
        };
        // The time limit is for shrinking; localizing the knob above is not
        // counted in it.
        let start = Instant::now();
        let mut budget = Budget::new(start + self.time_limit, self.abort);
        let mut current = self.reproduce(original, &target, &mut budget)?;
        self.reuse.set(true);
        let pinned = self.pinned_statements(&current, &target);
        loop {
            let before = current.clone();
            self.shrink_setup_whole(&mut current, &pinned, &target, &mut budget);
            self.shrink_inputs(&mut current, &target, &mut budget);
            self.shrink_statements_in_place(&mut current, &pinned, &target, &mut budget);
            if budget.stopped || current == before {
                break;
            }
        }
        self.shrink_failure_knobs(&current, &mut target, &mut budget);
        let finding = self.final_replay(original, current, &target)?;
        let info = ReductionInfo {
            from: from_file.to_string(),
            statements_before: original.statement_count(),
            statements_after: finding.statement_count(),
            bytes_before: original.sql_bytes(),
            bytes_after: finding.sql_bytes(),
            seconds: start.elapsed().as_secs_f64(),
            tests: budget.tests,
            complete: !budget.stopped,
        };
        let mut finding = finding;
        finding.reduction = Some(info.clone());
        Ok(Reduction { finding, info })
    }

    /// Why a finding does not reproduce, naming the setup statement that
    /// fails now if one does (the usual reason after a hand edit or on
    /// another DBMS version). `what` names it: the finding, or the reduced
    /// one, whose candidates held, mostly on databases emptied for reuse
    /// (then a reset left something a fresh database lacks).
    fn no_reproduction(&self, what: &str, setup: &[String]) -> String {
        let mut why = format!("{what} does not reproduce on a fresh database");
        if let Some(f) = self.databases.fault() {
            why.push_str(&format!(" (with the planted fault {})", f.name()));
        }
        let failing = self.on_fresh_database(|session| {
            setup.iter().enumerate().find_map(|(i, stmt)| {
                let e = session.connection().execute(stmt).err()?;
                Some((i, e, stmt.clone()))
            })
        });
        match failing {
            Some(Some((i, e, stmt))) => {
                why.push_str(&format!(": setup statement {} fails: {e}\n  {stmt}", i + 1));
            }
            None => why.push_str(": no database could be created to replay it in"),
            Some(None) => {}
        }
        why
    }

    /// A candidate's setup with the statements the provider derives from
    /// it, when the finding had such statements.
    fn full_setup(&self, setup: &[String]) -> Vec<String> {
        let mut full = setup.to_vec();
        if self.derive.get() {
            let derived = self.databases.provider().derived_statements(setup);
            log::trace!("derived statements: {derived:#?}");
            full.extend(derived);
        }
        full
    }
}

/// The base tables a case's query reads, anywhere in it.
fn tables_read(case: &Case) -> Vec<String> {
    // Every table the query reads, in its joins, derived tables and
    // subqueries too (twins builds a twin of each from its definition).
    lancet_core::Query::select(case.query.clone())
        .table_names()
        .into_iter()
        .map(|n| n.to_ascii_lowercase())
        .collect()
}

/// Whether `stmt` is a session setting (`PRAGMA`, `SET`) or creates one of
/// `tables`: what a schema-dependent case was computed against.
fn is_schema_of(stmt: &str, tables: &[String]) -> bool {
    let words: Vec<String> = stmt
        .split(|c: char| c.is_whitespace() || c == '(')
        .filter(|w| !w.is_empty())
        .map(|w| {
            w.trim_matches(|c| c == '"' || c == '`')
                .to_ascii_lowercase()
        })
        .collect();
    let w = |i: usize| words.get(i).map(String::as_str).unwrap_or("");
    if matches!(w(0), "pragma" | "set") {
        return true;
    }
    if w(0) != "create" {
        return false;
    }
    let mut i = 1;
    while matches!(w(i), "temp" | "temporary" | "unlogged") {
        i += 1;
    }
    if w(i) != "table" {
        return false;
    }
    i += 1;
    if w(i) == "if" {
        i += 3;
    }
    tables.iter().any(|t| t == w(i))
}

/// What lancet adds to a reduced finding to explain it: the knobs that
/// hide it or flip it (`localize`), what its tables hold (`stored_rows`)
/// and which side is wrong (`wrong_side`). From a run's reducers and from
/// `lancet reduce` alike. The last two share one fresh database, set up
/// once.
pub fn explain(f: &mut Finding, databases: &lancet_databases::databases::Databases) {
    f.hidden_by_knobs = lancet_findings::localize::knobs_that_hide(f, databases);
    f.flipped_by_knobs = lancet_findings::localize::knobs_that_flip(f);
    f.stored = Vec::new();
    f.wrong_side = None;
    if f.kind != FindingKind::Logic {
        return;
    }
    let mut scratch = match databases.create_reusable(Purpose::Reduce, 0, databases.next_index()) {
        Ok(s) => s,
        Err(e) => {
            f.wrong_side = Some(lancet_findings::findings::WrongSide::cannot_tell(format!(
                "no scratch database: {e:#}"
            )));
            return;
        }
    };
    let session = scratch.session();
    if let Some((i, e)) = f
        .setup
        .iter()
        .enumerate()
        .find_map(|(i, stmt)| session.connection().execute(stmt).err().map(|e| (i, e)))
    {
        f.wrong_side = Some(lancet_findings::findings::WrongSide::cannot_tell(format!(
            "setup statement {} fails on a fresh database: {e}",
            i + 1
        )));
        return;
    }
    f.stored = lancet_findings::stored_rows::read(f, session);
    f.wrong_side = Some(lancet_findings::wrong_side::judge(
        f,
        databases.provider(),
        session,
    ));
}

/// The knobs a failure finding's statement ran under (see
/// [`Finding::set_failing_knobs`]).
fn failing_knobs(finding: &Finding) -> lancet_core::KnobSetting {
    finding
        .queries
        .first()
        .map(|q| q.context.knobs.clone())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{is_schema_of, Direction};

    #[test]
    fn schema_statements_are_recognised() {
        let t = vec!["t0".to_string()];
        assert!(is_schema_of("CREATE TABLE t0 (c0 INT)", &t));
        assert!(is_schema_of("CREATE TABLE IF NOT EXISTS \"t0\"(c0)", &t));
        assert!(!is_schema_of("CREATE TABLE t1 (c0 INT)", &t));
        assert!(is_schema_of("PRAGMA case_sensitive_like = 1", &t));
        assert!(!is_schema_of("INSERT INTO t0 VALUES (1)", &t));
        assert!(!is_schema_of("CREATE INDEX i0 ON t0 (c0)", &t));
    }
    use lancet_core::compare::RowDiff;
    use lancet_core::Value;

    #[test]
    fn direction_tells_which_count_is_larger() {
        let d = |a: i64, b: i64| RowDiff {
            only_in_first: vec![(vec![Value::Integer(a)], 1)],
            only_in_second: vec![(vec![Value::Integer(b)], 1)],
            ..RowDiff::default()
        };
        assert_eq!(Direction::of(&d(120, 60)), Direction::of(&d(2, 1)));
        assert_ne!(Direction::of(&d(120, 60)), Direction::of(&d(1, 2)));
        let missing = RowDiff {
            only_in_first: vec![],
            only_in_second: vec![(vec![Value::Integer(1)], 1)],
            ..RowDiff::default()
        };
        assert_ne!(Direction::of(&missing), Direction::of(&d(1, 2)));
    }
}

/// What unit tests read SQL with: SQLite's description alone.
#[cfg(test)]
mod fixture {
    pub const CATALOG: lancet_engine::Catalog =
        lancet_engine::Catalog::new(&[&lancet_sqlite::description::SQLITE]);
}
