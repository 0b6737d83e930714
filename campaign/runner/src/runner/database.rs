//! One database's life in a campaign: populated from its own seeded RNG,
//! then checked by the oracles through the one check executor until its
//! checks are done, a finding ends it, or the run stops. The same loop runs
//! on a worker thread (server DBMSs, `--in-process`) and inside a child
//! process ([`super::child`], crash isolation for embedded engines); where
//! its counts go and when it must stop is the [`Progress`] of each.

use super::OracleSet;
use crate::findings::{Finding, FindingSource, Origin};
use lancet_core::rng::database_rng;
use lancet_core::session::SessionStats;
use lancet_core::ShapeTimes;
use lancet_core::{run_check, Case, CheckOutcome, ExecError, GenerateContext, Provider, Session};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What the loop reports as it goes, and how it learns to stop.
pub trait Progress {
    /// Whether to stop before the next check (interrupt, time-out, limit).
    fn should_stop(&self) -> bool;
    /// A check of oracle `oracle` (its index in the set) passed or found
    /// something; `nonempty` if it looked at rows.
    fn check(&mut self, oracle: usize, nonempty: bool);
    /// A check was skipped on an expected error or a time-out.
    fn skipped(&mut self);
    /// Statements run and the time spent inside the DBMS on them.
    fn statements(&mut self, count: u64, dbms_time: Duration);
    /// Statement time by shape (only when the run profiles).
    fn shapes(&mut self, shapes: ShapeTimes);
    /// Check `check` of oracle `oracle` is about to run its queries.
    fn check_begins(&mut self, _check: u64, _oracle: &str) {}
    /// This many query plans were run for the first time in this database.
    fn plans(&mut self, new: u64);
    /// Something worth saying once (a statement log that cannot be written).
    fn warn(&mut self, what: String);
}

/// How one database is generated and checked.
pub struct DatabasePlan<'a> {
    pub provider: &'a dyn Provider,
    pub oracles: &'a OracleSet,
    pub source: FindingSource<'a>,
    pub seed: u64,
    pub thread: u32,
    pub database: u64,
    pub checks_per_database: u64,
    /// Directory for the statement log (`--log-statements`).
    pub log_dir: Option<&'a Path>,
    pub profile_shapes: bool,
}

/// How a database's run ended.
pub enum DatabaseEnd {
    /// All its checks ran; this many drew a case (0: the oracles found
    /// nothing to test here).
    Done { cases: u64 },
    /// A finding ended it (the caller records it, on a fresh database).
    Found(Box<Finding>),
    /// The run stopped in the middle.
    Stopped,
    /// The child process running the database died outside the engine
    /// (killed from outside, or by the system for memory): not the DBMS's
    /// doing, so no finding; the database is lost and the thread goes on
    /// with a new process, unless it keeps happening.
    Lost(String),
}

/// The statement log of a database (`--log-statements`).
pub fn statement_log_path(dir: &Path, thread: u32, database: u64) -> PathBuf {
    dir.join(format!("t{thread}-d{database}.sql"))
}

/// Populates the database behind `session` and runs its checks. Errors
/// are lancet's own bugs (an oracle that cannot run its own case).
pub fn run_database(
    plan: &DatabasePlan<'_>,
    progress: &mut dyn Progress,
    session: &mut Session<'_>,
) -> anyhow::Result<DatabaseEnd> {
    let mut rng = database_rng(plan.seed, plan.thread, plan.database);
    open_statement_log(plan, progress, session);
    if plan.profile_shapes {
        session.shapes = Some(Default::default());
    }
    let populated = plan.provider.populate(&mut rng, session);
    let mut accounted = SessionStats::default();
    account(progress, session, &mut accounted);
    let generated = match populated {
        Ok(generated) => generated,
        Err(e) => {
            let setup = session.setup().to_vec();
            let finding = failure_finding(plan, session, None, plan.origin(0), setup, e);
            finish_log(progress, session);
            return Ok(DatabaseEnd::Found(Box::new(finding)));
        }
    };
    let mut generator = generated.query_generator();
    let knobs = plan.provider.knobs();
    let mut plans = lancet_core::PlanCoverage::default();
    let mut memo = lancet_core::OracleMemo::default();
    let mut cases = 0;
    for check in 0..plan.checks_per_database {
        if progress.should_stop() {
            finish_log(progress, session);
            return Ok(DatabaseEnd::Stopped);
        }
        let which = plan.oracles.pick(&mut rng);
        let oracle = plan.oracles.get(which);
        let case = oracle.generate(&mut GenerateContext {
            rng: &mut rng,
            generator: &mut *generator,
            data: &mut *session,
            knobs: &knobs,
            plans: &mut plans,
            schema: generated.schema(),
            dialect: plan.provider.dialect(),
            memo: &mut memo,
        });
        let new_plans = plans.take_new();
        if new_plans > 0 {
            progress.plans(new_plans);
        }
        let (found, saw_rows) = match case {
            None => (None, false),
            Some(case) => {
                cases += 1;
                run_case(plan, progress, session, which, check, case)?
            }
        };
        generator.check_ended(saw_rows);
        account(progress, session, &mut accounted);
        if let Some(finding) = found {
            progress.check(which, true);
            finish_log(progress, session);
            return Ok(DatabaseEnd::Found(Box::new(finding)));
        }
    }
    finish_log(progress, session);
    Ok(DatabaseEnd::Done { cases })
}

