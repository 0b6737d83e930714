//! Which side of a logic finding is wrong. A relation that breaks says
//! that some query returned a wrong result, not which; a maintainer has to
//! know before reading a plan. lancet says it where it can be decided:
//!
//! - by the oracle's relation, when only one side can be wrong
//!   ([`lancet_core::Oracle::wrong_by_relation`]: PQS, whose pivot row
//!   lancet's own evaluator put in the result; dist-vs-local, whose twins
//!   are plain local tables);
//! - otherwise by the DBMS itself with every optimization off, where that
//!   run is an independent witness
//!   ([`lancet_core::Oracle::all_off_is_no_witness`] says where it is not:
//!   stepwise, knobs): the case runs again on a fresh database with every
//!   optimizer switch of the provider turned off. If the relation holds
//!   then, the queries whose rows changed are the wrong ones (an
//!   optimization broke them), and what they return with every switch off
//!   is what they should return;
//! - otherwise lancet says that it cannot tell, and why.
//!
//! Where a ladder of releases is at hand, `lancet bisect` replaces the
//! verdict with the truth ([`by_fixed_release`]): the rows of the release
//! that fixed the bug.

use crate::findings::{Finding, WrongSide};
use crate::replay::oracle_and_case;
use anyhow::{bail, Context};
use lancet_core::compare::multiset_diff;
use lancet_core::{run_check, run_check_with_knobs_off, CheckOutcome, Provider, RanQuery, Session};
use lancet_databases::databases::{Databases, Purpose};

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
    if let Some(why) = oracle.all_off_is_no_witness() {
        return WrongSide::cannot_tell(format!(
            "either query may be wrong, and every optimization off is no witness for {}: {why}",
            oracle.name()
        ));
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
    named_by_changed_rows(
        &by_default,
        &off,
        "with every optimization off the relation holds, yet no query returns other rows",
        format!(
            "with every optimization off ({switches} switches) the relation holds, and only \
             these queries return other rows: an optimization broke them"
        ),
    )
}

/// The queries of `seen` whose rows differ in `right`, a run of the same
/// check known to be right, named as the wrong ones (`how`), with what the
/// first should return; `none_changed` when no query's rows differ.
fn named_by_changed_rows(
    seen: &[RanQuery],
    right: &[RanQuery],
    none_changed: &str,
    how: String,
) -> WrongSide {
    let changed: Vec<(&RanQuery, &RanQuery)> = seen
        .iter()
        .zip(right)
        .filter(|(s, r)| !s.statement && !multiset_diff(&s.result, &r.result).is_empty())
        .collect();
    let Some((_, right)) = changed.first() else {
        return WrongSide::cannot_tell(none_changed);
    };
    WrongSide {
        wrong: changed.iter().map(|(s, _)| s.role.clone()).collect(),
        how,
        expected_rows: Some(right.result.len()),
        expected: right
            .result
            .iter()
            .take(SHOWN_ROWS)
            .map(|r| lancet_core::value::format_row(r))
            .collect(),
    }
}

/// The wrong side as the release that fixed the bug shows it, the truth
/// where a ladder of releases is at hand (`lancet bisect`): the case runs
/// on a fresh database of the last release it fails on (`failing`) and of
/// the first it passes on (`fixed`), and the queries whose rows the fix
/// changed are the wrong ones; what they return on the fixed release is
/// what they should return. `releases`: the two releases' names.
pub fn by_fixed_release(
    finding: &Finding,
    failing: &Databases,
    fixed: &Databases,
    releases: (&str, &str),
) -> WrongSide {
    let (last_failing, first_fixed) = releases;
    let runs = rows_on(finding, failing, false)
        .with_context(|| format!("on {last_failing}"))
        .and_then(|before| {
            let after =
                rows_on(finding, fixed, true).with_context(|| format!("on {first_fixed}"))?;
            Ok((before, after))
        });
    match runs {
        Ok((before, after)) => named_by_changed_rows(
            &before,
            &after,
            &format!("{first_fixed} fixed the relation, yet no query returns other rows there"),
            format!(
                "by the release that fixed it: only these queries return other rows on \
                 {first_fixed} than on {last_failing}"
            ),
        ),
        Err(e) => WrongSide::cannot_tell(format!(
            "the release that fixed it could not be compared: {e:#}"
        )),
    }
}

/// The queries of `finding`'s check as they run on a fresh database of
/// `databases` after its setup; the relation must hold there if `holds`,
/// and break otherwise.
fn rows_on(finding: &Finding, databases: &Databases, holds: bool) -> anyhow::Result<Vec<RanQuery>> {
    let (oracle, case) = oracle_and_case(finding)?;
    let mut scratch = databases
        .create(Purpose::Replay, 0, databases.next_index())
        .context("cannot create a database to run the case in")?;
    let session = scratch.session();
    for (i, stmt) in finding.setup.iter().enumerate() {
        if let Err(e) = session.connection().execute(stmt) {
            bail!("setup statement {} fails: {e}", i + 1);
        }
    }
    match run_check(session, &*oracle, case)? {
        CheckOutcome::Agreed { queries, .. } if holds => Ok(queries),
        CheckOutcome::Disagreed { queries, .. } if !holds => Ok(queries),
        CheckOutcome::Agreed { .. } => bail!("the relation holds there"),
        CheckOutcome::Disagreed { .. } => bail!("the relation breaks there"),
        CheckOutcome::Skipped(e) => bail!("a query fails: {}", e.message),
        CheckOutcome::Failed(e) => bail!("a query fails: {e}"),
    }
}
