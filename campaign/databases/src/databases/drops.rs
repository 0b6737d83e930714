//! Drops: first tries and retries with back-off on dropper threads (a
//! server's drop can wait seconds for sessions to leave), and at the end
//! of a run, what could not be dropped, for the summary.

use super::*;

/// A database whose drop failed, waiting for another try.
#[derive(Clone, Debug)]
pub(super) struct PendingDrop {
    pub(super) db: OwnedDatabase,
    pub(super) attempts: u32,
    pub(super) next_try: Instant,
    pub(super) last_error: String,
}

/// Drops are made on two lanes: first tries, and retries of drops that
/// failed (which may wait seconds each for sessions that do not leave).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lane {
    First,
    Retry,
}

/// A database that lancet could not drop, for the summary.
#[derive(Clone, Debug, Serialize)]
pub struct Leftover {
    pub name: String,
    pub why: String,
}

impl Databases {
    /// Starts a thread that makes the drops (first tries and retries)
    /// until `until` is set. For server DBMSs; an embedded one's drops are
    /// instant.
    pub fn dropper(self: &Arc<Self>, until: Arc<AtomicBool>) -> std::io::Result<()> {
        for lane in [Lane::First, Lane::Retry] {
            let (me, until) = (self.clone(), until.clone());
            std::thread::Builder::new()
                .name(format!("lancet-dropper-{lane:?}").to_lowercase())
                .spawn(move || me.drain_lane(lane, &until, None))?;
        }
        self.background.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// One attempt to drop `db`; a failure queues it for later.
    pub(super) fn drop_or_queue(&self, db: OwnedDatabase, attempts: u32) {
        match self.provider.drop_database(&db) {
            Ok(_) => {
                self.record("dropped", &db);
                self.forget(&db);
            }
            Err(e) if is_not_ours(&e) => {
                log::warn!("{e:#}");
                self.forget(&db);
                self.refused
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(Leftover {
                        name: db.name.clone(),
                        why: format!("{e:#}"),
                    });
            }
            Err(e) => {
                let wait = Duration::from_millis(500) * 2u32.saturating_pow(attempts.min(6));
                self.pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(PendingDrop {
                        db,
                        attempts: attempts + 1,
                        next_try: Instant::now() + wait.min(Duration::from_secs(30)),
                        last_error: format!("{e:#}"),
                    });
            }
        }
    }

    /// Drops a database this process is done with: now, or on the dropper
    /// thread if one runs.
    pub(super) fn release(&self, db: OwnedDatabase) {
        if self.background.load(Ordering::SeqCst) {
            self.pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(PendingDrop {
                    db,
                    attempts: 0,
                    next_try: Instant::now(),
                    last_error: String::new(),
                });
        } else {
            self.drop_or_queue(db, 0);
        }
    }

    /// Makes one due drop of a lane (first tries, or retries), if any;
    /// returns whether there was one. Lanes keep a drop that waits for a
    /// stuck session from holding up the drops of databases just done.
    pub(super) fn drop_one_due(&self, lane: Lane) -> bool {
        let next = {
            let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let pos = pending
                .iter()
                .enumerate()
                .filter(|(_, p)| p.next_try <= now && (p.attempts == 0) == (lane == Lane::First))
                .min_by_key(|(_, p)| p.next_try)
                .map(|(i, _)| i);
            let next = pos.map(|i| pending.swap_remove(i));
            if let Some(p) = &next {
                // Still under the lock of `pending`: no one sees the drop
                // in neither list.
                self.dropping
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(p.db.name.clone());
            }
            next
        };
        match next {
            Some(p) => {
                let name = p.db.name.clone();
                self.drop_or_queue(p.db, p.attempts);
                let mut dropping = self.dropping.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(i) = dropping.iter().position(|n| *n == name) {
                    dropping.swap_remove(i);
                }
                true
            }
            None => false,
        }
    }

    /// Makes every drop of `lane` that is due (or becomes due) until
    /// `until` is set or `deadline` passes.
    pub(super) fn drain_lane(&self, lane: Lane, until: &AtomicBool, deadline: Option<Instant>) {
        while !until.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
            if !self.drop_one_due(lane) {
                if deadline.is_some() && !self.has_pending(lane, deadline) && !self.is_dropping() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// Whether some thread is in the middle of a drop (whose failure
    /// would queue a retry).
    pub(super) fn is_dropping(&self) -> bool {
        let _pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        !self
            .dropping
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Whether a drop of `lane` waits that is due before `deadline`.
    pub(super) fn has_pending(&self, lane: Lane, deadline: Option<Instant>) -> bool {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|p| {
                (p.attempts == 0) == (lane == Lane::First)
                    && deadline.is_none_or(|d| p.next_try <= d)
            })
    }

    /// At the end of a run: tries every waiting drop once more, and again
    /// as their back-off allows, for `within` at most (on a thread of its
    /// own, so that a drop that waits for other sessions cannot hold up
    /// the end); then returns every database still there (failed drops,
    /// databases of workers that did not stop, refused drops) with why.
    pub fn finish(self: &Arc<Self>, within: Duration) -> Vec<Leftover> {
        let deadline = Instant::now() + within;
        self.release_spares();
        for p in self
            .pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter_mut()
        {
            p.next_try = Instant::now();
        }
        let (done, finished) = crossbeam_channel::bounded(2);
        let never = Arc::new(AtomicBool::new(false));
        let mut started = 0;
        for lane in [Lane::First, Lane::Retry] {
            let (me, done, never) = (self.clone(), done.clone(), never.clone());
            let spawned = std::thread::Builder::new()
                .name("lancet-final-drops".into())
                .spawn(move || {
                    me.drain_lane(lane, &never, Some(deadline));
                    let _ = done.send(());
                });
            started += usize::from(spawned.is_ok());
        }
        for _ in 0..started {
            if finished
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .is_err()
            {
                break;
            }
        }
        self.leftovers()
    }

    /// Every database still there, with why.
    pub(super) fn leftovers(&self) -> Vec<Leftover> {
        let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let dropping = self.dropping.lock().unwrap_or_else(|e| e.into_inner());
        let mut left: Vec<Leftover> = self
            .live
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|db| Leftover {
                name: db.name.clone(),
                why: pending.iter().find(|p| &p.db == db).map_or(
                    if dropping.contains(&db.name) {
                        "its drop had not finished when the run ended".into()
                    } else {
                        "in use when the run ended".into()
                    },
                    |p| {
                        if p.attempts == 0 {
                            "its drop had not been tried yet when the run ended".into()
                        } else {
                            format!("drop failed {} times: {}", p.attempts, p.last_error)
                        }
                    },
                ),
            })
            .collect();
        left.extend(
            self.refused
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .cloned(),
        );
        left
    }
}
