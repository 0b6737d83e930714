//! What a statement of a schedule may carry beyond its basic form: how a
//! locking read locks and what it does about rows others lock (`FOR
//! SHARE`, `NOWAIT`, `SKIP LOCKED`), and a WHERE whose condition is a
//! subquery over another table of the schedule, with how such a
//! condition is evaluated once the subquery's rows are known.

use super::schedule::{table_of, Pred, KEYS_PER_TABLE};
use lancet_core::txn::{MoreStatements, ShareLock};
use lancet_core::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

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

/// A condition over another table of the schedule: which of its rows
/// the subquery reads (`v > above`) and what it makes of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sub {
    /// `k IN (SELECT k - d FROM other WHERE v > above)` (`NOT IN` if
    /// `negated`), `d` mapping the other table's keys onto this one's.
    KeyIn {
        from: usize,
        above: i64,
        negated: bool,
    },
    /// `v > (SELECT count(*) FROM other WHERE v > above)`.
    ValueAboveCount { from: usize, above: i64 },
}

impl Sub {
    /// A condition over table `from`: `IN` (sometimes `NOT IN`) or the
    /// count.
    pub fn draw(rng: &mut Rng, from: usize) -> Sub {
        let above = rng.random_range(0..10);
        if rng.random_bool(0.6) {
            Sub::KeyIn {
                from,
                above,
                negated: rng.random_bool(0.3),
            }
        } else {
            Sub::ValueAboveCount { from, above }
        }
    }

    /// The table the subquery reads.
    pub fn from(self) -> usize {
        match self {
            Sub::KeyIn { from, .. } | Sub::ValueAboveCount { from, .. } => from,
        }
    }

    fn above(self) -> i64 {
        match self {
            Sub::KeyIn { above, .. } | Sub::ValueAboveCount { above, .. } => above,
        }
    }

    /// The condition as SQL in a statement on `table` (a schedule's
    /// table name: `lancet_txn`, `lancet_txn_1`, ...).
    pub fn sql(self, table: &str) -> String {
        let (base, this) = split_name(table);
        let from = self.from();
        let other = match from {
            0 => base.to_string(),
            n => format!("{base}_{n}"),
        };
        let inner = format!("FROM {other} WHERE v > {}", self.above());
        match self {
            Sub::KeyIn { negated, .. } => {
                let shift = (from as i64 - this as i64) * KEYS_PER_TABLE;
                let key = match shift {
                    0 => "k".to_string(),
                    s if s > 0 => format!("k - {s}"),
                    s => format!("k + {}", -s),
                };
                let not = if negated { "NOT " } else { "" };
                format!(" WHERE k {not}IN (SELECT {key} {inner})")
            }
            Sub::ValueAboveCount { .. } => format!(" WHERE v > (SELECT count(*) {inner})"),
        }
    }

    /// The condition once the subquery has read `rows` (every table's
    /// rows by key; it reads those of its table), for a statement on
    /// `table`.
    pub fn bind(self, table: usize, rows: impl Iterator<Item = (i64, i64)>) -> Bound {
        let read: Vec<(i64, i64)> = rows
            .filter(|&(k, v)| table_of(k) == self.from() && v > self.above())
            .collect();
        let shift = (self.from() as i64 - table as i64) * KEYS_PER_TABLE;
        Bound::Sub {
            sub: self,
            keys: read.iter().map(|(k, _)| k - shift).collect(),
            count: read.len() as i64,
        }
    }
}

/// A condition ready to pick rows: a plain one, or one whose subquery's
/// rows are known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    Plain(Pred),
    Sub {
        sub: Sub,
        /// KeyIn: the keys the subquery returned, mapped onto this table.
        keys: BTreeSet<i64>,
        /// ValueAboveCount: how many rows it counted.
        count: i64,
    },
}

impl Bound {
    /// Whether row `k` of table `table` (with value `v`) is one the
    /// condition picks.
    pub fn matches_in(&self, table: usize, k: i64, v: i64) -> bool {
        match self {
            Bound::Plain(p) => p.matches_in(table, k, v),
            Bound::Sub { sub, keys, count } => {
                table_of(k) == table
                    && match sub {
                        Sub::KeyIn { negated, .. } => keys.contains(&k) != *negated,
                        Sub::ValueAboveCount { .. } => v > *count,
                    }
            }
        }
    }
}

/// A schedule's table name as its base name and its index: `lancet_txn`
/// is 0, `lancet_txn_1` is 1 (see `Schedule::table_name`).
fn split_name(table: &str) -> (&str, usize) {
    match table.rsplit_once('_') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (base, n.parse().unwrap_or(0))
        }
        _ => (table, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subquery_names_the_other_table_and_maps_its_keys() {
        let s = Sub::KeyIn {
            from: 1,
            above: 3,
            negated: false,
        };
        assert_eq!(
            s.sql("lancet_txn"),
            " WHERE k IN (SELECT k - 1000 FROM lancet_txn_1 WHERE v > 3)"
        );
        let back = Sub::KeyIn {
            from: 0,
            above: 3,
            negated: true,
        };
        assert_eq!(
            back.sql("lancet_txn_1"),
            " WHERE k NOT IN (SELECT k + 1000 FROM lancet_txn WHERE v > 3)"
        );
        let rows = [(1, 0), (2, 9), (1001, 4), (1002, 3)];
        let b = s.bind(0, rows.into_iter());
        assert!(b.matches_in(0, 1, 0) && !b.matches_in(0, 2, 9) && !b.matches_in(1, 1001, 4));
        let c = Sub::ValueAboveCount { from: 1, above: 2 }.bind(0, rows.into_iter());
        assert!(c.matches_in(0, 2, 9) && !c.matches_in(0, 1, 2) && c.matches_in(0, 1, 3));
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
