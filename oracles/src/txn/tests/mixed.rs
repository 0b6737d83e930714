//! Schedules whose sessions run at levels of their own: each session
//! follows its own level's rules, the serial-order check holds only where
//! every committed transaction is SERIALIZABLE, and shrinking can give
//! every session one of the mix's levels.

use super::*;
use crate::txn::schedule::SessionLevel;
use crate::txn::shrink;

fn sqlite_deferred() -> LevelRules {
    rules(
        IsolationLevel::Serializable,
        ReadView::FirstStatement,
        WriteRule::SnapshotOrAbort,
    )
}

fn sqlite_immediate() -> LevelRules {
    LevelRules {
        exclusive_begin: true,
        mode: Some("immediate".into()),
        read_view: ReadView::Begin,
        ..sqlite_deferred()
    }
}

fn mix(s: &mut Schedule, levels: &[(IsolationLevel, Option<&str>)]) {
    s.mixed = levels
        .iter()
        .map(|&(level, mode)| SessionLevel {
            level,
            mode: mode.map(str::to_string),
        })
        .collect();
    s.settle_levels();
}

#[test]
fn an_immediate_begin_must_fail_while_a_deferred_transaction_has_written() {
    use Action::*;
    let mut s = schedule(
        IsolationLevel::Serializable,
        &[(1, 10)],
        &[
            (0, Begin),
            (1, Begin),
            (0, READ_1), // 2: a reader holds no write lock
            (1, ADD_1),  // 3: session 1's deferred transaction writes
            (0, Commit),
            (1, Commit),
            (0, Begin), // 6: an immediate BEGIN with no writer open
        ],
    );
    // Session 1 deferred, session 2 immediate: nothing to refuse.
    mix(
        &mut s,
        &[
            (IsolationLevel::Serializable, None),
            (IsolationLevel::Serializable, Some("immediate")),
        ],
    );
    let (d, i) = (sqlite_deferred(), sqlite_immediate());
    let reads = |step| match step {
        2 => rows(&[(1, 10)]),
        _ => ok(),
    };
    assert_eq!(run_sessions(&s, vec![&d, &i], reads, &[(1, 11)]), vec![]);

    // The other way round: session 1's immediate BEGIN comes after
    // session 2's deferred write.
    let s = schedule(
        IsolationLevel::Serializable,
        &[(1, 10)],
        &[
            (1, Begin),
            (1, ADD_1),
            (0, Begin), // 2: must fail, session 2 holds the write lock
            (1, Commit),
        ],
    );
    let mut s = s;
    mix(
        &mut s,
        &[
            (IsolationLevel::Serializable, Some("immediate")),
            (IsolationLevel::Serializable, None),
        ],
    );
    assert_eq!(
        run_sessions(&s, vec![&i, &d], |_| ok(), &[(1, 11)]),
        vec![AnomalyKind::DidNotWait]
    );
    let busy = |step| match step {
        2 => Outcome::Conflict(Conflict::LockTimeout),
        _ => ok(),
    };
    assert_eq!(run_sessions(&s, vec![&i, &d], busy, &[(1, 11)]), vec![]);
}

#[test]
fn each_session_reads_by_its_own_level_and_serial_order_needs_all_serializable() {
    // Write skew: session 1 at READ COMMITTED, session 2 at SERIALIZABLE.
    let mut s = write_skew(IsolationLevel::ReadCommitted);
    mix(
        &mut s,
        &[
            (IsolationLevel::ReadCommitted, None),
            (IsolationLevel::Serializable, None),
        ],
    );
    assert!(s.is_mixed());
    assert_eq!(s.label_of(1), "SERIALIZABLE");
    let (rc, ser) = (pg_rc(), pg_ser());
    let both = |i| match i {
        2 | 3 => rows(&[(1, 1), (2, 1)]),
        _ => ok(),
    };
    // No promise of a serial order with a READ COMMITTED transaction
    // among the committed ones.
    assert_eq!(
        run_sessions(&s, vec![&rc, &ser], both, &[(1, 0), (2, 0)]),
        vec![]
    );
    // A serialization failure is the SERIALIZABLE session's to raise,
    // never the READ COMMITTED one's.
    let rc_fails = |i| match i {
        2 | 3 => rows(&[(1, 1), (2, 1)]),
        6 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(
        run_sessions(&s, vec![&rc, &ser], rc_fails, &[(1, 1), (2, 0)]),
        vec![AnomalyKind::SpuriousConflict]
    );
    let ser_fails = |i| match i {
        2 | 3 => rows(&[(1, 1), (2, 1)]),
        7 => Outcome::Conflict(Conflict::Serialization),
        _ => ok(),
    };
    assert_eq!(
        run_sessions(&s, vec![&rc, &ser], ser_fails, &[(1, 0), (2, 1)]),
        vec![]
    );
}

#[test]
fn shrinking_a_mix_offers_each_of_its_levels_and_keeps_levels_with_their_sessions() {
    use Action::*;
    let mut s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 1)],
        &[(0, Begin), (1, Begin), (2, Begin), (0, Commit)],
    );
    mix(
        &mut s,
        &[
            (IsolationLevel::ReadCommitted, None),
            (IsolationLevel::Serializable, None),
            (IsolationLevel::Serializable, None),
        ],
    );
    let candidates = shrink::candidates(&s);
    // Without session 1, the other two are both SERIALIZABLE: no mix.
    let without_first = &candidates[0];
    assert_eq!(without_first.sessions, 2);
    assert!(!without_first.is_mixed());
    assert_eq!(without_first.level, IsolationLevel::Serializable);
    // Without session 2, session 3 keeps its level.
    let without_second = &candidates[1];
    assert_eq!(without_second.label_of(1), "SERIALIZABLE");
    assert_eq!(without_second.label_of(0), "READ COMMITTED");
    let unmixed: Vec<IsolationLevel> = candidates
        .iter()
        .filter(|c| !c.is_mixed() && c.sessions == 3)
        .map(|c| c.level)
        .collect();
    assert_eq!(
        unmixed,
        vec![IsolationLevel::ReadCommitted, IsolationLevel::Serializable]
    );
}
