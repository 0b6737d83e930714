//! One finding of a transaction campaign: run again on a fresh table to
//! see that it repeats, written at once (and indexed: signature, bug,
//! flood control), then reduced to the fewest sessions, statements and
//! rows that still show the same anomaly at the same level.

use super::bench::Bench;
use super::shared::Shared;
use super::TxnFindingFile;
use lancet_core::fault::PlantedFault;
use lancet_oracles::txn::{Schedule, ScheduleOrigin, ScheduleRun, TxnFinding};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Confirms, writes and reduces one finding. Past the flood limit a
/// finding of its signature is only counted.
pub(super) fn record(
    shared: &Shared<'_>,
    bench: &mut Bench<'_>,
    schedule: Schedule,
    run: ScheduleRun,
    origin: ScheduleOrigin,
) -> anyhow::Result<()> {
    let signature = TxnFinding::signature_of(&run, &schedule);
    if let Some(limit) = shared.options.flood_limit {
        let mut index = shared.index.lock().unwrap_or_else(|e| e.into_inner());
        if !index.reserve(&signature, limit) {
            index.add_not_written(&signature)?;
            shared.counters.add_flooded();
            return Ok(());
        }
    }
    let written = confirm_and_write(shared, bench, &schedule, &run, &signature, origin);
    if shared.options.flood_limit.is_some() {
        shared
            .index
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .release(&signature);
    }
    let (id, sql) = written?;
    if let Some(budget) = shared.options.reduce {
        if let Some((small, small_run)) =
            reduce_schedule(shared, bench, &schedule, &signature, budget, false)
        {
            let reduced = make_finding(
                shared,
                signature,
                &small,
                &small_run,
                origin,
                (1, 1),
                Some(schedule.size()),
            );
            let small_sql = reduced.write(shared.dir, &format!("{id}.reduced"))?;
            shared
                .index
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .add_indexed(reduced.indexed(&small_sql), &small_sql, Some(&sql))?;
            shared.reduced.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}

/// Runs the schedule twice more on a fresh table, so that the finding
/// says how often it shows, then writes and indexes it. Its id and
/// `.sql` path.
fn confirm_and_write(
    shared: &Shared<'_>,
    bench: &mut Bench<'_>,
    schedule: &Schedule,
    run: &ScheduleRun,
    signature: &str,
    origin: ScheduleOrigin,
) -> anyhow::Result<(String, std::path::PathBuf)> {
    let mut repeated = 0;
    const AGAIN: u32 = 2;
    for _ in 0..AGAIN {
        if let Ok(again) = bench.run(shared, schedule) {
            if TxnFinding::signature_of(&again, schedule) == signature {
                repeated += 1;
            }
        }
    }
    let n = shared.next_finding.fetch_add(1, Ordering::Relaxed);
    let id = TxnFinding::file_id(n, signature);
    let finding = make_finding(
        shared,
        signature.to_string(),
        schedule,
        run,
        origin,
        (repeated, AGAIN),
        None,
    );
    let sql = finding.write(shared.dir, &id)?;
    shared
        .index
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .add_indexed(finding.indexed(&sql), &sql, None)?;
    shared.counters.add_finding();
    eprintln!("lancet: transaction finding {signature}: {}", sql.display());
    Ok((id, sql))
}

pub(super) fn make_finding(
    shared: &Shared<'_>,
    signature: String,
    schedule: &Schedule,
    run: &ScheduleRun,
    origin: ScheduleOrigin,
    repeated: (u32, u32),
    reduced_from: Option<usize>,
) -> TxnFinding {
    let rules = shared.rules_for(schedule);
    TxnFinding {
        oracle: lancet_oracles::txn::NAME.to_string(),
        dbms: shared.provider.name().to_string(),
        version: shared
            .provider
            .version()
            .unwrap_or_else(|e| format!("unknown ({e})")),
        lancet: crate::VERSION.to_string(),
        signature,
        rules: rules[0].clone(),
        session_rules: if schedule.is_mixed() {
            rules.iter().map(|r| (*r).clone()).collect()
        } else {
            Vec::new()
        },
        anomalies: run.anomalies.clone(),
        error: run.failure.as_ref().map(|(step, e)| match *step {
            // The read of the final rows after the schedule.
            usize::MAX => format!("the final read: {e}"),
            step => format!("step {}: {e}", step + 1),
        }),
        schedule: schedule.clone(),
        trace: run.trace.clone(),
        final_rows: run.final_rows.clone(),
        origin,
        repeated,
        fault: shared.fault.map(|f| f.name().to_string()),
        reduced_from,
        create_table: (0..schedule.table_count())
            .flat_map(|t| {
                let (index_v, placement) = schedule.shape(t);
                shared
                    .tx
                    .create_table(&schedule.table_name(t), index_v, placement)
            })
            .collect(),
        begin: shared.tx.begin(schedule.level, schedule.mode.as_deref()),
        session_begins: if schedule.is_mixed() {
            (0..schedule.sessions)
                .map(|s| {
                    let (level, mode) = schedule.level_of(s);
                    shared.tx.begin(level, mode)
                })
                .collect()
        } else {
            Vec::new()
        },
        client_command: shared.tx.client_command(),
    }
}

/// Greedy reduction: the first candidate that still shows `signature`
/// replaces the schedule, until none does or the time is up. With
/// `once_each`, a schedule already tried is not tried again (`lancet
/// reduce`: swaps of adjacent steps could otherwise undo each other
/// until the time is up); the campaign tries them as they come.
pub(super) fn reduce_schedule(
    shared: &Shared<'_>,
    bench: &mut Bench<'_>,
    schedule: &Schedule,
    signature: &str,
    budget: Duration,
    once_each: bool,
) -> Option<(Schedule, ScheduleRun)> {
    let deadline = Instant::now() + budget;
    let mut best: Option<(Schedule, ScheduleRun)> = None;
    let mut current = schedule.clone();
    let key = |s: &Schedule| serde_json::to_string(s).unwrap_or_default();
    let mut tried: HashSet<String> = HashSet::from([key(schedule)]);
    'outer: loop {
        for candidate in lancet_oracles::txn::shrink::candidates(&current) {
            if Instant::now() >= deadline || shared.stop.load(Ordering::Relaxed) {
                break 'outer;
            }
            if once_each && !tried.insert(key(&candidate)) {
                continue;
            }
            // Timing-dependent anomalies get a second try.
            for _ in 0..2 {
                let Ok(run) = bench.run(shared, &candidate) else {
                    continue;
                };
                if TxnFinding::signature_of(&run, &candidate) == signature {
                    current = candidate.clone();
                    best = Some((candidate, run));
                    continue 'outer;
                }
            }
        }
        break;
    }
    best
}
