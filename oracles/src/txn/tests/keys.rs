//! Moves to new keys, upserts, IGNORE and UNIQUE values against what the
//! manuals state: PostgreSQL's re-check follows a moved row (13.2.1) and
//! its snapshot levels fail a write to it (13.2.2); InnoDB's key change
//! is a delete-mark and an insert, whose meeting by a waiting scan is
//! open; an upsert is a locking write of the row at its key; a duplicate
//! key is allowed only where some version of another row holds it.

use super::*;
use crate::txn::forms::Spellings;
use crate::txn::schedule::Action::*;
use crate::txn::schedule::Lock;

/// `UPDATE ... SET k = <partner>` on table 0 (pivot 500).
pub(super) fn mv(p: Pred) -> Action {
    Stmt(Op::Move(p, 500))
}

pub(super) fn stmt(op: Op) -> Action {
    Stmt(op)
}

pub(super) fn innodb_rc() -> LevelRules {
    LevelRules {
        same_value_is_no_change: true,
        extra_write_locks: true,
        ..rules(
            IsolationLevel::ReadCommitted,
            ReadView::Statement,
            WriteRule::NewestRows,
        )
    }
}

/// Session 2 moves row 1 to 501 and commits while session 1's DELETE
/// (`pred`) waits for it (step 3, finished after step 4).
fn delete_after_a_move(pred: Pred) -> Schedule {
    schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (1, Begin),
            (1, mv(Pred::Key(1))),
            (0, stmt(Op::Delete(pred))), // 3: waits for row 1
            (1, Commit),
            (0, Commit),
        ],
    )
}

/// Runs a schedule whose step 3 waits for the commit at step 4.
fn waits_for_the_commit(s: &Schedule, r: &LevelRules, last: &[(i64, i64)]) -> Vec<AnomalyKind> {
    let mut m = Model::new(s, r);
    returns_at_once(&mut m, 0..3);
    assert_eq!(m.start(3), Wait::Must);
    returns_at_once(&mut m, 4..5);
    m.finish(3, ok(), true);
    returns_at_once(&mut m, 5..s.steps.len());
    m.end(last);
    m.anomalies.iter().map(|a| a.kind).collect()
}

#[test]
fn read_committed_follows_a_moved_row_and_checks_its_condition_again() {
    let r = pg_rc();
    // `DELETE FROM t` meets the row at its new key: it deletes it.
    let all = delete_after_a_move(Pred::All);
    assert_eq!(waits_for_the_commit(&all, &r, &[]), vec![]);
    assert_eq!(
        waits_for_the_commit(&all, &r, &[(501, 10)]),
        vec![AnomalyKind::WrongFinalState]
    );
    // `WHERE k = 1` no longer holds for the row at 501: it stays.
    let one = delete_after_a_move(Pred::Key(1));
    assert_eq!(
        waits_for_the_commit(&one, &r, &[(2, 20), (501, 10)]),
        vec![]
    );
    // `WHERE v = 10` still holds: deleted at its new key.
    let ten = delete_after_a_move(Pred::ValueRange(10, 10));
    assert_eq!(waits_for_the_commit(&ten, &r, &[(2, 20)]), vec![]);
}

#[test]
fn a_snapshot_level_fails_a_write_to_a_row_moved_after_its_snapshot() {
    let s = schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (0, READ_1), // 2: snapshot
            (1, mv(Pred::Key(1))),
            (1, Commit),
            (0, ADD_1), // 5: must fail
            (0, Commit),
        ],
    );
    let fails = |i| match i {
        2 => rows(&[(1, 10)]),
        5 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rr(), fails, &[(501, 10)]), vec![]);
    let succeeds = |i| match i {
        2 => rows(&[(1, 10)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rr(), succeeds, &[(501, 10)]).first(),
        Some(&AnomalyKind::LostUpdate)
    );
}

