//! `SELECT ... FOR UPDATE` against what the manuals state: it reads the
//! rows the level's writes would change, as they are then, and holds
//! their locks to the transaction's end (PostgreSQL 13.2.1, 13.2.2 and
//! 13.3.2; MySQL 17.7.2.4 "Locking Reads").

use super::*;

const LOCK_1: Action = Action::Stmt(Op::LockingRead(Pred::Key(1), Lock::FOR_UPDATE));

#[test]
fn a_locked_row_makes_other_writers_and_locking_readers_wait() {
    use Action::*;
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (1, Begin),
            (0, LOCK_1), // 2: locks row 1
            (1, ADD_1),  // 3: must wait for it
            (0, Commit),
            (1, Commit),
        ],
    );
    let r = pg_rc();
    let mut m = Model::new(&s, &r);
    returns_at_once(&mut m, 0..2);
    assert_eq!(m.start(2), Wait::MustNot);
    m.finish(2, rows(&[(1, 10)]), false);
    assert_eq!(m.start(3), Wait::Must);
    assert_eq!(m.blocked_by(1), Some(0));
    // A locking read of a row another open transaction wrote waits too.
    let s2 = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[(0, Begin), (1, Begin), (0, ADD_1), (1, LOCK_1)],
    );
    let mut m2 = Model::new(&s2, &r);
    returns_at_once(&mut m2, 0..3);
    assert_eq!(m2.start(3), Wait::Must);
    // Its lock goes with the transaction: then the writer returns and
    // nothing is amiss.
    m.start(4);
    m.finish(4, ok(), false);
    m.finish(3, ok(), true);
    m.start(5);
    m.finish(5, ok(), false);
    m.end(&[(1, 11), (2, 20)]);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
}

#[test]
fn read_committed_locking_read_returns_the_newest_version_after_its_wait() {
    use Action::*;
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),  // 2: 11, open
            (0, LOCK_1), // 3: waits, then reads 11
            (1, Commit),
            (0, Commit),
        ],
    );
    let r = pg_rc();
    for (returned, clean) in [(11, true), (10, false)] {
        let mut m = Model::new(&s, &r);
        returns_at_once(&mut m, 0..3);
        assert_eq!(m.start(3), Wait::Must);
        m.start(4);
        m.finish(4, ok(), false);
        m.finish(3, rows(&[(1, returned)]), true);
        m.start(5);
        m.finish(5, ok(), false);
        m.end(&[(1, 11)]);
        let kinds: Vec<AnomalyKind> = m.anomalies.iter().map(|a| a.kind).collect();
        if clean {
            assert!(kinds.is_empty(), "{kinds:?}");
        } else {
            assert_eq!(kinds, vec![AnomalyKind::NonRepeatableRead]);
        }
    }
}

#[test]
fn repeatable_read_locking_read_of_a_row_changed_after_the_snapshot_must_fail() {
    use Action::*;
    let s = schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 10)],
        &[
            (0, Begin),
            (0, READ_1), // 1: the snapshot
            (1, Begin),
            (1, ADD_1),
            (1, Commit),
            (0, LOCK_1), // 5: the row changed after the snapshot
            (0, Rollback),
        ],
    );
    let succeeds = |i| match i {
        1 => rows(&[(1, 10)]),
        5 => rows(&[(1, 10)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rr(), succeeds, &[(1, 11)]),
        vec![AnomalyKind::LostUpdate]
    );
    let fails = |i| match i {
        1 => rows(&[(1, 10)]),
        5 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rr(), fails, &[(1, 11)]), vec![]);
}

#[test]
fn innodb_locking_read_sees_the_newest_rows_and_plain_reads_the_snapshot() {
    use Action::*;
    let s = schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),
            (1, Commit),
            (0, LOCK_1), // 4: the newest row, 11
            (0, READ_1), // 5: the snapshot of BEGIN, 10
            (0, Commit),
        ],
    );
    let documented = |i| match i {
        4 => rows(&[(1, 11)]),
        5 => rows(&[(1, 10)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &innodb_rr(), documented, &[(1, 11)]), vec![]);
    let snapshot = |i| match i {
        4 | 5 => rows(&[(1, 10)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &innodb_rr(), snapshot, &[(1, 11)]),
        vec![AnomalyKind::NonRepeatableRead]
    );
}

#[test]
fn schedules_hold_locking_reads_and_mixed_levels_only_where_offered() {
    let levels = [
        (IsolationLevel::ReadCommitted, None),
        (IsolationLevel::Serializable, None),
    ];
    use lancet_core::txn::LockingReads;
    let count = |locking: LockingReads, levels: &[(IsolationLevel, Option<String>)]| {
        let (mut locks, mut mixed) = (0, 0);
        for seed in 0..300 {
            let mut rng = lancet_core::rng::database_rng(seed, 0, 0);
            let s = Schedule::generate(
                &mut rng,
                levels,
                &[],
                locking,
                &Default::default(),
                Default::default(),
            );
            locks += s
                .steps
                .iter()
                .filter(|st| matches!(st.action, Action::Stmt(Op::LockingRead(..))))
                .count();
            mixed += usize::from(s.is_mixed());
            if locking == LockingReads::KeyEquality {
                assert!(s.steps.iter().all(|st| !matches!(
                    st.action,
                    Action::Stmt(Op::LockingRead(p, _)) if !matches!(p, Pred::Key(_))
                )));
            }
            let sql: Vec<String> = s
                .steps
                .iter()
                .filter_map(|st| match st.action {
                    Action::Stmt(op @ Op::LockingRead(..)) => Some(op.sql(TABLE, &s.spellings)),
                    _ => None,
                })
                .collect();
            assert!(sql.iter().all(|q| q.ends_with("ORDER BY k FOR UPDATE")));
        }
        (locks, mixed)
    };
    let (locks, mixed) = count(LockingReads::Any, &levels);
    assert!(
        locks > 50 && mixed > 30,
        "{locks} locking reads, {mixed} mixed"
    );
    assert!(count(LockingReads::KeyEquality, &levels).0 > 50);
    assert_eq!(count(LockingReads::None, &levels[..1]), (0, 0));
}
