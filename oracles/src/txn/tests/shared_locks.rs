//! `FOR SHARE`, `NOWAIT` and `SKIP LOCKED` against what the manuals
//! state: shared locks let each other be, writes and `FOR UPDATE` wait
//! for them, two sharers that both write a row deadlock; `NOWAIT` fails
//! exactly where a lock is held, `SKIP LOCKED` leaves those rows out
//! (PostgreSQL 13.3.2 and the SELECT page's locking clause; MySQL
//! 17.7.2.4 "Locking Reads").

use super::*;

fn lock(pred: Pred, mode: LockMode, wait: LockWait) -> Action {
    Action::Stmt(Op::LockingRead(pred, Lock { mode, wait }))
}

const SHARE_1: Action = Action::Stmt(Op::LockingRead(
    Pred::Key(1),
    Lock {
        mode: LockMode::ForShare,
        wait: LockWait::Wait,
    },
));

#[test]
fn shared_locks_let_each_other_be_and_writers_wait_for_all_of_them() {
    use Action::*;
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (2, Begin),
            (0, SHARE_1), // 3
            (1, SHARE_1), // 4: no wait, shared with session 1
            (2, ADD_1),   // 5: waits for both
        ],
    );
    let r = pg_rc();
    let mut m = Model::new(&s, &r);
    returns_at_once(&mut m, 0..3);
    assert_eq!(m.start(3), Wait::MustNot);
    m.finish(3, rows(&[(1, 10)]), false);
    assert_eq!(m.start(4), Wait::MustNot);
    m.finish(4, rows(&[(1, 10)]), false);
    assert_eq!(m.start(5), Wait::Must);
    assert_eq!(m.blockers(2), vec![0, 1]);
    // A FOR SHARE waits for a writer.
    let s2 = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[(0, Begin), (1, Begin), (0, ADD_1), (1, SHARE_1)],
    );
    let mut m2 = Model::new(&s2, &r);
    returns_at_once(&mut m2, 0..3);
    assert_eq!(m2.start(3), Wait::Must);
}

#[test]
fn two_sharers_that_both_write_the_row_are_a_certain_deadlock() {
    use Action::*;
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (0, SHARE_1),
            (1, SHARE_1),
            (0, ADD_1), // 4: waits for session 2's shared lock
            (1, ADD_1), // 5: waits for session 1's: a cycle
            (0, Commit),
            (1, Commit),
        ],
    );
    let r = pg_rc();
    let mut m = Model::new(&s, &r);
    returns_at_once(&mut m, 0..2);
    for i in 2..4 {
        m.start(i);
        m.finish(i, rows(&[(1, 10)]), false);
    }
    super::locks::deadlock_of_steps_4_and_5(&mut m, &[(1, 11)]);
}

#[test]
fn nowait_fails_where_a_lock_is_held_and_only_there() {
    use Action::*;
    let nowait = lock(Pred::Key(1), LockMode::ForUpdate, LockWait::NoWait);
    let held = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[(0, Begin), (1, Begin), (0, ADD_1), (1, nowait), (1, Commit)],
    );
    let r = pg_rc();
    let mut m = Model::new(&held, &r);
    returns_at_once(&mut m, 0..3);
    // It never waits: the driver gives it the patience of a statement
    // that must return, and expects it to fail.
    assert_eq!(m.start(3), Wait::MustNot);
    assert!(m.must_refuse(1));
    m.finish(3, Outcome::Conflict(Conflict::LockTimeout), false);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
    // Nobody holds row 1: failing is spurious.
    let free = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[(0, Begin), (1, Begin), (1, nowait), (1, Commit)],
    );
    let fails = |i| match i {
        2 => Outcome::Conflict(Conflict::LockTimeout),
        _ => ok(),
    };
    assert_eq!(
        run(&free, &r, fails, &[(1, 10), (2, 20)]),
        vec![AnomalyKind::SpuriousConflict]
    );
    // Under locks beyond the rows (InnoDB), it may fail anywhere.
    let innodb_rc = LevelRules {
        extra_write_locks: true,
        ..rules(
            IsolationLevel::ReadCommitted,
            ReadView::Statement,
            WriteRule::NewestRows,
        )
    };
    assert_eq!(run(&free, &innodb_rc, fails, &[(1, 10), (2, 20)]), vec![]);
}

