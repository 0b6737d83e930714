//! What an extension of PostgreSQL (Citus) changes in the provider: a
//! [`Flavor`] is called after each CREATE TABLE, switches generator
//! features off ([`Features`]), and adds expected errors, knobs and its
//! transactions' rules. Plain PostgreSQL is [`Vanilla`].

use crate::connection::PgConnection;
use crate::{schema, types, ServerUrl};
use lancet_core::{ExecError, Knob, Rng, Session};
use schema::{PgTable, Placement};

/// Which generator features an extension supports.
#[derive(Clone, Copy, Debug)]
pub struct Features {
    pub inheritance: bool,
    pub partitioning: bool,
    pub views: bool,
    /// PostgreSQL 18's virtual generated columns, where the server has them.
    pub virtual_generated_columns: bool,
}

impl Default for Features {
    fn default() -> Self {
        Features {
            inheritance: true,
            partitioning: true,
            views: true,
            virtual_generated_columns: true,
        }
    }
}

/// What a PostgreSQL extension (Citus) changes; plain PostgreSQL is
/// [`Vanilla`]. Every method has the plain default.
pub trait Flavor: Send + Sync {
    /// The `--dbms` name.
    fn name(&self) -> &'static str;
    fn features(&self) -> Features {
        Features::default()
    }
    /// Checks at start-up, on the database the URL names, that the server
    /// is what this flavor needs, and learns what it must know of it
    /// (Citus: a coordinator with active workers, a superuser role).
    fn connect(&mut self, _admin: &mut PgConnection, _url: &ServerUrl) -> anyhow::Result<()> {
        Ok(())
    }
    /// Other servers that each lancet database must exist on too, created
    /// before the URL's server and dropped after it (Citus: the workers).
    fn other_nodes(&self) -> Vec<ServerUrl> {
        Vec::new()
    }
    /// Statements run in each new database on the other nodes.
    fn node_setup(&self) -> Vec<String> {
        Vec::new()
    }
    /// Statements run in each new database on the URL's server before
    /// anything else (`CREATE EXTENSION citus`, registering the workers).
    fn database_setup(&self) -> Vec<String> {
        Vec::new()
    }
    /// Session settings at the start of every generated database, through
    /// the session (so reproducers carry them).
    fn session_setup(&self) -> Vec<String> {
        Vec::new()
    }
    /// Prefixes of warnings by which the server says that a query's
    /// result is wrong; such a query fails with the warning (its expected
    /// error rule says why). [`Flavor::session_setup`] must let warnings
    /// through.
    fn failing_warnings(&self) -> &'static [&'static str] {
        &[]
    }
    /// Where a new table goes, chosen before its DDL is written (Citus:
    /// unique keys must include the distribution column). `first_column`
    /// is the table's first own column; the type returned, if any, is the
    /// one that column must have (to be co-located with another table).
    fn place(
        &self,
        _rng: &mut Rng,
        _schema: &schema::PgSchema,
        _first_column: &str,
        _partitioned: bool,
        _inherits: bool,
    ) -> (Placement, Option<types::PgType>) {
        (Placement::Plain, None)
    }
    /// Runs after a table was created: puts it where `table.placement`
    /// says (Citus: `create_distributed_table`) and returns where it is
    /// (plain, if the DBMS refused with an expected error).
    fn after_create_table(
        &self,
        _session: &mut Session,
        _schema: &schema::PgSchema,
        table: &PgTable,
    ) -> Result<Placement, ExecError> {
        Ok(table.placement.clone())
    }
    /// Whether every table gets a plain twin in [`lancet_core::TWIN_SCHEMA`]
    /// (the dist-vs-local oracle compares the two).
    fn keeps_twins(&self) -> bool {
        false
    }
    /// Expected-error rules (TOML) added to PostgreSQL's, and where they came from.
    fn expected_errors(&self) -> Option<(&'static str, &'static str)> {
        None
    }
    /// Knobs added to PostgreSQL's planner switches.
    fn knobs(&self) -> Vec<Knob> {
        Vec::new()
    }
    /// Whether lancet's databases are dropped `WITH (FORCE)` at once,
    /// because the extension keeps a session in each (Citus's maintenance
    /// daemon). PostgreSQL's plain DROP would wait 5 s for it in vain.
    fn drop_with_force(&self) -> bool {
        false
    }
    /// How a maintainer runs a reproducer with psql, if not in a fresh
    /// database of its own (`{file}` stands for the file).
    fn client_command(&self, _url: &ServerUrl) -> Option<String> {
        None
    }
    /// The isolation levels the transaction oracle checks here.
    fn transaction_levels(&self) -> Vec<lancet_core::txn::IsolationLevel> {
        use lancet_core::txn::IsolationLevel::*;
        vec![ReadUncommitted, ReadCommitted, RepeatableRead, Serializable]
    }
    /// The rules the transaction oracle checks `level` against: the
    /// manual's for PostgreSQL ([`crate::txn::rules`]).
    fn transaction_rules(
        &self,
        level: lancet_core::txn::IsolationLevel,
    ) -> lancet_core::txn::LevelRules {
        crate::txn::rules(level)
    }
    /// Which `SELECT ... FOR UPDATE` steps the transaction oracle's
    /// schedules hold.
    fn transaction_locking_reads(&self) -> lancet_core::txn::LockingReads {
        lancet_core::txn::LockingReads::Any
    }
    /// The settings the transaction oracle turns per schedule: the
    /// planner switches that decide whether a write or locking read finds
    /// its rows by a sequential scan, an index scan or a bitmap scan
    /// (manual 19.7.1 "Planner Method Configuration"), so that each
    /// access path's locking is checked. None of PostgreSQL's other
    /// session settings changes what a level makes visible or locks
    /// (chapter 13), so none changes the rules.
    fn transaction_knobs(&self) -> Vec<lancet_core::txn::TxnKnob> {
        crate::txn::planner_knobs()
    }

    /// The statement kinds beyond `FOR UPDATE` the transaction oracle's
    /// schedules hold: PostgreSQL's `FOR SHARE`, `NOWAIT`, `SKIP LOCKED`
    /// (9.5+, the SELECT page's locking clause), savepoints and subqueries;
    /// none on Citus, which runs them on one shard at best.
    fn transaction_more_statements(&self) -> lancet_core::txn::MoreStatements {
        lancet_core::txn::MoreStatements {
            share: Some(lancet_core::txn::ShareLock::ForShare),
            nowait: true,
            skip_locked: true,
            savepoints: true,
            reads_before_rollback_to: true,
            subqueries: true,
        }
    }
    /// The ways the transaction oracle's table may be placed (Citus:
    /// distributed or reference); none for PostgreSQL.
    fn transaction_placements(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// Statements after the transaction oracle's table is created, to
    /// place it as `placement` (Citus: distribute it, or make it a
    /// reference table).
    fn transaction_table(&self, _name: &str, _placement: Option<&str>) -> Vec<String> {
        Vec::new()
    }
    /// Whether the transaction oracle's schedules may move rows to new
    /// keys, have a UNIQUE index on `v` and hold upserts (Citus: no, its
    /// distribution column cannot change and its unique indexes must
    /// hold it).
    fn transaction_wider_forms(&self) -> bool {
        true
    }
    /// Whether a session that waits for a row lock shows it in its own
    /// `pg_stat_activity` row (`wait_event_type = 'Lock'`). Not on Citus,
    /// whose coordinator session waits for a worker instead.
    fn shows_lock_waits(&self) -> bool {
        true
    }
}

/// Plain PostgreSQL.
pub struct Vanilla;

impl Flavor for Vanilla {
    fn name(&self) -> &'static str {
        "postgres"
    }
}
