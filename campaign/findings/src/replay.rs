//! Replaying reproducers: does a finding still show on this DBMS build?
//! A CI gate keeps its known open bugs as reproducers and replays them; a
//! fixed bug's reproducer becomes a regression test that must pass.

use crate::findings::{Finding, FindingKind, FoundQuery};
use crate::judge::{Judgment, Symptom};
use anyhow::{bail, Context};
use lancet_core::fault::Fault;
use lancet_core::{
    run_check_with_knobs_off, Case, CheckOutcome, DbError, ExecError, FailureKind, KnobSetting,
    Oracle, Session,
};
use lancet_databases::databases::{Databases, Purpose};

/// What replaying one reproducer showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// The relation still breaks (or the error or crash still happens).
    /// `same`: exactly as recorded (the same rows differ; the same error
    /// code), which is what confirming a finding on a fresh database asks.
    StillFails { why: String, same: bool },
    /// The reproducer runs and the relation holds.
    Passes(String),
}

/// The connection died while a reproducer was replayed: the server
/// crashed, restarted or killed the session. Not a verdict on the
/// reproducer, and a crash of its own: `setup_run` setup statements had
/// run when `sql` lost the connection.
#[derive(Debug, thiserror::Error)]
#[error("the connection was lost while replaying ({error}) in: {sql}")]
pub struct LostInReplay {
    pub setup_run: usize,
    pub sql: String,
    pub error: DbError,
}

impl LostInReplay {
    /// Whether a failure of `error`'s kind is a lost session.
    fn is_lost(error: &DbError) -> bool {
        matches!(error.kind, FailureKind::ConnectionLost | FailureKind::Hang)
    }

    /// The crash (or hang) met while `replayed` was replayed, as a
    /// finding: the setup statements that had run, then the statement
    /// that lost the connection, in the context it ran in if it was one of
    /// the check's queries.
    pub fn finding(&self, replayed: &Finding) -> Finding {
        let kind = if self.error.kind == FailureKind::Hang {
            FindingKind::Hang
        } else {
            FindingKind::Crash
        };
        let failing = match replayed.queries.iter().find(|q| q.sql == self.sql) {
            Some(q) if replayed.kind.is_relation() => FoundQuery {
                role: FoundQuery::failing(String::new()).role,
                row_count: None,
                ..q.clone()
            },
            _ => FoundQuery::failing(self.sql.clone()),
        };
        Finding {
            kind,
            relation: None,
            setup: replayed.setup[..self.setup_run.min(replayed.setup.len())].to_vec(),
            queries: vec![failing],
            error: Some(self.error.clone()),
            ..replayed.unexplained()
        }
    }
}

/// Replays `finding` on a fresh database (through the planted fault the
/// databases were made with, if any).
pub fn replay(finding: &Finding, databases: &Databases) -> anyhow::Result<Replayed> {
    let mut scratch = databases
        .create(Purpose::Replay, 0, databases.next_index())
        .context("cannot create a database to replay in")?;
    replay_on(finding, scratch.session())
}

/// Replays `finding` on the fresh database of `session`: its setup, then
/// its oracle's check through the one check executor (or its failing
/// statement).
pub fn replay_on(finding: &Finding, session: &mut Session) -> anyhow::Result<Replayed> {
    replay_with_knobs_off(finding, session, &KnobSetting::default())
}

