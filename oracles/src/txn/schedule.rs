//! A schedule: a table of integer rows, several sessions each running one
//! transaction, and the order lancet sends their steps in. Drawn from a
//! database's RNG; printed as SQL every DBMS of lancet reads alike.

pub use super::clauses::{Lock, LockMode, LockWait};
pub use super::conditions::{table_of, Bound, Pred, Sub, KEYS_PER_TABLE};
use super::forms::{Forms, Spellings, MOVE};
use lancet_core::txn::{Form, IndexV, IsolationLevel, LockingReads, MoreStatements, Settings};
use lancet_core::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// The new value an UPDATE gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Assign {
    Add(i64),
    Set(i64),
}

impl Assign {
    /// The value it gives a row whose value is `v` (`NULL + c` is NULL).
    pub fn apply(self, v: i64) -> i64 {
        match self {
            Assign::Add(c) => add(v, c),
            Assign::Set(c) => c,
        }
    }

    /// The SET list.
    fn sql(self) -> String {
        match self {
            Assign::Add(c) => format!("v = v + {c}"),
            Assign::Set(c) => format!("v = {}", value_sql(c)),
        }
    }
}

/// The model's NULL in `v`, on a table whose UNIQUE column may hold NULLs
/// ([`IndexV::UniqueNullable`]): below every value drawn, so that every
/// condition on `v` (`=`, `>`, `BETWEEN`, all of them comparisons that
/// are not true of NULL) leaves its row out, as SQL's do.
pub const NULL_V: i64 = i64::MIN;

/// `v + c`, NULL where `v` is.
pub fn add(v: i64, c: i64) -> i64 {
    if v == NULL_V {
        NULL_V
    } else {
        v + c
    }
}

/// A value as SQL: `NULL` for [`NULL_V`].
pub fn value_sql(v: i64) -> String {
    if v == NULL_V {
        "NULL".to_string()
    } else {
        v.to_string()
    }
}

/// One statement of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// A plain (consistent, non-locking) read.
    Read(Pred),
    /// `SELECT ... FOR UPDATE` (or `FOR SHARE`, with `NOWAIT` or `SKIP
    /// LOCKED`): a read that locks the rows it returns, and reads them as
    /// the level's writes do (see `Transactions::locking_reads`).
    LockingRead(Pred, Lock),
    Update(Pred, Assign),
    /// A key no other row of the schedule has, so that no insert fails on
    /// a duplicate.
    Insert(i64, i64),
    Delete(Pred),
    /// `UPDATE ... SET k = <partner key>`: each row it picks moves to the
    /// other key of its pair ([`super::forms::partner`], around the
    /// pivot `base + 500` this holds), where DBMSs allow it.
    Move(Pred, i64),
    /// Insert `(k, v)`, or add `c` to `v` of the row with key `k`
    /// ([`Form::UpsertAdd`]): at an existing key, a locking write of it.
    Upsert(i64, i64, i64),
    /// Insert `(k, v)` unless a row has key `k` ([`Form::InsertIgnore`]).
    InsertIgnore(i64, i64),
    /// An UPDATE that skips the rows whose new value would be a
    /// duplicate ([`Form::UpdateIgnore`]).
    UpdateIgnore(Pred, Assign),
    /// `SAVEPOINT s{n}`.
    Savepoint(u8),
    /// `ROLLBACK TO SAVEPOINT s{n}`: the transaction's writes after it
    /// are undone (see `LevelRules::savepoint_locks` for its locks).
    RollbackTo(u8),
    /// `RELEASE SAVEPOINT s{n}`: the savepoint goes, the writes stay.
    Release(u8),
}

