//! NULLs in a UNIQUE column that may hold them, against the manuals:
//! they never collide, no condition on `v` holds for them, and `v + c`
//! keeps them NULL.

use super::keys::unique;
use super::*;
use crate::txn::schedule::Action::*;
use crate::txn::schedule::NULL_V;

fn stmt(op: Op) -> Action {
    Stmt(op)
}

/// NULLs in a UNIQUE column never collide (PostgreSQL's default NULLS
/// DISTINCT, InnoDB's and SQLite's UNIQUE indexes), no condition on `v`
/// holds for them, and `v + c` keeps them NULL.
#[test]
fn nulls_in_a_unique_column_never_collide_and_match_no_condition_on_v() {
    let mut s = unique(schedule(
        IsolationLevel::ReadCommitted,
        &[(1, NULL_V), (2, 20)],
        &[
            (0, Begin),
            (0, stmt(Op::Insert(101, NULL_V))), // 1: a second NULL
            (0, stmt(Op::Update(Pred::ValueAbove(0), Assign::Add(1)))), // 2: row 2 only
            (0, stmt(Op::Update(Pred::All, Assign::Add(1)))), // 3: NULLs stay
            (0, Commit),
        ],
    ));
    s.nullable_v = true;
    let after = [(1, NULL_V), (2, 22), (101, NULL_V)];
    assert_eq!(run(&s, &pg_rc(), |_| ok(), &after), vec![]);
    // A duplicate-key error on the second NULL is spurious.
    let dup = |i| match i {
        1 => Outcome::Conflict(Conflict::DuplicateKey),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rc(), dup, &[(1, NULL_V), (2, 20)]),
        vec![AnomalyKind::SpuriousConflict]
    );
    // A NULL that became a value is wrong.
    assert!(!run(&s, &pg_rc(), |_| ok(), &[(1, 1), (2, 22), (101, NULL_V)]).is_empty());
    // The table is made with `v` nullable.
    let create = lancet_core::txn::table_statements("t", s.shape(0).0, "integer", "");
    assert_eq!(
        create[0],
        "CREATE TABLE t (k integer PRIMARY KEY, v integer)"
    );
}
