//! How the driver waits: for a statement that is not back in time (is
//! it waiting for a lock, by the server's own view where it has one),
//! for the statements a transaction's end frees, and for any session
//! when every one waits. Split from the driver, which sends the steps.

use super::{Driving, Run};
use crate::txn::sessions::{Reply, Sessions};
use crossbeam_channel::RecvTimeoutError;
use std::time::{Duration, Instant};

impl Run<'_> {
    /// Each session's server connection, as the DBMS names it (see
    /// `Transactions::session_id_sql`); empty where it names none.
    pub(super) fn session_ids(&self, sessions: &Sessions) -> Vec<Option<String>> {
        let Some(sql) = self.tx.session_id_sql() else {
            return Vec::new();
        };
        sessions
            .threads
            .iter()
            .map(|t| {
                if !t.run(sql, true) {
                    return None;
                }
                match t.recv.recv_timeout(self.timing.long) {
                    Ok(Ok(Some(rows))) => rows.first()?.first().map(value_text),
                    _ => None,
                }
            })
            .collect()
    }
}

impl Driving<'_, '_> {
    /// A statement not back in time: where the DBMS says whether its
    /// session waits for a lock, one that does not (the server has not
    /// started it yet, or it is slow) is awaited as long as a statement
    /// may take, asking again every `block`; its reply, or `None` once it
    /// is seen waiting (or the DBMS cannot say).
    pub(super) fn unless_waiting(&mut self, session: usize) -> Option<Reply> {
        let deadline = Instant::now() + self.run.timing.long;
        loop {
            if self.waits_for_lock(session)? {
                return None;
            }
            if Instant::now() >= deadline {
                return None;
            }
            match self.sessions.threads[session]
                .recv
                .recv_timeout(self.run.timing.block)
            {
                Ok(reply) => return Some(reply),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    /// Whether the server shows `session` waiting for a lock; `None`
    /// where it cannot say.
    pub(super) fn waits_for_lock(&mut self, session: usize) -> Option<bool> {
        let id = self.ids.get(session)?.as_ref()?;
        let sql = self.run.tx.lock_wait_sql(id)?;
        let rows = self.observer.query(&sql).ok()?;
        let first = rows.first()?.first()?;
        Some(value_text(first) != "0")
    }

    /// Every session waits: the next to return is awaited as long as a
    /// statement may take, then the schedule is given up.
    pub(super) fn wait_for_any(&mut self) {
        let deadline = Instant::now() + self.run.timing.long;
        while Instant::now() < deadline {
            for s in 0..self.inflight.len() {
                if let Some(f) = self.inflight[s] {
                    if let Ok(reply) = self.sessions.threads[s].recv.try_recv() {
                        self.inflight[s] = None;
                        self.returned(f, reply, true, true);
                        return;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let waiting: Vec<bool> = self.inflight.iter().map(Option::is_some).collect();
        if let Some((s, f)) = self
            .inflight
            .iter()
            .enumerate()
            .find_map(|(s, f)| f.map(|f| (s, f)))
        {
            if let Some(cycle) = self.model.deadlock_cycle(s, &waiting) {
                let how = format!(
                    "nothing ended the wait in {} s",
                    self.run.timing.long.as_secs()
                );
                self.model.undetected_deadlock(f.step, &cycle, &how);
            }
        }
        self.undetermined(format!(
            "every session with steps left waited for a lock for {} s",
            self.run.timing.long.as_secs()
        ));
    }

    /// A transaction ended: statements that waited for its locks return
    /// now, and the driver waits for those the model says must.
    ///
    /// The statements the model sees free are awaited together, and each
    /// reply goes to the model before the others are judged again: of
    /// two statements that waited for one row, the DBMS lets one through
    /// and the other then waits for its transaction. Awaited one by one
    /// in session order, the second would be waited for while the first
    /// one's transaction, which only lancet moves on, held the row: until
    /// the lock timeout, seconds per schedule with three or four sessions.
    pub(super) fn ended(&mut self) {
        self.ends += 1;
        let patience = if self.run.extra_write_locks() {
            self.run.timing.settle
        } else {
            self.run.timing.long
        };
        let every: Vec<usize> = (0..self.inflight.len()).collect();
        'judge: while !self.stopped() {
            // Replies already in, from sessions the model sees blocked
            // too: they change what the model sees.
            if self.take_reply(&every) {
                continue 'judge;
            }
            let free: Vec<usize> = (0..self.inflight.len())
                .filter(|&s| self.inflight[s].is_some() && self.model.blocked_by(s).is_none())
                .collect();
            if free.is_empty() {
                break;
            }
            let deadline = Instant::now() + patience;
            while Instant::now() < deadline {
                if self.take_reply(&free) {
                    continue 'judge;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            if !self.run.extra_write_locks() {
                let s = free[0];
                if let Some(f) = self.inflight[s] {
                    self.undetermined(format!(
                        "step {} still waits after the lock it waited for went",
                        f.step + 1
                    ));
                }
            }
            break;
        }
        // Still waiting, watched across this end.
        for f in self.inflight.iter_mut().flatten() {
            f.watched_at = self.ends;
        }
    }

    /// Gives the model the first reply already in from one of `sessions`
    /// (statements in flight, returned late); whether there was one.
    pub(super) fn take_reply(&mut self, sessions: &[usize]) -> bool {
        for &s in sessions {
            let Some(f) = self.inflight[s] else {
                continue;
            };
            if let Ok(reply) = self.sessions.threads[s].recv.try_recv() {
                self.inflight[s] = None;
                self.returned(f, reply, true, true);
                return true;
            }
        }
        false
    }
}

/// A value as plain text: a backend id, a count.
fn value_text(v: &lancet_core::Value) -> String {
    match v {
        lancet_core::Value::Integer(i) => i.to_string(),
        lancet_core::Value::Decimal(s) | lancet_core::Value::Text(s) => s.clone(),
        other => format!("{other:?}"),
    }
}
