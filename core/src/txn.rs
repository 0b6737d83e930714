//! The seam between the transaction oracle and a provider: how a DBMS
//! opens more sessions on one database, starts and ends transactions, and
//! which rules each of its isolation levels follows, as its documentation
//! states them. The oracle (`lancet_oracles::txn`) models a schedule with
//! these rules and never names a DBMS; a provider offers the capability
//! through [`crate::Provider::transactions`].

use crate::connection::{Connection, DbError};
use crate::database::OwnedDatabase;
use serde::{Deserialize, Serialize};

/// An SQL isolation level, by its standard name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IsolationLevel {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Serializable,
}

impl IsolationLevel {
    /// The level as SQL spells it.
    pub fn sql(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
        }
    }
}

/// Which committed rows a plain (non-locking) read of a transaction sees,
/// besides the transaction's own writes, which it always sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReadView {
    /// What was committed when the statement started (READ COMMITTED).
    Statement,
    /// What was committed when the transaction's first statement after
    /// BEGIN started (PostgreSQL's REPEATABLE READ and SERIALIZABLE).
    FirstStatement,
    /// What was committed when the transaction began (`START TRANSACTION
    /// WITH CONSISTENT SNAPSHOT`).
    Begin,
    /// The newest committed rows, read with shared locks that wait for
    /// writers (InnoDB's SERIALIZABLE turns plain SELECTs into locking
    /// reads).
    LockingLatest,
    /// The newest version of each row, committed or not (InnoDB's READ
    /// UNCOMMITTED, a dirty read). A row another open transaction has
    /// written may read as any of its versions ("a possible earlier
    /// version of a row might be used"), so only the other rows are
    /// checked: they must read as committed.
    Uncommitted,
}

/// Which version of a row an UPDATE or DELETE changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WriteRule {
    /// The newest committed version: PostgreSQL's READ COMMITTED takes the
    /// rows its statement snapshot shows and re-checks the condition on
    /// their newest versions after waiting for a writer ("EvalPlanQual").
    SnapshotRowsNewestVersions,
    /// The newest committed version of every row the condition matches
    /// now (InnoDB's locking reads, at every level): a write may change
    /// rows that the transaction's reads cannot see.
    NewestRows,
    /// The version in the transaction's snapshot; a row that a concurrent
    /// transaction changed and committed after the snapshot fails the
    /// statement with a serialization error (first updater wins).
    SnapshotOrAbort,
}

/// How one isolation level of one DBMS behaves, as its documentation
/// states it; the model follows these rules and nothing else.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelRules {
    pub level: IsolationLevel,
    pub read_view: ReadView,
    pub writes: WriteRule,
    /// The committed transactions must be equivalent to some serial order
    /// of them (their reads and the final state).
    pub serializable: bool,
    /// Writes take row locks beyond the rows they change (InnoDB's
    /// next-key and gap locks): a write the model does not see conflict
    /// may still wait, so only waits the model does see are checked.
    pub extra_write_locks: bool,
    /// Where the rules come from: the page of the DBMS's documentation.
    pub source: String,
    /// An UPDATE that sets a row to the value it has is no change: it
    /// makes no new version, so the transaction's own reads go on showing
    /// the row as their snapshot has it (InnoDB: "If you set a column to
    /// the value it currently has, MySQL notices this and does not update
    /// it"), and first updater wins only over a commit that changed the
    /// value (SQLite's conflicts are on pages, not row versions).
    #[serde(default)]
    pub same_value_is_no_change: bool,
    /// A named way of starting transactions at this level, where a DBMS
    /// has several with other rules (SQLite: `immediate`, `BEGIN
    /// IMMEDIATE`); `None` for the level's plain BEGIN. A schedule runs
    /// all its sessions in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// BEGIN takes the database's one write lock: a BEGIN while another
    /// such transaction is open must fail at once (SQLite's `BEGIN
    /// IMMEDIATE` with no busy timeout: SQLITE_BUSY).
    #[serde(default)]
    pub exclusive_begin: bool,
    /// A write that waited for a lock may skip rows that began to match
    /// while it waited, or that a commit changed under its index scan
    /// (InnoDB's locking reads: which rows the scan meets depends on
    /// where it was): such rows are left unchecked. Off, the write acts
    /// on exactly the rows that match when it runs after its wait.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub rows_open_after_wait: bool,
    /// Where this level departs from the standard's as the DBMS documents
    /// it: each deviation with the rules without it. lancet allows and
    /// counts them; `--txn-strict` reports them as findings of their own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<Deviation>,
    /// What `ROLLBACK TO SAVEPOINT` does to the row locks taken after
    /// the savepoint.
    #[serde(default)]
    pub savepoint_locks: SavepointLocks,
    /// Which committed rows the subquery in a write's WHERE reads.
    #[serde(default)]
    pub write_subquery: SubqueryRead,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

