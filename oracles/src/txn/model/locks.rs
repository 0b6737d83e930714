//! Which locks the model knows of: who holds a row, which statements must
//! wait, may wait or must not, and the findings about waiting (a write
//! that did not wait, a read or write that waited for no lock, a deadlock
//! the DBMS did not break).

use super::*;

impl Model<'_> {
    /// Whether another open transaction wrote row `k` with a write the
    /// model leaves open, or may hold its lock without having changed it.
    pub(super) fn unsure_writer(&self, session: usize, k: i64) -> bool {
        (0..self.txns.len()).any(|t| {
            t != session
                && self.txns[t].status == Status::Active
                && (self.txns[t].uncertain.contains(&k) || self.txns[t].maybe_locked.contains(&k))
        }) || self.uncertain_committed.contains(&k)
    }

    /// Whether another session has a statement in flight that takes row
    /// locks as it goes (a write or a locking read), which may hold the
    /// locks of rows it has reached already.
    pub(super) fn write_in_flight(&self, session: usize) -> bool {
        (0..self.txns.len()).any(|t| t != session && self.writing(t, Op::locks_rows))
    }

    /// Whether session `t` has a statement in flight that is `what`
    /// ([`Op::changes_rows`], [`Op::locks_rows`]).
    pub(super) fn writing(&self, t: usize, what: fn(Op) -> bool) -> bool {
        self.txns[t].started.as_ref().is_some_and(
            |st| matches!(self.schedule.steps[st.step].action, Action::Stmt(op) if what(op)),
        )
    }

    /// Whether session `t`'s open transaction holds the write lock of an
    /// exclusive BEGIN (SQLite's one writer): it began with one, or it
    /// has written.
    pub(super) fn holds_write_lock(&self, t: usize) -> bool {
        self.txns[t].status == Status::Active
            && (self.rules_of(t).exclusive_begin || self.txns[t].wrote)
    }

    /// A write the rules let wait for no lock waited until the lock
    /// timeout ended it.
    pub fn blocking_write(&mut self, step: usize, waited_ms: u128) {
        self.anomaly(
            AnomalyKind::BlockingWrite,
            step,
            format!("no open transaction had written or locked the rows it changes or locks and no write was in flight, yet it waited {waited_ms} ms for a lock until the lock timeout ended it"),
        );
    }

    /// The other open transactions that surely hold a lock on row `k`
    /// that a request of `session` waits for: an exclusive one (a write,
    /// `FOR UPDATE`) waits for every lock, a shared one (`FOR SHARE`) for
    /// exclusive ones only. Under locks beyond the rows (InnoDB), locks
    /// are on index entries, and "if a secondary index is used in a
    /// search and the index record locks to be set are exclusive, InnoDB
    /// also retrieves the corresponding clustered index records and sets
    /// locks on them" (MySQL 17.7.3): a shared locking read through the
    /// index on `v` locks only its entries, which a `FOR UPDATE` through
    /// the key did not lock, and the other way round (seen with lancet on
    /// MariaDB 10.11: `LOCK IN SHARE MODE` over `v > 5` returned a row
    /// another session held `FOR UPDATE` by its key). So there only a
    /// write's lock is sure to stop a shared request, and a shared lock
    /// none.
    pub(super) fn lockers(
        &self,
        session: usize,
        k: i64,
        shared: bool,
    ) -> impl Iterator<Item = usize> + '_ {
        let by_entries = self.rules_of(session).extra_write_locks;
        (0..self.txns.len()).filter(move |&t| {
            let txn = &self.txns[t];
            t != session
                && txn.status == Status::Active
                && (txn.writes.contains_key(&k)
                    || (txn.locked.contains(&k) && !(shared && by_entries))
                    || (!shared && !by_entries && txn.shared.contains(&k)))
                && !self.unsure(t, k)
        })
    }

    /// The first of [`Model::lockers`].
    pub(super) fn locker(&self, session: usize, k: i64, shared: bool) -> Option<usize> {
        self.lockers(session, k, shared).next()
    }

    /// The transactions whose locks the statement `session` has in flight
    /// surely waits for now.
    pub fn blockers(&self, session: usize) -> Vec<usize> {
        let Some(started) = self.txns[session].started.as_ref() else {
            return Vec::new();
        };
        let shared = matches!(
            self.schedule.steps[started.step].action,
            Action::Stmt(Op::LockingRead(_, lock)) if lock.mode.shared()
        );
        let mut out: Vec<usize> = started
            .targets
            .iter()
            .filter(|&&k| !self.unsure(session, k))
            .flat_map(|&k| self.lockers(session, k, shared))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether the statement `session` has in flight waits for a lock the
    /// model knows of now, and whose.
    pub fn blocked_by(&self, session: usize) -> Option<usize> {
        self.blockers(session).first().copied()
    }

    /// The sessions whose statements in flight (`waiting[s]`) wait for
    /// each other's row locks in a cycle that includes `session`: a
    /// deadlock the DBMS must break with its deadlock error. Only row
    /// locks the model knows count, so the cycle is certain (two
    /// transactions holding `FOR SHARE` on a row that both then write is
    /// one).
    pub fn deadlock_cycle(&self, session: usize, waiting: &[bool]) -> Option<Vec<usize>> {
        let mut path = vec![session];
        self.cycle_from(session, waiting, &mut path).then_some(path)
    }

    /// Extends `path` (which ends at the session it searches from) to a
    /// cycle back to its first session, depth first.
    fn cycle_from(&self, at: usize, waiting: &[bool], path: &mut Vec<usize>) -> bool {
        // A NOWAIT or SKIP LOCKED read waits for nobody: no cycle runs
        // through it (its lock error is how NOWAIT ends one).
        if self.never_waits(at) {
            return false;
        }
        for next in self.blockers(at) {
            if waiting.get(next) != Some(&true) {
                continue;
            }
            if next == path[0] {
                return true;
            }
            if path.contains(&next) {
                continue;
            }
            path.push(next);
            if self.cycle_from(next, waiting, path) {
                return true;
            }
            path.pop();
        }
        false
    }

    /// The statement `session` has in flight never waits for a lock
    /// (`NOWAIT`, `SKIP LOCKED`).
    fn never_waits(&self, session: usize) -> bool {
        self.txns[session].started.as_ref().is_some_and(|st| {
            matches!(
                self.schedule.steps[st.step].action,
                Action::Stmt(Op::LockingRead(_, lock)) if lock.never_waits()
            )
        })
    }

    /// The statement `session` has in flight is a `NOWAIT` read that
    /// meets a lock another open transaction surely holds: it must fail.
    pub fn must_refuse(&self, session: usize) -> bool {
        self.txns[session].started.as_ref().is_some_and(|st| {
            st.verdict == Wait::Must
                && matches!(
                    self.schedule.steps[st.step].action,
                    Action::Stmt(Op::LockingRead(_, lock)) if lock.wait == LockWait::NoWait
                )
        })
    }

    /// Statements of `cycle` waited for each other and the DBMS ended the
    /// wait otherwise than with its deadlock error (`how`).
    pub fn undetected_deadlock(&mut self, step: usize, cycle: &[usize], how: &str) {
        let who: Vec<String> = cycle.iter().map(|s| (s + 1).to_string()).collect();
        self.anomaly(
            AnomalyKind::UndetectedDeadlock,
            step,
            format!(
                "sessions {} waited for each other's row locks, and {how} instead of a deadlock error",
                who.join(" and ")
            ),
        );
    }

    /// A statement that had to wait returned at once with success: it did
    /// not take the lock it needed.
    pub fn did_not_wait(&mut self, step: usize) {
        let session = self.schedule.steps[step].session;
        let locker = self.blocked_by(session);
        let how = if self.must_refuse(session) {
            "yet its NOWAIT returned rows instead of failing at once"
        } else {
            "yet it returned without waiting"
        };
        self.anomaly(
            AnomalyKind::DidNotWait,
            step,
            format!(
                "it changes or locks a row that session {} had changed or locked and not yet committed, {how}",
                locker.map_or("?".to_string(), |l| (l + 1).to_string())
            ),
        );
    }

    /// A plain read did not return while it must not wait for any lock.
    pub fn read_blocked(&mut self, step: usize, waited_ms: u128) {
        self.anomaly(
            AnomalyKind::BlockingRead,
            step,
            format!("a plain read under this level waits for no lock, yet it did not return in {waited_ms} ms"),
        );
    }
}
