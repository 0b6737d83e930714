//! Replaying reproducers: does a finding still show on this DBMS build?
//! A CI gate keeps its known open bugs as reproducers and replays them; a
//! fixed bug's reproducer becomes a regression test that must pass.

use crate::findings::{Finding, FindingKind};
use anyhow::{bail, Context};
use lancet_core::fault::{Fault, FaultyConnection};
use lancet_core::{Connection, DatabaseId, FailureKind, Provider, Verdict};
use std::sync::atomic::{AtomicU64, Ordering};

/// What replaying one reproducer showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// The relation still breaks (or the error or crash still happens).
    StillFails(String),
    /// The reproducer runs and the relation holds.
    Passes(String),
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// Replays `finding` on a fresh database of `provider`, through `fault` if
/// given (the planted fault a selftest finding was made with).
pub fn replay(
    finding: &Finding,
    provider: &dyn Provider,
    fault: Option<Fault>,
) -> anyhow::Result<Replayed> {
    let id = DatabaseId {
        run: format!("replay{}", std::process::id()),
        thread: 0,
        index: NEXT.fetch_add(1, Ordering::Relaxed),
    };
    let created = provider
        .create_database(&id)
        .context("cannot create a database to replay in")?;
    let (conn, owned) = (created.conn, created.owned);
    let mut conn: Box<dyn Connection> = match fault {
        Some(f) => Box::new(FaultyConnection::new(conn, f)),
        None => conn,
    };
    let outcome = replay_on(finding, &mut *conn);
    drop(conn);
    let _ = provider.drop_database(&owned);
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
                .with_context(|| format!("unknown oracle {:?}", finding.oracle))?;
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
        FindingKind::UnexpectedError | FindingKind::Crash => {
            let stmt = finding
                .queries
                .first()
                .context("the record has no failing statement")?;
            let expected = finding.error.as_ref();
            Ok(match conn.query(&stmt.sql) {
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