/// A documented departure of one DBMS's level from the standard level:
/// InnoDB's REPEATABLE READ writes that read the newest rows, rows an
/// InnoDB write skips after a wait, PostgreSQL's READ COMMITTED re-check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Deviation {
    /// Its name in summaries and signatures (`write-sees-newer`).
    pub name: String,
    /// What the DBMS does instead, and the page that says so.
    pub why: String,
    /// The level's rules without it: what the standard asks.
    pub standard: Box<LevelRules>,
}

impl Deviation {
    /// The deviation `name` of `rules`, whose standard is `standard`.
    pub fn new(name: &str, why: &str, standard: LevelRules) -> Deviation {
        Deviation {
            name: name.to_string(),
            why: why.to_string(),
            standard: Box::new(LevelRules {
                deviations: Vec::new(),
                ..standard
            }),
        }
    }
}

/// What `ROLLBACK TO SAVEPOINT` does to the row locks a transaction took
/// after the savepoint (its writes there are undone on every DBMS).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SavepointLocks {
    /// They go (PostgreSQL: the subtransaction's locks are released
    /// with it, manual "SAVEPOINT" and "ROLLBACK TO SAVEPOINT").
    Released,
    /// The documentation leaves it open (MySQL's manual says InnoDB keeps
    /// the row locks "stored in memory" but not those of inserted rows;
    /// MariaDB 10.11 was seen releasing them): each may be held, so waits
    /// for them are "may".
    #[default]
    Maybe,
}

/// Which committed rows a subquery over another table reads inside an
/// UPDATE or DELETE (`WHERE k IN (SELECT ...)`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SubqueryRead {
    /// What the statement's plain read would see (PostgreSQL: the
    /// statement's snapshot; its READ COMMITTED re-check "does not see
    /// effects of those commands on other rows", 13.2.1; SQLite's one
    /// snapshot).
    #[default]
    View,
    /// The plain read's view or the newest committed rows, locked as it
    /// reads them, at any moment while the statement runs (InnoDB: "InnoDB
    /// sets shared next-key locks on rows from table s" for `UPDATE t ...
    /// WHERE col IN (SELECT ... FROM s ...)`, MySQL manual 17.7.3; it
    /// says nothing of DELETE, and INSERT ... SELECT reads consistently at
    /// READ COMMITTED): a row the views disagree on is left open.
    ViewOrNewest,
}

impl LevelRules {
    /// The rules of `level`: committed transactions must be serializable
    /// exactly at SERIALIZABLE.
    pub fn new(
        level: IsolationLevel,
        read_view: ReadView,
        writes: WriteRule,
        extra_write_locks: bool,
        source: &str,
    ) -> LevelRules {
        LevelRules {
            level,
            read_view,
            writes,
            serializable: level == IsolationLevel::Serializable,
            extra_write_locks,
            source: source.to_string(),
            same_value_is_no_change: false,
            mode: None,
            exclusive_begin: false,
            rows_open_after_wait: true,
            deviations: Vec::new(),
            savepoint_locks: SavepointLocks::Maybe,
            write_subquery: SubqueryRead::View,
        }
    }

    /// The level as people name it, with its mode: `SERIALIZABLE`,
    /// `SERIALIZABLE (immediate)`. Signatures and the summary use it.
    pub fn label(&self) -> String {
        level_label(self.level, self.mode.as_deref())
    }
}

/// A level with its mode as people name it: `SERIALIZABLE (immediate)`.
pub fn level_label(level: IsolationLevel, mode: Option<&str>) -> String {
    match mode {
        Some(mode) => format!("{} ({mode})", level.sql()),
        None => level.sql().to_string(),
    }
}

