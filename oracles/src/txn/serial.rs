//! The serializability check: whether some serial order of the committed
//! transactions, each run alone on the rows the one before left, gives
//! every read they made and the final rows (the idea of WriteCheck and of
//! Elle's G2 detection, on a schedule small enough to try every order).

use super::forms::partner;
use super::model::{Reads, State};
use super::schedule::{add, Action, LockWait, Op, Pred, Schedule};
use std::collections::BTreeMap;

/// Whether an order of `committed` explains the `reads` (per session: the
/// step and the rows it returned) and `final_rows`.
pub fn explained(
    schedule: &Schedule,
    initial: &State,
    committed: &[usize],
    reads: &[Reads],
    final_rows: &[(i64, i64)],
) -> bool {
    let start: BTreeMap<i64, i64> = initial.iter().map(|(&k, v)| (k, v.v)).collect();
    let mut order = committed.to_vec();
    permutations(&mut order, 0, &mut |order| {
        let mut rows = start.clone();
        for &s in order {
            if !run_alone(schedule, s, &mut rows, &reads[s]) {
                return false;
            }
        }
        let end: Vec<(i64, i64)> = rows.into_iter().collect();
        end == final_rows
    })
}

/// Runs session `s`'s statements on `rows`; false if a read differs from
/// what it returned in the schedule. A `SKIP LOCKED` read, which leaves
/// out rows others lock ("an inconsistent view of the data", PostgreSQL's
/// SELECT page), need only return some of the rows, as they are.
fn run_alone(
    schedule: &Schedule,
    s: usize,
    rows: &mut BTreeMap<i64, i64>,
    reads: &[(usize, Vec<(i64, i64)>)],
) -> bool {
    let mut savepoints: Vec<(u8, BTreeMap<i64, i64>)> = Vec::new();
    for (step, st) in schedule.session_steps(s) {
        let Action::Stmt(op) = st.action else {
            continue;
        };
        let bind = |p: Pred, rows: &BTreeMap<i64, i64>| {
            p.bind(st.table, rows.iter().map(|(&k, &v)| (k, v)))
        };
        match op {
            Op::Read(p) | Op::LockingRead(p, _) => {
                let b = bind(p, rows);
                let got: Vec<(i64, i64)> = rows
                    .iter()
                    .filter(|(&k, &v)| b.matches_in(st.table, k, v))
                    .map(|(&k, &v)| (k, v))
                    .collect();
                let Some((_, seen)) = reads.iter().find(|(at, _)| *at == step) else {
                    continue;
                };
                let mut seen = seen.clone();
                seen.sort();
                let some = matches!(op, Op::LockingRead(_, l) if l.wait == LockWait::SkipLocked);
                if (some && !seen.iter().all(|r| got.contains(r))) || (!some && got != seen) {
                    return false;
                }
            }
            Op::Insert(k, v) => {
                rows.insert(k, v);
            }
            // UPDATE IGNORE: the model checks no serial order of a
            // transaction whose IGNORE may have skipped rows; where it
            // skipped none, it is an UPDATE.
            Op::Update(p, a) | Op::UpdateIgnore(p, a) => {
                let b = bind(p, rows);
                for (&k, v) in rows.iter_mut() {
                    if b.matches_in(st.table, k, *v) {
                        *v = a.apply(*v);
                    }
                }
            }
            Op::Delete(p) => {
                let b = bind(p, rows);
                rows.retain(|&k, v| !b.matches_in(st.table, k, *v))
            }
            Op::Savepoint(n) => savepoints.push((n, rows.clone())),
            Op::RollbackTo(n) => {
                if let Some(at) = savepoints.iter().rposition(|(m, _)| *m == n) {
                    savepoints.truncate(at + 1);
                    *rows = savepoints[at].1.clone();
                }
            }
            Op::Release(n) => {
                if let Some(at) = savepoints.iter().rposition(|(m, _)| *m == n) {
                    savepoints.truncate(at);
                }
            }
            Op::Move(p, pivot) => {
                let b = bind(p, rows);
                let moving: Vec<(i64, i64)> = rows
                    .iter()
                    .filter(|(&k, &v)| b.matches_in(st.table, k, v))
                    .map(|(&k, &v)| (k, v))
                    .collect();
                for (k, _) in &moving {
                    rows.remove(k);
                }
                for (k, v) in moving {
                    // Alone, a move onto a key another row holds fails:
                    // this order is not the one that ran.
                    if rows.insert(partner(k, pivot), v).is_some() {
                        return false;
                    }
                }
            }
            Op::Upsert(k, v, c) => match rows.get_mut(&k) {
                Some(x) => *x = add(*x, c),
                None => {
                    rows.insert(k, v);
                }
            },
            Op::InsertIgnore(k, v) => {
                rows.entry(k).or_insert(v);
            }
        }
    }
    true
}

/// Calls `f` on every permutation of `items[at..]` (with `items[..at]`
/// fixed) until it returns true.
fn permutations(items: &mut Vec<usize>, at: usize, f: &mut dyn FnMut(&[usize]) -> bool) -> bool {
    if at >= items.len() {
        return f(items);
    }
    for i in at..items.len() {
        items.swap(at, i);
        if permutations(items, at + 1, f) {
            items.swap(at, i);
            return true;
        }
        items.swap(at, i);
    }
    false
}
