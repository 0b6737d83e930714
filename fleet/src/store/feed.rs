//! The feeder: a thread of `lancet fuzz --store` that pushes the run's
//! directory to the store every few seconds. A store that is away is
//! retried with back-off while the run goes on (its findings are on disk
//! already); at the end of the run the feeder makes a last push, with the
//! summary, and says whether the store has everything.

use super::push::{PushState, RunFindings};
use super::{OpenError, Store, StoreLocation};
use crossbeam_channel::{Receiver, Sender};
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest wait between two tries while the store is away.
const MAX_BACKOFF: Duration = Duration::from_secs(60);

/// How the feeding ended.
#[derive(Debug)]
pub struct FeedOutcome {
    /// Whether the last push, after the run's end, reached the store.
    pub complete: bool,
    /// Findings of the run the store holds.
    pub findings: usize,
    /// Why the store does not have everything.
    pub error: Option<String>,
}

/// A running feeder.
pub struct Feeder {
    finish: Sender<Instant>,
    handle: JoinHandle<FeedOutcome>,
}

impl Feeder {
    /// Starts feeding `run_dir` to the store at `location`, through `store`
    /// if it is open already; `findings` reads the run's findings.
    pub fn start(
        location: StoreLocation,
        store: Option<Store>,
        run_dir: PathBuf,
        findings: &'static dyn RunFindings,
        interval: Duration,
    ) -> anyhow::Result<Feeder> {
        let (finish, finish_rx) = crossbeam_channel::bounded(1);
        let handle = std::thread::Builder::new()
            .name("lancet-store".into())
            .spawn(move || feed(&location, store, &run_dir, findings, interval, &finish_rx))
            .map_err(|e| anyhow::anyhow!("cannot start the store's feeder thread: {e}"))?;
        Ok(Feeder { finish, handle })
    }

    /// Makes the last push (the run is over and its summary written),
    /// retrying for at most `grace`; returns how it went.
    pub fn finish(self, grace: Duration) -> FeedOutcome {
        let _ = self.finish.send(Instant::now() + grace);
        self.handle.join().unwrap_or_else(|_| FeedOutcome {
            complete: false,
            findings: 0,
            error: Some("the store's feeder thread panicked (a bug of lancet's)".into()),
        })
    }
}

fn feed(
    location: &StoreLocation,
    mut store: Option<Store>,
    run_dir: &std::path::Path,
    findings: &dyn RunFindings,
    interval: Duration,
    finish: &Receiver<Instant>,
) -> FeedOutcome {
    let name = location.display();
    let mut state = PushState::default();
    let mut backoff = Duration::from_secs(1);
    let mut next_try = Instant::now() + interval;
    let mut deadline: Option<Instant> = None;
    // A store that did not answer at the start is away already.
    let mut away_since: Option<Instant> = store.is_none().then(Instant::now);
    loop {
        if deadline.is_none() {
            let wait = next_try.saturating_duration_since(Instant::now());
            if let Ok(at) = finish.recv_timeout(wait) {
                deadline = Some(at);
            }
        }
        let tried = try_push(location, &mut store, run_dir, findings, &mut state);
        match tried {
            Ok(()) => {
                if let Some(since) = away_since.take() {
                    eprintln!(
                        "lancet: the store {name} is reachable again after {:.0} s; it is up to date",
                        since.elapsed().as_secs_f64()
                    );
                }
                if deadline.is_some() {
                    return FeedOutcome {
                        complete: true,
                        findings: state.findings(),
                        error: None,
                    };
                }
                backoff = Duration::from_secs(1);
                next_try = Instant::now() + interval;
            }
            Err((e, transient)) => {
                store = None;
                // At the end, only a store that is away is worth waiting for.
                if deadline.is_some() && !transient {
                    return FeedOutcome {
                        complete: false,
                        findings: state.findings(),
                        error: Some(e),
                    };
                }
                if away_since.is_none() {
                    away_since = Some(Instant::now());
                    eprintln!(
                        "lancet: warning: cannot feed the store: {e}; retrying with back-off (the run goes on, its findings are on disk)"
                    );
                }
                if let Some(at) = deadline {
                    let pause = Duration::from_secs(1);
                    if Instant::now() + pause >= at {
                        return FeedOutcome {
                            complete: false,
                            findings: state.findings(),
                            error: Some(e),
                        };
                    }
                    std::thread::sleep(pause);
                } else {
                    next_try = Instant::now() + backoff;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }
}

/// One push, opening the store first if needed. An error says whether
/// it is the store being away (worth retrying).
fn try_push(
    location: &StoreLocation,
    store: &mut Option<Store>,
    run_dir: &std::path::Path,
    findings: &dyn RunFindings,
    state: &mut PushState,
) -> Result<(), (String, bool)> {
    if store.is_none() {
        *store = Some(Store::open(location).map_err(|e| match e {
            OpenError::Unreachable { .. } => (e.to_string(), true),
            OpenError::Refused(e) => (format!("{e:#}"), false),
        })?);
    }
    let open = store.as_mut().expect("opened above");
    open.push_run(run_dir, findings, state)
        .map(|_| ())
        .map_err(|e| (format!("{e:#}"), super::is_transient(&e)))
}
