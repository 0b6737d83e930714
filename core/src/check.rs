//! The one way lancet runs a check: an oracle's queries, each in its
//! context, through a [`Session`] (so that expected errors are told from
//! findings the same way everywhere), then the oracle's comparison.
//! Fuzzing, confirmation on a fresh database, replay and every reduction
//! candidate go through [`run_check`].

use crate::case::{Case, CaseError};
use crate::connection::DbError;
use crate::fault::{FaultedQuery, FaultedResult};
use crate::knobs::KnobSetting;
use crate::oracle::{Disagreement, Oracle, QueryContext, Verdict};
use crate::print::ToSql;
use crate::session::{ExecError, Session};
use crate::value::Row;

/// One query of a check, as it ran.
#[derive(Clone, Debug, PartialEq)]
pub struct RanQuery {
    pub role: String,
    pub sql: String,
    pub context: QueryContext,
    pub rows: usize,
    /// A statement that materialized a query ([`OracleQuery::materialize`]):
    /// no rows to report.
    pub statement: bool,
    /// The rows it returned, as the oracle compared them (after a planted
    /// fault, if any); empty for a statement. Moved here after the
    /// comparison, so keeping them costs nothing.
    pub result: Vec<Row>,
}

/// What one check came to.
#[derive(Debug)]
pub enum CheckOutcome {
    /// The relation holds.
    Agreed {
        nonempty: bool,
        queries: Vec<RanQuery>,
    },
    /// The relation is broken.
    Disagreed {
        disagreement: Disagreement,
        queries: Vec<RanQuery>,
    },
    /// A query raised an expected error or ran over its time limit: the
    /// check says nothing.
    Skipped(DbError),
    /// A query failed in a way that is a finding of its own: an unexpected
    /// error, a lost connection, a hang.
    Failed(ExecError),
}

/// Runs `oracle`'s queries for `case` on `session` and compares them. The
/// knobs a query asks for are in force for that query only; the defaults
/// are back when this returns. Fails only if the oracle cannot build its
/// queries from `case`.
pub fn run_check(
    session: &mut Session,
    oracle: &dyn Oracle,
    case: &Case,
) -> Result<CheckOutcome, CaseError> {
    run_check_with_knobs_off(session, oracle, case, &KnobSetting::default())
}

/// [`run_check`] with the knobs of `also_off` turned off for every query
/// as well: which knob, off alone, makes a disagreement vanish points to
/// the optimization at fault (root-cause grouping).
pub fn run_check_with_knobs_off(
    session: &mut Session,
    oracle: &dyn Oracle,
    case: &Case,
    also_off: &KnobSetting,
) -> Result<CheckOutcome, CaseError> {
    let mut queries = oracle.queries(case)?;
    for q in &mut queries {
        for k in &also_off.changes {
            if !q.context.knobs.changes.contains(k) {
                q.context.knobs.changes.push(k.clone());
            }
        }
    }
    let mut results = Vec::with_capacity(queries.len());
    let mut times = Vec::with_capacity(queries.len());
    let mut ran = Vec::with_capacity(queries.len());
    let mut failed = None;
    // Consecutive queries under one knob setting run as one batch (one
    // round trip to a worker process).
    let mut rest = &queries[..];
    while let Some(first) = rest.first() {
        if let Some(name) = &first.materialize {
            rest = &rest[1..];
            let sql = first.sql(session.dialect());
            let made = if first.builds.is_empty() {
                session
                    .set_knobs(&first.context.knobs)
                    .and_then(|()| session.materialize(name, &sql))
            } else {
                session.build(name, &first.builds)
            };
            if let Err(e) = made {
                failed = Some(e);
                break;
            }
            ran.push(RanQuery {
                role: first.role.clone(),
                sql,
                context: first.context.clone(),
                rows: 0,
                statement: true,
                result: Vec::new(),
            });
            continue;
        }
        // A query with rolled-back statements runs alone, in its
        // transaction.
        let n = if first.rolled_back.is_empty() {
            rest.iter()
                .take_while(|q| {
                    q.context.knobs == first.context.knobs
                        && q.materialize.is_none()
                        && q.rolled_back.is_empty()
                })
                .count()
        } else {
            1
        };
        let (batch, tail) = rest.split_at(n);
        rest = tail;
        if let Err(e) = session.set_knobs(&first.context.knobs) {
            failed = Some(e);
            break;
        }
        let sqls: Vec<String> = batch.iter().map(|q| q.sql(session.dialect())).collect();
        let before = session.stats.dbms_time;
        let outcomes = if first.rolled_back.is_empty() {
            session.query_many(&sqls)
        } else {
            let dialect = session.dialect();
            let statements: Vec<_> = first
                .rolled_back
                .iter()
                .map(|d| d.kind())
                .zip(first.statements_sql(dialect))
                .collect();
            vec![session.query_rolled_back(&statements, &first.query.to_sql(dialect))]
        };
        // A batch is one round trip: its time is shared by its queries
        // (the performance oracle runs one query per batch).
        let each = (session.stats.dbms_time.saturating_sub(before)) / (sqls.len().max(1) as u32);
        let fault = session.fault().cloned();
        for ((q, sql), outcome) in batch.iter().zip(sqls).zip(outcomes) {
            match outcome {
                Ok(mut rows) => {
                    let mut time = each;
                    if let Some(fault) = &fault {
                        let query = FaultedQuery {
                            query: q,
                            sql: &sql,
                        };
                        let mut result = FaultedResult {
                            rows: &mut rows,
                            time: &mut time,
                        };
                        fault.perturb(&query, &mut result);
                    }
                    ran.push(RanQuery {
                        role: q.role.clone(),
                        sql,
                        context: q.context.clone(),
                        rows: rows.len(),
                        statement: false,
                        result: Vec::new(),
                    });
                    results.push(rows);
                    times.push(time);
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if failed.is_some() {
            break;
        }
    }
    let restored = session.set_knobs(&KnobSetting::default());
    match (failed, restored) {
        (Some(ExecError::Expected(e)), _) => return Ok(CheckOutcome::Skipped(e)),
        (Some(e), _) | (None, Err(e)) => return Ok(CheckOutcome::Failed(e)),
        (None, Ok(())) => {}
    }
    let verdict = oracle.compare_timed(case, &results, &times)?;
    for (ran, rows) in ran.iter_mut().filter(|r| !r.statement).zip(results) {
        ran.result = rows;
    }
    Ok(match verdict {
        Verdict::Agree { nonempty } => CheckOutcome::Agreed {
            nonempty,
            queries: ran,
        },
        Verdict::Disagree(disagreement) => CheckOutcome::Disagreed {
            disagreement,
            queries: ran,
        },
    })
}
