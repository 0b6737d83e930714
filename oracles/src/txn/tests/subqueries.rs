//! Reads and writes whose WHERE has a subquery over the second table,
//! against what the manuals state: a plain read takes both tables from
//! one snapshot; PostgreSQL's READ COMMITTED re-check keeps the
//! subquery's rows of the statement's snapshot (13.2.1: it "does not see
//! effects of those commands on other rows"); InnoDB's write may read
//! them with locks, newest, or from its view (MySQL 17.7.3), so rows
//! those disagree on are open (MDEV-29565: a SELECT and an UPDATE with
//! one subquery see different rows).

use super::*;
use crate::txn::schedule::MoreTable;
use lancet_core::txn::SubqueryRead;

/// `k IN (SELECT k - 1000 FROM lancet_txn_1 WHERE v > 3)`.
const IN_ABOVE_3: Pred = Pred::Sub(Sub::KeyIn {
    from: 1,
    above: 3,
    negated: false,
});

/// A schedule over `lancet_txn` and `lancet_txn_1`; steps name their
/// table.
fn two(level: IsolationLevel, rows: &[(i64, i64)], steps: &[(usize, Action, usize)]) -> Schedule {
    let plain: Vec<(usize, Action)> = steps.iter().map(|&(s, a, _)| (s, a)).collect();
    let mut s = schedule(level, rows, &plain);
    for (st, &(_, _, t)) in s.steps.iter_mut().zip(steps) {
        st.table = t;
    }
    s.more_tables.push(MoreTable {
        unique_v: false,
        nullable_v: false,
        index_v: false,
        placement: None,
    });
    s
}

fn innodb(level: IsolationLevel, read_view: ReadView) -> LevelRules {
    LevelRules {
        extra_write_locks: true,
        write_subquery: SubqueryRead::ViewOrNewest,
        ..rules(level, read_view, WriteRule::NewestRows)
    }
}

#[test]
fn read_committed_recheck_keeps_the_subquery_rows_of_the_statement_snapshot() {
    use Action::*;
    let drop_1001 = Action::Stmt(Op::Update(Pred::Key(1001), Assign::Set(0)));
    let add_10 = Action::Stmt(Op::Update(IN_ABOVE_3, Assign::Add(10)));
    let s = two(
        IsolationLevel::ReadCommitted,
        &[(1, 0), (2, 0), (1001, 5), (1002, 0)],
        &[
            (0, Begin, 0),
            (1, Begin, 0),
            (1, ADD_1, 0),     // 2: row 1 locked
            (1, drop_1001, 1), // 3: 1001 no longer above 3
            (0, add_10, 0),    // 4: picks row 1 by its snapshot, waits
            (1, Commit, 0),    // 5
            (0, Commit, 0),
        ],
    );
    assert_eq!(
        s.statement_sql(4).unwrap(),
        "UPDATE lancet_txn SET v = v + 10 WHERE k IN (SELECT k - 1000 FROM lancet_txn_1 WHERE v > 3)"
    );
    let drive = |r: &LevelRules, final_rows: &[(i64, i64)]| {
        let mut m = Model::new(&s, r);
        returns_at_once(&mut m, 0..4);
        let wait = m.start(4);
        m.start(5);
        m.finish(5, ok(), false);
        m.finish(4, ok(), true);
        m.start(6);
        m.finish(6, ok(), false);
        m.end(final_rows);
        (wait, m.anomalies.iter().map(|a| a.kind).collect::<Vec<_>>())
    };
    let updated = [(1, 11), (2, 0), (1001, 0), (1002, 0)];
    let skipped = [(1, 1), (2, 0), (1001, 0), (1002, 0)];
    assert_eq!(drive(&pg_rc(), &updated), (Wait::Must, vec![]));
    assert_eq!(
        drive(&pg_rc(), &skipped),
        (Wait::Must, vec![AnomalyKind::LostUpdate])
    );
    // InnoDB's subquery may have read 1001 newest, after the commit.
    let rc = innodb(IsolationLevel::ReadCommitted, ReadView::Statement);
    assert_eq!(drive(&rc, &updated).1, vec![]);
    assert_eq!(drive(&rc, &skipped).1, vec![]);
}

/// Session 1 reads with the subquery, session 2 moves 1002 above 3 and
/// commits, session 1 reads again (step 5), then writes with the same
/// subquery (6) and reads every row of its table (7).
fn mdev_29565() -> Schedule {
    use Action::*;
    let read_in = Action::Stmt(Op::Read(IN_ABOVE_3));
    let set_9 = Action::Stmt(Op::Update(Pred::Key(1002), Assign::Set(9)));
    two(
        IsolationLevel::RepeatableRead,
        &[(1, 0), (2, 0), (1001, 5), (1002, 0)],
        &[
            (0, Begin, 0),
            (0, read_in, 0), // 1: the snapshot
            (1, Begin, 0),
            (1, set_9, 1),
            (1, Commit, 0),
            (0, read_in, 0), // 5: still the snapshot
            (0, Action::Stmt(Op::Update(IN_ABOVE_3, Assign::Set(7))), 0),
            (0, READ_ALL_0, 0), // 7
            (0, Commit, 0),
        ],
    )
}

const READ_ALL_0: Action = Action::Stmt(Op::Read(Pred::All));

