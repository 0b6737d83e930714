//! What the generator knows of one table while it draws a schedule's
//! statements: its first key, its rows as drawn (their keys and values),
//! the next key an INSERT takes, and the forms the table may hold.

use super::KEYS_PER_TABLE;
use crate::txn::forms::{partner, Forms, MOVE};
use lancet_core::Rng;
use rand::Rng as _;

/// What the generator knows of one table while it draws statements: the
/// first key, its rows, the next key an INSERT takes, and the forms it
/// may hold.
pub(super) struct TableDraw {
    pub(super) base: i64,
    pub(super) rows: Vec<(i64, i64)>,
    pub(super) next_key: i64,
    /// Its index on `v` is UNIQUE: its rows' values differ.
    pub(super) unique: bool,
    pub(super) forms: Forms,
}

impl TableDraw {
    pub(super) fn new(rng: &mut Rng, t: i64, forms: &Forms) -> TableDraw {
        let base = t * KEYS_PER_TABLE;
        // A draw only where the DBMS has UNIQUE indexes on v.
        let unique = forms.unique_v && rng.random_bool(0.25);
        let nrows = rng.random_range(2..=6i64);
        let mut rows: Vec<(i64, i64)> = Vec::new();
        for k in 1..=nrows {
            let mut v = rng.random_range(0..10);
            while unique && rows.iter().any(|&(_, w)| w == v) {
                v = (v + 1) % 10;
            }
            // Where rows move, a quarter are born at the upper key of
            // their pair, so that a move may take a row down behind a
            // scan (MDEV-27992).
            let k = if forms.moves && rng.random_bool(0.25) {
                partner(base + k, base + MOVE)
            } else {
                base + k
            };
            rows.push((k, v));
        }
        TableDraw {
            base,
            rows,
            next_key: base + 100,
            unique,
            forms: forms.clone(),
        }
    }

    /// A key a `WHERE k = c` picks: an initial row's (or the key just
    /// past them), or, where rows move, sometimes its partner key.
    pub(super) fn key(&self, rng: &mut Rng) -> i64 {
        let k = self.base + rng.random_range(1..=self.rows.len() as i64 + 1);
        if self.forms.moves && rng.random_bool(0.25) {
            partner(k, self.pivot())
        } else {
            k
        }
    }

    /// The pivot of this table's moves ([`partner`]).
    pub(super) fn pivot(&self) -> i64 {
        self.base + MOVE
    }
}
