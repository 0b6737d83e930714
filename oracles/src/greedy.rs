//! Greedy reduction of a sessions oracle's case: the first smaller
//! candidate that still shows the finding replaces the case, until none
//! does or the time is up. The transaction oracle shrinks schedules with
//! it, the stress oracle rounds.

use serde::Serialize;
use std::collections::HashSet;

/// Reduces `start`: `candidates` lists the smaller cases of a case, the
/// likeliest first; `shows` runs one and returns its run where it still
/// shows the finding; `stop` ends the search (time up, interrupted). A
/// case already tried is not tried again (candidates that undo each
/// other, such as swaps, would otherwise loop). The smallest case found
/// with its run, or `None` if no candidate showed the finding.
pub(crate) fn reduce<T: Clone + Serialize, R>(
    start: &T,
    candidates: impl Fn(&T) -> Vec<T>,
    mut shows: impl FnMut(&T) -> Option<R>,
    stop: impl Fn() -> bool,
) -> Option<(T, R)> {
    let key = |t: &T| serde_json::to_string(t).unwrap_or_default();
    let mut tried: HashSet<String> = HashSet::from([key(start)]);
    let mut best: Option<(T, R)> = None;
    let mut current = start.clone();
    'outer: loop {
        for candidate in candidates(&current) {
            if stop() {
                break 'outer;
            }
            if !tried.insert(key(&candidate)) {
                continue;
            }
            if let Some(run) = shows(&candidate) {
                current = candidate.clone();
                best = Some((candidate, run));
                continue 'outer;
            }
        }
        break;
    }
    best
}