#[test]
fn skip_locked_leaves_out_exactly_the_rows_others_lock() {
    use Action::*;
    let skip = lock(Pred::All, LockMode::ForUpdate, LockWait::SkipLocked);
    let share_skip = lock(Pred::All, LockMode::ForShare, LockWait::SkipLocked);
    let s = |read: Action| {
        schedule(
            IsolationLevel::ReadCommitted,
            &[(1, 10), (2, 20)],
            &[
                (0, Begin),
                (1, Begin),
                (2, Begin),
                (0, ADD_1),
                (2, lock(Pred::Key(2), LockMode::ForShare, LockWait::Wait)),
                (1, read), // 5
                (0, Rollback),
                (2, Rollback),
                (1, Commit),
            ],
        )
    };
    let check = |sched: &Schedule, r: &LevelRules, got: &[(i64, i64)]| {
        let answer = |i| match i {
            4 => rows(&[(2, 20)]),
            5 => rows(got),
            _ => ok(),
        };
        run(sched, r, answer, &[(1, 10), (2, 20)])
    };
    let pg = pg_rc();
    // FOR UPDATE skips row 1 (written) and row 2 (shared-locked).
    assert_eq!(check(&s(skip), &pg, &[]), vec![]);
    assert_eq!(check(&s(skip), &pg, &[(2, 20)]).len(), 1);
    // FOR SHARE skips only the written row.
    assert_eq!(check(&s(share_skip), &pg, &[(2, 20)]), vec![]);
    assert_eq!(check(&s(share_skip), &pg, &[]).len(), 1);
    assert_eq!(check(&s(share_skip), &pg, &[(1, 11), (2, 20)]).len(), 1);
    // A schedule where it skips never needs a serial order to return
    // every row.
    let ser = s(share_skip);
    assert_eq!(check(&ser, &pg_ser(), &[(2, 20)]), vec![]);
}

#[test]
fn schedules_take_the_locking_clauses_savepoints_and_subqueries_offered() {
    use lancet_core::txn::{LockingReads, MoreStatements, ShareLock};
    let levels = [(IsolationLevel::RepeatableRead, None)];
    let more = MoreStatements {
        share: Some(ShareLock::LockInShareMode),
        nowait: true,
        skip_locked: true,
        savepoints: true,
        reads_before_rollback_to: true,
        subqueries: true,
    };
    let mut sql = Vec::new();
    for seed in 0..400 {
        let mut rng = lancet_core::rng::database_rng(seed, 0, 0);
        let s = Schedule::generate(
            &mut rng,
            &levels,
            &[],
            LockingReads::Any,
            &Default::default(),
            more,
        );
        sql.extend((0..s.steps.len()).filter_map(|i| s.statement_sql(i)));
        // Every ROLLBACK TO follows its session's SAVEPOINT.
        for session in 0..s.sessions {
            let ops: Vec<Op> = s
                .session_steps(session)
                .filter_map(|(_, st)| match st.action {
                    Action::Stmt(op) => Some(op),
                    _ => None,
                })
                .collect();
            if let Some(back) = ops
                .iter()
                .position(|op| op.is_savepoint() && *op != Op::Savepoint(1))
            {
                assert!(ops[..back].contains(&Op::Savepoint(1)), "{ops:?}");
            }
        }
    }
    for needle in [
        "LOCK IN SHARE MODE",
        "FOR UPDATE NOWAIT",
        "SKIP LOCKED",
        "ROLLBACK TO SAVEPOINT s1",
        "RELEASE SAVEPOINT s1",
        "IN (SELECT k - 1000 FROM lancet_txn_1 WHERE v >",
        "IN (SELECT k + 1000 FROM lancet_txn WHERE v >",
        "v > (SELECT count(*) FROM",
    ] {
        assert!(sql.iter().any(|q| q.contains(needle)), "no {needle}");
    }
    assert!(!sql.iter().any(|q| q.contains("FOR SHARE")));
    // Steering clear of reads before a ROLLBACK TO (MariaDB's released
    // locks): none between a SAVEPOINT and its ROLLBACK TO.
    let steered = MoreStatements {
        reads_before_rollback_to: false,
        ..more
    };
    let mut rollbacks = 0;
    for seed in 0..400 {
        let mut rng = lancet_core::rng::database_rng(seed, 0, 0);
        let s = Schedule::generate(
            &mut rng,
            &levels,
            &[],
            LockingReads::Any,
            &Default::default(),
            steered,
        );
        for session in 0..s.sessions {
            let mut since: Option<bool> = None;
            for (_, st) in s.session_steps(session) {
                match st.action {
                    Action::Stmt(Op::Savepoint(_)) => since = Some(false),
                    Action::Stmt(Op::RollbackTo(_)) => {
                        assert_eq!(since, Some(false), "{s:?}");
                        rollbacks += 1;
                    }
                    Action::Stmt(op) if op.returns_rows() => {
                        since = since.map(|_| true);
                    }
                    _ => {}
                }
            }
        }
    }
    assert!(rollbacks > 20, "{rollbacks}");
    // Nothing of it where nothing is offered.
    for seed in 0..200 {
        let mut rng = lancet_core::rng::database_rng(seed, 0, 0);
        let s = Schedule::generate(
            &mut rng,
            &levels,
            &[],
            LockingReads::Any,
            &Default::default(),
            Default::default(),
        );
        for i in 0..s.steps.len() {
            let q = s.statement_sql(i).unwrap_or_default();
            assert!(
                !q.contains("SHARE") && !q.contains("SAVEPOINT") && !q.contains("(SELECT"),
                "{q}"
            );
        }
    }
}

