//! The model against schedules whose outcome the manuals state.

use super::model::{Model, Outcome, Wait};
use super::schedule::{Action, Assign, Op, Pred, Schedule, Step, TABLE};
use super::AnomalyKind;
use lancet_core::txn::{Conflict, IsolationLevel, LevelRules, ReadView, WriteRule};

fn rules(level: IsolationLevel, read_view: ReadView, writes: WriteRule) -> LevelRules {
    LevelRules::new(level, read_view, writes, false, "test")
}

fn pg_rc() -> LevelRules {
    rules(
        IsolationLevel::ReadCommitted,
        ReadView::Statement,
        WriteRule::SnapshotRowsNewestVersions,
    )
}

fn pg_rr() -> LevelRules {
    rules(
        IsolationLevel::RepeatableRead,
        ReadView::FirstStatement,
        WriteRule::SnapshotOrAbort,
    )
}

fn pg_ser() -> LevelRules {
    rules(
        IsolationLevel::Serializable,
        ReadView::FirstStatement,
        WriteRule::SnapshotOrAbort,
    )
}

fn schedule(level: IsolationLevel, rows: &[(i64, i64)], steps: &[(usize, Action)]) -> Schedule {
    Schedule {
        table: TABLE.into(),
        index_v: false,
        placement: None,
        rows: rows.to_vec(),
        level,
        mode: None,
        sessions: steps.iter().map(|s| s.0 + 1).max().unwrap_or(1),
        steps: steps
            .iter()
            .map(|&(session, action)| Step { session, action })
            .collect(),
    }
}

/// Feeds the model every step in order, each returning at once with
/// what `outcome` says; returns the anomaly kinds.
fn run(
    s: &Schedule,
    r: &LevelRules,
    outcome: impl Fn(usize) -> Outcome,
    final_rows: &[(i64, i64)],
) -> Vec<AnomalyKind> {
    let mut m = Model::new(s, r);
    for i in 0..s.steps.len() {
        m.start(i);
        m.finish(i, outcome(i), false);
    }
    m.end(final_rows);
    m.anomalies.iter().map(|a| a.kind).collect()
}

fn ok() -> Outcome {
    Outcome::Ok(None)
}

fn rows(r: &[(i64, i64)]) -> Outcome {
    Outcome::Ok(Some(r.to_vec()))
}

const READ_1: Action = Action::Stmt(Op::Read(Pred::Key(1)));
const ADD_1: Action = Action::Stmt(Op::Update(Pred::Key(1), Assign::Add(1)));

#[test]
fn read_committed_sees_a_commit_between_two_reads_and_never_an_uncommitted_write() {
    use Action::*;
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),
            (0, READ_1), // 3: the uncommitted write is not seen
            (1, Commit),
            (0, READ_1), // 5: the commit is
            (0, Commit),
        ],
    );
    let good = |i| match i {
        3 => rows(&[(1, 10)]),
        5 => rows(&[(1, 11)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rc(), good, &[(1, 11)]), vec![]);
    let dirty = |i| match i {
        3 => rows(&[(1, 11)]),
        5 => rows(&[(1, 11)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rc(), dirty, &[(1, 11)]),
        vec![AnomalyKind::DirtyRead]
    );
}

#[test]
fn repeatable_read_keeps_its_snapshot_and_first_updater_wins() {
    use Action::*;
    let s = schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (0, READ_1), // 2: snapshot taken
            (1, ADD_1),
            (1, Commit),
            (0, READ_1), // 5: still the snapshot
            (0, ADD_1),  // 6: must fail, the row changed after the snapshot
            (0, Commit),
        ],
    );
    let good = |i| match i {
        2 | 5 => rows(&[(1, 10)]),
        6 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rr(), good, &[(1, 11)]), vec![]);
    let lost = |i| match i {
        2 | 5 => rows(&[(1, 10)]),
        _ => ok(),
    };
    let kinds = run(&s, &pg_rr(), lost, &[(1, 11)]);
    assert_eq!(kinds.first(), Some(&AnomalyKind::LostUpdate));
    let moved = |i| match i {
        2 => rows(&[(1, 10)]),
        5 => rows(&[(1, 11)]),
        6 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rr(), moved, &[(1, 11)]),
        vec![AnomalyKind::NonRepeatableRead]
    );
}

#[test]
fn read_committed_update_waits_then_applies_to_the_newest_version() {
    use Action::*;
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),
            (0, ADD_1),
            (1, Commit),
            (0, Commit),
        ],
    );
    let r = pg_rc();
    let mut m = Model::new(&s, &r);
    for i in 0..3 {
        m.start(i);
        m.finish(i, ok(), false);
    }
    assert_eq!(m.start(3), Wait::Must);
    assert_eq!(m.blocked_by(0), Some(1));
    m.start(4);
    m.finish(4, ok(), false);
    assert_eq!(m.blocked_by(0), None);
    m.finish(3, ok(), true);
    m.start(5);
    m.finish(5, ok(), false);
    m.end(&[(1, 12)]);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
}

