//! Savepoints: `ROLLBACK TO SAVEPOINT` undoes the transaction's writes
//! after the savepoint on every DBMS (PostgreSQL "ROLLBACK TO
//! SAVEPOINT", MariaDB KB "SAVEPOINT", sqlite.org/lang_savepoint.html);
//! what it does to the row locks taken after it is the level's
//! [`SavepointLocks`]. The savepoint itself stays, and those made after
//! it go; `RELEASE` drops it and those after it, keeping the writes.

use super::*;
use lancet_core::txn::SavepointLocks;

impl Model<'_> {
    /// `SAVEPOINT s{n}`: remembers what the transaction has now.
    pub(super) fn savepoint(&mut self, session: usize, n: u8) {
        let txn = &mut self.txns[session];
        let mark = Mark {
            writes: txn.writes.clone(),
            uncertain: txn.uncertain.clone(),
            maybe_locked: txn.maybe_locked.clone(),
            locked: txn.locked.clone(),
            shared: txn.shared.clone(),
        };
        txn.savepoints.push((n, mark));
    }

    /// `ROLLBACK TO SAVEPOINT s{n}`: the writes since are undone; the
    /// locks since go, or may stay, by the rules.
    pub(super) fn rollback_to(&mut self, session: usize, n: u8) {
        let released = self.rules_of(session).savepoint_locks == SavepointLocks::Released;
        let txn = &mut self.txns[session];
        let Some(at) = txn.savepoints.iter().rposition(|(m, _)| *m == n) else {
            return;
        };
        txn.savepoints.truncate(at + 1);
        let mark = txn.savepoints[at].1.clone();
        let mut maybe = mark.maybe_locked.clone();
        if !released {
            // Every row it wrote or locked since may still be locked, and
            // a shared lock that became exclusive since may be either.
            maybe.extend(
                txn.writes
                    .keys()
                    .chain(&txn.locked)
                    .chain(&txn.shared)
                    .chain(&txn.maybe_locked)
                    .chain(&txn.uncertain)
                    .copied()
                    .filter(|k| {
                        !mark.writes.contains_key(k)
                            && !mark.locked.contains(k)
                            && !mark.shared.contains(k)
                    }),
            );
            maybe.extend(
                mark.shared
                    .iter()
                    .copied()
                    .filter(|k| txn.locked.contains(k) || txn.writes.contains_key(k)),
            );
        }
        txn.maybe_locked = maybe;
        txn.writes = mark.writes;
        txn.uncertain = mark.uncertain;
        txn.locked = mark.locked;
        txn.shared = mark.shared;
    }

    /// `RELEASE SAVEPOINT s{n}`: it and the savepoints after it go.
    pub(super) fn release(&mut self, session: usize, n: u8) {
        let txn = &mut self.txns[session];
        if let Some(at) = txn.savepoints.iter().rposition(|(m, _)| *m == n) {
            txn.savepoints.truncate(at);
        }
    }
}
