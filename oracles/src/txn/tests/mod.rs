//! The model against schedules whose outcome the manuals state.

use super::model::{Model, Outcome, Wait};
use super::schedule::{
    Action, Assign, Lock, LockMode, LockWait, Op, Pred, Schedule, Step, Sub, TABLE,
};
use super::AnomalyKind;
use lancet_core::txn::{Conflict, IsolationLevel, LevelRules, ReadView, WriteRule};

pub(crate) fn rules(level: IsolationLevel, read_view: ReadView, writes: WriteRule) -> LevelRules {
    LevelRules::new(level, read_view, writes, false, "test")
}

pub(crate) fn pg_rc() -> LevelRules {
    rules(
        IsolationLevel::ReadCommitted,
        ReadView::Statement,
        WriteRule::SnapshotRowsNewestVersions,
    )
}

pub(crate) fn pg_rr() -> LevelRules {
    rules(
        IsolationLevel::RepeatableRead,
        ReadView::FirstStatement,
        WriteRule::SnapshotOrAbort,
    )
}

pub(crate) fn pg_ser() -> LevelRules {
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
        unique_v: false,
        nullable_v: false,
        spellings: Default::default(),
        placement: None,
        rows: rows.to_vec(),
        level,
        mode: None,
        sessions: steps.iter().map(|s| s.0 + 1).max().unwrap_or(1),
        mixed: Vec::new(),
        more_tables: Vec::new(),
        steps: steps
            .iter()
            .map(|&(session, action)| Step {
                session,
                action,
                table: 0,
            })
            .collect(),
        settings: Default::default(),
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
    run_sessions(s, vec![r; s.sessions], outcome, final_rows)
}

/// As [`run`], each session at its own level (`rules[s]`).
fn run_sessions(
    s: &Schedule,
    rules: Vec<&LevelRules>,
    outcome: impl Fn(usize) -> Outcome,
    final_rows: &[(i64, i64)],
) -> Vec<AnomalyKind> {
    let mut m = Model::mixed(s, rules);
    for i in 0..s.steps.len() {
        m.start(i);
        m.finish(i, outcome(i), false);
    }
    m.end(final_rows);
    m.anomalies.iter().map(|a| a.kind).collect()
}

/// Sends `steps` in order, each returning at once with success.
fn returns_at_once(m: &mut Model<'_>, steps: std::ops::Range<usize>) {
    for i in steps {
        m.start(i);
        m.finish(i, ok(), false);
    }
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
    returns_at_once(&mut m, 0..3);
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

/// Each session reads both rows and, seeing their sum at 2, moves one of
/// them down: no serial order lets both see it (reads 2, 3; commits 6, 7).
fn write_skew(level: IsolationLevel) -> Schedule {
    use Action::*;
    let read_all = Action::Stmt(Op::Read(Pred::All));
    schedule(
        level,
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
    )
}

#[test]
fn write_skew_under_serializable_has_no_serial_order() {
    let s = write_skew(IsolationLevel::Serializable);
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

/// Three transactions in a cycle of reads and writes (G2-item of three):
/// each reads one row as it began, then sets the next one. Every pair
/// has a serial order, the three together none.
#[test]
fn a_cycle_of_three_serializable_transactions_has_no_serial_order() {
    use Action::*;
    let read = |k| Action::Stmt(Op::Read(Pred::Key(k)));
    let set = |k| Action::Stmt(Op::Update(Pred::Key(k), Assign::Set(5)));
    let s = schedule(
        IsolationLevel::Serializable,
        &[(1, 0), (2, 0), (3, 0)],
        &[
            (0, Begin),
            (1, Begin),
            (2, Begin),
            (0, read(1)),
            (1, read(2)),
            (2, read(3)),
            (0, set(2)),
            (1, set(3)),
            (2, set(1)),
            (0, Commit),
            (1, Commit),
            (2, Commit),
        ],
    );
    assert_eq!(s.sessions, 3);
    let first_versions = |i| match i {
        3 => rows(&[(1, 0)]),
        4 => rows(&[(2, 0)]),
        5 => rows(&[(3, 0)]),
        _ => ok(),
    };
    let after = [(1, 5), (2, 5), (3, 5)];
    assert_eq!(
        run(&s, &pg_ser(), first_versions, &after),
        vec![AnomalyKind::NotSerializable]
    );
    // One of them aborted: the other two have a serial order.
    let one_aborted = |i| match i {
        11 => Outcome::Conflict(Conflict::Serialization),
        i => first_versions(i),
    };
    assert_eq!(
        run(&s, &pg_ser(), one_aborted, &[(1, 0), (2, 5), (3, 5)]),
        vec![]
    );
}

/// Schedules have 2 to [`MAX_SESSIONS`] sessions, mostly 2; each step is one's.
#[test]
fn schedules_have_two_to_four_sessions() {
    use super::schedule::MAX_SESSIONS;
    let levels = [(IsolationLevel::Serializable, None)];
    let mut by_count = [0usize; MAX_SESSIONS + 1];
    for seed in 0..400 {
        let mut rng = lancet_core::rng::database_rng(seed, 0, 0);
        let s = Schedule::generate(
            &mut rng,
            &levels,
            &[],
            lancet_core::txn::LockingReads::Any,
            &Default::default(),
            Default::default(),
        );
        assert!((2..=MAX_SESSIONS).contains(&s.sessions), "{}", s.sessions);
        assert!(s.steps.iter().all(|st| st.session < s.sessions));
        for session in 0..s.sessions {
            assert!(s.steps.iter().any(|st| st.session == session));
        }
        by_count[s.sessions] += 1;
    }
    assert!(
        by_count[2] > by_count[3] && by_count[3] > by_count[4] && by_count[4] >= 20,
        "{by_count:?}"
    );
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

pub(crate) fn innodb_rr() -> LevelRules {
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
    // Step 4 waits for k = 1 while session 2 commits (step 5).
    let check = |s: &Schedule, read: &[(i64, i64)], last: &[(i64, i64)]| {
        let mut m = Model::new(s, &r);
        returns_at_once(&mut m, 0..4);
        assert_eq!(m.start(4), Wait::Must);
        returns_at_once(&mut m, 5..6);
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
        check(
            &s,
            &[(1, 13), (2, 0), (101, 9)],
            &[(1, 13), (2, 0), (101, 9)]
        ),
        vec![]
    );
    assert_eq!(
        check(
            &s,
            &[(1, 13), (2, 0), (101, 13)],
            &[(1, 13), (2, 0), (101, 13)]
        ),
        vec![]
    );
    assert_eq!(
        check(
            &s,
            &[(1, 9), (2, 0), (101, 9)],
            &[(1, 13), (2, 0), (101, 9)]
        ),
        vec![AnomalyKind::NonRepeatableRead]
    );
    // Over the index on v, the scan may reach k = 1 by its stale entry
    // (v = 8, now 9) and skip it: k = 1 is open too, k = 2 is not.
    let indexed = Schedule {
        index_v: true,
        ..s.clone()
    };
    assert_eq!(
        check(
            &indexed,
            &[(1, 9), (2, 0), (101, 9)],
            &[(1, 9), (2, 0), (101, 9)]
        )
        .len(),
        0
    );
    assert_eq!(
        check(
            &indexed,
            &[(1, 9), (2, 4), (101, 9)],
            &[(1, 9), (2, 0), (101, 9)]
        )
        .len(),
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

mod drawing;
mod keys;
mod locking_reads;
mod locks;
mod mixed;
mod nulls;
mod savepoints;
mod scan_position;
mod shared_locks;
mod subqueries;
mod tables;
