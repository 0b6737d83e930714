//! Which rows a statement's condition picks: a plain condition picks by
//! the row alone; one with a subquery over another table picks by the
//! rows its subquery reads, which the rules may leave among several
//! views ([`SubqueryRead`]). A row the views disagree on may or may not
//! be picked: the model leaves it open instead of guessing.

use super::*;
use crate::txn::schedule::{table_of, Bound};
use lancet_core::txn::SubqueryRead;

impl Model<'_> {
    /// The keys of table `table` a write or locking read of `session`
    /// over `pred` would change if it ran now, by the rules: those it
    /// surely picks, and those it may pick or not. `seen`: the committed
    /// rows after commits while the statement was in flight.
    pub(super) fn targets(
        &self,
        session: usize,
        table: usize,
        pred: Pred,
        view: &State,
        seen: &[State],
    ) -> (BTreeSet<i64>, BTreeSet<i64>) {
        let base = match self.rules_of(session).writes {
            WriteRule::NewestRows => self.overlay(session, &self.committed),
            WriteRule::SnapshotRowsNewestVersions | WriteRule::SnapshotOrAbort => {
                self.overlay(session, view)
            }
        };
        let binds = self.write_bindings(session, table, pred, view, seen);
        let mut sure = BTreeSet::new();
        let mut maybe = BTreeSet::new();
        for (&k, ver) in &base {
            match picks(&binds, table, k, ver.v) {
                Some(true) => {
                    sure.insert(k);
                }
                None => {
                    maybe.insert(k);
                }
                Some(false) => {}
            }
        }
        if self.subquery_open(session, pred) {
            maybe.append(&mut sure);
            maybe.extend(base.keys().copied().filter(|&k| table_of(k) == table));
        }
        (sure, maybe)
    }

    /// `pred` ready to pick rows in a write or locking read of `session`
    /// on `table`: plain, or bound to each view of the other table its
    /// subquery may read by the rules (the statement's `view`, and for
    /// [`SubqueryRead::ViewOrNewest`] the newest rows then and since).
    pub(super) fn write_bindings(
        &self,
        session: usize,
        table: usize,
        pred: Pred,
        view: &State,
        seen: &[State],
    ) -> Vec<Bound> {
        if !pred.has_subquery() {
            return vec![Bound::Plain(pred)];
        }
        let mut views = vec![view];
        if self.rules_of(session).write_subquery == SubqueryRead::ViewOrNewest {
            views.push(&self.committed);
            views.extend(seen);
        }
        views
            .into_iter()
            .map(|v| {
                let rows = self.overlay(session, v);
                pred.bind(table, rows.iter().map(|(&k, ver)| (k, ver.v)))
            })
            .collect()
    }

    /// Whether `pred`'s subquery may read a row whose value is open for
    /// `session`: one its view may show dirty (READ UNCOMMITTED), or one
    /// an uncertain write left open. Then what it returns is open, and
    /// so is every row the condition might pick.
    pub(super) fn subquery_open(&self, session: usize, pred: Pred) -> bool {
        let Pred::Sub(sub) = pred else {
            return false;
        };
        let keys: BTreeSet<i64> = self
            .committed
            .keys()
            .chain(
                self.txns
                    .iter()
                    .flat_map(|t| t.writes.keys().chain(&t.uncertain)),
            )
            .copied()
            .filter(|&k| table_of(k) == sub.from())
            .collect();
        keys.into_iter()
            .any(|k| self.dirty_for(session, k) || self.unsure(session, k))
    }

    /// The rows of the other table a subquery of `session`'s write may
    /// have read with shared locks (InnoDB's locking read of them):
    /// maybe locked from now on.
    pub(super) fn subquery_locks(&mut self, session: usize, pred: Pred, started: &Started) {
        let Pred::Sub(sub) = pred else {
            return;
        };
        if self.rules_of(session).write_subquery != SubqueryRead::ViewOrNewest {
            return;
        }
        let keys: Vec<i64> = std::iter::once(&started.view)
            .chain(&started.seen)
            .chain(std::iter::once(&self.committed))
            .flat_map(|v| v.keys().copied())
            .filter(|&k| table_of(k) == sub.from())
            .collect();
        self.txns[session].maybe_locked.extend(keys);
    }
}

/// Whether every binding picks row `(k, v)` of `table` (`Some(true)`),
/// none does (`Some(false)`), or they disagree (`None`).
pub(super) fn picks(binds: &[Bound], table: usize, k: i64, v: i64) -> Option<bool> {
    let hits = binds.iter().filter(|b| b.matches_in(table, k, v)).count();
    match hits {
        0 => Some(false),
        n if n == binds.len() => Some(true),
        _ => None,
    }
}
