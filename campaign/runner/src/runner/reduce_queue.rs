//! The queue of confirmed findings waiting for a reducer
//! ([`super::reducers`]), ordered so that reduction keeps pace with a
//! buggy engine. The first finding of a signature no reducer has taken
//! goes first; more findings of a signature already taken wait behind
//! every new one (one bug found fifty times is reduced once before the
//! others are reduced at all). At the run's end it says how many findings
//! were left unreduced and why.

use crate::findings::Finding;
use crate::reproducer::WrittenFinding;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// How a run reduces its findings (`None` in the run options: it does not).
#[derive(Clone, Debug)]
pub struct ReduceOptions {
    /// The time limit for one finding (`--reduce-time`).
    pub per_finding: Duration,
    /// How many reducer threads run beside the workers (`--reducers`).
    pub reducers: u32,
    /// After the workers end by the run's limit (`--timeout`, `--queries`),
    /// how long the reducers may go on with the queue before the summary
    /// (`--finish-reductions`); an interrupt ends them at once.
    pub finish: Duration,
}

/// A confirmed finding waiting for a reducer.
pub(super) struct ReduceWork {
    pub finding: Finding,
    pub written: WrittenFinding,
}

/// Findings waiting beyond this many: the one of the most-taken signature
/// is left unreduced (reduce it later with `lancet reduce`), so that a
/// bug hit in a tight loop cannot fill the queue.
pub(super) const MAX_QUEUED_REDUCTIONS: usize = 64;

/// The reducers' queue, shared by the workers that fill it. Each item
/// carries the signature its finding had as found: the queue's notion of
/// "the same bug" until reduction tells better.
pub(super) struct ReduceQueue<T = ReduceWork> {
    state: Mutex<QueueState<T>>,
    arrived: Condvar,
}

impl<T> Default for ReduceQueue<T> {
    fn default() -> Self {
        ReduceQueue {
            state: Mutex::new(QueueState {
                waiting: Vec::new(),
                next: 0,
                taken: HashMap::new(),
                unreduced: BTreeMap::new(),
            }),
            arrived: Condvar::new(),
        }
    }
}

struct QueueState<T> {
    waiting: Vec<(u64, String, T)>,
    next: u64,
    /// Reductions taken per signature.
    taken: HashMap<String, u32>,
    /// Why findings were left unreduced, and how many.
    unreduced: BTreeMap<&'static str, u64>,
}

impl<T> QueueState<T> {
    /// Where a waiting item stands: how often its signature was taken,
    /// then its age.
    fn key(&self, i: usize) -> (u32, u64) {
        let (seq, signature, _) = &self.waiting[i];
        (self.taken.get(signature).copied().unwrap_or(0), *seq)
    }

    /// The position of the waiting item to take next: the least-taken
    /// signature, oldest first.
    fn best(&self) -> Option<usize> {
        (0..self.waiting.len()).min_by_key(|&i| self.key(i))
    }

    /// The position of the waiting item to give up first.
    fn worst(&self) -> Option<usize> {
        (0..self.waiting.len()).max_by_key(|&i| self.key(i))
    }
}

impl<T> ReduceQueue<T> {
    /// Queues an item; past [`MAX_QUEUED_REDUCTIONS`] the worst-placed
    /// one is left unreduced.
    pub fn push(&self, signature: String, item: T) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let seq = s.next;
        s.next += 1;
        s.waiting.push((seq, signature, item));
        if s.waiting.len() > MAX_QUEUED_REDUCTIONS {
            if let Some(i) = s.worst() {
                s.waiting.swap_remove(i);
                *s.unreduced.entry("the queue was full").or_default() += 1;
            }
        }
        drop(s);
        self.arrived.notify_one();
    }

    /// The next item to reduce, waiting at most `wait` for one.
    pub(super) fn take(&self, wait: Duration) -> Option<T> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.waiting.is_empty() {
            s = self
                .arrived
                .wait_timeout(s, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        let i = s.best()?;
        let (_, signature, item) = s.waiting.swap_remove(i);
        *s.taken.entry(signature).or_default() += 1;
        Some(item)
    }

    /// Whether no item is waiting.
    pub(super) fn is_empty(&self) -> bool {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .is_empty()
    }

    /// Counts a finding left unreduced for `why`.
    pub(super) fn unreduced(&self, why: &'static str, n: u64) {
        if n > 0 {
            let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
            *s.unreduced.entry(why).or_default() += n;
        }
    }

    /// At the run's end: the findings still waiting, and `untriaged`
    /// crashes never replayed, count as left for `why`; returns every
    /// reason with its count.
    pub fn close(&self, why: &'static str, untriaged: u64) -> BTreeMap<String, u64> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let left = s.waiting.len() as u64 + untriaged;
        s.waiting.clear();
        if left > 0 {
            *s.unreduced.entry(why).or_default() += left;
        }
        s.unreduced
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_signatures_go_first_and_a_full_queue_drops_the_most_taken() {
        let q = ReduceQueue::<u32>::default();
        for (i, s) in ["a", "a", "b", "a", "c"].into_iter().enumerate() {
            q.push(s.to_string(), i as u32);
        }
        let order: Vec<u32> = std::iter::from_fn(|| q.take(Duration::ZERO)).collect();
        // a (first), then b and c (new signatures), then the other a's.
        assert_eq!(order, [0, 2, 4, 1, 3]);
        for i in 0..(MAX_QUEUED_REDUCTIONS as u32 + 1) {
            q.push(if i == 0 { "d" } else { "a" }.to_string(), i);
        }
        // The newest finding of the most-taken signature was given up.
        assert_eq!(q.take(Duration::ZERO), Some(0));
        assert_eq!(q.close("the run ended", 0)["the queue was full"], 1);
    }
}
