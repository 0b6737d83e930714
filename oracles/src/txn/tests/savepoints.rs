//! Savepoints against what the manuals state: `ROLLBACK TO SAVEPOINT`
//! undoes the writes since, in the transaction's reads, the final rows
//! and the serial-order check; PostgreSQL releases the locks taken since
//! ("the lock is released immediately if the savepoint is rolled back
//! to", 13.3), and where the documentation leaves it open they may stay.

use super::*;
use lancet_core::txn::SavepointLocks;

const ADD_2: Action = Action::Stmt(Op::Update(Pred::Key(2), Assign::Add(1)));
const SAVE: Action = Action::Stmt(Op::Savepoint(1));
const BACK: Action = Action::Stmt(Op::RollbackTo(1));
const READ_ALL: Action = Action::Stmt(Op::Read(Pred::All));

/// Session 1 adds 1 to row 1, makes a savepoint, adds 1 to row 2, rolls
/// back to the savepoint and reads; session 2 then writes row 2.
fn undone() -> Schedule {
    use Action::*;
    schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (1, Begin),
            (0, ADD_1),
            (0, SAVE),
            (0, ADD_2),
            (0, BACK),     // 5
            (0, READ_ALL), // 6: row 1 changed, row 2 as it was
            (1, ADD_2),    // 7: waits or not, by the rules
            (0, Commit),
            (1, Commit),
        ],
    )
}

#[test]
fn rollback_to_a_savepoint_undoes_the_writes_since() {
    let s = undone();
    let documented = |i| match i {
        6 => rows(&[(1, 11), (2, 20)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rc(), documented, &[(1, 11), (2, 21)]), vec![]);
    let kept = |i| match i {
        6 => rows(&[(1, 11), (2, 21)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rc(), kept, &[(1, 11), (2, 21)]),
        vec![AnomalyKind::NonRepeatableRead]
    );
    // The final rows must not show the undone write.
    assert_eq!(
        run(&s, &pg_rc(), documented, &[(1, 11), (2, 22)]),
        vec![AnomalyKind::LostUpdate]
    );
}

#[test]
fn the_locks_since_the_savepoint_go_or_may_stay_by_the_rules() {
    let s = undone();
    let released = LevelRules {
        savepoint_locks: SavepointLocks::Released,
        ..pg_rc()
    };
    let maybe = LevelRules {
        savepoint_locks: SavepointLocks::Maybe,
        ..pg_rc()
    };
    for (r, before, after) in [
        (&released, Wait::Must, Wait::MustNot),
        (&maybe, Wait::Must, Wait::May),
    ] {
        let mut m = Model::new(&s, r);
        returns_at_once(&mut m, 0..5);
        // Before the rollback, row 2 is surely locked.
        assert_eq!(m.start(7), before);
        m.finish(7, Outcome::Conflict(Conflict::LockTimeout), true);
        let mut m = Model::new(&s, r);
        returns_at_once(&mut m, 0..6);
        assert_eq!(m.start(7), after);
    }
}

#[test]
fn the_serial_order_check_undoes_what_a_savepoint_undid() {
    use Action::*;
    let s = schedule(
        IsolationLevel::Serializable,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (0, SAVE),
            (0, ADD_1),
            (0, BACK),
            (0, READ_ALL), // 4
            (0, ADD_2),
            (0, Commit),
        ],
    );
    let documented = |i| match i {
        4 => rows(&[(1, 10), (2, 20)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_ser(), documented, &[(1, 10), (2, 21)]), vec![]);
    // Shrinking the savepoint away takes its ROLLBACK TO with it.
    let c = super::super::shrink::candidates(&s);
    assert!(c.iter().any(|c| c.steps.len() == 5
        && !c
            .steps
            .iter()
            .any(|st| matches!(st.action, Action::Stmt(op) if op.is_savepoint()))));
}

#[test]
fn a_savepoint_takes_no_snapshot() {
    use Action::*;
    // PostgreSQL's snapshot is the first statement's that reads: a commit
    // between SAVEPOINT and it is seen (seen on 18.6).
    let s = schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 10)],
        &[
            (1, Begin),
            (1, SAVE),
            (0, Begin),
            (0, ADD_1),
            (0, Commit),
            (1, READ_1), // 5
            (1, ADD_1),  // 6: no conflict, its snapshot has the commit
            (1, Commit),
        ],
    );
    let documented = |i| match i {
        5 => rows(&[(1, 11)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rr(), documented, &[(1, 12)]), vec![]);
}
