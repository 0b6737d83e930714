//! The model's locks against schedules whose waits the manuals state:
//! deadlocks, exclusive BEGINs, writes that may or must not wait.

use super::*;

#[test]
fn two_writers_waiting_for_each_others_rows_are_a_certain_deadlock() {
    use Action::*;
    let add = |k| Action::Stmt(Op::Update(Pred::Key(k), Assign::Add(1)));
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (1, Begin),
            (0, add(1)),
            (1, add(2)),
            (0, add(2)), // 4: waits for session 2
            (1, add(1)), // 5: waits for session 1: a cycle
            (0, Commit),
            (1, Commit),
        ],
    );
    let r = pg_rc();
    let mut m = Model::new(&s, &r);
    returns_at_once(&mut m, 0..4);
    deadlock_of_steps_4_and_5(&mut m, &[(1, 11), (2, 21)]);
}

/// Steps 4 (session 1) and 5 (session 2) wait for each other's row
/// locks, a deadlock the model is sure of; the DBMS fails step 5 with its
/// deadlock error, the other's wait ends, step 6 commits session 1, and
/// the rest is checked as usual against `final_rows`.
pub(super) fn deadlock_of_steps_4_and_5(m: &mut Model<'_>, final_rows: &[(i64, i64)]) {
    assert_eq!(m.start(4), Wait::Must);
    assert_eq!(m.deadlock_cycle(0, &[true, false]), None);
    assert_eq!(m.start(5), Wait::Must);
    assert_eq!(m.deadlock_cycle(1, &[true, true]), Some(vec![1, 0]));
    m.finish(5, Outcome::Conflict(Conflict::Deadlock), true);
    assert_eq!(m.blocked_by(0), None);
    m.finish(4, ok(), true);
    m.start(6);
    m.finish(6, ok(), false);
    m.end(final_rows);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
}

#[test]
fn read_uncommitted_does_not_check_rows_a_waiting_write_may_have_changed() {
    use Action::*;
    let ru = rules(
        IsolationLevel::ReadUncommitted,
        ReadView::Uncommitted,
        WriteRule::NewestRows,
    );
    const ADD_ALL: Action = Action::Stmt(Op::Update(Pred::All, Assign::Add(3)));
    const READ_2: Action = Action::Stmt(Op::Read(Pred::Key(2)));
    let s = schedule(
        IsolationLevel::ReadUncommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),
            (0, ADD_ALL), // 3: waits for row 1, may have changed row 2
            (1, READ_2),  // 4
            (1, Commit),
            (0, Commit),
        ],
    );
    let mut m = Model::new(&s, &ru);
    returns_at_once(&mut m, 0..3);
    assert_eq!(m.start(3), Wait::Must);
    m.start(4);
    m.finish(4, rows(&[(2, 23)]), false);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
}

#[test]
fn an_exclusive_begin_must_fail_while_another_holds_the_write_lock() {
    use Action::*;
    let immediate = LevelRules {
        exclusive_begin: true,
        mode: Some("immediate".into()),
        ..rules(
            IsolationLevel::Serializable,
            ReadView::Begin,
            WriteRule::SnapshotOrAbort,
        )
    };
    let s = schedule(
        IsolationLevel::Serializable,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin), // 1: must fail, session 1 holds the lock
            (0, ADD_1),
            (0, Commit),
            (1, Begin), // 4 (after session 1 committed): may succeed
        ],
    );
    let busy = |i| match i {
        1 => Outcome::Conflict(Conflict::LockTimeout),
        _ => ok(),
    };
    assert_eq!(run(&s, &immediate, busy, &[(1, 11)]), vec![]);
    assert_eq!(
        run(&s, &immediate, |_| ok(), &[(1, 11)]),
        vec![AnomalyKind::DidNotWait]
    );
    // A BEGIN that fails with nobody holding the lock is spurious.
    let spurious = |i| match i {
        0 => Outcome::Conflict(Conflict::LockTimeout),
        _ => ok(),
    };
    assert!(run(&s, &immediate, spurious, &[(1, 10)]).contains(&AnomalyKind::SpuriousConflict));
}

#[test]
fn a_write_may_wait_while_another_write_is_in_flight_and_must_not_otherwise() {
    use Action::*;
    const ADD_2: Action = Action::Stmt(Op::Update(Pred::Key(2), Assign::Add(1)));
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (1, Begin),
            (2, Begin),
            (0, ADD_1), // 3: row 1 locked by session 1
            (1, ADD_1), // 4: must wait for session 1
            (2, ADD_2), // 5: may wait: session 2's write is in flight
        ],
    );
    let rc = pg_rc();
    let mut m = Model::new(&s, &rc);
    returns_at_once(&mut m, 0..4);
    assert_eq!(m.start(4), Wait::Must);
    assert_eq!(m.start(5), Wait::May);
    // Once nothing else is in flight, a write to an unlocked row must not
    // wait, and a lock timeout after a wait is a finding.
    m.finish(5, ok(), false);
    m.finish(4, Outcome::Conflict(Conflict::LockTimeout), true);
    let s2 = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[(0, Begin), (1, Begin), (0, ADD_1), (1, ADD_2)],
    );
    let mut m = Model::new(&s2, &rc);
    returns_at_once(&mut m, 0..3);
    assert_eq!(m.start(3), Wait::MustNot);
    m.blocking_write(3, 8000);
    assert_eq!(
        m.anomalies.iter().map(|a| a.kind).collect::<Vec<_>>(),
        vec![AnomalyKind::BlockingWrite]
    );
}

#[test]
fn a_read_committed_write_whose_recheck_failed_may_keep_the_row_locked() {
    use Action::*;
    const SET_11_ABOVE_5: Action = Action::Stmt(Op::Update(Pred::ValueAbove(5), Assign::Set(11)));
    const ADD_IN_9_10: Action = Action::Stmt(Op::Update(Pred::ValueRange(9, 10), Assign::Add(5)));
    const SET_3: Action = Action::Stmt(Op::Update(Pred::Key(3), Assign::Set(6)));
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(3, 9)],
        &[
            (0, Begin),
            (1, Begin),
            (2, Begin),
            (0, SET_11_ABOVE_5), // 3: row 3 becomes 11
            (2, ADD_IN_9_10),    // 4: waits for row 3; after the commit v = 11 fails the re-check
            (0, Commit),         // 5
            (1, SET_3),          // 6: PostgreSQL keeps row 3 locked for session 3
        ],
    );
    let rc = pg_rc();
    let mut m = Model::new(&s, &rc);
    returns_at_once(&mut m, 0..4);
    assert_eq!(m.start(4), Wait::Must);
    m.start(5);
    m.finish(5, ok(), false);
    m.finish(4, ok(), true);
    assert_eq!(m.start(6), Wait::May);
}
