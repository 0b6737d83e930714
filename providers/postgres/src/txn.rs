//! PostgreSQL's transactions as the transaction oracle models them, from
//! the manual's chapter 13.2 "Transaction Isolation":
//! - READ UNCOMMITTED is READ COMMITTED (13.2: "PostgreSQL's Read
//!   Uncommitted mode behaves like Read Committed").
//! - READ COMMITTED: each statement sees what was committed before it
//!   began; an UPDATE or DELETE takes the rows its snapshot shows and, for
//!   a row a concurrent transaction changed, waits for it and re-checks
//!   its condition on the newest version (13.2.1).
//! - REPEATABLE READ: one snapshot, taken at the first statement after
//!   BEGIN; a write to a row changed by a transaction that committed
//!   after it fails with SQLSTATE 40001 (13.2.2).
//! - SERIALIZABLE: as REPEATABLE READ, and any set of committed
//!   transactions equals some serial order of them; failures are 40001
//!   (13.2.3).
//!
//! `SELECT ... FOR UPDATE` finds its rows as the level's UPDATE does and
//! locks them like one (13.2.1, 13.2.2, 13.3.2); `FOR SHARE` likewise
//! with a shared lock, which conflicts with writes and `FOR UPDATE` but
//! not with `FOR SHARE` (13.3.2, table 13.3). `NOWAIT` fails with 55P03
//! where it would wait; `SKIP LOCKED` leaves those rows out (SELECT,
//! "The Locking Clause"). Plain reads never wait for locks (13.1); a
//! write or locking read waits for a row another open transaction
//! changed or locked. A subquery in a write's WHERE reads the statement's
//! snapshot, and READ COMMITTED's re-check does not see other rows'
//! newer versions (13.2.1). `ROLLBACK TO SAVEPOINT` undoes the writes
//! and releases the locks of the subtransaction. Deadlocks fail with
//! 40P01, lock timeouts (and NOWAIT) with 55P03, duplicate keys with 23505.
//!
//! An UPDATE of the key is an update like any other: its new version is
//! the newest of the row's update chain, which READ COMMITTED's re-check
//! follows (13.2.1, "the second updater ... will attempt to apply its
//! operation to the updated version of the row"), and a write to it from
//! REPEATABLE READ fails with 40001. `INSERT ... ON CONFLICT (k) DO
//! UPDATE` updates the newest version of the conflicting row under READ
//! COMMITTED ("even if that row is not visible to the command"), and
//! under REPEATABLE READ fails with 40001 where that row is not the one
//! its snapshot shows; `ON CONFLICT DO NOTHING` inserts nothing where a
//! row has the key (manual, INSERT: "ON CONFLICT Clause"). Citus takes
//! none of these forms: its distribution column cannot change, and its
//! unique indexes must hold it.

use crate::connection::PgConnection;
use crate::PostgresProvider;
use lancet_core::txn::{
    Conflict, Deviation, Form, IndexV, IsolationLevel, KnobScope, LevelRules, ReadView,
    SavepointLocks, SubqueryRead, Transactions, TxnKnob, WriteRule,
};
use lancet_core::{Connection, DbError, OwnedDatabase};
use std::time::Duration;

/// The manual's chapter the rules come from.
const SOURCE: &str = "PostgreSQL manual, 13.2 Transaction Isolation";

/// A session of the transaction oracle may wait this long for a lock
/// before its statement fails (55P03): longer than the oracle waits for
/// a statement that must return, shorter than the statement time limit.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(8);
/// The statement time limit of those sessions.
const SESSION_LIMIT: Duration = Duration::from_secs(20);

