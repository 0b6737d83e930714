//! What a plain read is entitled to by its view, and how a read's rows
//! are checked against what the rules allow, but for the rows they leave
//! open.

use super::*;

impl Model<'_> {
    pub(super) fn read(
        &mut self,
        step: usize,
        pred: Pred,
        started: &Started,
        rows: Vec<(i64, i64)>,
    ) {
        let Step { session, table, .. } = self.schedule.steps[step];
        self.txns[session].reads.push((step, rows.clone()));
        // A locking read sees the newest rows when it got its locks.
        let base = if self.rules_of(session).read_view == ReadView::LockingLatest {
            self.committed.clone()
        } else {
            started.view.clone()
        };
        // Its subquery, if any, reads the same rows.
        let seen = self.overlay(session, &base);
        let bound = pred.bind(table, seen.iter().map(|(&k, ver)| (k, ver.v)));
        let allowed: Vec<(i64, i64)> = seen
            .iter()
            .filter(|(&k, ver)| bound.matches_in(table, k, ver.v))
            .map(|(&k, ver)| (k, ver.v))
            .collect();
        // A row the subquery may read as any version (dirty, or left
        // open) leaves every row's fate open.
        let also = if self.subquery_open(session, pred) {
            seen.keys()
                .copied()
                .chain(rows.iter().map(|r| r.0))
                .collect()
        } else {
            BTreeSet::new()
        };
        let open = self.open_rows(session, &allowed, &rows, &also);
        self.check_rows(step, allowed, rows, &open, "returned");
    }

    /// The keys of `allowed` and `rows` whose rows a read of `session`
    /// does not check: `also`, rows the rules leave open for it, and rows
    /// its view may show dirty.
    pub(super) fn open_rows(
        &self,
        session: usize,
        allowed: &[(i64, i64)],
        rows: &[(i64, i64)],
        also: &BTreeSet<i64>,
    ) -> BTreeSet<i64> {
        allowed
            .iter()
            .chain(rows)
            .map(|&(k, _)| k)
            .filter(|&k| also.contains(&k) || self.unsure(session, k) || self.dirty_for(session, k))
            .collect()
    }

    /// A read returned `rows` where the rules allow exactly `allowed`,
    /// but for the `open` keys: any difference is an anomaly, named by
    /// what was seen.
    pub(super) fn check_rows(
        &mut self,
        step: usize,
        allowed: Vec<(i64, i64)>,
        rows: Vec<(i64, i64)>,
        open: &BTreeSet<i64>,
        what: &str,
    ) {
        let session = self.schedule.steps[step].session;
        let keep = |rows: Vec<(i64, i64)>| {
            let mut rows: Vec<(i64, i64)> = rows
                .into_iter()
                .filter(|(k, _)| !open.contains(k))
                .collect();
            rows.sort();
            rows
        };
        let (expected, actual) = (keep(allowed), keep(rows));
        if actual != expected {
            let kind = self.classify_read(session, &expected, &actual);
            self.anomaly(
                kind,
                step,
                format!(
                    "{what} {} where the level allows exactly {}",
                    show(&actual),
                    show(&expected)
                ),
            );
        }
    }
}
