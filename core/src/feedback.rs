//! Feedback from checks to generation: FROM clauses whose checks saw rows
//! are kept and drawn again (the Deopt idea: prefer what produced rows).
//!
//! A check over an empty FROM clause compares two empty results and can
//! find nothing; random joins, ON conditions and filtered derived tables
//! are empty about a quarter of the time. Reusing a productive FROM clause
//! for a share of the checks, each with a fresh predicate, spends that
//! share on rows without giving up the fresh clauses (which still find
//! the empty-input bugs).
//!
//! Generation then depends on what the DBMS returned as well as on the
//! seed: a database regenerated on the same build replays the same
//! results and so the same queries. A check that timed out gives no
//! feedback, which is the one way timing can steer the queries after it.

use crate::Rng;
use rand::Rng as _;

/// How many productive FROM clauses a database keeps.
pub const POOL_CAPACITY: usize = 24;

/// A generator's memory of productive FROM clauses (or whatever state a
/// provider needs to hand one out again: its scope, its cost).
#[derive(Clone, Debug)]
pub struct ProductivePool<T> {
    /// The fresh clause the current check uses, until the check ends.
    current: Option<T>,
    pool: Vec<T>,
    /// The slot the next productive clause replaces once the pool is full.
    next_slot: usize,
}

impl<T> Default for ProductivePool<T> {
    fn default() -> Self {
        ProductivePool {
            current: None,
            pool: Vec::new(),
            next_slot: 0,
        }
    }
}

impl<T: Clone> ProductivePool<T> {
    /// A pooled clause, drawn with probability `share` once the pool has
    /// any; `None` means: generate a fresh one (and hand it to
    /// [`ProductivePool::generated`]).
    pub fn draw(&mut self, rng: &mut Rng, share: f64) -> Option<T> {
        self.current = None;
        if self.pool.is_empty() || !rng.random_bool(share) {
            return None;
        }
        let i = rng.random_range(0..self.pool.len());
        Some(self.pool[i].clone())
    }

    /// Remembers the fresh clause the current check uses.
    pub fn generated(&mut self, clause: T) {
        self.current = Some(clause);
    }

    /// The current check ended; a fresh clause that saw rows joins the pool.
    pub fn check_ended(&mut self, saw_rows: bool) {
        let Some(clause) = self.current.take() else {
            return;
        };
        if !saw_rows {
            return;
        }
        if self.pool.len() < POOL_CAPACITY {
            self.pool.push(clause);
        } else {
            self.pool[self.next_slot] = clause;
            self.next_slot = (self.next_slot + 1) % POOL_CAPACITY;
        }
    }

    /// How many productive clauses are kept.
    pub fn len(&self) -> usize {
        self.pool.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pool.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::database_rng;

    #[test]
    fn only_fresh_clauses_that_saw_rows_are_kept() {
        let mut rng = database_rng(1, 0, 0);
        let mut pool = ProductivePool::default();
        assert_eq!(pool.draw(&mut rng, 1.0), None, "an empty pool has nothing");
        pool.generated("empty join");
        pool.check_ended(false);
        pool.generated("t0");
        pool.check_ended(true);
        // A check that drew no FROM clause adds nothing.
        pool.check_ended(true);
        assert_eq!(pool.len(), 1);
        assert_eq!(pool.draw(&mut rng, 1.0), Some("t0"));
        // A reused clause is not added again.
        pool.check_ended(true);
        assert_eq!(pool.len(), 1);
        assert_eq!(pool.draw(&mut rng, 0.0), None);
    }

    #[test]
    fn a_full_pool_replaces_its_oldest() {
        let mut rng = database_rng(1, 0, 0);
        let mut pool = ProductivePool::default();
        for i in 0..POOL_CAPACITY + 3 {
            pool.draw(&mut rng, 0.0);
            pool.generated(i);
            pool.check_ended(true);
        }
        assert_eq!(pool.len(), POOL_CAPACITY);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2000 {
            seen.extend(pool.draw(&mut rng, 1.0));
        }
        assert!(!seen.contains(&0) && !seen.contains(&2));
        assert!(seen.contains(&3) && seen.contains(&(POOL_CAPACITY + 2)));
    }
}
