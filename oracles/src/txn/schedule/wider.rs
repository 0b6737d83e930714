//! Drawing the statements a DBMS offers beyond plain ones ([`Forms`]):
//! moves, upserts and IGNORE, each only where the DBMS has it, so that
//! a DBMS without them draws the schedules it drew before.

use super::draw::draw_pred;
use super::table_draw::{TableDraw, UPSERT_KEYS};
use super::{Assign, Op};
use crate::txn::forms::Forms;
use lancet_core::Rng;
use rand::Rng as _;

/// The kinds of statement [`draw`] chooses among.
#[derive(Clone, Copy)]
enum Kind {
    Move,
    Upsert,
    InsertIgnore,
    UpdateIgnore,
}

/// The kinds table `t` may hold: upserts and INSERT IGNORE pick their
/// row by the key alone, so not on a table whose `v` is UNIQUE too
/// (MySQL's ON DUPLICATE KEY would update the row a duplicate `v`
/// names); UPDATE IGNORE differs from UPDATE only where a duplicate may
/// happen, so only there.
fn kinds(forms: &Forms, unique: bool) -> Vec<Kind> {
    let s = &forms.spellings;
    let mut kinds = Vec::new();
    if forms.moves {
        kinds.push(Kind::Move);
    }
    if s.upsert_add.is_some() && !unique {
        kinds.push(Kind::Upsert);
    }
    if s.insert_ignore.is_some() && !unique {
        kinds.push(Kind::InsertIgnore);
    }
    if s.update_ignore.is_some() && unique {
        kinds.push(Kind::UpdateIgnore);
    }
    kinds
}

/// A key an upsert or INSERT IGNORE takes: an initial row's, or one of a
/// few fresh keys below the table's pivot that every session of the
/// schedule draws from (so that their upserts meet).
fn upsert_key(rng: &mut Rng, t: &TableDraw) -> i64 {
    if rng.random_bool(0.5) {
        t.rows[rng.random_range(0..t.rows.len())].0
    } else {
        t.base + UPSERT_KEYS + rng.random_range(0..3)
    }
}

/// One statement of a kind table `t` may hold; a plain UPDATE where it
/// may hold none.
pub(super) fn draw(rng: &mut Rng, t: &mut TableDraw) -> Op {
    let kinds = kinds(&t.forms, t.unique);
    let assign = |rng: &mut Rng, t: &TableDraw| {
        if rng.random_bool(0.7) {
            Assign::Add(rng.random_range(1..=5))
        } else {
            Assign::Set(t.value(rng))
        }
    };
    if kinds.is_empty() {
        let pred = draw_pred(rng, t, None);
        return Op::Update(pred, assign(rng, t));
    }
    match kinds[rng.random_range(0..kinds.len())] {
        Kind::Move => Op::Move(draw_pred(rng, t, None), t.pivot()),
        Kind::Upsert => Op::Upsert(upsert_key(rng, t), t.value(rng), rng.random_range(1..=5)),
        Kind::InsertIgnore => Op::InsertIgnore(upsert_key(rng, t), t.value(rng)),
        Kind::UpdateIgnore => {
            let pred = draw_pred(rng, t, None);
            Op::UpdateIgnore(pred, assign(rng, t))
        }
    }
}