/// [`replay_on`] with the knobs of `also_off` turned off for every query
/// of a logic finding's check: which knob hides a bug
/// ([`crate::localize`]).
pub fn replay_with_knobs_off(
    finding: &Finding,
    session: &mut Session,
    also_off: &KnobSetting,
) -> anyhow::Result<Replayed> {
    for (i, stmt) in finding.setup.iter().enumerate() {
        match session.connection().execute(stmt) {
            Ok(()) => {}
            Err(error) if LostInReplay::is_lost(&error) => {
                return Err(LostInReplay {
                    setup_run: i,
                    sql: stmt.clone(),
                    error,
                }
                .into())
            }
            Err(e) => bail!(
                "setup statement {} fails now, so the reproducer no longer runs: {e}\n  {stmt}",
                i + 1
            ),
        }
    }
    let setup_run = finding.setup.len();
    let symptom = Symptom::of(finding);
    let judged = match finding.kind {
        FindingKind::Logic | FindingKind::Performance => {
            let (oracle, case) = oracle_and_case(finding)?;
            let outcome = run_check_with_knobs_off(session, &*oracle, case, also_off)?;
            let counts = match &outcome {
                CheckOutcome::Disagreed { queries, .. } | CheckOutcome::Agreed { queries, .. } => {
                    queries
                        .iter()
                        .map(|q| q.rows.to_string())
                        .collect::<Vec<_>>()
                        .join(" vs ")
                }
                _ => String::new(),
            };
            match (symptom.judge_check(&outcome, &counts), outcome) {
                (Some(judged), _) => judged,
                (None, CheckOutcome::Skipped(e)) => {
                    bail!("a query fails now with an error lancet expects: {e}")
                }
                (None, CheckOutcome::Failed(ExecError::Lost { sql, error })) => {
                    return Err(LostInReplay {
                        setup_run,
                        sql,
                        error,
                    }
                    .into())
                }
                (None, CheckOutcome::Failed(e)) => bail!("a query fails now: {e}"),
                (None, _) => bail!("the check could not be judged"),
            }
        }
        FindingKind::UnexpectedError | FindingKind::Crash | FindingKind::Hang => {
            let stmt = finding
                .queries
                .first()
                .context("the record has no failing statement")?;
            // A statement that failed under knobs runs under them again.
            if !stmt.context.knobs.is_default() {
                session
                    .connection()
                    .set_knobs(&stmt.context.knobs)
                    .map_err(|e| anyhow::anyhow!("the recorded knobs cannot be set now: {e}"))?;
            }
            let result = session.connection().query(&stmt.sql);
            match &result {
                // An error finding whose statement now loses the
                // connection: a crash of its own, not a verdict.
                Err(error)
                    if finding.kind == FindingKind::UnexpectedError
                        && LostInReplay::is_lost(error) =>
                {
                    return Err(LostInReplay {
                        setup_run,
                        sql: stmt.sql.clone(),
                        error: error.clone(),
                    }
                    .into())
                }
                _ => symptom.judge_statement(&result),
            }
        }
    };
    Ok(match judged {
        Judgment::Exactly(why) => Replayed::StillFails { why, same: true },
        Judgment::SameBug(why) | Judgment::Other(why) => Replayed::StillFails { why, same: false },
        Judgment::Passes(why) => Replayed::Passes(why),
    })
}

/// The oracle a logic finding names and its case.
pub fn oracle_and_case(finding: &Finding) -> anyhow::Result<(Box<dyn Oracle>, &Case)> {
    let oracle = finding
        .oracle
        .as_deref()
        .and_then(lancet_oracles::by_name)
        .with_context(|| {
            format!(
                "the record names no oracle lancet knows ({})",
                finding.oracle.as_deref().unwrap_or("none")
            )
        })?;
    let case = finding
        .case
        .as_ref()
        .context("the record has no oracle case to compare with")?;
    Ok((oracle, case))
}

/// Checks that a logic finding's record is one its oracle could have made:
/// the oracle rebuilds its queries from the recorded case, and they must
/// be the recorded ones. A record whose oracle does not fit its case (a
/// hand edit, a record of another oracle) would be judged under the wrong
/// relation.
pub fn check_case(finding: &Finding, dialect: lancet_core::Dialect) -> anyhow::Result<()> {
    if !finding.kind.is_relation() {
        return Ok(());
    }
    let name = finding.oracle.as_deref().unwrap_or("none");
    let (oracle, case) = oracle_and_case(finding)?;
    let rebuilt: Vec<String> = oracle
        .queries(case)
        .with_context(|| {
            format!("the record's case is not one oracle {name} can build queries from")
        })?
        .iter()
        .map(|q| q.sql(dialect))
        .collect();
    let recorded: Vec<&str> = finding.queries.iter().map(|q| q.sql.as_str()).collect();
    if let Some((built, had)) = rebuilt
        .iter()
        .map(String::as_str)
        .zip(recorded.iter().copied())
        .find(|(a, b)| a != b)
        .or_else(|| (rebuilt.len() != recorded.len()).then_some(("", "")))
    {
        bail!(
            "the record's queries are not what oracle {name} builds from its case: the record does \
             not fit its oracle (edited by hand, or made by another oracle)\n  recorded: {had}\n  \
             the oracle builds: {built}"
        );
    }
    Ok(())
}

/// The planted fault recorded in a finding, unless `without` is set.
pub fn recorded_fault(finding: &Finding, without: bool) -> anyhow::Result<Option<Fault>> {
    match (&finding.fault, without) {
        (Some(name), false) => match lancet_oracles::fault(name) {
            Some(f) => Ok(Some(f)),
            None => bail!("the record names an unknown planted fault '{name}'"),
        },
        _ => Ok(None),
    }
}