/// MDEV-27992's shape with moves between a pair of keys: row 1 moved to
/// 501 before; session 2 locks it there, session 1's `DELETE FROM t`
/// waits for it, session 2 moves it back to 1, behind the scan, and
/// commits. InnoDB's DELETE deleted nothing (the bug, MariaDB 10.11.19);
/// the model leaves the row open and says so in `left_open`.
#[test]
fn innodb_leaves_a_row_moved_behind_a_waiting_scan_open_and_records_it() {
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(501, 8)],
        &[
            (0, Begin),
            (1, Begin),
            (1, stmt(Op::Update(Pred::Key(501), Assign::Add(1)))),
            (0, stmt(Op::Delete(Pred::All))), // 3: waits for row 501
            (1, mv(Pred::Key(501))),
            (1, Commit),
            (0, stmt(Op::LockingRead(Pred::All, Lock::FOR_UPDATE))),
            (0, Commit),
        ],
    );
    let r = innodb_rc();
    let mut m = Model::new(&s, &r);
    returns_at_once(&mut m, 0..3);
    assert_eq!(m.start(3), Wait::Must);
    returns_at_once(&mut m, 4..6);
    m.finish(3, ok(), true);
    m.start(6);
    m.finish(6, rows(&[(1, 9)]), false);
    returns_at_once(&mut m, 7..8);
    m.end(&[(1, 9)]);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
    assert_eq!(m.left_open, vec![(3, 1)]);
}

#[test]
fn a_move_is_shrunk_printed_and_serial() {
    let s = schedule(
        IsolationLevel::Serializable,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (0, mv(Pred::KeyRange(1, 2))),
            (0, stmt(Op::Read(Pred::All))),
            (0, Commit),
        ],
    );
    assert_eq!(
        s.statement_sql(1).unwrap(),
        "UPDATE lancet_txn SET k = CASE WHEN k < 500 THEN k + 500 ELSE k - 500 END WHERE k BETWEEN 1 AND 2"
    );
    let good = |i| match i {
        2 => rows(&[(501, 10), (502, 20)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_ser(), good, &[(501, 10), (502, 20)]), vec![]);
    let stale = |i| match i {
        2 => rows(&[(1, 10), (2, 20)]),
        _ => ok(),
    };
    assert!(!run(&s, &pg_ser(), stale, &[(501, 10), (502, 20)]).is_empty());
}

pub(super) fn spelled() -> Spellings {
    Spellings {
        upsert_add: Some(
            "INSERT INTO {table} (k, v) VALUES ({k}, {v}) ON DUPLICATE KEY UPDATE v = v + {c}"
                .into(),
        ),
        insert_ignore: Some("INSERT IGNORE INTO {table} (k, v) VALUES ({k}, {v})".into()),
        update_ignore: Some("UPDATE IGNORE {table} SET {set}{where}".into()),
    }
}

/// Session 2 adds 1 to row 1 and commits after session 1's snapshot;
/// session 1 then upserts key 1 adding 100 (the ground truth's probe).
fn upsert_after_a_commit() -> Schedule {
    let mut s = schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (0, READ_1), // 2: snapshot
            (1, ADD_1),
            (1, Commit),
            (0, stmt(Op::Upsert(1, 0, 100))), // 5
            (0, READ_1),                      // 6
            (0, Commit),
        ],
    );
    s.spellings = spelled();
    s
}

#[test]
fn an_upsert_writes_the_row_its_level_writes() {
    let s = upsert_after_a_commit();
    assert_eq!(
        s.statement_sql(5).unwrap(),
        "INSERT INTO lancet_txn (k, v) VALUES (1, 0) ON DUPLICATE KEY UPDATE v = v + 100"
    );
    // InnoDB's REPEATABLE READ: the newest row, 11 + 100 (MariaDB 10.11
    // with innodb_snapshot_isolation off).
    let newest = |i| match i {
        2 => rows(&[(1, 10)]),
        6 => rows(&[(1, 111)]),
        _ => ok(),
    };
    assert_eq!(run(&s, &innodb_rr(), newest, &[(1, 111)]), vec![]);
    // A snapshot level must fail it (PostgreSQL 40001, InnoDB's 1020).
    let fails = |i| match i {
        2 => rows(&[(1, 10)]),
        5 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rr(), fails, &[(1, 11)]), vec![]);
    assert_eq!(
        run(&s, &pg_rr(), newest, &[(1, 111)]).first(),
        Some(&AnomalyKind::LostUpdate)
    );
}

