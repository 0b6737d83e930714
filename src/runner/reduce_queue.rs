//! The reducer thread of a run: reduces confirmed findings one at a time
//! while the workers go on.

use super::report::Event;
use super::Shared;
use crate::findings::Finding;
use crate::reduce::Reducer;
use crate::reproducer::WrittenFinding;
use crossbeam_channel::Receiver;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// A confirmed finding waiting for the reducer thread.
pub(super) struct ReduceWork {
    pub finding: Finding,
    pub written: WrittenFinding,
}

/// Findings queued beyond this many are indexed unreduced (reduce them
/// later with `lancet reduce`): a bug hit in a tight loop must not turn the
/// run into a reduction queue.
pub(super) const MAX_QUEUED_REDUCTIONS: usize = 32;

/// A reduced finding past the flood limit: counted, its files removed.
#[derive(Debug)]
struct Flooded;

impl std::fmt::Display for Flooded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("past the flood limit")
    }
}

impl std::error::Error for Flooded {}

/// The reducer thread: reduces confirmed findings one at a time, writes
/// each reduced reproducer beside its original, and files it in the index.
/// It ends when the workers have ended and the queue is empty, or at a
/// stop; the reduction in progress then finishes (an interrupt cuts it
/// short) and findings still queued stay unreduced.
pub(super) fn reduce_loop(rx: &Receiver<ReduceWork>, shared: &Shared, limit: Duration) {
    let provider = &*shared.provider;
    let dialect = provider.dialect();
    let reducer = Reducer::new(&shared.databases)
        .with_time_limit(limit)
        .with_abort(&shared.abort_reduction);
    loop {
        let work = match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(work) => work,
            Err(_) if shared.stopped() || shared.live_workers.load(Ordering::SeqCst) == 0 => {
                if rx.is_empty() || shared.stopped() {
                    return;
                }
                continue;
            }
            Err(_) => continue,
        };
        if shared.stopped() {
            return;
        }
        let name = work
            .written
            .sql
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let outcome = reducer.reduce(&work.finding, &name).and_then(|r| {
            let mut f = r.finding;
            if !shared.stopped() {
                f.hidden_by_knobs = crate::localize::knobs_that_hide(&f, &shared.databases);
                f.flipped_by_knobs = crate::localize::knobs_that_flip(&f);
            }
            let out = work.written.reduced();
            // Flood control by the reduced signature, which stands for many
            // shapes of one bug: past the limit, the finding's files go and
            // it is counted, not kept.
            if let Some(limit) = shared.options.flood_limit {
                let sig = crate::dedup::signature(&f, dialect);
                let mut index = shared.index.lock().unwrap_or_else(|e| e.into_inner());
                if index.count_besides(&sig, &work.written.sql) >= limit {
                    index.flood_reduced(&sig, &work.written.sql)?;
                    let _ = std::fs::remove_file(&work.written.sql);
                    let _ = std::fs::remove_file(&work.written.json);
                    shared.counters.add_flooded();
                    shared.counters.remove_finding();
                    return Err(Flooded.into());
                }
            }
            crate::dedup::write_reduced(&shared.writer, &out, &mut f, provider)?;
            let (signature, count) = shared.index.lock().unwrap_or_else(|e| e.into_inner()).add(
                &f,
                dialect,
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
            Err(e) => shared.events.send(Event::ReduceFailed {
                path: work.written.sql.clone(),
                error: format!("{e:#}"),
            }),
        };
    }
}