/// Where a DBMS takes `SELECT ... FOR UPDATE` in the transaction
/// oracle's schedules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockingReads {
    None,
    /// Only over one key, `WHERE k = c` (Citus runs FOR UPDATE on one
    /// shard only: "could not run distributed query with FOR UPDATE/SHARE
    /// commands" otherwise). Over one key every write rule finds the same
    /// row: Citus's keys never change (no [`Transactions::key_updates`]),
    /// and inserted keys are new.
    KeyEquality,
    /// Over every condition.
    Any,
}

/// What a DBMS's locking reads take besides `FOR UPDATE`, and the other
/// statement kinds of schedules it offers: each is drawn only where it is
/// offered (old SQLite releases, Citus's one-shard locking reads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MoreStatements {
    /// How it spells a shared locking read; `None`: it has none.
    pub share: Option<ShareLock>,
    /// `NOWAIT` after a locking read: it fails at once where it would
    /// wait (PostgreSQL 9.5+, MariaDB 10.6+, MySQL 8).
    pub nowait: bool,
    /// `SKIP LOCKED` after a locking read: it leaves out the rows others
    /// lock (same releases).
    pub skip_locked: bool,
    /// `SAVEPOINT`, `ROLLBACK TO SAVEPOINT` and `RELEASE SAVEPOINT`.
    pub savepoints: bool,
    /// Reads and locking reads may come between a SAVEPOINT and the
    /// ROLLBACK TO it; false steers clear of a known bug that shows in
    /// nearly every run otherwise (MariaDB releases the locks they took,
    /// `docs/isolation-ground-truth.md`).
    pub reads_before_rollback_to: bool,
    /// Reads and writes whose WHERE has a subquery over another table of
    /// the schedule.
    pub subqueries: bool,
}

/// How a DBMS spells a shared locking read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShareLock {
    /// `FOR SHARE` (PostgreSQL, MySQL 8).
    ForShare,
    /// `LOCK IN SHARE MODE` (MariaDB, which has no `FOR SHARE` in 10.11:
    /// error 1064).
    LockInShareMode,
}

/// Why a DBMS refused a statement of a transaction in a way its
/// isolation level allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Conflict {
    /// A serialization failure (SQLSTATE 40001; InnoDB's "record has
    /// changed since last read").
    Serialization,
    /// The DBMS broke a deadlock by failing this statement.
    Deadlock,
    /// The statement waited for a lock longer than the lock timeout.
    LockTimeout,
    /// A duplicate key in the primary key or a UNIQUE index (MySQL 1062,
    /// PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_UNIQUE/PRIMARYKEY):
    /// allowed where some version of another row may hold the key.
    DuplicateKey,
}

/// What a transaction's end does to it, per DBMS: after a conflict
/// PostgreSQL keeps the transaction open but failed until ROLLBACK, and
/// InnoDB rolls a deadlock victim back at once. lancet sends ROLLBACK in
/// both cases, which both accept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransactionEnd {
    Commit,
    Rollback,
}

/// The index the oracle's table has on `v`: none, a plain one, or a
/// UNIQUE one (whose writes may fail on a duplicate value), on a column
/// `NOT NULL` or, for `UniqueNullable`, one that may hold NULLs (which
/// never collide: PostgreSQL's default `NULLS DISTINCT`, InnoDB's and
/// SQLite's UNIQUE indexes alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexV {
    None,
    Plain,
    Unique,
    UniqueNullable,
}

impl IndexV {
    /// The shape a schedule's flags name (`unique` only counts with an
    /// index, `nullable` only with `unique`).
    pub fn of(index_v: bool, unique: bool, nullable: bool) -> IndexV {
        match (index_v, unique, nullable) {
            (false, ..) => IndexV::None,
            (true, false, _) => IndexV::Plain,
            (true, true, false) => IndexV::Unique,
            (true, true, true) => IndexV::UniqueNullable,
        }
    }

    /// Whether writes may fail on a duplicate value of `v`.
    pub fn is_unique(self) -> bool {
        matches!(self, IndexV::Unique | IndexV::UniqueNullable)
    }
}