#[test]
fn an_upsert_waits_for_an_open_insert_of_its_key_then_updates_it() {
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (1, stmt(Op::Upsert(50, 7, 2))),
            (0, stmt(Op::Upsert(50, 3, 5))), // 3: waits for session 2's row
            (1, Commit),
            (0, Commit),
        ],
    );
    let r = pg_rc();
    assert_eq!(waits_for_the_commit(&s, &r, &[(1, 10), (50, 12)]), vec![]);
    assert_eq!(
        waits_for_the_commit(&s, &r, &[(1, 10), (50, 3)]),
        vec![AnomalyKind::LostUpdate]
    );
}

#[test]
fn insert_ignore_inserts_only_a_new_key_and_does_not_wait_for_a_lock_alone() {
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (1, stmt(Op::LockingRead(Pred::Key(1), Lock::FOR_UPDATE))),
            (0, stmt(Op::InsertIgnore(1, 3))), // 3: may wait (InnoDB), need not (PostgreSQL)
            (0, stmt(Op::InsertIgnore(51, 3))),
            (0, stmt(Op::Read(Pred::All))), // 5
            (0, Commit),
            (1, Commit),
        ],
    );
    let r = pg_rc();
    let mut m = Model::new(&s, &r);
    returns_at_once(&mut m, 0..2);
    m.start(2);
    m.finish(2, rows(&[(1, 10)]), false);
    assert_eq!(m.start(3), Wait::May);
    m.finish(3, ok(), false);
    returns_at_once(&mut m, 4..5);
    m.start(5);
    m.finish(5, rows(&[(1, 10), (51, 3)]), false);
    returns_at_once(&mut m, 6..8);
    m.end(&[(1, 10), (51, 3)]);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
}

pub(super) fn unique(mut s: Schedule) -> Schedule {
    s.index_v = true;
    s.unique_v = true;
    s
}

#[test]
fn a_duplicate_key_is_allowed_only_where_another_row_may_hold_the_value() {
    let s = unique(schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[
            (0, Begin),
            (0, stmt(Op::Insert(101, 20))), // 1: 20 is row 2's
            (0, Commit),
        ],
    ));
    let dup = |i| match i {
        1 => Outcome::Conflict(Conflict::DuplicateKey),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rc(), dup, &[(1, 10), (2, 20)]), vec![]);
    let fresh = unique(schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10), (2, 20)],
        &[(0, Begin), (0, stmt(Op::Insert(101, 30))), (0, Commit)],
    ));
    assert_eq!(
        run(&fresh, &pg_rc(), dup, &[(1, 10), (2, 20)]),
        vec![AnomalyKind::SpuriousConflict]
    );
    // Without a UNIQUE index, the same value is no duplicate.
    let plain = Schedule {
        unique_v: false,
        ..s.clone()
    };
    assert_eq!(
        run(&plain, &pg_rc(), dup, &[(1, 10), (2, 20)]),
        vec![AnomalyKind::SpuriousConflict]
    );
    // A value another open transaction writes may collide, and may wait.
    let open = unique(schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (1, stmt(Op::Update(Pred::Key(1), Assign::Set(40)))),
            (0, stmt(Op::Insert(101, 40))), // 3
        ],
    ));
    let r = pg_rc();
    let mut m = Model::new(&open, &r);
    returns_at_once(&mut m, 0..3);
    assert_eq!(m.start(3), Wait::May);
    m.finish(3, Outcome::Conflict(Conflict::DuplicateKey), true);
    assert!(m.anomalies.is_empty(), "{:?}", m.anomalies);
}

