//! What a write or locking read does by its level's write rule: which
//! rows it chooses (the statement snapshot's, re-checked; the newest that
//! match; the snapshot's, first updater wins), the new versions it makes
//! or the locks it takes (exclusive or shared; `SKIP LOCKED` leaves out
//! the rows others lock), and the check of a locking read's rows.

use super::conditions::picks;
use super::*;
use crate::txn::schedule::Lock;

impl Model<'_> {
    /// An UPDATE, DELETE or `SELECT ... FOR UPDATE` returned: the rows
    /// the level's write rule chooses are changed, or locked and checked
    /// against what the locking read returned.
    pub(super) fn write(
        &mut self,
        step: usize,
        pred: Pred,
        effect: Effect,
        started: &Started,
        waited: bool,
    ) {
        let Step { session, table, .. } = self.schedule.steps[step];
        let locking_read = matches!(effect, Effect::Lock(..));
        let own = |m: &Self, k: i64| m.txns[session].writes.get(&k).copied();
        // Rows whose fate the rules leave open for this statement: to
        // begin with, those its subquery's views disagree on.
        let mut open = started.maybe.clone();
        let rules = self.rules_of(session);
        let binds = self.write_bindings(session, table, pred, &started.view, &started.seen);
        // SKIP LOCKED: whether it surely skips a row (`Some(true)`), surely
        // not, or may.
        let skip_locked = match effect {
            Effect::Lock(lock, _) if lock.wait == LockWait::SkipLocked => Some(lock.mode.shared()),
            _ => None,
        };
        let skips = |m: &Self, k: i64| match skip_locked {
            None => Some(false),
            Some(shared) => m.skipped(session, k, shared),
        };
        let mut changes: Vec<(i64, Version)> = match rules.writes {
            WriteRule::SnapshotRowsNewestVersions => {
                let mut changes: Vec<(i64, Version)> = Vec::new();
                let mut relocked: Vec<i64> = Vec::new();
                for &k in &started.targets {
                    // The newest version of the row, at its new key if a
                    // concurrent commit moved it (the update chain).
                    let newest = match own(self, k) {
                        Some(w) => w.map(|w| (k, w)),
                        None => self.newest_of(k, &started.view),
                    };
                    let changed =
                        started.view.get(&k).map(|v| v.id) != self.committed.get(&k).map(|v| v.id);
                    // The re-check takes the subquery's rows as it read
                    // them (13.2.1: not "effects of those commands on
                    // other rows").
                    match newest {
                        Some((at, ver)) => match picks(&binds, table, at, ver.v) {
                            Some(true) => changes.push((at, ver)),
                            // A row a concurrent commit changed, which the
                            // re-check then left alone: locked all the same.
                            Some(false) if changed => relocked.extend([k, at]),
                            Some(false) => {}
                            None => {
                                open.insert(at);
                            }
                        },
                        None if changed => relocked.push(k),
                        None => {}
                    }
                }
                self.txns[session].maybe_locked.extend(relocked);
                changes
            }
            WriteRule::NewestRows => {
                let (now, maybe) = self.targets(session, table, pred, &started.view, &started.seen);
                open.extend(maybe);
                if waited && rules.rows_open_after_wait {
                    // Rows that began to match while it waited: whether
                    // the scan meets them depends on where it was. Over
                    // the index on v, so do rows a commit changed while
                    // it waited (seen with lancet on MariaDB: an UPDATE
                    // ... WHERE v > 0 waiting at one row skipped another
                    // whose v a commit had changed, the index entry it
                    // reached being stale by then); a scan of the table
                    // itself reads each row's newest version.
                    // A key that holds another row than it did (one
                    // moved away, then a waiting INSERT took the key: met
                    // by lancet on MariaDB, a DELETE waiting behind a
                    // move left the new row at that key) is such a row.
                    let index_scan = self.schedule.index_v;
                    let at_start = |k: &i64| started.view.get(k);
                    let now_at = |k: &i64| self.committed.get(k);
                    open.extend(now.iter().copied().filter(|k| {
                        !started.targets.contains(k)
                            || at_start(k).map(|v| v.row) != now_at(k).map(|v| v.row)
                            || (index_scan && at_start(k).map(|v| v.id) != now_at(k).map(|v| v.id))
                    }));
                    self.left_open.extend(open.iter().map(|&k| (step, k)));
                }
                let rows = self.overlay(session, &self.committed);
                now.iter().map(|&k| (k, rows[&k])).collect()
            }
            WriteRule::SnapshotOrAbort => {
                let snapshot = started.view.clone();
                let mut out = Vec::new();
                for &k in &started.targets {
                    match skips(self, k) {
                        // Skipped before any check of its version.
                        Some(true) => continue,
                        None => {
                            open.insert(k);
                            continue;
                        }
                        Some(false) => {}
                    }
                    if let Some(w) = own(self, k) {
                        if let Some(w) = w {
                            out.push((k, w));
                        }
                        continue;
                    }
                    let by_value = rules.same_value_is_no_change;
                    let key = |x: &Version| if by_value { x.v as u64 } else { x.id };
                    let before = snapshot.get(&k).map(key);
                    let now = self.committed.get(&k).map(key);
                    if self.unsure(session, k) {
                        // Whether it changed is open: so is what it holds.
                        open.insert(k);
                    } else if before != now {
                        let what = if locking_read {
                            "locking read"
                        } else {
                            "write"
                        };
                        self.anomaly(
                            AnomalyKind::LostUpdate,
                            step,
                            format!(
                                "row k = {k} changed by a transaction that committed after this one's snapshot, yet the {what} succeeded (the level's first-updater-wins rule must fail it with a serialization error)"
                            ),
                        );
                        let open: Vec<i64> = started.targets.iter().copied().collect();
                        self.txns[session].uncertain.extend(open);
                        return;
                    }
                    if let Some(&ver) = snapshot.get(&k) {
                        out.push((k, ver));
                    }
                }
                out
            }
        };
        // SKIP LOCKED leaves out the rows others lock, and those it may.
        changes.retain(|&(k, _)| match skips(self, k) {
            Some(skip) => !skip,
            None => {
                open.insert(k);
                true
            }
        });
        match effect {
            Effect::Lock(lock, rows) => self.locked(step, lock, &changes, &open, rows),
            Effect::Move(pivot) => {
                self.txns[session].uncertain.extend(open);
                // A row whose value is open may or may not match, so may
                // or may not have moved: its partner key is open too
                // (seen with lancet on MariaDB: an UPDATE IGNORE left two
                // rows open, and a later move of `v > 8` moved both).
                let table = self.schedule.steps[step].table;
                let unsure: Vec<i64> = self
                    .overlay(session, &self.committed)
                    .keys()
                    .chain(self.uncertain_committed.iter())
                    .copied()
                    .filter(|&k| {
                        crate::txn::schedule::table_of(k) == table && self.unsure(session, k)
                    })
                    .collect();
                for k in unsure {
                    self.txns[session]
                        .uncertain
                        .insert(crate::txn::forms::partner(k, pivot));
                }
                self.move_rows(session, &changes, pivot);
            }
            Effect::SetIgnore(a) => {
                self.txns[session].uncertain.extend(open);
                self.set_ignore(step, &changes, a);
            }
            Effect::Set(_) | Effect::Delete => {
                self.subquery_locks(session, pred, started);
                self.txns[session].uncertain.extend(open);
                let assign = match effect {
                    Effect::Set(a) => Some(a),
                    _ => None,
                };
                for (k, old) in changes {
                    let value = assign.map(|a| a.apply(old.v));
                    if rules.same_value_is_no_change && value == Some(old.v) {
                        // Not a change: no version, so the transaction's
                        // reads go on showing the row as their view has it.
                        continue;
                    }
                    let new = value.map(|v| self.version_of(old.row, v, session));
                    self.txns[session].writes.insert(k, new);
                }
            }
        }
    }

    /// A `SELECT ... FOR UPDATE` returned `rows`: they must be the rows
    /// the write rule `chose`, as they are now (but those left `open`, and
    /// those the view leaves open), and every row it chose is locked.
    /// An open row may be locked or not, so later waits for it are "may".
    fn locked(
        &mut self,
        step: usize,
        lock: Lock,
        chose: &[(i64, Version)],
        open: &BTreeSet<i64>,
        rows: Vec<(i64, i64)>,
    ) {
        let session = self.schedule.steps[step].session;
        self.txns[session].reads.push((step, rows.clone()));
        let allowed: Vec<(i64, i64)> = chose.iter().map(|(k, ver)| (*k, ver.v)).collect();
        let unchecked = self.open_rows(session, &allowed, &rows, open);
        self.check_rows(step, allowed, rows, &unchecked, "the locking read returned");
        let txn = &mut self.txns[session];
        let sure = chose.iter().map(|(k, _)| *k).filter(|k| !open.contains(k));
        if lock.mode.shared() {
            txn.shared.extend(sure);
        } else {
            txn.locked.extend(sure);
        }
        txn.maybe_locked.extend(open.iter().copied());
    }

    /// Whether a `SKIP LOCKED` read of `session` (`shared` or not) skips
    /// row `k`: surely where another open transaction surely holds a lock
    /// it would wait for; maybe (`None`) where a lock may be held: one the
    /// model is unsure of, one a statement in flight may have taken, or
    /// under locks beyond the rows (InnoDB's scans lock the rows they
    /// pass) one any other transaction that took locks may hold.
    pub(super) fn skipped(&self, session: usize, k: i64, shared: bool) -> Option<bool> {
        if !self.unsure(session, k) && self.locker(session, k, shared).is_some() {
            return Some(true);
        }
        let others = (0..self.txns.len()).filter(|&t| t != session);
        let in_flight = others.clone().any(|t| {
            self.txns[t]
                .started
                .as_ref()
                .is_some_and(|st| st.targets.contains(&k) || st.maybe.contains(&k))
                && self.writing(t, Op::locks_rows)
        });
        let beyond = self.rules_of(session).extra_write_locks
            && others.clone().any(|t| {
                self.txns[t].status == Status::Active
                    && (self.txns[t].took_locks || self.txns[t].started.is_some())
            });
        if self.unsure(session, k) || self.unsure_writer(session, k) || in_flight || beyond {
            None
        } else {
            Some(false)
        }
    }
}

/// What a statement that takes row locks does to the rows it chooses.
#[derive(Clone, Debug)]
pub(super) enum Effect {
    Set(crate::txn::schedule::Assign),
    Delete,
    /// A locking read, with its clause and the rows the DBMS returned.
    Lock(Lock, Vec<(i64, i64)>),
    /// A move of each row to its partner key around the pivot.
    Move(i64),
    /// An UPDATE IGNORE: the rows whose new value may be a duplicate may
    /// be skipped.
    SetIgnore(crate::txn::schedule::Assign),
}
