//! Which side of a logic finding is wrong. A relation that breaks says
//! that some query returned a wrong result, not which; a maintainer has to
//! know before reading a plan. lancet says it where it can be decided:
//!
//! - by the oracle's relation, when only one side can be wrong
//!   ([`lancet_core::Oracle::wrong_by_relation`]: PQS, whose pivot row
//!   lancet's own evaluator put in the result; dist-vs-local, whose twins
//!   are plain local tables);
//! - otherwise by the DBMS itself with every optimization off: the case
//!   runs again on a fresh database with every optimizer switch of the
//!   provider turned off. If the relation holds then, the queries whose
//!   rows changed are the wrong ones (an optimization broke them), and what
//!   they return with every switch off is what they should return;
//! - otherwise lancet says that it cannot tell, and why.

use crate::databases::{Databases, Purpose};
use crate::findings::{Finding, FindingKind};
use crate::replay::oracle_and_case;
use lancet_core::{run_check, run_check_with_knobs_off, CheckOutcome, KnobSetting, Row, Session};
use serde::{Deserialize, Serialize};

/// Rows of the right result shown in a reproducer, at most.
const SHOWN_ROWS: usize = 20;

/// What lancet could decide about which query of a finding is wrong.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WrongSide {
    /// The roles of the wrong queries (`partitioned`, `pivot query`);
    /// empty when lancet cannot tell.
    pub wrong: Vec<String>,
    /// How lancet knows, or why it cannot tell.
    pub how: String,
    /// What the (first) wrong query should return, when known: its row
    /// count and its first rows as the client prints values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_rows: Option<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected: Vec<String>,
}

impl WrongSide {
    fn cannot_tell(why: impl Into<String>) -> WrongSide {
        WrongSide {
            wrong: Vec::new(),
            how: why.into(),
            expected_rows: None,
            expected: Vec::new(),
        }
    }
}

/// Decides the wrong side of a logic finding; `None` for other kinds.
pub fn judge(finding: &Finding, databases: &Databases) -> Option<WrongSide> {
    if finding.kind != FindingKind::Logic {
        return None;
    }
    let (oracle, case) = match oracle_and_case(finding) {
        Ok(found) => found,
        Err(e) => return Some(WrongSide::cannot_tell(format!("{e:#}"))),
    };
    if let Some((role, why)) = oracle.wrong_by_relation() {
        return Some(WrongSide {
            wrong: vec![role.to_string()],
            how: format!("by the oracle's relation: {why}"),
            expected_rows: None,
            expected: Vec::new(),
        });
    }
    let all_off: KnobSetting = databases.provider().every_optimization_off();
    if all_off.is_default() {
        return Some(WrongSide::cannot_tell(
            "either query may be wrong, and this DBMS has no optimizer switch to turn off",
        ));
    }
    let mut scratch = match databases.create_reusable(Purpose::Reduce, 0, databases.next_index()) {
        Ok(s) => s,
        Err(e) => {
            return Some(WrongSide::cannot_tell(format!(
                "no scratch database: {e:#}"
            )))
        }
    };
    let session = scratch.session();
    if let Err(why) = run_setup(finding, session) {
        return Some(WrongSide::cannot_tell(why));
    }
    let by_default = run_check(session, &*oracle, case);
    let all_switches_off = run_check_with_knobs_off(session, &*oracle, case, &all_off);
    Some(compare_runs(
        by_default,
        all_switches_off,
        all_off.changes.len(),
    ))
}

/// Runs a finding's setup; why not, if a statement fails.
fn run_setup(finding: &Finding, session: &mut Session) -> Result<(), String> {
    for (i, stmt) in finding.setup.iter().enumerate() {
        if let Err(e) = session.connection().execute(stmt) {
            return Err(format!(
                "setup statement {} fails on a fresh database: {e}",
                i + 1
            ));
        }
    }
    Ok(())
}

/// The verdict from the same case run by default and with every switch
/// off (`switches` of them).
fn compare_runs(
    by_default: Result<CheckOutcome, lancet_core::CaseError>,
    all_off: Result<CheckOutcome, lancet_core::CaseError>,
    switches: usize,
) -> WrongSide {
    let by_default = match by_default {
        Ok(CheckOutcome::Disagreed { queries, .. }) => queries,
        Ok(_) => {
            return WrongSide::cannot_tell(
                "the disagreement did not show again on a fresh database, so lancet could not \
                 compare it with every optimization off",
            )
        }
        Err(e) => return WrongSide::cannot_tell(format!("{e}")),
    };
    let off = match all_off {
        Ok(CheckOutcome::Agreed { queries, .. }) => queries,
        Ok(CheckOutcome::Disagreed { .. }) => {
            return WrongSide::cannot_tell(format!(
                "the disagreement stays with every optimization off ({switches} switches): it is \
                 not in an optimization lancet can turn off, and either query may be wrong"
            ))
        }
        Ok(CheckOutcome::Skipped(e)) => {
            return WrongSide::cannot_tell(format!(
                "with every optimization off a query fails: {}",
                e.message
            ))
        }
        Ok(CheckOutcome::Failed(e)) => {
            return WrongSide::cannot_tell(format!(
                "with every optimization off a query fails: {e}"
            ))
        }
        Err(e) => return WrongSide::cannot_tell(format!("{e}")),
    };
    let changed: Vec<(&lancet_core::RanQuery, &lancet_core::RanQuery)> = by_default
        .iter()
        .zip(&off)
        .filter(|(d, o)| !d.statement && sorted(&d.result) != sorted(&o.result))
        .collect();
    let Some((_, right)) = changed.first() else {
        return WrongSide::cannot_tell(
            "with every optimization off the relation holds, yet no query returns other rows",
        );
    };
    WrongSide {
        wrong: changed.iter().map(|(d, _)| d.role.clone()).collect(),
        how: format!(
            "with every optimization off ({switches} switches) the relation holds, and only \
             these queries return other rows: an optimization broke them"
        ),
        expected_rows: Some(right.result.len()),
        expected: right
            .result
            .iter()
            .take(SHOWN_ROWS)
            .map(|r| lancet_core::value::format_row(r))
            .collect(),
    }
}

/// A result as a multiset: its rows in a fixed order.
fn sorted(rows: &[Row]) -> Vec<String> {
    let mut out: Vec<String> = rows
        .iter()
        .map(|r| lancet_core::value::format_row(r))
        .collect();
    out.sort();
    out
}