#[test]
fn update_ignore_leaves_open_the_rows_a_duplicate_may_have_skipped() {
    let mut s = unique(schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 1), (2, 2), (3, 7)],
        &[
            (0, Begin),
            (0, stmt(Op::UpdateIgnore(Pred::All, Assign::Add(1)))), // 1: 1 -> 2 may collide
            (0, stmt(Op::Read(Pred::All))),                         // 2
            (0, Commit),
        ],
    ));
    s.spellings = spelled();
    assert_eq!(
        s.statement_sql(1).unwrap(),
        "UPDATE IGNORE lancet_txn SET v = v + 1"
    );
    // MySQL skips row 1 (2 was taken when it met it): either way row 1
    // and 2 are open, row 3 is 8.
    for (one, two) in [(1, 3), (2, 3)] {
        let read = |i| match i {
            2 => rows(&[(1, one), (2, two), (3, 8)]),
            _ => ok(),
        };
        let last = [(1, one), (2, two), (3, 8)];
        assert_eq!(run(&s, &innodb_rc(), read, &last), vec![]);
    }
    let wrong = |i| match i {
        2 => rows(&[(1, 1), (2, 3), (3, 7)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &innodb_rc(), wrong, &[(1, 1), (2, 3), (3, 8)]),
        vec![AnomalyKind::LostOwnWrite]
    );
}

/// MySQL #117797's shape: session 2 moves the UNIQUE value of the row
/// session 1's snapshot shows at `v = 5` and commits; session 1's UPDATE
/// ... WHERE v = 5 must fail under a snapshot level (MariaDB's
/// innodb_snapshot_isolation: 1020), and "0 rows" is a lost update.
#[test]
fn a_write_through_a_unique_value_changed_after_the_snapshot_must_fail() {
    let s = unique(schedule(
        IsolationLevel::RepeatableRead,
        &[(1, 5)],
        &[
            (0, Begin),
            (1, Begin),
            (0, stmt(Op::Read(Pred::Value(5)))), // 2
            (1, stmt(Op::Update(Pred::Value(5), Assign::Set(6)))),
            (1, Commit),
            (0, stmt(Op::Update(Pred::Value(5), Assign::Set(9)))), // 5
            (0, Commit),
        ],
    ));
    assert_eq!(
        s.statement_sql(2).unwrap(),
        "SELECT k, v FROM lancet_txn WHERE v = 5 ORDER BY k"
    );
    let silent = |i| match i {
        2 => rows(&[(1, 5)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rr(), silent, &[(1, 6)]).first(),
        Some(&AnomalyKind::LostUpdate)
    );
}

/// The generator draws the new kinds only where the DBMS has them, and a
/// UNIQUE table's rows have values of their own.
#[test]
fn a_value_an_update_ignore_may_have_written_may_be_a_duplicate() {
    let mut s = unique(schedule(
        IsolationLevel::ReadCommitted,
        &[(3, 9), (4, 6)],
        &[
            (0, Begin),
            (0, stmt(Op::UpdateIgnore(Pred::All, Assign::Set(0)))),
            (0, stmt(Op::Insert(101, 0))), // 2
            (0, Commit),
        ],
    ));
    s.spellings = spelled();
    let dup = |i| match i {
        2 => Outcome::Conflict(Conflict::DuplicateKey),
        _ => ok(),
    };
    assert_eq!(run(&s, &innodb_rc(), dup, &[(3, 9), (4, 6)]), vec![]);
}

/// Found by lancet on PostgreSQL 18.6: at REPEATABLE READ, an upsert
/// waits for a concurrent DELETE of its key, inserts once it commits,
/// and the snapshot then shows the deleted row and the new one, two rows
/// of one key (InnoDB, one record per key, shows only the new one): the
/// key's reads are open for the transaction.
#[test]
fn a_key_an_upsert_took_from_a_row_of_the_snapshot_reads_open() {
    let s = schedule(
        IsolationLevel::RepeatableRead,
        &[(4, 4)],
        &[
            (0, Begin),
            (0, stmt(Op::Delete(Pred::ValueRange(3, 7)))),
            (1, Begin),
            (1, stmt(Op::Upsert(4, 7, 3))), // 3: waits for session 1
            (0, Commit),
            (1, stmt(Op::Read(Pred::Key(4)))), // 5
            (1, Commit),
        ],
    );
    for read in [vec![(4, 4), (4, 7)], vec![(4, 7)]] {
        let r = pg_rr();
        let mut m = Model::new(&s, &r);
        returns_at_once(&mut m, 0..3);
        assert_eq!(m.start(3), Wait::Must);
        returns_at_once(&mut m, 4..5);
        m.finish(3, ok(), true);
        m.start(5);
        m.finish(5, rows(&read), false);
        returns_at_once(&mut m, 6..7);
        m.end(&[(4, 7)]);
        assert!(m.anomalies.is_empty(), "{read:?}: {:?}", m.anomalies);
    }
}

/// A schedule on a UNIQUE table shrinks to one with a plain index, and
/// to one with none; its moves and upserts go like any statement.
#[test]
fn a_unique_table_shrinks_to_a_plain_one_and_the_new_statements_drop() {
    let mut s = unique(schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 1)],
        &[
            (0, Begin),
            (0, mv(Pred::All)),
            (0, stmt(Op::Upsert(50, 1, 1))),
            (0, Commit),
        ],
    ));
    s.spellings = spelled();
    let c = crate::txn::shrink::candidates(&s);
    assert!(c.iter().any(|c| c.index_v && !c.unique_v));
    assert!(c.iter().any(|c| !c.index_v && !c.unique_v));
    assert!(c.iter().any(|c| c.steps.len() == 3
        && !c
            .steps
            .iter()
            .any(|st| matches!(st.action, Stmt(Op::Move(..))))));
    assert!(c.iter().all(|c| c.spellings == s.spellings));
}

