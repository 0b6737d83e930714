//! A transaction finding's schedule run again on a fresh database of its
//! own: `lancet replay` (does it still show its signature?) and `lancet
//! reduce` (the fewest sessions, steps and rows that still show it).

use super::bench::{open_bench, Bench};
use super::options::TxnOptions;
use super::record::{make_finding, reduce_schedule};
use super::shared::Shared;
use crate::databases::{Databases, Purpose};
use lancet_core::txn::{LevelRules, Transactions};
use lancet_core::Provider;
use lancet_oracles::txn::{ScheduleRun, Timing, TxnFinding, MAX_SESSIONS};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// What a finding's schedule needs to run again: the rules of its
/// levels and its planted fault, checked against the DBMS.
fn rerun_options(
    provider: &dyn Provider,
    tx: &dyn Transactions,
    finding: &TxnFinding,
    timing: Timing,
) -> anyhow::Result<(Vec<LevelRules>, TxnOptions)> {
    let modeled = tx.levels();
    let mut rules: Vec<LevelRules> = Vec::new();
    for s in 0..finding.schedule.sessions {
        let (level, mode) = finding.schedule.level_of(s);
        let r = modeled
            .iter()
            .find(|r| r.level == level && r.mode.as_deref() == mode)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} does not model {}",
                    provider.name(),
                    finding.schedule.label_of(s)
                )
            })?;
        if !rules.contains(r) {
            rules.push(r.clone());
        }
    }
    anyhow::ensure!(
        (1..=MAX_SESSIONS).contains(&finding.schedule.sessions)
            && finding.schedule.steps.iter().all(|s| s.session < finding.schedule.sessions),
        "the schedule has {} sessions (steps of sessions up to {}); lancet drives 1 to {MAX_SESSIONS}",
        finding.schedule.sessions,
        finding.schedule.steps.iter().map(|s| s.session + 1).max().unwrap_or(0),
    );
    let fault = finding.fault.as_deref().and_then(lancet_oracles::fault);
    let options = TxnOptions {
        seed: finding.origin.seed,
        levels: rules.iter().map(|r| r.level).collect(),
        fault,
        timing,
        schedules_per_database: 1,
        ..TxnOptions::default()
    };
    Ok((rules, options))
}

/// Runs `f` with a bench on a fresh database for `finding`'s schedule.
fn with_bench<T>(
    databases: &Databases,
    provider: &dyn Provider,
    finding: &TxnFinding,
    timing: Timing,
    stop: &AtomicBool,
    f: impl FnOnce(&Shared<'_>, &mut Bench<'_>) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    let tx = provider
        .transactions()
        .ok_or_else(|| anyhow::anyhow!("{} has no transactions lancet models", provider.name()))?;
    let (rules, options) = rerun_options(provider, tx, finding, timing)?;
    let shared = Shared::new(
        databases,
        tx,
        provider,
        rules,
        &options,
        Path::new("."),
        stop,
    );
    let mut bench = open_bench(&shared, Purpose::Replay, 0, databases.next_index())?;
    f(&shared, &mut bench)
}

/// Runs a finding's schedule again (`lancet replay`): the signature it
/// shows now and the run.
pub fn replay(
    databases: &Databases,
    provider: &dyn Provider,
    finding: &TxnFinding,
    timing: Timing,
) -> anyhow::Result<(String, ScheduleRun)> {
    let stop = AtomicBool::new(false);
    with_bench(
        databases,
        provider,
        finding,
        timing,
        &stop,
        |shared, bench| {
            let run = bench.run(shared, &finding.schedule)?;
            Ok((TxnFinding::signature_of(&run, &finding.schedule), run))
        },
    )
}

/// How a run's transactions ended, as `lancet replay` and the known
/// bugs of a run (`--known`) say it.
pub fn endings(run: &ScheduleRun) -> String {
    format!(
        "{} committed, {} ended in a conflict",
        run.committed, run.conflicts
    )
}

/// What `lancet reduce` made of a transaction finding.
pub enum Reduced {
    /// A smaller schedule that still shows the signature, as a finding.
    Smaller(Box<TxnFinding>),
    /// No schedule with fewer sessions, steps or rows shows it: it is
    /// reduced.
    Already,
    /// The schedule no longer shows its signature: what it shows now.
    NotShown(String),
}

/// Reduces a finding's schedule (`lancet reduce`) to the fewest
/// sessions, steps and rows that still show its signature, within
/// `budget`, on a fresh database.
pub fn reduce(
    databases: &Databases,
    provider: &dyn Provider,
    finding: &TxnFinding,
    budget: Duration,
    stop: &AtomicBool,
) -> anyhow::Result<Reduced> {
    let timing = Timing::default();
    with_bench(
        databases,
        provider,
        finding,
        timing,
        stop,
        |shared, bench| {
            // Timing-dependent anomalies get a second try, as in the campaign.
            let mut shown = String::new();
            for _ in 0..2 {
                let run = bench.run(shared, &finding.schedule)?;
                shown = TxnFinding::signature_of(&run, &finding.schedule);
                if shown == finding.signature {
                    break;
                }
            }
            if shown != finding.signature {
                return Ok(Reduced::NotShown(shown));
            }
            let reduced = reduce_schedule(
                shared,
                bench,
                &finding.schedule,
                &finding.signature,
                budget,
                true,
            );
            // Steps only reordered are not smaller: the schedule was reduced.
            let Some((small, run)) = reduced.filter(|(s, _)| s.size() < finding.schedule.size())
            else {
                return Ok(Reduced::Already);
            };
            let size = finding.reduced_from.unwrap_or(finding.schedule.size());
            let reduced = make_finding(
                shared,
                finding.signature.clone(),
                &small,
                &run,
                finding.origin,
                (1, 1),
                Some(size),
            );
            Ok(Reduced::Smaller(Box::new(reduced)))
        },
    )
}