#[test]
fn write_skew_under_serializable_has_no_serial_order() {
    use Action::*;
    // Each reads both rows and, seeing their sum at 2, moves one of them
    // down: no serial order lets both see the sum at 2.
    let read_all = Action::Stmt(Op::Read(Pred::All));
    let s = schedule(
        IsolationLevel::Serializable,
        &[(1, 1), (2, 1)],
        &[
            (0, Begin),
            (1, Begin),
            (0, read_all),
            (1, read_all),
            (0, Action::Stmt(Op::Update(Pred::Key(1), Assign::Set(0)))),
            (1, Action::Stmt(Op::Update(Pred::Key(2), Assign::Set(0)))),
            (0, Commit),
            (1, Commit),
        ],
    );
    let both = |i| match i {
        2 | 3 => rows(&[(1, 1), (2, 1)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_ser(), both, &[(1, 0), (2, 0)]),
        vec![AnomalyKind::NotSerializable]
    );
    let aborted = |i| match i {
        2 | 3 => rows(&[(1, 1), (2, 1)]),
        7 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_ser(), aborted, &[(1, 0), (2, 1)]), vec![]);
}

#[test]
fn innodb_repeatable_read_writes_newest_rows_and_then_sees_them() {
    use Action::*;
    let r = rules(
        IsolationLevel::RepeatableRead,
        ReadView::Begin,
        WriteRule::NewestRows,
    );
    let s = schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),
            (1, Commit),
            (0, READ_1), // 4: the snapshot of BEGIN
            (0, ADD_1),  // 5: on the newest row, 11
            (0, READ_1), // 6: its own row, 12
            (0, Commit),
        ],
    );
    let documented = |i| match i {
        4 => rows(&[(1, 10)]),
        6 => rows(&[(1, 12)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &r, documented, &[(1, 12)]), vec![]);
}

#[test]
fn a_serialization_failure_under_read_committed_is_spurious() {
    use Action::*;
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[(0, Begin), (0, ADD_1), (0, Commit)],
    );
    let fail = |i| match i {
        1 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rc(), fail, &[(1, 10)]),
        vec![AnomalyKind::SpuriousConflict]
    );
}

#[test]
fn shrinking_drops_sessions_statements_and_rows() {
    use Action::*;
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (1, Begin),
            (0, READ_1),
            (1, Commit),
            (0, Commit),
        ],
    );
    let c = super::shrink::candidates(&s);
    assert!(c.iter().any(|c| c.sessions == 1 && c.steps.len() == 3));
    assert!(c.iter().any(|c| c.steps.len() == 4 && c.sessions == 2));
    assert!(c.iter().any(|c| c.rows.len() == 1));
    // Every candidate keeps each session's order: BEGIN first, the end last.
    for c in &c {
        for session in 0..c.sessions {
            let acts: Vec<Action> = c.session_steps(session).map(|(_, s)| s.action).collect();
            assert_eq!(acts.first(), Some(&Begin));
            assert!(matches!(acts.last(), Some(Commit | Rollback)));
        }
    }
}

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
    for i in 0..4 {
        m.start(i);
        m.finish(i, ok(), false);
    }
    assert_eq!(m.start(4), Wait::Must);
    assert_eq!(m.deadlock_cycle(0, &[true, false]), None);
    assert_eq!(m.start(5), Wait::Must);
    assert_eq!(m.deadlock_cycle(1, &[true, true]), Some(vec![1, 0]));
    // The DBMS fails session 2's statement with its deadlock error: the
    // other's wait ends, and the rest is checked as usual.
    m.finish(5, Outcome::Conflict(Conflict::Deadlock), true);
    assert_eq!(m.blocked_by(0), None);
    m.finish(4, ok(), true);
    m.start(6);
    m.finish(6, ok(), false);
    m.end(&[(1, 11), (2, 21)]);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
}

fn innodb_rr() -> LevelRules {
    LevelRules {
        same_value_is_no_change: true,
        extra_write_locks: true,
        ..rules(
            IsolationLevel::RepeatableRead,
            ReadView::Begin,
            WriteRule::NewestRows,
        )
    }
}

#[test]
fn an_innodb_update_to_the_value_a_row_has_is_no_change_its_reads_see() {
    use Action::*;
    // Session 1 commits k = 1 at 9; session 2's snapshot is older, and its
    // `SET v = 9` finds 9 already: no new version, so its read shows the
    // snapshot's 4 (MariaDB 10.11 does; the manual says why).
    let s = schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 4)],
        &[
            (0, Begin),
            (1, Begin),
            (0, Action::Stmt(Op::Update(Pred::Key(1), Assign::Add(5)))),
            (0, Commit),
            (1, Action::Stmt(Op::Update(Pred::All, Assign::Set(9)))),
            (1, READ_1),
            (1, Commit),
        ],
    );
    let innodb = |i| match i {
        5 => rows(&[(1, 4)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &innodb_rr(), innodb, &[(1, 9)]), vec![]);
}