/// The one way two rows meet in a pair of keys: an upsert at an initial
/// row's key after that row moved away. A move of both may then fail on
/// the primary key; a move with no such row may not.
#[test]
fn a_move_may_fail_on_a_key_only_where_a_second_row_was_born_into_its_pair() {
    let steps = |upsert: bool| {
        let mut steps = vec![
            (0, Begin),
            (0, mv(Pred::Key(1))), // row 1 -> 501
            (0, Commit),
            (1, Begin),
        ];
        if upsert {
            steps.push((1, stmt(Op::Upsert(1, 3, 1)))); // a new row at 1
        }
        steps.extend([(1, mv(Pred::All)), (1, Commit)]);
        steps
    };
    let mut s = schedule(IsolationLevel::ReadCommitted, &[(1, 5)], &steps(true));
    s.spellings = spelled();
    let dup = |i| match i {
        5 => Outcome::Conflict(Conflict::DuplicateKey),
        _ => ok(),
    };
    assert_eq!(run(&s, &pg_rc(), dup, &[(501, 5)]), vec![]);
    let alone = schedule(IsolationLevel::ReadCommitted, &[(1, 5)], &steps(false));
    let dup = |i| match i {
        4 => Outcome::Conflict(Conflict::DuplicateKey),
        _ => ok(),
    };
    assert_eq!(
        run(&alone, &pg_rc(), dup, &[(501, 5)]),
        vec![AnomalyKind::SpuriousConflict]
    );
}

/// Found by lancet on MariaDB 10.11 (a reduced schedule): UPDATE IGNORE
/// on a table without a UNIQUE index is an UPDATE, and a row a committed
/// statement left open stays open at its partner key after a move.
#[test]
fn update_ignore_without_a_unique_index_is_an_update_and_moves_keep_rows_open() {
    let mut s = schedule(
        IsolationLevel::ReadCommitted,
        &[(2, 9), (3, 7)],
        &[
            (0, Begin),
            (
                0,
                stmt(Op::UpdateIgnore(Pred::KeyRange(2, 3), Assign::Set(0))),
            ),
            (0, Commit),
            (1, Begin),
            (1, mv(Pred::ValueRange(6, 9))), // 4: nothing matches now
            (1, Commit),
        ],
    );
    s.spellings = spelled();
    assert_eq!(run(&s, &innodb_rc(), |_| ok(), &[(2, 0), (3, 0)]), vec![]);
    let unique = unique(s.clone());
    assert_eq!(
        run(&unique, &innodb_rc(), |_| ok(), &[(2, 0), (3, 7)]),
        vec![]
    );
    assert_eq!(
        run(&unique, &innodb_rc(), |_| ok(), &[(2, 9), (503, 7)]),
        vec![]
    );
}