/// The statements that make the oracle's table `name` with the DBMS's
/// spelling of an integer (`integer`, `INT`) and table options after the
/// column list (InnoDB's `ENGINE=InnoDB`), and the index on `v` as
/// `index`: what every [`Transactions::create_table`] starts from.
pub fn table_statements(name: &str, index: IndexV, integer: &str, options: &str) -> Vec<String> {
    let not_null = match index {
        IndexV::UniqueNullable => "",
        _ => " NOT NULL",
    };
    let mut v = vec![format!(
        "CREATE TABLE {name} (k {integer} PRIMARY KEY, v {integer}{not_null}){options}"
    )];
    match index {
        IndexV::None => {}
        IndexV::Plain => v.push(format!("CREATE INDEX {name}_v ON {name} (v)")),
        IndexV::Unique | IndexV::UniqueNullable => {
            v.push(format!("CREATE UNIQUE INDEX {name}_v ON {name} (v)"))
        }
    }
    v
}

/// Where a knob's value holds: each session sets it before each
/// schedule, or the database has it for all its sessions (SQLite's
/// journal mode, which a connection cannot leave WAL for while others
/// use the file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KnobScope {
    Session,
    Database,
}

/// A setting of the DBMS that changes how its transactions behave, or
/// which access path a write or read takes, by the DBMS's documentation:
/// lancet draws one of its values for each schedule (for each database,
/// where its scope is the database), the rules follow the value
/// ([`Transactions::levels_under`]), and a finding names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TxnKnob {
    /// The setting's name as the DBMS spells it (`innodb_snapshot_isolation`).
    pub name: String,
    /// The values lancet draws from, as the DBMS spells them.
    pub values: Vec<String>,
    pub scope: KnobScope,
    /// Some of its values change a level's documented rules
    /// ([`Transactions::levels_under`]): a finding's signature names its
    /// value, so that what shows only under one value groups apart.
    pub changes_rules: bool,
    /// What the setting changes, and the page that says so.
    pub why: String,
}

impl TxnKnob {
    /// A knob of `scope` with its `values` and where its effect is
    /// documented.
    pub fn new(name: &str, values: &[&str], scope: KnobScope, why: &str) -> TxnKnob {
        TxnKnob {
            name: name.to_string(),
            values: values.iter().map(|v| v.to_string()).collect(),
            scope,
            changes_rules: false,
            why: why.to_string(),
        }
    }

    /// The same knob, whose values change the levels' rules.
    pub fn changing_rules(self) -> TxnKnob {
        TxnKnob {
            changes_rules: true,
            ..self
        }
    }
}

/// The knobs' values a schedule runs under, by knob name; empty where a
/// DBMS has no knobs (and in records written before knobs).
pub type Settings = std::collections::BTreeMap<String, String>;

/// Settings as people read them: `innodb_snapshot_isolation=ON,
/// enable_seqscan=off`; empty for none.
pub fn settings_label(settings: &Settings) -> String {
    settings
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A statement form of the oracle's schedules that DBMSs spell each
/// their own way, or lack: the provider gives a template
/// ([`Transactions::spelling`]) in which `{table}`, `{k}`, `{v}`, `{c}`,
/// `{set}` and `{where}` stand for the table, the row's key and value,
/// the amount added, the SET list and the WHERE clause (with `WHERE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// Insert `(k, v)`, or add `c` to `v` of the row that has key `k`
    /// (`ON DUPLICATE KEY UPDATE`, `ON CONFLICT (k) DO UPDATE`).
    UpsertAdd,
    /// Insert `(k, v)` unless a row has key `k` (`INSERT IGNORE`, `ON
    /// CONFLICT DO NOTHING`, `INSERT OR IGNORE`).
    InsertIgnore,
    /// An UPDATE that skips the rows whose new values would be
    /// duplicates (`UPDATE IGNORE`, MariaDB and MySQL).
    UpdateIgnore,
}

