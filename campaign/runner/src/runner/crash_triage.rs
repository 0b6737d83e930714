//! What a crash was, decided once the workers are done: every crash
//! finding is replayed whole on a fresh database (a replay that crashes a
//! server takes every session down, so none is tried while workers run).
//!
//! Crashes found close together are one *event*: a server that goes down
//! ends every session, and each thread meets the loss at its own
//! statement. Within an event, the findings whose statements crash the
//! DBMS again are the crash (they are reduced next); the others were its
//! collateral, moved to `unconfirmed/` and counted there. When none
//! repeats, the first stays a finding (a crashed DBMS is never lost),
//! marked as not repeated, with what every session was running when the
//! DBMS went down: one of them may have crashed it.

use super::reduce_queue::ReduceWork;
use super::report::Event;
use super::Shared;
use crate::findings::{CrashReplay, RunningStatement};
use crate::reduce::Reducer;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Crashes this close to the one before are the same event (every
/// session meets a server's crash within its next statement, or once it
/// waited for the server to come back).
const SAME_EVENT_WITHIN: Duration = Duration::from_secs(30);

/// A crash finding waiting for the workers to end.
pub(super) struct CrashWork {
    pub work: ReduceWork,
    pub thread: u32,
    pub found_at: Instant,
}

/// A session the DBMS ended because another one crashed it (PostgreSQL's
/// 57P02): what it was running, for the crash that does not repeat.
pub(super) struct Collateral {
    pub found_at: Instant,
    pub running: RunningStatement,
}

/// The crashes found so far, for one reducer to take once the workers
/// are done.
pub(super) fn take_waiting(shared: &Shared) -> Vec<CrashWork> {
    std::mem::take(&mut *shared.crashes.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Whether crashes wait for triage.
pub(super) fn any_waiting(shared: &Shared) -> bool {
    !shared
        .crashes
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_empty()
}

/// Replays every crash of `batch` and decides, per event, which are the
/// crash and which its collateral; the crashes that repeat go to the
/// reduction queue.
pub(super) fn triage(shared: &Shared, reducer: &Reducer<'_>, mut batch: Vec<CrashWork>) {
    batch.sort_by_key(|c| c.found_at);
    let mut event: Vec<CrashWork> = Vec::new();
    for crash in batch {
        let apart = event
            .last()
            .is_some_and(|last| crash.found_at.duration_since(last.found_at) > SAME_EVENT_WITHIN);
        if apart {
            triage_event(shared, reducer, std::mem::take(&mut event));
        }
        event.push(crash);
    }
    if !event.is_empty() {
        triage_event(shared, reducer, event);
    }
}

/// One event: replay each crash, keep those that repeat (or the first, if
/// none does), fold the others into the first kept one.
fn triage_event(shared: &Shared, reducer: &Reducer<'_>, event: Vec<CrashWork>) {
    let aborted = || shared.abort_reduction.load(Ordering::SeqCst);
    let mut repeats = Vec::with_capacity(event.len());
    for crash in &event {
        if aborted() {
            // Cut short: what was not replayed stays as found.
            shared.reductions.unreduced(
                "the run was interrupted",
                (event.len() - repeats.len()) as u64,
            );
            return;
        }
        repeats.push(reducer.crash_repeats(&crash.work.finding));
    }
    let any_repeated = repeats.iter().any(|r| *r);
    let kept: Vec<usize> = if any_repeated {
        (0..event.len()).filter(|&i| repeats[i]).collect()
    } else {
        vec![0]
    };
    let first_kept = kept[0];
    let mut folded = 0u32;
    let mut also_running = Vec::new();
    for (i, crash) in event.iter().enumerate() {
        if kept.contains(&i) {
            continue;
        }
        if let Some(running) = fold(shared, crash, &event[first_kept]) {
            also_running.push(running);
            folded += 1;
        }
    }
    if !any_repeated {
        also_running.extend(collateral_of(shared, &event));
    }
    for (n, &i) in kept.iter().enumerate() {
        let crash = &event[i];
        let replay = CrashReplay {
            repeated: repeats[i],
            folded: if n == 0 { folded } else { 0 },
            also_running: if repeats[i] {
                Vec::new()
            } else {
                also_running.clone()
            },
        };
        keep(shared, crash, replay);
    }
}

/// Rewrites a kept crash with what its replay showed; one that repeated
/// goes to the reduction queue.
fn keep(shared: &Shared, crash: &CrashWork, replay: CrashReplay) {
    let mut finding = crash.work.finding.clone();
    let repeated = replay.repeated;
    finding.confirmed = repeated;
    finding.crash_replay = Some(replay);
    let written = &crash.work.written;
    if let Err(e) = shared.writer.update(
        written,
        &finding,
        shared.provider.comment_prefix(),
        &shared.provider.client_command(),
    ) {
        let _ = shared.events.send(Event::Warning(format!(
            "cannot rewrite {} after its replay: {e:#}",
            written.sql.display()
        )));
    }
    if repeated {
        shared.reductions.push(
            finding.signature.clone().unwrap_or_default(),
            ReduceWork {
                finding,
                written: written.clone(),
            },
        );
    } else {
        shared.counters.add_unrepeated_crash();
        shared
            .reductions
            .unreduced("the crash did not repeat on a fresh database", 1);
        let _ = shared.events.send(Event::Warning(format!(
            "the crash in {} did not repeat on a fresh database: kept as found, with what every \
             session was running when the DBMS went down",
            written.sql.display()
        )));
    }
}

/// Moves a crash that did not repeat, in an event where another did (or
/// that is not the first kept), to `unconfirmed/`: it was the kept one's
/// collateral. Returns what it was running.
fn fold(shared: &Shared, crash: &CrashWork, into: &CrashWork) -> Option<RunningStatement> {
    let moved = match shared
        .writer
        .demote(&crash.work.written, &shared.options.unconfirmed_dir)
    {
        Ok(moved) => moved,
        Err(e) => {
            let _ = shared.events.send(Event::Warning(format!(
                "cannot move {} to the unconfirmed findings: {e:#}",
                crash.work.written.sql.display()
            )));
            return None;
        }
    };
    let removed = shared
        .index
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&crash.work.written.sql);
    if let Err(e) = removed {
        let _ = shared
            .events
            .send(Event::Warning(format!("cannot update the index: {e:#}")));
    }
    shared.counters.remove_finding();
    shared.counters.add_unconfirmed();
    let _ = shared.events.send(Event::Warning(format!(
        "the crash in {} did not repeat on a fresh database and is the collateral of {} \
         (moved to {})",
        crash.work.written.sql.display(),
        into.work.written.sql.display(),
        moved.sql.display()
    )));
    Some(RunningStatement {
        thread: crash.thread,
        sql: failing_statement(&crash.work.finding),
        file: moved.sql.display().to_string(),
    })
}

/// The sessions the DBMS ended because of this event's crash.
fn collateral_of(shared: &Shared, event: &[CrashWork]) -> Vec<RunningStatement> {
    let (Some(first), Some(last)) = (event.first(), event.last()) else {
        return Vec::new();
    };
    let from = first
        .found_at
        .checked_sub(SAME_EVENT_WITHIN)
        .unwrap_or(first.found_at);
    let to = last.found_at + SAME_EVENT_WITHIN;
    shared
        .collateral
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|c| c.found_at >= from && c.found_at <= to)
        .map(|c| c.running.clone())
        .collect()
}

/// The statement a lost session was running.
pub(super) fn failing_statement(f: &crate::findings::Finding) -> String {
    f.queries.last().map(|q| q.sql.clone()).unwrap_or_default()
}