impl Op {
    /// The statement as SQL, with the forms the DBMS spells its own way
    /// as `spellings` has them.
    pub fn sql(self, table: &str, spellings: &Spellings) -> String {
        match self {
            Op::Read(p) => format!("SELECT k, v FROM {table}{} ORDER BY k", p.sql(table)),
            Op::LockingRead(p, lock) => format!(
                "SELECT k, v FROM {table}{} ORDER BY k{}",
                p.sql(table),
                lock.sql()
            ),
            Op::Update(p, Assign::Add(c)) => {
                format!("UPDATE {table} SET v = v + {c}{}", p.sql(table))
            }
            Op::Update(p, a) => format!("UPDATE {table} SET {}{}", a.sql(), p.sql(table)),
            Op::Insert(k, v) => format!(
                "INSERT INTO {table} (k, v) VALUES ({k}, {})",
                value_sql(v)
            ),
            Op::Delete(p) => format!("DELETE FROM {table}{}", p.sql(table)),
            Op::Move(p, pivot) => format!(
                "UPDATE {table} SET k = CASE WHEN k < {pivot} THEN k + {MOVE} ELSE k - {MOVE} END{}",
                p.sql(table)
            ),
            Op::Upsert(k, v, c) => spellings.fill(
                Form::UpsertAdd,
                &[
                    ("table", table.to_string()),
                    ("k", k.to_string()),
                    ("v", value_sql(v)),
                    ("c", c.to_string()),
                ],
            ),
            Op::InsertIgnore(k, v) => spellings.fill(
                Form::InsertIgnore,
                &[
                    ("table", table.to_string()),
                    ("k", k.to_string()),
                    ("v", value_sql(v)),
                ],
            ),
            Op::UpdateIgnore(p, a) => spellings.fill(
                Form::UpdateIgnore,
                &[
                    ("table", table.to_string()),
                    ("set", a.sql()),
                    ("where", p.sql(table)),
                ],
            ),
            Op::Savepoint(n) => format!("SAVEPOINT s{n}"),
            Op::RollbackTo(n) => format!("ROLLBACK TO SAVEPOINT s{n}"),
            Op::Release(n) => format!("RELEASE SAVEPOINT s{n}"),
        }
    }

    /// A plain read: it takes no row locks (but InnoDB's SERIALIZABLE
    /// makes it a locking read, see `ReadView::LockingLatest`).
    pub fn is_read(self) -> bool {
        matches!(self, Op::Read(_))
    }

    /// The statement returns rows, which the model checks.
    pub fn returns_rows(self) -> bool {
        matches!(self, Op::Read(_) | Op::LockingRead(..))
    }

    /// The statement changes rows (an INSERT, UPDATE or DELETE, a move,
    /// an upsert, an IGNORE).
    pub fn changes_rows(self) -> bool {
        matches!(
            self,
            Op::Update(..)
                | Op::Insert(..)
                | Op::Delete(_)
                | Op::Move(..)
                | Op::Upsert(..)
                | Op::InsertIgnore(..)
                | Op::UpdateIgnore(..)
        )
    }

    /// The statement takes row locks under every level: a write or a
    /// locking read.
    pub fn locks_rows(self) -> bool {
        self.changes_rows() || matches!(self, Op::LockingRead(..))
    }

    /// A savepoint statement (SAVEPOINT, ROLLBACK TO, RELEASE).
    pub fn is_savepoint(self) -> bool {
        matches!(self, Op::Savepoint(_) | Op::RollbackTo(_) | Op::Release(_))
    }
}

/// What a step of a session does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Begin,
    Stmt(#[serde(deserialize_with = "op_of_any_version")] Op),
    Commit,
    Rollback,
}

/// A statement as this version writes it, or as records written before
/// locking clauses wrote a `SELECT ... FOR UPDATE`: `{"locking-read":
/// PRED}`, without its clause. Old findings (and known-bug directories)
/// still read.
fn op_of_any_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Op, D::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "kebab-case")]
    enum Before {
        LockingRead(Pred),
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum AnyVersion {
        Now(Op),
        Before(Before),
    }
    Ok(match AnyVersion::deserialize(d)? {
        AnyVersion::Now(op) => op,
        AnyVersion::Before(Before::LockingRead(p)) => Op::LockingRead(p, Lock::FOR_UPDATE),
    })
}

/// One step: a session, what it sends, and on which of the schedule's
/// tables (0: `Schedule::table`; `n`: the `n`th of `more_tables`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub session: usize,
    pub action: Action,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub table: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A table of a schedule beside its first: how it is made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoreTable {
    pub index_v: bool,
    /// The index on `v` is UNIQUE (with `index_v`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unique_v: bool,
    /// `v` may hold NULLs (with `unique_v`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nullable_v: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
}