/// A DBMS's transactions, as the transaction oracle uses them.
pub trait Transactions: Send + Sync {
    /// The isolation levels lancet models for this DBMS build, with their
    /// rules under the server's settings as they are.
    fn levels(&self) -> Vec<LevelRules>;
    /// The settings lancet turns for this DBMS build (none by default).
    fn knobs(&self) -> Vec<TxnKnob> {
        Vec::new()
    }
    /// The levels' rules under `settings` (values of [`Transactions::knobs`];
    /// a knob not named keeps the server's value): a setting that changes
    /// a documented rule changes them here.
    fn levels_under(&self, _settings: &Settings) -> Vec<LevelRules> {
        self.levels()
    }
    /// The statement that gives knob `name` the value `value` on a
    /// session: sent before each BEGIN for a session's knob, once when a
    /// session opens for a database's ([`KnobScope`]).
    fn setting_sql(&self, name: &str, value: &str) -> String {
        format!("SET {name} = {value}")
    }
    /// The statements that start a transaction at `level`, in `mode`
    /// (one of its [`LevelRules::mode`]s; `None`: the plain BEGIN).
    fn begin(&self, level: IsolationLevel, mode: Option<&str>) -> Vec<String>;
    /// The statement that ends one.
    fn end(&self, end: TransactionEnd) -> String {
        match end {
            TransactionEnd::Commit => "COMMIT".into(),
            TransactionEnd::Rollback => "ROLLBACK".into(),
        }
    }
    /// The kinds of table the oracle's table may be, by name, where a DBMS
    /// places tables in more than one way (Citus: `distributed`, sharded by
    /// `k` over the workers; `reference`, a copy on every node); empty
    /// where there is one kind. Each schedule draws one.
    fn placements(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// Which `SELECT ... FOR UPDATE` steps schedules may hold: a read
    /// that locks the rows it returns, as PostgreSQL and InnoDB spell it.
    /// Such a read sees what the level's writes see ([`WriteRule`]) and
    /// holds its locks to the transaction's end. None by default (SQLite
    /// has no row locks).
    fn locking_reads(&self) -> LockingReads {
        LockingReads::None
    }
    /// The statement kinds beyond reads, writes and `FOR UPDATE` that
    /// schedules may hold (none by default).
    fn more_statements(&self) -> MoreStatements {
        MoreStatements::default()
    }
    /// Statements that create the oracle's table `name` (integer key `k`,
    /// integer value `v`), with the index on `v` `index`, in this
    /// DBMS's storage (InnoDB) and as `placement` (one of
    /// [`Transactions::placements`], `None` where there are none).
    fn create_table(&self, name: &str, index: IndexV, placement: Option<&str>) -> Vec<String>;
    /// How this DBMS spells `form`, as a template (see [`Form`]); `None`
    /// where the DBMS or its release lacks it, and schedules never hold it.
    fn spelling(&self, _form: Form) -> Option<String> {
        None
    }
    /// Whether schedules may move rows to a new key (`UPDATE ... SET k =
    /// ...`): not where the key places the row (Citus's distribution
    /// column cannot change).
    fn key_updates(&self) -> bool {
        false
    }
    /// Whether the table may have a UNIQUE index on `v` (not where every
    /// unique index must hold the distribution column, Citus).
    fn unique_v(&self) -> bool {
        false
    }
    /// Statements run on every session before its transactions (lock
    /// timeouts).
    fn session_setup(&self) -> Vec<String> {
        Vec::new()
    }
    /// A conflict the level allows, by the error's code; `None` for any
    /// other error.
    fn conflict(&self, error: &DbError) -> Option<Conflict>;
    /// One more session on `db`, a database this run created.
    fn open_session(&self, db: &OwnedDatabase) -> anyhow::Result<Box<dyn Connection>>;
    /// How a user runs one session's script with the DBMS's own client;
    /// `{file}` stands for the script.
    fn client_command(&self) -> String;
    /// The sessions on `db` are closed: frees what [`Transactions::open_session`]
    /// made beside the database (an embedded DBMS's file).
    fn release(&self, _db: &OwnedDatabase) {}
    /// A query a session runs to name its server connection (its backend
    /// id), so that lancet can ask the server whether it waits for a lock
    /// ([`Transactions::lock_wait_sql`]); `None` where it cannot.
    fn session_id_sql(&self) -> Option<&'static str> {
        None
    }
    /// A query, run on another connection, whose first value is 1 when the
    /// session named `id` waits for a row lock and 0 when it does not: a
    /// statement not back in time may not have started (a loaded
    /// machine), and is then no wait, whose snapshot is not yet taken.
    fn lock_wait_sql(&self, _id: &str) -> Option<String> {
        None
    }
}
