//! The reporter: the events workers and the reducer send, printed as they
//! come, with a status line, until the run is over.

use super::{Shared, STOP_GRACE};
use crate::run_files::SampleLog;
use crate::summary::StopReason;
use crossbeam_channel::Receiver;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Something a worker or the reducer tells the reporter.
pub(super) enum Event {
    Finding {
        headline: String,
        path: PathBuf,
        confirmed: bool,
    },
    ThreadFailed {
        thread: u32,
        error: String,
    },
    /// A worker waits for the DBMS to come back (or to have room).
    Waiting {
        thread: u32,
        error: String,
    },
    /// Something the user should know that does not stop the run.
    Warning(String),
    Reduced {
        path: PathBuf,
        from: (usize, usize),
        seconds: f64,
        signature: String,
        count: u64,
    },
    ReduceFailed {
        path: PathBuf,
        error: String,
    },
}

/// Prints one event and keeps what the summary needs.
pub(super) fn handle(
    event: Event,
    shared: &Shared,
    failures: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    match event {
        Event::Finding {
            headline,
            path,
            confirmed,
        } => {
            if confirmed {
                eprintln!(
                    "lancet: FINDING {headline}\n        reproducer: {}",
                    path.display()
                );
            } else {
                eprintln!(
                    "lancet: a disagreement did not reproduce on a fresh database (kept in {}, not counted)",
                    path.display()
                );
            }
        }
        Event::Reduced {
            path,
            from: (before, after),
            seconds,
            signature,
            count,
        } => {
            let seen = if count > 1 {
                format!("seen {count} times")
            } else {
                // Not "new": it may be a known open bug (`--known`).
                "first in this run".to_string()
            };
            eprintln!(
                "lancet: reduced {before} -> {after} statements in {seconds:.1} s; bug {signature} ({seen})\n        reduced reproducer: {}",
                path.display()
            );
        }
        Event::ReduceFailed { path, error } => {
            eprintln!(
                "lancet: could not reduce {}: {error} (the finding is kept as found)",
                path.display()
            );
        }
        Event::ThreadFailed { thread, error } => {
            let others = shared.live_workers.load(Ordering::SeqCst);
            eprintln!(
                "lancet: worker {thread} stopped: {error}{}",
                if others > 0 && !shared.stopped() {
                    format!(" ({others} other worker(s) go on)")
                } else {
                    String::new()
                }
            );
            failures.push(format!("worker {thread}: {error}"));
        }
        Event::Waiting { thread, error } => {
            eprintln!(
                "lancet: worker {thread} waiting for the DBMS: {error} (retrying with back-off; Ctrl-C to stop)"
            );
        }
        Event::Warning(w) => {
            eprintln!("lancet: warning: {w}");
            warnings.push(w);
        }
    }
}

/// The reporter: prints events as they come and a status line every few
/// seconds, and decides when the run is over. Returns why it ended and the
/// Once the workers are done (or stopped by the run's limit): starts the
/// reducers' finishing time, and at its end cuts the reduction in
/// progress short. Returns whether the reporter may stop waiting for the
/// reducers (the finishing time is over with room for the cut-short
/// reduction to write what it has).
fn finish_reductions(shared: &Shared, reason: StopReason) -> bool {
    let Some(reduce) = &shared.options.reduce else {
        return false;
    };
    if reason == StopReason::Interrupted {
        return false;
    }
    let now = Instant::now();
    let by = *shared
        .finish_reductions_by
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(now + reduce.finish);
    if now >= by {
        shared.abort_reduction.store(true, Ordering::SeqCst);
    }
    now >= by + STOP_GRACE
}

/// workers that had not stopped within [`STOP_GRACE`] of a stop.
pub(super) fn report(
    rx: &Receiver<Event>,
    shared: &Shared,
    start: Instant,
    mut samples: Option<&mut SampleLog>,
    failures: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> (StopReason, Vec<u32>) {
    let options = &shared.options;
    let tick = Duration::from_millis(200);
    let mut last_status = Instant::now();
    let oracles = shared.oracles.names();
    let take_sample = |samples: &mut Option<&mut SampleLog>, warnings: &mut Vec<String>| {
        if let Some(log) = samples.as_deref_mut() {
            if let Some(w) = log.append(shared.counters.sample(&oracles, start.elapsed())) {
                eprintln!("lancet: warning: {w}");
                warnings.push(w);
            }
        }
    };
    take_sample(&mut samples, warnings);
    let mut last_sample = Instant::now();
    let mut reason = StopReason::Finished;
    let mut stopped_at: Option<Instant> = None;
    loop {
        match rx.recv_timeout(tick) {
            Ok(event) => handle(event, shared, failures, warnings),
            Err(_) => {
                let workers_done = shared.live_workers.load(Ordering::SeqCst) == 0;
                let reducers_done = shared.live_reducers.load(Ordering::SeqCst) == 0;
                if workers_done && reducers_done {
                    break;
                }
            }
        }
        let workers_done = shared.live_workers.load(Ordering::SeqCst) == 0;
        if shared.stopped() || workers_done {
            if shared.stopped() && reason == StopReason::Finished {
                reason = StopReason::Interrupted;
            }
            if reason == StopReason::Interrupted {
                shared.abort_reduction.store(true, Ordering::SeqCst);
            }
            if finish_reductions(shared, reason) {
                break;
            }
        }
        if shared.stopped() {
            let at = *stopped_at.get_or_insert_with(Instant::now);
            let reducers_done = shared.live_reducers.load(Ordering::SeqCst) == 0;
            if at.elapsed() >= STOP_GRACE && (reducers_done || reason == StopReason::Interrupted) {
                break;
            }
        } else if let Some(limit) = options.timeout {
            if start.elapsed() >= limit {
                reason = StopReason::Timeout;
                shared.stop.store(true, Ordering::SeqCst);
            }
        }
        if last_sample.elapsed() >= options.sample_interval && !shared.stopped() {
            take_sample(&mut samples, warnings);
            last_sample = Instant::now();
        }
        if let Some(every) = options.status_interval {
            if last_status.elapsed() >= every {
                eprintln!("{}", shared.counters.status_line(start.elapsed()));
                last_status = Instant::now();
            }
        }
    }
    while let Ok(event) = rx.try_recv() {
        handle(event, shared, failures, warnings);
    }
    if reason == StopReason::Finished && shared.stopped() {
        reason = StopReason::Interrupted;
    }
    if reason == StopReason::Finished || reason == StopReason::Interrupted {
        if options
            .max_checks
            .is_some_and(|max| shared.counters.checks() >= max)
        {
            reason = StopReason::Checks;
        } else if !failures.is_empty() && !shared.stopped() {
            reason = StopReason::Error;
        }
    }
    let unstopped: Vec<u32> = shared
        .running
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if !unstopped.is_empty() {
        eprintln!(
            "lancet: {} worker(s) did not stop within {} s (a DBMS call that does not return); summarizing without them",
            unstopped.len(),
            STOP_GRACE.as_secs()
        );
    }
    // Workers that ended by themselves (all failed) stop the reducer too.
    shared.stop.store(true, Ordering::SeqCst);
    (reason, unstopped)
}

/// Says once per run that statement logs are incomplete (`what` went
/// wrong writing one); later failures are not repeated.
pub(super) fn warn_log(shared: &Shared, what: &str) {
    if !shared.log_warned.swap(true, Ordering::SeqCst) {
        let _ = shared.events.send(Event::Warning(format!(
            "{what} (statement logs of this run are incomplete; said once)"
        )));
    }
}
