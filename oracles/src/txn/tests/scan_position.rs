//! Rows a write that waited may or may not have met, by where InnoDB's
//! scan stood when it went on (`LevelRules::rows_open_after_wait`).

use super::keys::{innodb_rc, mv, stmt};
use super::*;
use crate::txn::schedule::Action::*;

/// Met by lancet on MariaDB 10.11 at READ COMMITTED: session 2 moves row
/// 3 away, session 1's upsert at key 3 waits for it, and session 3's
/// `DELETE FROM t` waits too. Once session 2 commits, the upsert inserts
/// a new row at key 3, which the DELETE's scan may already have passed:
/// a key that holds another row than when the DELETE began is open.
#[test]
fn a_new_row_at_a_key_a_waiting_delete_had_is_open_after_its_wait() {
    let r = LevelRules {
        rows_open_after_wait: true,
        ..innodb_rc()
    };
    let s = schedule(
        IsolationLevel::ReadCommitted,
        &[(1, 2), (3, 7)],
        &[
            (0, Begin),
            (1, Begin),
            (2, Begin),
            (1, mv(Pred::ValueAbove(4))),     // 3: row 3 moves to 503
            (0, stmt(Op::Upsert(3, 2, 2))),   // 4: waits for session 2
            (2, stmt(Op::Delete(Pred::All))), // 5: waits too
            (1, Commit),
            (0, Commit),
            (2, Commit),
        ],
    );
    for last in [&[][..], &[(3, 2)][..]] {
        let mut m = Model::new(&s, &r);
        returns_at_once(&mut m, 0..4);
        m.start(4);
        m.start(5);
        returns_at_once(&mut m, 6..7);
        m.finish(4, ok(), true);
        returns_at_once(&mut m, 7..8);
        m.finish(5, ok(), true);
        returns_at_once(&mut m, 8..9);
        m.end(last);
        assert!(m.anomalies.is_empty(), "{last:?}: {:?}", m.anomalies);
    }
}