/// PostgreSQL's rules for `level`.
pub fn rules(level: IsolationLevel) -> LevelRules {
    let (read_view, writes) = match level {
        // "In PostgreSQL's READ UNCOMMITTED mode behaves like READ
        // COMMITTED" (13.2): no dirty reads.
        IsolationLevel::ReadUncommitted | IsolationLevel::ReadCommitted => {
            (ReadView::Statement, WriteRule::SnapshotRowsNewestVersions)
        }
        IsolationLevel::RepeatableRead | IsolationLevel::Serializable => {
            (ReadView::FirstStatement, WriteRule::SnapshotOrAbort)
        }
    };
    let documented = LevelRules {
        // "if a lock is acquired after establishing a savepoint, the lock
        // is released immediately if the savepoint is rolled back to"
        // (13.3 Explicit Locking; seen on 18.6: another session's NOWAIT
        // then locks the row).
        savepoint_locks: SavepointLocks::Released,
        write_subquery: SubqueryRead::View,
        ..LevelRules::new(level, read_view, writes, false, SOURCE)
    };
    let deviations = if writes == WriteRule::SnapshotRowsNewestVersions {
        vec![Deviation::new(
            "read-committed-recheck",
            "an UPDATE or DELETE that waited re-checks only the rows of its statement snapshot on \
             their newest versions, so it skips rows that began to match meanwhile (PostgreSQL \
             manual 13.2.1: \"an updating command ... can see an inconsistent snapshot\")",
            LevelRules {
                writes: WriteRule::NewestRows,
                rows_open_after_wait: false,
                ..documented.clone()
            },
        )]
    } else {
        Vec::new()
    };
    LevelRules {
        deviations,
        ..documented
    }
}

/// READ COMMITTED as Citus runs it on a distributed table: a read is one
/// snapshot per worker, taken when the shard query starts, which for a
/// statement that never waits is the statement's start. A multi-shard
/// UPDATE or DELETE first waits on the coordinator for the shard locks
/// another multi-shard write holds, then runs on the workers with
/// snapshots taken after that wait: it changes the rows that match then,
/// not those of the statement's start as PostgreSQL's re-check does
/// (seen with lancet: `DELETE ... WHERE v > 6` waiting for `UPDATE ...
/// SET v = v + 5` deletes the rows the update moved above 6). Those shard
/// locks make writes wait beyond the rows they change.
pub fn citus_rules(level: IsolationLevel) -> LevelRules {
    let documented = LevelRules::new(
        level,
        ReadView::Statement,
        WriteRule::NewestRows,
        true,
        "PostgreSQL manual 13.2.1, and Citus's execution of multi-shard modifications (shard locks on the coordinator, snapshots on the workers)",
    );
    LevelRules {
        deviations: vec![Deviation::new(
            "skips-rows-after-wait",
            "a multi-shard write that waited runs on each worker with a snapshot of its own, so \
             rows that began to match while it waited may be met or not",
            LevelRules {
                rows_open_after_wait: false,
                ..documented.clone()
            },
        )],
        ..documented
    }
}

/// The planner switches that choose how a statement finds its rows
/// (manual 19.7.1): a write or locking read that finds a row by a
/// sequential scan, an index scan or a bitmap heap scan must lock and
/// re-check it alike (13.2.1), so each path is drawn.
pub fn planner_knobs() -> Vec<TxnKnob> {
    ["enable_seqscan", "enable_indexscan", "enable_bitmapscan"]
        .into_iter()
        .map(|name| {
            TxnKnob::new(
                name,
                &["on", "off"],
                KnobScope::Session,
                "which scan finds a statement's rows (PostgreSQL manual 19.7.1, Planner Method Configuration)",
            )
        })
        .collect()
}

/// SQLSTATEs of the conflicts a level allows.
pub fn conflict(error: &DbError) -> Option<Conflict> {
    match error.code.as_deref()? {
        "40001" => Some(Conflict::Serialization),
        "40P01" => Some(Conflict::Deadlock),
        "55P03" => Some(Conflict::LockTimeout),
        "23505" => Some(Conflict::DuplicateKey),
        _ => None,
    }
}

