//! Which rows a statement of a schedule reads or changes: its condition
//! (`Pred`), a condition whose subquery reads another table of the
//! schedule (`Sub`) and how it picks rows once the subquery's rows are
//! known (`Bound`), and how keys name their table.

use lancet_core::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Keys of table `n` of a schedule lie in `n * KEYS_PER_TABLE ..`, so
/// that a key names its table and the model keeps one map of rows.
pub const KEYS_PER_TABLE: i64 = 1000;

/// Which table row `k` is in (see [`KEYS_PER_TABLE`]).
pub fn table_of(k: i64) -> usize {
    usize::try_from(k.div_euclid(KEYS_PER_TABLE)).unwrap_or(0)
}

impl Pred {
    /// Whether row `k` of table `table` (with value `v`) is one the
    /// condition picks: a condition on one table never picks another's.
    pub fn matches_in(self, table: usize, k: i64, v: i64) -> bool {
        table_of(k) == table && self.matches(k, v)
    }
}

/// Which rows a statement reads or changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pred {
    Key(i64),
    KeyRange(i64, i64),
    ValueRange(i64, i64),
    ValueAbove(i64),
    /// `v = c`, drawn on tables with a UNIQUE index on `v`.
    Value(i64),
    All,
    /// A subquery over another table of the schedule: it picks rows only
    /// once bound to the rows the subquery reads ([`Pred::bind`]).
    Sub(Sub),
}

impl Pred {
    /// Whether row `(k, v)` matches a condition without a subquery (one
    /// with a subquery matches nothing until bound, [`Pred::bind`]).
    pub fn matches(self, k: i64, v: i64) -> bool {
        match self {
            Pred::Key(c) => k == c,
            Pred::KeyRange(a, b) => a <= k && k <= b,
            Pred::ValueRange(a, b) => a <= v && v <= b,
            Pred::ValueAbove(c) => v > c,
            Pred::Value(c) => v == c,
            Pred::All => true,
            Pred::Sub(_) => {
                debug_assert!(false, "a subquery condition is bound before it picks rows");
                false
            }
        }
    }

    /// The condition of a statement on table `table` once its subquery
    /// (if any) has read `rows`.
    pub fn bind(self, table: usize, rows: impl Iterator<Item = (i64, i64)>) -> Bound {
        match self {
            Pred::Sub(sub) => sub.bind(table, rows),
            plain => Bound::Plain(plain),
        }
    }

    /// The condition reads another table.
    pub fn has_subquery(self) -> bool {
        matches!(self, Pred::Sub(_))
    }

    /// The condition as SQL in a statement on `table`, with `WHERE`
    /// (empty for every row).
    pub(crate) fn sql(self, table: &str) -> String {
        match self {
            Pred::Key(c) => format!(" WHERE k = {c}"),
            Pred::KeyRange(a, b) => format!(" WHERE k BETWEEN {a} AND {b}"),
            Pred::ValueRange(a, b) => format!(" WHERE v BETWEEN {a} AND {b}"),
            Pred::ValueAbove(c) => format!(" WHERE v > {c}"),
            Pred::Value(c) => format!(" WHERE v = {c}"),
            Pred::All => String::new(),
            Pred::Sub(sub) => sub.sql(table),
        }
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
    }
}
