//! What a locking read of a schedule carries beyond `FOR UPDATE`: how it
//! locks and what it does about rows others lock (`FOR SHARE`, `NOWAIT`,
//! `SKIP LOCKED`). Conditions, subqueries among them, are
//! [`super::conditions`]'.

use lancet_core::txn::{MoreStatements, ShareLock};
use lancet_core::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// How a locking read locks the rows it returns, as the DBMS spells it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockMode {
    /// `FOR UPDATE`: an exclusive lock, as a write takes.
    #[default]
    ForUpdate,
    /// `FOR SHARE` (PostgreSQL): a shared lock; many transactions may
    /// hold one on a row, a write or `FOR UPDATE` of it waits for them,
    /// and it waits for the row's writer.
    ForShare,
    /// `LOCK IN SHARE MODE`: MariaDB's spelling of `FOR SHARE`.
    InShareMode,
}

impl LockMode {
    /// The lock is shared.
    pub fn shared(self) -> bool {
        !matches!(self, LockMode::ForUpdate)
    }

    /// A shared lock as `spelling` writes it.
    pub fn share(spelling: ShareLock) -> LockMode {
        match spelling {
            ShareLock::ForShare => LockMode::ForShare,
            ShareLock::LockInShareMode => LockMode::InShareMode,
        }
    }

    fn sql(self) -> &'static str {
        match self {
            LockMode::ForUpdate => " FOR UPDATE",
            LockMode::ForShare => " FOR SHARE",
            LockMode::InShareMode => " LOCK IN SHARE MODE",
        }
    }
}

/// What a locking read does where another transaction holds a lock on a
/// row it would lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LockWait {
    /// It waits for the lock.
    #[default]
    Wait,
    /// `NOWAIT`: it fails at once with the DBMS's lock error.
    NoWait,
    /// `SKIP LOCKED`: it leaves the row out and goes on.
    SkipLocked,
}

/// A locking read's clause: its lock and its waiting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    pub mode: LockMode,
    #[serde(default, skip_serializing_if = "is_wait")]
    pub wait: LockWait,
}

fn is_wait(w: &LockWait) -> bool {
    *w == LockWait::Wait
}

impl Lock {
    /// `FOR UPDATE`, waiting: the locking read schedules always had.
    pub const FOR_UPDATE: Lock = Lock {
        mode: LockMode::ForUpdate,
        wait: LockWait::Wait,
    };

    /// The clause after `ORDER BY k`.
    pub fn sql(self) -> String {
        let wait = match self.wait {
            LockWait::Wait => "",
            LockWait::NoWait => " NOWAIT",
            LockWait::SkipLocked => " SKIP LOCKED",
        };
        format!("{}{wait}", self.mode.sql())
    }

    /// `FOR UPDATE`, or what else the DBMS offers (no draw where it
    /// offers nothing else, so that schedules elsewhere stay as they were).
    pub fn draw(rng: &mut Rng, more: MoreStatements) -> Lock {
        let mut lock = Lock::FOR_UPDATE;
        if let Some(share) = more.share {
            if rng.random_bool(0.5) {
                lock.mode = LockMode::share(share);
            }
        }
        if more.nowait || more.skip_locked {
            lock.wait = match rng.random_range(0..6) {
                0 if more.nowait => LockWait::NoWait,
                1 if more.skip_locked => LockWait::SkipLocked,
                _ => LockWait::Wait,
            };
        }
        lock
    }

    /// It never waits for a lock (NOWAIT, SKIP LOCKED).
    pub fn never_waits(self) -> bool {
        self.wait != LockWait::Wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_locking_clause_as_sql() {
        assert_eq!(
            Lock {
                mode: LockMode::InShareMode,
                wait: LockWait::SkipLocked
            }
            .sql(),
            " LOCK IN SHARE MODE SKIP LOCKED"
        );
    }
}
