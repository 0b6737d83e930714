//! How a schedule's statements are drawn: the conditions and statements
//! over a table ([`TableDraw`]), and where a session's savepoints go.

use super::table_draw::TableDraw;
use super::*;

/// A condition on table `t`; where `sub_from` names another table, one
/// in five reads it in a subquery.
pub(super) fn draw_pred(rng: &mut Rng, t: &TableDraw, sub_from: Option<usize>) -> Pred {
    if let Some(from) = sub_from {
        if rng.random_bool(0.2) {
            return Pred::Sub(Sub::draw(rng, from));
        }
    }
    let nrows = t.rows.len() as i64;
    match rng.random_range(0..10) {
        // On a UNIQUE index, a third of the key conditions are on v.
        0..=5 if t.unique && rng.random_bool(0.35) => Pred::Value(rng.random_range(0..10)),
        0..=5 => Pred::Key(t.key(rng)),
        6 => {
            let a = t.base + rng.random_range(1..=nrows);
            Pred::KeyRange(a, a + rng.random_range(0..3))
        }
        7 => {
            let a = rng.random_range(0..10);
            Pred::ValueRange(a, a + rng.random_range(0..5))
        }
        8 => Pred::ValueAbove(rng.random_range(0..10)),
        _ => Pred::All,
    }
}

pub(super) fn draw_op(
    rng: &mut Rng,
    t: &mut TableDraw,
    locking: LockingReads,
    forms: &Forms,
    more: MoreStatements,
    sub_from: Option<usize>,
) -> Op {
    match rng.random_range(0..20) {
        // A quarter of the reads lock, where the DBMS has FOR UPDATE (no
        // draw otherwise, so that schedules elsewhere stay as they were).
        0..=7 if locking != LockingReads::None && rng.random_bool(0.25) => {
            let pred = match locking {
                LockingReads::KeyEquality => {
                    Pred::Key(t.base + rng.random_range(1..=t.rows.len() as i64 + 1))
                }
                _ => draw_pred(rng, t, None),
            };
            Op::LockingRead(pred, Lock::draw(rng, more))
        }
        0..=7 => Op::Read(draw_pred(rng, t, sub_from)),
        // Moves, upserts and IGNORE: only where the DBMS has them.
        8..=14 if forms.any() && rng.random_bool(0.3) => wider::draw(rng, t),
        8..=14 => {
            let assign = if rng.random_bool(0.7) {
                Assign::Add(rng.random_range(1..=5))
            } else {
                Assign::Set(t.value(rng))
            };
            Op::Update(draw_pred(rng, t, sub_from), assign)
        }
        15..=16 => {
            t.next_key += 1;
            Op::Insert(t.next_key, t.value(rng))
        }
        _ => Op::Delete(draw_pred(rng, t, sub_from)),
    }
}

/// Puts `SAVEPOINT s1` before one of a session's statements and `ROLLBACK
/// TO SAVEPOINT s1` (or, one time in five, `RELEASE SAVEPOINT s1`)
/// somewhere after it, before its transaction's end (a RELEASE where a
/// read lies between and `reads_before` is false). `actions` is the
/// session's BEGIN, statements and end.
pub(super) fn add_savepoint(rng: &mut Rng, actions: &mut Vec<(Action, usize)>, reads_before: bool) {
    let statements = actions.len().saturating_sub(2);
    if statements == 0 {
        return;
    }
    let at = rng.random_range(1..=statements);
    actions.insert(at, (Action::Stmt(Op::Savepoint(1)), 0));
    // After the savepoint, up to just before the end (now one further).
    let back = rng.random_range(at + 1..actions.len());
    let reads = actions[at..back]
        .iter()
        .any(|(a, _)| matches!(a, Action::Stmt(op) if op.returns_rows()));
    let op = if rng.random_bool(0.8) && (reads_before || !reads) {
        Op::RollbackTo(1)
    } else {
        Op::Release(1)
    };
    actions.insert(back, (Action::Stmt(op), 0));
}