#[test]
fn rows_an_uncertain_write_left_open_are_not_checked_but_the_others_are() {
    use Action::*;
    // Session 2 holds k = 1 and inserts 101 (v = 9); session 1's write on
    // v in 8..=11 waits for k = 1, and when it runs, 101 matches too:
    // whether InnoDB's scan met it is open, so 101 is not checked again.
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 8), (2, 0)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),
            (1, Action::Stmt(Op::Insert(101, 9))),
            (
                0,
                Action::Stmt(Op::Update(Pred::ValueRange(8, 11), Assign::Add(4))),
            ),
            (1, Commit),
            (0, Commit),
            (0, Begin),
            (0, Action::Stmt(Op::Read(Pred::All))),
            (0, Commit),
        ],
    );
    let r = LevelRules {
        extra_write_locks: true,
        ..rules(
            IsolationLevel::ReadCommitted,
            ReadView::Statement,
            WriteRule::NewestRows,
        )
    };
    let check = |read: &[(i64, i64)], last: &[(i64, i64)]| {
        let mut m = Model::new(&s, &r);
        for i in 0..4 {
            m.start(i);
            m.finish(i, ok(), false);
        }
        assert_eq!(m.start(4), Wait::Must);
        m.start(5);
        m.finish(5, ok(), false);
        m.finish(4, ok(), true);
        for i in 6..s.steps.len() {
            m.start(i);
            m.finish(i, if i == 8 { rows(read) } else { ok() }, false);
        }
        m.end(last);
        m.anomalies.iter().map(|a| a.kind).collect::<Vec<_>>()
    };
    // 101 at 9 or at 13: both allowed; k = 1 must be 9 + 4.
    assert_eq!(
        check(&[(1, 13), (2, 0), (101, 9)], &[(1, 13), (2, 0), (101, 9)]),
        vec![]
    );
    assert_eq!(
        check(&[(1, 13), (2, 0), (101, 13)], &[(1, 13), (2, 0), (101, 13)]),
        vec![]
    );
    assert_eq!(
        check(&[(1, 9), (2, 0), (101, 9)], &[(1, 13), (2, 0), (101, 9)]),
        vec![AnomalyKind::NonRepeatableRead]
    );
    // Over the index on v, the scan may reach k = 1 by its stale entry
    // (v = 8, now 9) and skip it: k = 1 is open too, k = 2 is not.
    let s = Schedule {
        index_v: true,
        ..s.clone()
    };
    let check = |read: &[(i64, i64)], last: &[(i64, i64)]| {
        let mut m = Model::new(&s, &r);
        for i in 0..4 {
            m.start(i);
            m.finish(i, ok(), false);
        }
        m.start(4);
        m.start(5);
        m.finish(5, ok(), false);
        m.finish(4, ok(), true);
        for i in 6..s.steps.len() {
            m.start(i);
            m.finish(i, if i == 8 { rows(read) } else { ok() }, false);
        }
        m.end(last);
        m.anomalies.len()
    };
    assert_eq!(
        check(&[(1, 9), (2, 0), (101, 9)], &[(1, 9), (2, 0), (101, 9)]),
        0
    );
    assert_eq!(
        check(&[(1, 9), (2, 4), (101, 9)], &[(1, 9), (2, 0), (101, 9)]),
        1
    );
}

#[test]
fn read_uncommitted_may_show_an_open_write_but_nothing_else() {
    use Action::*;
    let ru = rules(
        IsolationLevel::ReadUncommitted,
        ReadView::Uncommitted,
        WriteRule::NewestRows,
    );
    const READ_ALL: Action = Action::Stmt(Op::Read(Pred::All));
    let s = schedule(
        IsolationLevel::ReadUncommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),
            (0, READ_ALL), // 3: row 1 may read either way; row 2 as committed
            (1, Rollback),
            (0, READ_ALL), // 5: the rollback leaves nothing open
            (0, Commit),
        ],
    );
    for dirty in [10, 11] {
        let good = |i| match i {
            3 => rows(&[(1, dirty), (2, 20)]),
            5 => rows(&[(1, 10), (2, 20)]),
            _ => ok(),
        };
        assert_eq!(run(&s, &ru, good, &[(1, 10), (2, 20)]), vec![]);
    }
    // A clean row read wrong, or a rolled-back value read after the
    // rollback, breaks the rule.
    let stale = |i| match i {
        3 => rows(&[(1, 11), (2, 21)]),
        5 => rows(&[(1, 10), (2, 20)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &ru, stale, &[(1, 10), (2, 20)]).len(), 1);
    let kept = |i| match i {
        3 => rows(&[(1, 11), (2, 20)]),
        5 => rows(&[(1, 11), (2, 20)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &ru, kept, &[(1, 10), (2, 20)]).len(), 1);
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
    for i in 0..3 {
        m.start(i);
        m.finish(i, ok(), false);
    }
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
    for i in 0..4 {
        m.start(i);
        m.finish(i, ok(), false);
    }
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
    for i in 0..3 {
        m.start(i);
        m.finish(i, ok(), false);
    }
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
    for i in 0..4 {
        m.start(i);
        m.finish(i, ok(), false);
    }
    assert_eq!(m.start(4), Wait::Must);
    m.start(5);
    m.finish(5, ok(), false);
    m.finish(4, ok(), true);
    assert_eq!(m.start(6), Wait::May);
}