impl Transactions for PostgresProvider {
    fn levels(&self) -> Vec<LevelRules> {
        self.flavor
            .transaction_levels()
            .into_iter()
            .map(|level| self.flavor.transaction_rules(level))
            .collect()
    }

    fn placements(&self) -> Vec<&'static str> {
        self.flavor.transaction_placements()
    }

    fn knobs(&self) -> Vec<TxnKnob> {
        self.flavor.transaction_knobs()
    }

    fn locking_reads(&self) -> lancet_core::txn::LockingReads {
        self.flavor.transaction_locking_reads()
    }

    fn more_statements(&self) -> lancet_core::txn::MoreStatements {
        self.flavor.transaction_more_statements()
    }

    fn begin(&self, level: IsolationLevel, _mode: Option<&str>) -> Vec<String> {
        vec![format!("BEGIN ISOLATION LEVEL {}", level.sql())]
    }

    fn create_table(&self, name: &str, index: IndexV, placement: Option<&str>) -> Vec<String> {
        let mut v = lancet_core::txn::table_statements(name, index, "integer", "");
        v.extend(self.flavor.transaction_table(name, placement));
        v
    }

    fn spelling(&self, form: Form) -> Option<String> {
        if !self.flavor.transaction_wider_forms() {
            return None;
        }
        match form {
            Form::UpsertAdd => Some(
                "INSERT INTO {table} AS t (k, v) VALUES ({k}, {v}) ON CONFLICT (k) DO UPDATE SET v = t.v + {c}".into(),
            ),
            Form::InsertIgnore => {
                Some("INSERT INTO {table} (k, v) VALUES ({k}, {v}) ON CONFLICT DO NOTHING".into())
            }
            Form::UpdateIgnore => None,
        }
    }

    fn key_updates(&self) -> bool {
        self.flavor.transaction_wider_forms()
    }

    fn unique_v(&self) -> bool {
        self.flavor.transaction_wider_forms()
    }

    fn session_setup(&self) -> Vec<String> {
        let mut v = self.flavor.session_setup();
        v.push(format!("SET lock_timeout = '{}s'", LOCK_TIMEOUT.as_secs()));
        v
    }

    fn conflict(&self, error: &DbError) -> Option<Conflict> {
        conflict(error)
    }

    fn open_session(&self, db: &OwnedDatabase) -> anyhow::Result<Box<dyn Connection>> {
        crate::ensure_ours(&db.name)?;
        let mut conn =
            PgConnection::open(&self.url.config_for(&db.name), SESSION_LIMIT).map_err(|e| {
                anyhow::Error::new(e).context(format!("cannot open a session on {}", db.name))
            })?;
        conn.fail_on_warnings(self.flavor.failing_warnings());
        Ok(Box::new(conn))
    }

    fn client_command(&self) -> String {
        format!("psql -X -d lancet_repro (on {})", self.display_name())
    }

    fn session_id_sql(&self) -> Option<&'static str> {
        self.flavor
            .shows_lock_waits()
            .then_some("SELECT pg_backend_pid()")
    }

    fn lock_wait_sql(&self, id: &str) -> Option<String> {
        let pid: u32 = id.parse().ok()?;
        self.flavor.shows_lock_waits().then(|| {
            format!(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = {pid} AND wait_event_type = 'Lock'"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicts_by_sqlstate_only() {
        let e = |code: &str| DbError::statement(Some(code.into()), "x");
        assert_eq!(conflict(&e("40001")), Some(Conflict::Serialization));
        assert_eq!(conflict(&e("40P01")), Some(Conflict::Deadlock));
        assert_eq!(conflict(&e("55P03")), Some(Conflict::LockTimeout));
        assert_eq!(conflict(&e("23505")), Some(Conflict::DuplicateKey));
        assert_eq!(conflict(&e("23502")), None);
        assert_eq!(
            conflict(&DbError::statement(None, "could not serialize access")),
            None
        );
    }
}
