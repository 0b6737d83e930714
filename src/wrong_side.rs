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

use crate::findings::{Finding, WrongSide};
use crate::replay::oracle_and_case;
use lancet_core::compare::multiset_diff;
use lancet_core::{run_check, run_check_with_knobs_off, CheckOutcome, Provider, Session};

/// Rows of the right result shown in a reproducer, at most.
const SHOWN_ROWS: usize = 20;

/// Decides the wrong side of a logic finding, running its case in
/// `session`, a fresh database its setup just ran in, where the relation
/// alone cannot tell.
pub fn judge(finding: &Finding, provider: &dyn Provider, session: &mut Session) -> WrongSide {
    let (oracle, case) = match oracle_and_case(finding) {
        Ok(found) => found,
        Err(e) => return WrongSide::cannot_tell(format!("{e:#}")),
    };
    if let Some((role, why)) = oracle.wrong_by_relation() {
        return WrongSide {
            wrong: vec![role.to_string()],
            how: format!("by the oracle's relation: {why}"),
            expected_rows: None,
            expected: Vec::new(),
        };
    }
    let all_off = provider.every_optimization_off();
    if all_off.is_default() {
        return WrongSide::cannot_tell(
            "either query may be wrong, and this DBMS has no optimizer switch to turn off",
        );
    }
    let by_default = run_check(session, &*oracle, case);
    let all_switches_off = run_check_with_knobs_off(session, &*oracle, case, &all_off);
    compare_runs(by_default, all_switches_off, all_off.changes.len())
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
        .filter(|(d, o)| !d.statement && !multiset_diff(&d.result, &o.result).is_empty())
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
