//! What the generator knows of one table while it draws a schedule's
//! statements: its first key, its rows as drawn (their keys and values),
//! the next key an INSERT takes, and the forms the table may hold.

use super::{KEYS_PER_TABLE, NULL_V};
use crate::txn::forms::{partner, Forms, MOVE};
use lancet_core::Rng;
use rand::Rng as _;

/// Past a table's first key, where its INSERTs' keys start (the first
/// takes the next one).
pub(super) const INSERT_KEYS: i64 = 100;

/// Past a table's first key, the three fresh keys the upserts and
/// INSERT IGNOREs of all sessions share, so that they meet.
pub(super) const UPSERT_KEYS: i64 = 50;

/// What the generator knows of one table while it draws statements: the
/// first key, its rows, the next key an INSERT takes, and the forms it
/// may hold.
pub(super) struct TableDraw {
    pub(super) base: i64,
    pub(super) rows: Vec<(i64, i64)>,
    pub(super) next_key: i64,
    /// Its index on `v` is UNIQUE: its rows' values differ.
    pub(super) unique: bool,
    /// Its `v` may hold NULLs (with `unique`).
    pub(super) nullable: bool,
    pub(super) forms: Forms,
}

impl TableDraw {
    pub(super) fn new(rng: &mut Rng, t: i64, forms: &Forms) -> TableDraw {
        let base = t * KEYS_PER_TABLE;
        // A draw only where the DBMS has UNIQUE indexes on v.
        let unique = forms.unique_v && rng.random_bool(0.25);
        // Half the UNIQUE columns may hold NULLs (published InnoDB bugs
        // need them: MySQL #117797, #113751, MDEV-33802).
        let nullable = unique && rng.random_bool(0.5);
        let nrows = rng.random_range(2..=6i64);
        let mut rows: Vec<(i64, i64)> = Vec::new();
        for k in 1..=nrows {
            let mut v = rng.random_range(0..10);
            while unique && rows.iter().any(|&(_, w)| w == v) {
                v = (v + 1) % 10;
            }
            if nullable && rng.random_bool(0.3) {
                v = NULL_V;
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
            next_key: base + INSERT_KEYS,
            unique,
            nullable,
            forms: forms.clone(),
        }
    }

    /// A key a `WHERE k = c` picks: an initial row's (or the key just
    /// past them), or, where rows move, sometimes its partner key. One
    /// time in ten a key the schedule's INSERTs take, and, where upserts
    /// are drawn, one in five a key they share ([`UPSERT_KEYS`]): a
    /// transaction that reads a key another one inserts is half of the
    /// write skew over new rows that SERIALIZABLE must prevent (the
    /// G2-item reported on PostgreSQL 18.4 with upserts).
    pub(super) fn key(&self, rng: &mut Rng) -> i64 {
        if !self.forms.spellings.is_empty() && rng.random_bool(0.2) {
            return self.base + UPSERT_KEYS + rng.random_range(0..3);
        }
        if rng.random_bool(0.1) {
            return self.base + INSERT_KEYS + rng.random_range(1..=3);
        }
        let k = self.base + rng.random_range(1..=self.rows.len() as i64 + 1);
        if self.forms.moves && rng.random_bool(0.25) {
            partner(k, self.pivot())
        } else {
            k
        }
    }

    /// A value an INSERT or `SET v = c` writes: NULL one time in five
    /// where `v` may hold it (no draw elsewhere).
    pub(super) fn value(&self, rng: &mut Rng) -> i64 {
        if self.nullable && rng.random_bool(0.2) {
            NULL_V
        } else {
            rng.random_range(0..10)
        }
    }

    /// The pivot of this table's moves ([`partner`]).
    pub(super) fn pivot(&self) -> i64 {
        self.base + MOVE
    }
}
