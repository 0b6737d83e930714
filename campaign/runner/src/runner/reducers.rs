//! The reducers of a run: threads that take confirmed findings from the
//! queue ([`super::reduce_queue`]) while the workers go on, reduce each,
//! write its reduced reproducer beside the original and file it in the
//! index; once the workers are done they triage crashes first
//! ([`super::crash_triage`]). At the run's end they may go on for a
//! bounded time (`--finish-reductions`) before the summary.

use super::crash_triage;
use super::reduce_queue::ReduceWork;
use super::report::Event;
use super::Shared;
use crate::reduce::Reducer;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A reduced finding past the flood limit: counted, its files removed.
#[derive(Debug)]
struct Flooded;

impl std::fmt::Display for Flooded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("past the flood limit")
    }
}

impl std::error::Error for Flooded {}

/// Whether a reducer should stop taking findings: an interrupt, or the
/// workers are done and the queue is empty or the finishing time is over.
fn reducers_done(shared: &Shared) -> bool {
    if shared.abort_reduction.load(Ordering::SeqCst) {
        return true;
    }
    let workers_done = workers_done(shared);
    let past_finish = shared
        .finish_reductions_by
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_some_and(|by| Instant::now() >= by);
    let idle = shared.reductions.is_empty() && !crash_triage::any_waiting(shared);
    workers_done && (idle || past_finish)
}

/// Whether the workers have ended (the run's limit, an error, a stop).
fn workers_done(shared: &Shared) -> bool {
    shared.stopped() || shared.live_workers.load(Ordering::SeqCst) == 0
}

/// One reducer thread: takes findings from the queue, writes each reduced
/// reproducer beside its original and files it in the index, until
/// [`reducers_done`]. The reduction in progress at an interrupt or at the
/// end of the finishing time is cut short and keeps what it had.
pub(super) fn reduce_loop(shared: &Shared, limit: Duration) {
    let reducer = Reducer::new(&shared.databases, shared.catalog)
        .with_time_limit(limit)
        .with_abort(&shared.abort_reduction);
    while !reducers_done(shared) {
        // Crashes are replayed once the workers are done (a replay that
        // crashes a server would take their sessions down too).
        if workers_done(shared) {
            let crashes = crash_triage::take_waiting(shared);
            if !crashes.is_empty() {
                crash_triage::triage(shared, &reducer, crashes);
                continue;
            }
        }
        let Some(work) = shared.reductions.take(Duration::from_millis(200)) else {
            continue;
        };
        if shared.abort_reduction.load(Ordering::SeqCst) {
            shared.reductions.unreduced("the run was interrupted", 1);
            return;
        }
        reduce_one(shared, &reducer, work);
    }
}

/// Reduces one finding and reports how it went.
fn reduce_one(shared: &Shared, reducer: &Reducer<'_>, work: ReduceWork) {
    let provider = &*shared.provider;
    let dialect = provider.dialect();
    let name = work
        .written
        .sql
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let outcome = reducer.reduce(&work.finding, &name).and_then(|r| {
        let mut f = r.finding;
        // After reduction, and in the finishing time too: only an abort
        // (Ctrl-C, the finishing time over) skips what explains the bug.
        if !shared.abort_reduction.load(Ordering::SeqCst) {
            crate::reduce::explain(&mut f, &shared.databases);
        }
        let out = work.written.reduced();
        // Flood control by the reduced signature, which stands for many
        // shapes of one bug: past the limit, the finding's files go and it
        // is counted, not kept; but never the first reduced finding of a
        // signature (counting unreduced findings waiting under it, each
        // would see the others and go, and the bug would be lost).
        if let Some(limit) = shared.options.flood_limit {
            let sig = crate::signature::signature(&f, dialect, shared.catalog);
            let mut index = shared.index.lock().unwrap_or_else(|e| e.into_inner());
            if index.count_besides(&sig, &work.written.sql) >= limit
                && index.reduced_count(&sig) > 0
            {
                index.flood_reduced(&sig, &work.written.sql)?;
                let _ = std::fs::remove_file(&work.written.sql);
                let _ = std::fs::remove_file(&work.written.json);
                shared.counters.add_flooded();
                shared.counters.remove_finding();
                return Err(Flooded.into());
            }
        }
        crate::dedup::write_reduced(&shared.writer, &out, &mut f, provider, shared.catalog)?;
        let (signature, count) = shared.index.lock().unwrap_or_else(|e| e.into_inner()).add(
            &f,
            dialect,
            shared.catalog,
            &out.sql,
            Some(&work.written.sql),
        )?;
        Ok((out, r.info, signature, count))
    });
    let _ = match outcome {
        Err(e) if e.is::<Flooded>() => Ok(()),
        Ok((out, info, signature, count)) => {
            shared.reduced.fetch_add(1, Ordering::Relaxed);
            shared.events.send(Event::Reduced {
                path: out.sql,
                from: (info.statements_before, info.statements_after),
                seconds: info.seconds,
                signature,
                count,
            })
        }
        Err(e) => {
            shared.reductions.unreduced("the reduction failed", 1);
            shared.events.send(Event::ReduceFailed {
                path: work.written.sql.clone(),
                error: format!("{e:#}"),
            })
        }
    };
}
