//! Planted faults: a connection wrapper that perturbs results the way a
//! logic bug would. An oracle that cannot catch its planted fault is
//! broken; `selftest` and the tests use this to prove each oracle works.
//! Faults are deterministic (a hash of the SQL text), never random, so a
//! run with a fault is as reproducible as one without.

use crate::connection::{Connection, DbError};
use crate::value::Row;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// Drop the first row of the result of one query in `period` (chosen by
    /// a hash of its text), among queries that return rows.
    DropRow { period: u64 },
}

impl Fault {
    pub fn parse(name: &str) -> Option<Fault> {
        match name {
            "drop-row" => Some(Fault::DropRow { period: 5 }),
            _ => None,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Fault::DropRow { .. } => "drop-row",
        }
    }
}

/// FNV-1a: a stable hash (std's hasher may change between releases).
fn stable_hash(text: &str) -> u64 {
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
}

impl<C: Connection> FaultyConnection<C> {
    pub fn new(inner: C, fault: Fault) -> Self {
        FaultyConnection { inner, fault }
    }
}

impl<C: Connection> Connection for FaultyConnection<C> {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.inner.execute(sql)
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        let mut rows = self.inner.query(sql)?;
        match self.fault {
            Fault::DropRow { period } => {
                if !rows.is_empty() && stable_hash(sql).is_multiple_of(period) {
                    rows.remove(0);
                }
            }
        }
        Ok(rows)
    }
}