#[test]
fn under_innodb_a_shared_lock_and_a_locking_read_may_pass_each_other() {
    use Action::*;
    // Session 2 holds row 1 FOR UPDATE; session 1's LOCK IN SHARE MODE
    // may read it through the index on v, whose entry the other did not
    // lock (seen on MariaDB 10.11): no wait is required, either way.
    let in_share = lock(Pred::ValueAbove(5), LockMode::InShareMode, LockWait::Wait);
    let for_update = Action::Stmt(Op::LockingRead(Pred::Key(1), Lock::FOR_UPDATE));
    let s = schedule(
        IsolationLevel::Serializable,
        &[(1, 8)],
        &[(1, Begin), (1, for_update), (0, Begin), (0, in_share)],
    );
    let innodb_ser = LevelRules {
        extra_write_locks: true,
        ..rules(
            IsolationLevel::Serializable,
            ReadView::LockingLatest,
            WriteRule::NewestRows,
        )
    };
    let mut m = Model::new(&s, &innodb_ser);
    returns_at_once(&mut m, 0..2);
    m.start(2);
    m.finish(2, ok(), false);
    assert_eq!(m.start(3), Wait::May);
    // On PostgreSQL, row locks are on the row: it must wait.
    let pg = pg_ser();
    let mut m = Model::new(&s, &pg);
    returns_at_once(&mut m, 0..2);
    m.start(2);
    m.finish(2, ok(), false);
    assert_eq!(m.start(3), Wait::Must);
}

#[test]
fn a_nowait_that_fails_ends_no_deadlock() {
    use Action::*;
    // Session 2 holds row 1 and waits for session 1's row 1001; session
    // 1's NOWAIT of row 1 fails at once with the lock error: no wait, so
    // no cycle of waits that the DBMS should have named a deadlock (seen
    // on PostgreSQL 18 as a false `undetected-deadlock`).
    let nowait = lock(Pred::Key(1), LockMode::ForUpdate, LockWait::NoWait);
    let mut s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 9), (1001, 7)],
        &[
            (0, Begin),
            (1, Begin),
            (1, ADD_1),
            (0, Action::Stmt(Op::Update(Pred::Key(1001), Assign::Set(3)))),
            (
                1,
                Action::Stmt(Op::LockingRead(Pred::Key(1001), Lock::FOR_UPDATE)),
            ),
            (0, nowait), // 5
        ],
    );
    s.steps[3].table = 1;
    s.steps[4].table = 1;
    s.more_tables.push(crate::txn::schedule::MoreTable {
        unique_v: false,
        nullable_v: false,
        index_v: false,
        placement: None,
    });
    let r = pg_rc();
    let mut m = Model::new(&s, &r);
    returns_at_once(&mut m, 0..4);
    assert_eq!(m.start(4), Wait::Must);
    assert_eq!(m.start(5), Wait::MustNot);
    assert!(m.must_refuse(0));
    assert_eq!(m.deadlock_cycle(0, &[true, true]), None);
    assert_eq!(m.deadlock_cycle(1, &[true, true]), None);
}