/// A session's isolation level and mode, where a schedule mixes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionLevel {
    pub level: IsolationLevel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// A whole schedule, all lancet needs to run it again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    pub table: String,
    pub index_v: bool,
    /// The index on `v` is UNIQUE (with `index_v`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unique_v: bool,
    /// `v` may hold NULLs (with `unique_v`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nullable_v: bool,
    /// How the DBMS spells the forms the schedule may hold (upserts,
    /// IGNORE), as it said when the schedule was drawn.
    #[serde(default, skip_serializing_if = "Spellings::is_empty")]
    pub spellings: Spellings,
    /// How the table is placed, where the DBMS has several ways (see
    /// `Transactions::placements`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// The rows before any transaction.
    pub rows: Vec<(i64, i64)>,
    pub level: IsolationLevel,
    /// The level's mode (`LevelRules::mode`), if not its plain BEGIN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    pub sessions: usize,
    /// Each session's level where they differ (a mixed schedule: SQLite's
    /// DEFERRED beside IMMEDIATE, PostgreSQL's READ COMMITTED beside
    /// SERIALIZABLE); empty where every session runs at `level` and
    /// `mode`, which are then session 1's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mixed: Vec<SessionLevel>,
    /// Tables beside the first (`{table}_1`, ...): a transaction may
    /// write several (on Citus, a distributed and a reference table).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub more_tables: Vec<MoreTable>,
    /// Every session's steps, in the order lancet sends them (a session
    /// that waits for a lock sends its later steps once it returns).
    pub steps: Vec<Step>,
    /// The DBMS's settings the schedule runs under (its knobs' values,
    /// see `Transactions::knobs`); empty in records written before knobs,
    /// which run under the server's settings as they are.
    #[serde(default, skip_serializing_if = "Settings::is_empty")]
    pub settings: Settings,
}

/// The table every schedule uses, in the database lancet created for it.
pub const TABLE: &str = "lancet_txn";

/// The most sessions a schedule has: the driver opens this many
/// connections per database, and the serial-order check tries every
/// order of this many transactions (24).
pub const MAX_SESSIONS: usize = 4;

