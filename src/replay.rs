//! Replaying reproducers: does a finding still show on this DBMS build?
//! A CI gate keeps its known open bugs as reproducers and replays them; a
//! fixed bug's reproducer becomes a regression test that must pass.

use crate::databases::{Databases, Purpose};
use crate::findings::{Finding, FindingKind};
use anyhow::{bail, Context};
use lancet_core::fault::{Fault, FaultyConnection};
use lancet_core::{Connection, FailureKind, Verdict};

/// What replaying one reproducer showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// The relation still breaks (or the error or crash still happens).
    StillFails(String),
    /// The reproducer runs and the relation holds.
    Passes(String),
}

/// Replays `finding` on a fresh database, through `fault` if given (the
/// planted fault a selftest finding was made with).
pub fn replay(
    finding: &Finding,
    databases: &Databases,
    fault: Option<Fault>,
) -> anyhow::Result<Replayed> {
    let mut scratch = databases
        .create(Purpose::Replay, 0, databases.next_index())
        .context("cannot create a database to replay in")?;
    let conn = scratch.take_conn();
    let mut conn: Box<dyn Connection> = match fault {
        Some(f) => Box::new(FaultyConnection::new(conn, f)),
        None => conn,
    };
    let outcome = replay_on(finding, &mut *conn);
    drop(conn);
    drop(scratch);
    outcome
}

fn replay_on(finding: &Finding, conn: &mut dyn Connection) -> anyhow::Result<Replayed> {
    for (i, stmt) in finding.setup.iter().enumerate() {
        conn.execute(stmt).map_err(|e| {
            anyhow::anyhow!(
                "setup statement {} fails now, so the reproducer no longer runs: {e}\n  {stmt}",
                i + 1
            )
        })?;
    }
    match finding.kind {
        FindingKind::Logic => {
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
            let mut results = Vec::new();
            for q in &finding.queries {
                let rows = conn
                    .query(&q.sql)
                    .map_err(|e| anyhow::anyhow!("query `{}` fails now: {e}", q.role))?;
                results.push(rows);
            }
            let counts: Vec<String> = results.iter().map(|r| r.len().to_string()).collect();
            Ok(match oracle.compare(case, &results) {
                Verdict::Disagree(d) => {
                    Replayed::StillFails(format!("{} ({} rows)", d.relation, counts.join(" vs ")))
                }
                Verdict::Agree { .. } => {
                    Replayed::Passes(format!("the relation holds ({} rows)", counts.join(" vs ")))
                }
            })
        }
        FindingKind::UnexpectedError | FindingKind::Crash | FindingKind::Hang => {
            let stmt = finding
                .queries
                .first()
                .context("the record has no failing statement")?;
            let expected = finding.error.as_ref();
            Ok(match conn.query(&stmt.sql) {
                Err(e) if finding.kind == FindingKind::Hang => {
                    if e.kind == FailureKind::Hang {
                        Replayed::StillFails(format!("the DBMS hangs again: {e}"))
                    } else {
                        Replayed::Passes(format!("no hang; the statement ends with {e}"))
                    }
                }
                Ok(_) if finding.kind == FindingKind::Hang => {
                    Replayed::Passes("no hang; the statement succeeds now".into())
                }
                Err(e) if finding.kind == FindingKind::Crash => {
                    if e.kind == FailureKind::ConnectionLost {
                        Replayed::StillFails(format!("the connection is lost again: {e}"))
                    } else {
                        Replayed::Passes(format!("no crash; the statement fails with {e}"))
                    }
                }
                Err(e) if Some(&e.code) == expected.map(|x| &x.code) => {
                    Replayed::StillFails(format!("fails again: {e}"))
                }
                Err(e) => Replayed::Passes(format!("fails with another error now: {e}")),
                Ok(_) => Replayed::Passes("the statement succeeds now".into()),
            })
        }
    }
}

/// Checks that a logic finding's record is one its oracle could have made:
/// the oracle rebuilds its queries from the recorded case, and they must
/// be the recorded ones. A record whose oracle does not fit its case (a
/// hand edit, a record of another oracle) would be judged under the wrong
/// relation.
pub fn check_case(finding: &Finding, dialect: lancet_core::Dialect) -> anyhow::Result<()> {
    if finding.kind != FindingKind::Logic {
        return Ok(());
    }
    let name = finding.oracle.as_deref().unwrap_or("none");
    let oracle = lancet_oracles::by_name(name)
        .with_context(|| format!("the record names no oracle lancet knows ({name})"))?;
    let case = finding
        .case
        .as_ref()
        .context("the record has no oracle case to compare with")?;
    let rebuilt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        oracle
            .queries(case)
            .iter()
            .map(|q| lancet_core::ToSql::to_sql(&q.query, dialect))
            .collect::<Vec<_>>()
    }))
    .map_err(|_| {
        anyhow::anyhow!("the record's case is not one oracle {name} can build queries from")
    })?;
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
        (Some(name), false) => match Fault::parse(name) {
            Some(f) => Ok(Some(f)),
            None => bail!("the record names an unknown planted fault '{name}'"),
        },
        _ => Ok(None),
    }
}
