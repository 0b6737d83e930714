//! Schedules over two tables: a condition picks rows of its own table
//! only, in the model, the serial-order check and the final rows, and a
//! schedule shrinks to one table.

use super::*;
use crate::txn::schedule::{table_of, MoreTable, KEYS_PER_TABLE};
use crate::txn::shrink;

/// Session 1 reads every row of the second table and adds 1 to every
/// row of the first, then commits.
fn two_tables() -> Schedule {
    use Action::*;
    let mut s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 5), (KEYS_PER_TABLE + 1, 7)],
        &[
            (0, Begin),
            (0, Action::Stmt(Op::Read(Pred::All))),
            (0, Action::Stmt(Op::Update(Pred::All, Assign::Add(1)))),
            (0, Commit),
        ],
    );
    s.steps[1].table = 1;
    s.more_tables.push(MoreTable {
        index_v: false,
        unique_v: false,
        nullable_v: false,
        placement: Some("reference".into()),
    });
    s
}

#[test]
fn a_condition_picks_rows_of_its_own_table_only() {
    let s = two_tables();
    assert_eq!(table_of(KEYS_PER_TABLE + 1), 1);
    assert_eq!(s.table_name(1), "lancet_txn_1");
    assert_eq!(
        s.statement_sql(1).unwrap(),
        "SELECT k, v FROM lancet_txn_1 ORDER BY k"
    );
    assert_eq!(
        s.fill_sql(1),
        vec!["INSERT INTO lancet_txn_1 (k, v) VALUES (1001, 7)".to_string()]
    );
    assert_eq!(s.placement_label().as_deref(), Some("reference"));
    let documented = |i| match i {
        1 => rows(&[(1001, 7)]),
        _ => ok(),
    };
    let final_rows = [(1, 6), (1001, 7)];
    assert_eq!(run(&s, &pg_rc(), documented, &final_rows), vec![]);
    assert_eq!(run(&s, &pg_ser(), documented, &final_rows), vec![]);
    // A read that shows the other table's row, or a write that reached
    // it, is wrong.
    let both = |i| match i {
        1 => rows(&[(1, 5), (1001, 7)]),
        _ => ok(),
    };
    assert_eq!(
        run(&s, &pg_rc(), both, &final_rows),
        vec![AnomalyKind::Phantom]
    );
    assert_eq!(
        run(&s, &pg_rc(), documented, &[(1, 6), (1001, 8)]),
        vec![AnomalyKind::WrongFinalState]
    );
}

#[test]
fn a_schedule_shrinks_to_its_first_table() {
    let s = two_tables();
    let one = shrink::candidates(&s)
        .into_iter()
        .find(|c| c.table_count() == 1)
        .expect("a candidate without the second table");
    assert_eq!(one.rows, vec![(1, 5)]);
    assert!(one.steps.iter().all(|st| st.table == 0));
    assert_eq!(one.steps.len(), 3);
}