impl Schedule {
    /// Draws a schedule at one of `levels` (a level and its mode), over
    /// a table placed as one of `placements` (if any), with the `SELECT
    /// ... FOR UPDATE` steps the DBMS takes, the `forms` it offers and the
    /// `more` statement kinds it offers.
    pub fn generate(
        rng: &mut Rng,
        levels: &[(IsolationLevel, Option<String>)],
        placements: &[&str],
        locking_reads: LockingReads,
        forms: &Forms,
        more: MoreStatements,
    ) -> Schedule {
        let (level, mode) = levels[rng.random_range(0..levels.len())].clone();
        let draw_placement = |rng: &mut Rng| {
            (!placements.is_empty())
                .then(|| placements[rng.random_range(0..placements.len())].to_string())
        };
        let placement = draw_placement(rng);
        let mut tables = vec![TableDraw::new(rng, 0, forms)];
        let mut more_tables = Vec::new();
        // A third of the schedules have a second table.
        if rng.random_bool(0.3) {
            tables.push(TableDraw::new(rng, 1, forms));
            more_tables.push(MoreTable {
                index_v: rng.random_bool(0.5) || tables[1].unique,
                unique_v: tables[1].unique,
                nullable_v: tables[1].nullable,
                placement: draw_placement(rng),
            });
        }
        let rows: Vec<(i64, i64)> = tables.iter().flat_map(|t| t.rows.clone()).collect();
        // Mostly two sessions, where an anomaly is easiest to read;
        // three and four for the cycles that need more (a G2-item of
        // three transactions, a deadlock of three).
        let sessions = match rng.random_range(0..100) {
            0..60 => 2,
            60..88 => 3,
            _ => MAX_SESSIONS,
        };
        // A quarter of the schedules give each session a level of its own.
        let mixed: Vec<SessionLevel> = if levels.len() > 1 && rng.random_bool(0.25) {
            (0..sessions)
                .map(|_| {
                    let (level, mode) = levels[rng.random_range(0..levels.len())].clone();
                    SessionLevel { level, mode }
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut per_session: Vec<Vec<(Action, usize)>> = (0..sessions)
            .map(|_| {
                let mut actions = vec![(Action::Begin, 0)];
                for _ in 0..rng.random_range(1..=4) {
                    let t = if tables.len() > 1 {
                        rng.random_range(0..tables.len())
                    } else {
                        0
                    };
                    // The other table, which a subquery may read.
                    let other = (more.subqueries && tables.len() > 1).then_some(1 - t);
                    let op = draw_op(rng, &mut tables[t], locking_reads, forms, more, other);
                    actions.push((Action::Stmt(op), t));
                }
                if more.savepoints && rng.random_bool(0.3) {
                    add_savepoint(rng, &mut actions, more.reads_before_rollback_to);
                }
                actions.push(if rng.random_bool(0.85) {
                    (Action::Commit, 0)
                } else {
                    (Action::Rollback, 0)
                });
                actions
            })
            .collect();
        // A random merge that keeps each session's order.
        let mut steps = Vec::new();
        loop {
            let open: Vec<usize> = (0..sessions)
                .filter(|&s| !per_session[s].is_empty())
                .collect();
            if open.is_empty() {
                break;
            }
            let s = open[rng.random_range(0..open.len())];
            let (action, table) = per_session[s].remove(0);
            steps.push(Step {
                session: s,
                action,
                table,
            });
        }
        let mut schedule = Schedule {
            table: TABLE.to_string(),
            index_v: rng.random_bool(0.5) || tables[0].unique,
            unique_v: tables[0].unique,
            nullable_v: tables[0].nullable,
            spellings: forms.spellings.clone(),
            placement,
            rows,
            level,
            mode,
            sessions,
            mixed,
            more_tables,
            steps,
            settings: Settings::new(),
        };
        schedule.settle_levels();
        schedule
    }

    /// Session `s`'s level and mode.
    pub fn level_of(&self, s: usize) -> (IsolationLevel, Option<&str>) {
        match self.mixed.get(s) {
            Some(l) => (l.level, l.mode.as_deref()),
            None => (self.level, self.mode.as_deref()),
        }
    }

    /// Session `s`'s level as people name it (`LevelRules::label`).
    pub fn label_of(&self, s: usize) -> String {
        let (level, mode) = self.level_of(s);
        lancet_core::txn::level_label(level, mode)
    }

    /// Whether the sessions run at levels of their own.
    pub fn is_mixed(&self) -> bool {
        !self.mixed.is_empty()
    }

    /// `level` and `mode` become session 1's, and a mix whose sessions
    /// all run at one level is no mix.
    pub fn settle_levels(&mut self) {
        if let Some(first) = self.mixed.first().cloned() {
            self.level = first.level;
            self.mode = first.mode.clone();
            if self.mixed.iter().all(|l| *l == first) {
                self.mixed.clear();
            }
        }
    }

    /// The statement that fills table `t`, after the provider's CREATE
    /// (none for a table without rows).
    pub fn fill_sql(&self, t: usize) -> Vec<String> {
        let values: Vec<String> = self
            .rows
            .iter()
            .filter(|(k, _)| table_of(*k) == t)
            .map(|(k, v)| format!("({k}, {})", value_sql(*v)))
            .collect();
        if values.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "INSERT INTO {} (k, v) VALUES {}",
            self.table_name(t),
            values.join(", ")
        )]
    }

    /// How many tables the schedule has.
    pub fn table_count(&self) -> usize {
        1 + self.more_tables.len()
    }

    /// The name of table `t`: `lancet_txn`, `lancet_txn_1`, ...
    pub fn table_name(&self, t: usize) -> String {
        match t {
            0 => self.table.clone(),
            n => format!("{}_{n}", self.table),
        }
    }

    /// Table `t`'s index on `v` and its placement.
    pub fn shape(&self, t: usize) -> (IndexV, Option<&str>) {
        match t {
            0 => (
                IndexV::of(self.index_v, self.unique_v, self.nullable_v),
                self.placement.as_deref(),
            ),
            n => {
                let m = &self.more_tables[n - 1];
                (
                    IndexV::of(m.index_v, m.unique_v, m.nullable_v),
                    m.placement.as_deref(),
                )
            }
        }
    }

    /// The placements of the tables, for the signature: `distributed`,
    /// `distributed and reference`; `None` where the DBMS has none.
    pub fn placement_label(&self) -> Option<String> {
        let mut seen: Vec<&str> = Vec::new();
        for t in 0..self.table_count() {
            if let (_, Some(p)) = self.shape(t) {
                if !seen.contains(&p) {
                    seen.push(p);
                }
            }
        }
        (!seen.is_empty()).then(|| seen.join(" and "))
    }

    /// The SQL of step `i` if it is a statement.
    pub fn statement_sql(&self, i: usize) -> Option<String> {
        let step = self.steps[i];
        match step.action {
            Action::Stmt(op) => Some(self.op_sql(op, step.table)),
            _ => None,
        }
    }

    /// The SQL of `op` on table `t`, in the DBMS's spelling.
    pub fn op_sql(&self, op: Op, t: usize) -> String {
        op.sql(&self.table_name(t), &self.spellings)
    }

    /// The steps of session `s`, in order.
    pub fn session_steps(&self, s: usize) -> impl Iterator<Item = (usize, &Step)> {
        self.steps
            .iter()
            .enumerate()
            .filter(move |(_, step)| step.session == s)
    }

    /// How many statements the schedule runs, for reduction's measure.
    pub fn size(&self) -> usize {
        self.steps.len() + self.rows.len()
    }
}

mod draw;
mod table_draw;
mod wider;

use draw::{add_savepoint, draw_op};
use table_draw::TableDraw;
