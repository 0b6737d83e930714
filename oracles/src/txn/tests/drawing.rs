//! What schedules are drawn and read: the statement kinds a DBMS
//! offers are the only ones drawn, and records written by earlier
//! versions still read.

use super::keys::spelled;
use super::*;
use crate::txn::forms::Forms;
use crate::txn::schedule::Action::Stmt;
use crate::txn::schedule::NULL_V;

#[test]
fn the_new_kinds_are_drawn_only_where_offered() {
    let levels = [(IsolationLevel::ReadCommitted, None)];
    let all = Forms {
        moves: true,
        unique_v: true,
        spellings: spelled(),
    };
    let mut seen = [0usize; 5];
    let mut nulls = 0;
    for seed in 0..300 {
        let mut rng = lancet_core::rng::database_rng(seed, 0, 0);
        let plain = Schedule::generate(
            &mut rng,
            &levels,
            &[],
            lancet_core::txn::LockingReads::Any,
            &Forms::default(),
            Default::default(),
        );
        assert!(!plain.unique_v && plain.spellings.is_empty());
        let mut rng = lancet_core::rng::database_rng(seed, 0, 0);
        let s = Schedule::generate(
            &mut rng,
            &levels,
            &[],
            lancet_core::txn::LockingReads::Any,
            &all,
            Default::default(),
        );
        for (plain, wide) in [(&plain, false), (&s, true)] {
            for st in &plain.steps {
                let i = match st.action {
                    Stmt(Op::Move(..)) => 0,
                    Stmt(Op::Upsert(..)) => 1,
                    Stmt(Op::InsertIgnore(..)) => 2,
                    Stmt(Op::UpdateIgnore(..)) => 3,
                    Stmt(Op::Read(Pred::Value(_)) | Op::Update(Pred::Value(_), _)) => 4,
                    _ => continue,
                };
                assert!(wide, "{:?} drawn without the form", st.action);
                seen[i] += 1;
            }
        }
        // A UNIQUE column's values differ, but for NULLs where it may
        // hold them.
        if s.unique_v {
            let not_null = |r: &&(i64, i64)| r.0 < 1000 && r.1 != NULL_V;
            let mut values: Vec<i64> = s.rows.iter().filter(not_null).map(|r| r.1).collect();
            values.sort();
            values.dedup();
            assert_eq!(values.len(), s.rows.iter().filter(not_null).count());
        }
        // NULLs only where the column may hold them.
        let table_nulls = s
            .rows
            .iter()
            .filter(|r| r.0 < 1000 && r.1 == NULL_V)
            .count();
        assert!(s.nullable_v || table_nulls == 0, "{s:?}");
        nulls += table_nulls;
    }
    assert!(seen.iter().all(|&n| n > 5), "{seen:?}");
    assert!(nulls > 5, "{nulls} NULLs in UNIQUE columns");
}

/// Found by lancet on MariaDB 10.11: `UPDATE IGNORE ... SET v = 0` over
/// two rows gives one of them 0 and skips the other; which one is open,
/// so a later insert of 0 may be a duplicate.
#[test]
fn a_locking_read_recorded_before_locking_clauses_still_reads() {
    let old = r#"{"session":1,"action":{"stmt":{"locking-read":{"value-above":8}}}}"#;
    let step: Step = serde_json::from_str(old).unwrap();
    assert_eq!(
        step.action,
        Action::Stmt(Op::LockingRead(
            Pred::ValueAbove(8),
            crate::txn::schedule::Lock::FOR_UPDATE
        ))
    );
    let again: Step = serde_json::from_str(&serde_json::to_string(&step).unwrap()).unwrap();
    assert_eq!(again, step);
}
