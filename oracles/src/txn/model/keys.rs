//! Writes that choose or change a row's key, and duplicates: a move to
//! the partner key (the row keeps its identity, [`Version::row`]), the
//! newest version of a row a concurrent commit moved (PostgreSQL's update
//! chain), upserts and INSERT IGNORE (a locking write of the row at their
//! key, or an insert), UPDATE IGNORE, and where a duplicate-key error is
//! allowed: wherever some version of another row the model knows may hold
//! the key or the UNIQUE value a statement writes.

use super::*;
use crate::txn::forms::partner;
use crate::txn::schedule::{add, table_of, Assign, NULL_V};

impl Model<'_> {
    /// The newest committed version of the row `view` holds at `k`, and
    /// its key: PostgreSQL's re-check follows the update chain, across a
    /// change of key too (manual 13.2.1: the second updater "will attempt
    /// to apply its operation to the updated version of the row"). `None`
    /// where the row is gone.
    pub(super) fn newest_of(&self, k: i64, view: &State) -> Option<(i64, Version)> {
        let Some(seen) = view.get(&k) else {
            return self.committed.get(&k).map(|v| (k, *v));
        };
        match self.committed.get(&k) {
            Some(now) if now.row == seen.row => Some((k, *now)),
            _ => self
                .committed
                .iter()
                .find(|(_, v)| v.row == seen.row)
                .map(|(&at, v)| (at, *v)),
        }
    }

    /// A move's rows go to their partner keys, each as a new version of
    /// itself. A row the statement left open leaves its partner key open
    /// too (moved or not).
    pub(super) fn move_rows(&mut self, session: usize, changes: &[(i64, Version)], pivot: i64) {
        for &(k, _) in changes {
            self.txns[session].writes.insert(k, None);
            if self.unsure(session, k) {
                self.txns[session].uncertain.insert(partner(k, pivot));
            }
        }
        for &(k, old) in changes {
            let new = self.version_of(old.row, old.v, session);
            self.txns[session]
                .writes
                .insert(partner(k, pivot), Some(new));
        }
    }

    /// An UPDATE IGNORE's rows: each takes its new value, but a row whose
    /// new value may be a duplicate may have been skipped, and is left
    /// open (which rows the DBMS met first decides).
    pub(super) fn set_ignore(&mut self, step: usize, changes: &[(i64, Version)], a: Assign) {
        let Step { session, table, .. } = self.schedule.steps[step];
        let rules = self.rules_of(session);
        // Which rows may meet a duplicate, judged before any of them is
        // left open: a row of this statement holds its old value or its
        // new one, both of which count. Without a UNIQUE index on `v`
        // (a reduced schedule), none: it is an UPDATE.
        let unique = self.schedule.shape(table).0.is_unique();
        let open: Vec<bool> = changes
            .iter()
            .map(|&(k, old)| {
                let value = a.apply(old.v);
                unique
                    && value != NULL_V
                    && (changes
                        .iter()
                        .any(|&(c, o)| c != k && a.apply(o.v) == value)
                        || self.value_taken(session, table, value, Some(old.row)))
            })
            .collect();
        for (&(k, old), open) in changes.iter().zip(open) {
            let value = a.apply(old.v);
            if rules.same_value_is_no_change && value == old.v {
                continue;
            }
            if open {
                self.txns[session].uncertain.insert(k);
                self.txns[session].skipped = true;
                continue;
            }
            let new = self.version_of(old.row, value, session);
            self.txns[session].writes.insert(k, Some(new));
        }
    }

    /// An upsert (`add`: the amount added to an existing row) or an
    /// INSERT IGNORE (`add` none) at key `k` returned: it wrote the row
    /// the level's write rule finds at `k` (PostgreSQL's READ COMMITTED
    /// and InnoDB: the newest, "even if that row is not visible"; a
    /// snapshot level: the snapshot's, or it must fail), or inserted
    /// `(k, v)` where there is none.
    pub(super) fn upsert(
        &mut self,
        step: usize,
        k: i64,
        v: i64,
        add: Option<i64>,
        started: &Started,
    ) {
        let session = self.schedule.steps[step].session;
        if self.unsure(session, k) {
            self.txns[session].uncertain.insert(k);
            return;
        }
        let rules = self.rules_of(session);
        let found = match self.txns[session].writes.get(&k) {
            Some(own) => *own,
            None => {
                let now = self.committed.get(&k).copied();
                if let (WriteRule::SnapshotOrAbort, Some(now), Some(c)) = (rules.writes, now, add) {
                    let by_value = rules.same_value_is_no_change;
                    let key = |x: &Version| if by_value { x.v as u64 } else { x.id };
                    if started.view.get(&k).map(key) != Some(key(&now)) {
                        self.anomaly(
                            AnomalyKind::LostUpdate,
                            step,
                            format!(
                                "row k = {k} was written by a transaction that committed after this one's snapshot, yet the upsert adding {c} to it succeeded (the level's first-updater-wins rule must fail it with a serialization error)"
                            ),
                        );
                        self.txns[session].uncertain.insert(k);
                        return;
                    }
                }
                now
            }
        };
        match (found, add) {
            (Some(row), Some(c)) => {
                let new = self.version_of(row.row, crate::txn::schedule::add(row.v, c), session);
                self.txns[session].writes.insert(k, Some(new));
            }
            // IGNORE: nothing, but InnoDB's duplicate check locked it.
            (Some(_), None) => {
                self.txns[session].maybe_locked.insert(k);
            }
            (None, _) => {
                let new = self.version(v, session);
                self.txns[session].writes.insert(k, Some(new));
                // The snapshot holds another row at `k`, which a
                // transaction that committed after it deleted or moved
                // away: PostgreSQL's snapshot then shows both tuples
                // (seen with lancet on PostgreSQL 18.6 at REPEATABLE
                // READ), InnoDB's one record per key only the new one.
                let snapshot =
                    matches!(rules.read_view, ReadView::FirstStatement | ReadView::Begin);
                if snapshot && started.view.contains_key(&k) {
                    self.txns[session].uncertain.insert(k);
                }
            }
        }
    }

    /// The wait the rules give statement `op` of `session` on `table`,
    /// from the one its rows give (`wait`): an INSERT IGNORE does not
    /// wait for a row only locked (PostgreSQL's conflict check ignores a
    /// `FOR UPDATE` lock), and a statement that may write a duplicate of
    /// a version another open transaction holds may wait for it.
    pub(super) fn key_wait(&self, session: usize, op: Op, table: usize, wait: Wait) -> Wait {
        match wait {
            Wait::Must => match op {
                Op::InsertIgnore(k, _)
                    if !(0..self.txns.len()).any(|t| {
                        t != session
                            && self.txns[t].status == Status::Active
                            && self.txns[t].writes.contains_key(&k)
                    }) =>
                {
                    Wait::May
                }
                _ => Wait::Must,
            },
            Wait::MustNot if self.may_collide(session, op, table, None) => Wait::May,
            other => other,
        }
    }

    /// Whether a duplicate-key error is allowed for step `step`.
    pub(super) fn may_duplicate(&self, step: usize, started: Option<&Started>) -> bool {
        let Step {
            session,
            action,
            table,
        } = self.schedule.steps[step];
        match action {
            Action::Stmt(op) => self.may_collide(session, op, table, started.map(|s| &s.view)),
            _ => false,
        }
    }

    /// Whether statement `op` of `session` on `table` may write a key or
    /// a UNIQUE value that some version of another row holds: a
    /// committed one, one an open transaction wrote, or one a statement
    /// in flight may write; or two of its own rows take one value.
    /// Generous: any version of any row it may change counts.
    fn may_collide(&self, session: usize, op: Op, table: usize, view: Option<&State>) -> bool {
        let unique = self.schedule.shape(table).0.is_unique();
        // A row whose value is open may match any condition and take any
        // value (seen with lancet on SQLite: an UPDATE OR IGNORE left two
        // rows open, and `SET v = v + 3 WHERE v = 1` then met a duplicate).
        if self.open_in(table) && matches!(op, Op::Update(..) | Op::UpdateIgnore(..) | Op::Move(..))
        {
            return unique || matches!(op, Op::Move(..));
        }
        match op {
            Op::Insert(_, v) => unique && self.value_taken(session, table, v, None),
            Op::Update(p, a) | Op::UpdateIgnore(p, a) if unique => {
                let rows = self.candidates(session, table, p, view);
                rows.iter().any(|&(_, r)| {
                    let value = a.apply(r.v);
                    value != r.v
                        && value != NULL_V
                        && (self.value_taken(session, table, value, Some(r.row))
                            || rows
                                .iter()
                                .any(|&(_, o)| o.row != r.row && a.apply(o.v) == value))
                })
            }
            Op::Move(p, pivot) => self
                .candidates(session, table, p, view)
                .iter()
                .any(|&(k, r)| self.key_taken(session, partner(k, pivot), r.row)),
            // Not drawn on a UNIQUE table; on the key, an upsert or
            // IGNORE never fails.
            Op::Upsert(..) | Op::InsertIgnore(..) => unique,
            _ => false,
        }
    }

    /// Every version of a row of `table` that `pred` picks, with its key,
    /// that a statement of `session` may change: in its view, committed
    /// now, or written by an open transaction.
    fn candidates(
        &self,
        session: usize,
        table: usize,
        pred: Pred,
        view: Option<&State>,
    ) -> Vec<(i64, Version)> {
        let mut out: Vec<(i64, Version)> = Vec::new();
        // A condition with a subquery may pick any row of its table, by
        // whichever rows of the other table the subquery reads.
        let picks = |k: i64, v: i64| {
            if pred.has_subquery() {
                table_of(k) == table
            } else {
                pred.matches_in(table, k, v)
            }
        };
        let mut add = |k: i64, v: &Version| {
            if picks(k, v.v) && !out.contains(&(k, *v)) {
                out.push((k, *v));
            }
        };
        if let Some(view) = view {
            for (&k, v) in &self.overlay(session, view) {
                add(k, v);
            }
        }
        for (&k, v) in &self.committed {
            add(k, v);
        }
        for t in self.txns.iter().filter(|t| t.status == Status::Active) {
            for (&k, w) in &t.writes {
                if let Some(v) = w {
                    add(k, v);
                }
            }
        }
        out
    }

    /// The versions another row may hold now, with their keys: committed,
    /// or written by an open transaction (its own too).
    fn live_versions(&self) -> Vec<(i64, Version)> {
        let mut out: Vec<(i64, Version)> = self.committed.iter().map(|(&k, v)| (k, *v)).collect();
        for t in self.txns.iter().filter(|t| t.status == Status::Active) {
            out.extend(t.writes.iter().filter_map(|(&k, w)| w.map(|v| (k, v))));
        }
        out
    }

    /// Whether some row of `table` is left open (its value, even its
    /// key, unknown): for a committed write, or an open transaction's.
    fn open_in(&self, table: usize) -> bool {
        self.uncertain_committed
            .iter()
            .chain(
                self.txns
                    .iter()
                    .filter(|t| t.status == Status::Active)
                    .flat_map(|t| t.uncertain.iter()),
            )
            .any(|&k| table_of(k) == table)
    }

    /// Whether a row other than `row` may hold `value` in `table`'s
    /// UNIQUE `v`, now or by a statement another session has in flight.
    /// A row left open may hold any value (an UPDATE IGNORE that may
    /// have skipped it, a scan that may have met it).
    pub(super) fn value_taken(
        &self,
        session: usize,
        table: usize,
        value: i64,
        row: Option<u64>,
    ) -> bool {
        // NULLs never collide in a UNIQUE index.
        if value == NULL_V {
            return false;
        }
        let live = self.live_versions();
        let values: Vec<i64> = live
            .iter()
            .filter(|(k, _)| table_of(*k) == table)
            .map(|(_, v)| v.v)
            .collect();
        // A row another open transaction deleted keeps its value for a
        // unique check until that transaction ends (PostgreSQL waits for
        // the deleter, as InnoDB for a delete-marked record's lock; seen
        // with lancet on 18.6: an INSERT of a value another transaction
        // had inserted and deleted waited for it), and the model keeps no
        // value of a deleted row.
        let deleted_by_other = (0..self.txns.len()).any(|t| {
            t != session
                && self.txns[t].status == Status::Active
                && self.txns[t]
                    .writes
                    .iter()
                    .any(|(&k, w)| w.is_none() && table_of(k) == table)
        });
        if self.open_in(table)
            || deleted_by_other
            || live
                .iter()
                .any(|(k, v)| table_of(*k) == table && v.v == value && Some(v.row) != row)
        {
            return true;
        }
        self.in_flight(session, table).any(|op| match op {
            Op::Insert(_, v) | Op::InsertIgnore(_, v) => v == value,
            Op::Upsert(_, v, c) => v == value || values.iter().any(|&x| add(x, c) == value),
            Op::Update(_, a) | Op::UpdateIgnore(_, a) => {
                values.iter().any(|&x| a.apply(x) == value)
            }
            _ => false,
        })
    }

    /// Whether a row other than `row` may hold key `key`, now or by a
    /// statement another session has in flight, or a row left open may.
    fn key_taken(&self, session: usize, key: i64, row: u64) -> bool {
        self.open_in(table_of(key))
            || self
                .live_versions()
                .iter()
                .any(|&(k, v)| k == key && v.row != row)
            || self.in_flight(session, table_of(key)).any(|op| match op {
                Op::Insert(k, _) | Op::InsertIgnore(k, _) | Op::Upsert(k, ..) => k == key,
                Op::Move(..) => true,
                _ => false,
            })
    }

    /// The statements other sessions have in flight on `table`.
    fn in_flight(&self, session: usize, table: usize) -> impl Iterator<Item = Op> + '_ {
        (0..self.txns.len()).filter_map(move |t| {
            let st = self.txns[t].started.as_ref()?;
            let step = self.schedule.steps[st.step];
            match step.action {
                Action::Stmt(op) if t != session && step.table == table => Some(op),
                _ => None,
            }
        })
    }
}