impl DatabasePlan<'_> {
    /// Where check `check` of this database comes from, for its finding.
    fn origin(&self, check: u64) -> Origin {
        Origin {
            seed: self.seed,
            thread: self.thread,
            database: self.database,
            check,
            rotation: self.oracles.names().len() > 1,
        }
    }
}

/// Starts the database's statement log (`--log-statements`); one that
/// cannot be created is a warning, not the end of the database.
fn open_statement_log(plan: &DatabasePlan<'_>, progress: &mut dyn Progress, session: &mut Session) {
    if let Some(dir) = plan.log_dir {
        let path = statement_log_path(dir, plan.thread, plan.database);
        match std::fs::File::create(&path) {
            Ok(file) => session.set_log(Box::new(std::io::BufWriter::new(file))),
            Err(e) => progress.warn(format!(
                "cannot create statement log {}: {e}",
                path.display()
            )),
        }
    }
}

/// Reports to `progress` the statements run since `accounted` (and their
/// shapes, when the run profiles), and moves `accounted` up to now.
fn account(progress: &mut dyn Progress, session: &mut Session, accounted: &mut SessionStats) {
    if let Some(shapes) = &mut session.shapes {
        progress.shapes(std::mem::take(shapes));
    }
    let stats = session.stats;
    progress.statements(
        stats.statements - accounted.statements,
        stats.dbms_time - accounted.dbms_time,
    );
    *accounted = stats;
}

/// Runs the case oracle number `which` drew for check number `check`:
/// the finding it makes, if any, and whether it saw rows.
fn run_case(
    plan: &DatabasePlan<'_>,
    progress: &mut dyn Progress,
    session: &mut Session<'_>,
    which: usize,
    check: u64,
    case: Case,
) -> anyhow::Result<(Option<Finding>, bool)> {
    let oracle = plan.oracles.get(which);
    progress.check_begins(check, oracle.name());
    Ok(match run_check(session, oracle, &case) {
        Ok(CheckOutcome::Agreed { nonempty, .. }) => {
            progress.check(which, nonempty);
            (None, nonempty)
        }
        Ok(CheckOutcome::Skipped(why)) => {
            log::debug!("check {check} of {} skipped: {why}", oracle.name());
            progress.skipped();
            (None, false)
        }
        Ok(CheckOutcome::Disagreed {
            disagreement,
            queries,
        }) => {
            let finding = Finding::logic(
                &plan.source,
                plan.origin(check),
                session.setup().to_vec(),
                case,
                disagreement,
                &queries,
            );
            (Some(finding), false)
        }
        // The failing statement may read tables the session
        // materialized for earlier checks: they follow the setup.
        Ok(CheckOutcome::Failed(e)) => {
            let setup = session
                .setup()
                .iter()
                .cloned()
                .chain(session.materializations().map(str::to_string))
                .collect();
            let finding = failure_finding(
                plan,
                session,
                Some(oracle.name()),
                plan.origin(check),
                setup,
                e,
            );
            (Some(finding), false)
        }
        // The oracle cannot build queries from the case it just
        // drew: a bug of lancet's, not of the DBMS.
        Err(e) => {
            anyhow::bail!("oracle {} drew a case it cannot run: {e}", oracle.name())
        }
    })
}

/// A failure finding. A lost connection names the statement that lost it
/// first, with the knobs it ran under: a loss met while plans were read
/// for a knob check shows only at the next statement, which did not
/// cause it. An unexpected error carries the knobs its statement ran
/// under.
fn failure_finding(
    plan: &DatabasePlan,
    session: &Session,
    oracle: Option<&str>,
    origin: Origin,
    setup: Vec<String>,
    e: ExecError,
) -> Finding {
    let (e, knobs) = match (e, session.first_loss()) {
        (ExecError::Lost { .. }, Some(loss)) => (
            ExecError::Lost {
                sql: loss.sql.clone(),
                error: loss.error.clone(),
            },
            Some(loss.knobs.clone()),
        ),
        // An unexpected error of a knob check's query needs its knobs:
        // the reproducer sets them first.
        (e @ ExecError::Unexpected { .. }, _) => (e, Some(session.failure_knobs().clone())),
        (e, _) => (e, None),
    };
    let mut finding = Finding::failure(&plan.source, oracle, origin, setup, e);
    if let Some(knobs) = knobs {
        finding.set_failing_knobs(plan.provider, knobs);
    }
    finding
}

/// Flushes a database's statement log; a log that cannot be written (a
/// full disk) is said, not silently emptied.
fn finish_log(progress: &mut dyn Progress, session: &mut Session) {
    session.flush_log();
    if let Some(e) = session.log_error() {
        progress.warn(format!("a statement log could not be written: {e}"));
    }
}