#[test]
fn a_plain_read_takes_both_tables_from_its_snapshot() {
    let s = mdev_29565();
    let answer = |fifth: &'static [(i64, i64)], seventh: &'static [(i64, i64)]| {
        move |i| match i {
            1 => rows(&[(1, 0)]),
            5 => rows(fifth),
            7 => rows(seventh),
            _ => ok(),
        }
    };
    let pg_rows = [(1, 7), (2, 0), (1001, 5), (1002, 9)];
    let pg = answer(&[(1, 0)], &[(1, 7), (2, 0)]);
    assert_eq!(run(&s, &pg_rr(), pg, &pg_rows), vec![]);
    let phantom = answer(&[(1, 0), (2, 0)], &[(1, 7), (2, 0)]);
    assert_eq!(
        run(&s, &pg_rr(), phantom, &pg_rows),
        vec![AnomalyKind::Phantom]
    );
    // PostgreSQL's write reads the snapshot too: row 2 stays.
    let moved = answer(&[(1, 0)], &[(1, 7), (2, 7)]);
    assert_eq!(
        run(&s, &pg_rr(), moved, &[(1, 7), (2, 7), (1001, 5), (1002, 9)]).len(),
        2
    );
}

#[test]
fn an_innodb_write_may_see_other_subquery_rows_than_its_read_did() {
    // MDEV-29565's shape: the UPDATE may read 1002 newest and change row
    // 2, which the SELECT before it did not pick; both are allowed, row 1
    // is not open.
    let s = mdev_29565();
    let rr = innodb(IsolationLevel::RepeatableRead, ReadView::Begin);
    for (seventh, last) in [
        ([(1, 7), (2, 7)], [(1, 7), (2, 7), (1001, 5), (1002, 9)]),
        ([(1, 7), (2, 0)], [(1, 7), (2, 0), (1001, 5), (1002, 9)]),
    ] {
        let answer = |i| match i {
            1 | 5 => rows(&[(1, 0)]),
            7 => rows(&seventh),
            _ => ok(),
        };
        assert_eq!(run(&s, &rr, answer, &last), vec![]);
    }
    let wrong = |i| match i {
        1 | 5 => rows(&[(1, 0)]),
        7 => rows(&[(1, 0), (2, 7)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &rr, wrong, &[(1, 0), (2, 7), (1001, 5), (1002, 9)]).len(),
        2
    );
}

#[test]
fn the_serial_order_check_evaluates_subqueries_on_the_rows_of_its_order() {
    use Action::*;
    let count = Pred::Sub(Sub::ValueAboveCount { from: 1, above: 3 });
    let s = two(
        IsolationLevel::Serializable,
        &[(1, 1), (2, 5), (1001, 5), (1002, 0)],
        &[
            (0, Begin, 0),
            (1, Begin, 0),
            (0, Action::Stmt(Op::Delete(count)), 0), // 2: v > 1 goes
            (
                1,
                Action::Stmt(Op::Update(Pred::Key(1002), Assign::Set(9))),
                1,
            ),
            (1, Commit, 0),
            (0, Commit, 0),
        ],
    );
    assert_eq!(
        s.statement_sql(2).unwrap(),
        "DELETE FROM lancet_txn WHERE v > (SELECT count(*) FROM lancet_txn_1 WHERE v > 3)"
    );
    // Session 1 first: row 2 goes; session 2 first: the count is 2 and
    // row 2 goes too. Either order explains it.
    let last = [(1, 1), (1001, 5), (1002, 9)];
    assert_eq!(run(&s, &pg_ser(), |_| ok(), &last), vec![]);
    let kept = [(1, 1), (2, 5), (1001, 5), (1002, 9)];
    assert!(run(&s, &pg_ser(), |_| ok(), &kept).contains(&AnomalyKind::NotSerializable));
}

#[test]
fn a_subquery_over_a_row_left_open_leaves_every_row_open() {
    use Action::*;
    // READ UNCOMMITTED: session 2's open write of 1001 may be read dirty
    // by session 1's subquery, so whether row 1 changes is open (seen on
    // MariaDB 10.11: it read 1001 dirty and changed row 1). A later read
    // by session 2 may then show row 1 either way, as dirty.
    let ru = LevelRules {
        extra_write_locks: true,
        write_subquery: SubqueryRead::ViewOrNewest,
        ..rules(
            IsolationLevel::ReadUncommitted,
            ReadView::Uncommitted,
            WriteRule::NewestRows,
        )
    };
    let in_above_1 = Pred::Sub(Sub::KeyIn {
        from: 1,
        above: 1,
        negated: false,
    });
    let s = two(
        IsolationLevel::ReadUncommitted,
        &[(1, 5), (1001, 0)],
        &[
            (1, Begin, 0),
            (
                1,
                Action::Stmt(Op::Update(Pred::Key(1001), Assign::Add(2))),
                1,
            ),
            (0, Begin, 0),
            (0, Action::Stmt(Op::Update(in_above_1, Assign::Set(8))), 0),
            (1, Action::Stmt(Op::Read(Pred::ValueAbove(6))), 0), // 4
            (0, Commit, 0),
            (1, Commit, 0),
        ],
    );
    for (read, row_1) in [(&[(1, 8)][..], 8), (&[][..], 5)] {
        let answer = |i| match i {
            4 => rows(read),
            _ => ok(),
        };
        assert_eq!(run(&s, &ru, answer, &[(1, row_1), (1001, 2)]), vec![]);
    }
}
