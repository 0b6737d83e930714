//! Waiting for a DBMS that is away or full (crashed, restarting, out of
//! connection slots): what a worker does before a database and the
//! recorder before replaying a finding, both telling the reporter once.

use super::report::Event;
use super::Shared;
use crate::databases::dbms_is_away;
use std::time::{Duration, Instant};

/// Retries `f` while the DBMS is away or full (crashed, restarting, no
/// free connection slots): with back-off, for as long as it takes, until
/// the run is stopped. Other errors are returned at once.
pub(super) fn wait_for_dbms<R>(
    shared: &Shared,
    thread: u32,
    mut f: impl FnMut() -> anyhow::Result<R>,
) -> anyhow::Result<R> {
    let mut wait = Duration::from_millis(200);
    let mut said = false;
    loop {
        match f() {
            Ok(r) => return Ok(r),
            Err(e) if !dbms_is_away(&e) || shared.stopped() => return Err(e),
            Err(e) => {
                if !said {
                    let _ = shared.events.send(Event::Waiting {
                        thread,
                        error: format!("{e:#}"),
                    });
                    said = true;
                }
                let until = Instant::now() + wait;
                while Instant::now() < until && !shared.stopped() {
                    std::thread::sleep(Duration::from_millis(50));
                }
                wait = (wait * 2).min(Duration::from_secs(5));
            }
        }
    }
}
