//! Planted faults: a connection wrapper that perturbs results the way a
//! logic bug would. An oracle that cannot catch its planted fault is
//! broken; `selftest` and the tests use this to prove each oracle works.
//! Faults are deterministic (a hash of the SQL text), never random, so a
//! run with a fault is as reproducible as one without.

use crate::connection::{Connection, DbError};
use crate::value::{Row, Value};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// Drop the first row of the result of one query in `period` (chosen by
    /// a hash of its text), among queries that return rows.
    DropRow { period: u64 },
    /// Return no rows at all for one query in `period`.
    EmptyResult { period: u64 },
    /// Add one to the count of one `SELECT COUNT(*) ... WHERE` query in `period`.
    Miscount { period: u64 },
    /// Drops the first row of some results of queries that read no twin
    /// table ([`crate::TWIN_SCHEMA`]): a fault of one execution path only
    /// (Citus's distributed tables), which only dist-vs-local can see.
    DropRowOffTwins { period: u64 },
    /// Like `DropRow`, but only while every optimizer knob is on: a fault
    /// of an optimization, which turning off any knob hides (for testing
    /// root-cause localization).
    DropRowUnderDefaultKnobs { period: u64 },
    /// Sleeps 200 ms in one query in `period` while every knob is on: a
    /// default plan that is slow but right, which only the performance
    /// oracle sees.
    SleepUnderDefaultKnobs { period: u64 },
    /// Drops the first row of some results of queries that read a derived
    /// table or a CTE: a fault of one way of writing a query, which an
    /// oracle comparing it with the query written plainly sees.
    DropRowInDerived { period: u64 },
    /// Duplicates the first row of some results of queries that join
    /// with CROSS JOIN (or, in SQLite, a comma): a fault of joins written
    /// one way, which the same join written with ON does not have.
    DuplicateRowInCrossJoins { period: u64 },
}

/// How long [`Fault::SleepUnderDefaultKnobs`] sleeps.
pub const PLANTED_SLEEP: std::time::Duration = std::time::Duration::from_millis(200);

impl Fault {
    pub fn parse(name: &str) -> Option<Fault> {
        match name {
            "drop-row" => Some(Fault::DropRow { period: 5 }),
            "empty-result" => Some(Fault::EmptyResult { period: 5 }),
            "miscount" => Some(Fault::Miscount { period: 3 }),
            "drop-row-off-twins" => Some(Fault::DropRowOffTwins { period: 3 }),
            "drop-row-under-default-knobs" => Some(Fault::DropRowUnderDefaultKnobs { period: 5 }),
            "sleep-under-default-knobs" => Some(Fault::SleepUnderDefaultKnobs { period: 3 }),
            "drop-row-in-derived" => Some(Fault::DropRowInDerived { period: 3 }),
            "duplicate-row-in-cross-joins" => Some(Fault::DuplicateRowInCrossJoins { period: 2 }),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Fault::DropRow { .. } => "drop-row",
            Fault::EmptyResult { .. } => "empty-result",
            Fault::Miscount { .. } => "miscount",
            Fault::DropRowOffTwins { .. } => "drop-row-off-twins",
            Fault::DropRowUnderDefaultKnobs { .. } => "drop-row-under-default-knobs",
            Fault::SleepUnderDefaultKnobs { .. } => "sleep-under-default-knobs",
            Fault::DropRowInDerived { .. } => "drop-row-in-derived",
            Fault::DuplicateRowInCrossJoins { .. } => "duplicate-row-in-cross-joins",
        }
    }
}

/// FNV-1a: a stable hash (std's hasher may change between releases).
pub fn stable_hash(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Wraps a connection and applies a [`Fault`] to query results.
pub struct FaultyConnection<C: Connection> {
    inner: C,
    fault: Fault,
    /// Whether some knob is off now.
    knobs_off: bool,
}

impl<C: Connection> FaultyConnection<C> {
    pub fn new(inner: C, fault: Fault) -> Self {
        FaultyConnection {
            inner,
            fault,
            knobs_off: false,
        }
    }
}

impl<C: Connection> Connection for FaultyConnection<C> {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.inner.execute(sql)
    }

    fn set_knobs(&mut self, setting: &crate::knobs::KnobSetting) -> Result<(), DbError> {
        self.inner.set_knobs(setting)?;
        self.knobs_off = !setting.is_default();
        Ok(())
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        let mut rows = self.inner.query(sql)?;
        let hit = |period: u64| stable_hash(sql).is_multiple_of(period);
        match self.fault {
            Fault::DropRow { period } => {
                if !rows.is_empty() && hit(period) {
                    rows.remove(0);
                }
            }
            Fault::DropRowUnderDefaultKnobs { period } => {
                if !rows.is_empty() && !self.knobs_off && hit(period) {
                    rows.remove(0);
                }
            }
            Fault::SleepUnderDefaultKnobs { period } => {
                if !self.knobs_off && !sql.starts_with("EXPLAIN") && hit(period) {
                    std::thread::sleep(PLANTED_SLEEP);
                }
            }
            Fault::DropRowOffTwins { period } => {
                let twin = format!("{}.", crate::TWIN_SCHEMA);
                if !rows.is_empty() && !sql.contains(&twin) && hit(period) {
                    rows.remove(0);
                }
            }
            Fault::DropRowInDerived { period } => {
                let derived =
                    sql.starts_with("WITH ") || sql.contains("FROM (") || sql.contains("JOIN (");
                if !rows.is_empty() && derived && hit(period) {
                    rows.remove(0);
                }
            }
            Fault::DuplicateRowInCrossJoins { period } => {
                let cross = sql.contains(" CROSS JOIN ")
                    || sql.split(" FROM ").skip(1).any(|from| {
                        from.split(" WHERE ")
                            .next()
                            .is_some_and(|f| f.contains(", "))
                    });
                if cross && hit(period) {
                    if let Some(first) = rows.first().cloned() {
                        rows.push(first);
                    }
                }
            }
            Fault::EmptyResult { period } => {
                if hit(period) {
                    rows.clear();
                }
            }
            Fault::Miscount { period } => {
                if sql.starts_with("SELECT COUNT(*) FROM") && sql.contains(" WHERE ") && hit(period)
                {
                    if let Some(Value::Integer(n)) = rows.first_mut().and_then(|r| r.first_mut()) {
                        *n += 1;
                    }
                }
            }
        }
        Ok(rows)
    }
}
