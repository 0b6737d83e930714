//! A schedule: a table of integer rows, several sessions each running one
//! transaction, and the order lancet sends their steps in. Drawn from a
//! database's RNG; printed as SQL every DBMS of lancet reads alike.

use lancet_core::txn::{IsolationLevel, LockingReads};
use lancet_core::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// Which rows a statement reads or changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pred {
    Key(i64),
    KeyRange(i64, i64),
    ValueRange(i64, i64),
    ValueAbove(i64),
    All,
}

impl Pred {
    pub fn matches(self, k: i64, v: i64) -> bool {
        match self {
            Pred::Key(c) => k == c,
            Pred::KeyRange(a, b) => a <= k && k <= b,
            Pred::ValueRange(a, b) => a <= v && v <= b,
            Pred::ValueAbove(c) => v > c,
            Pred::All => true,
        }
    }

    /// The condition as SQL, with `WHERE` (empty for every row).
    fn sql(self) -> String {
        match self {
            Pred::Key(c) => format!(" WHERE k = {c}"),
            Pred::KeyRange(a, b) => format!(" WHERE k BETWEEN {a} AND {b}"),
            Pred::ValueRange(a, b) => format!(" WHERE v BETWEEN {a} AND {b}"),
            Pred::ValueAbove(c) => format!(" WHERE v > {c}"),
            Pred::All => String::new(),
        }
    }
}

/// The new value an UPDATE gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Assign {
    Add(i64),
    Set(i64),
}

impl Assign {
    pub fn apply(self, v: i64) -> i64 {
        match self {
            Assign::Add(c) => v + c,
            Assign::Set(c) => c,
        }
    }
}

/// One statement of a transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    /// A plain (consistent, non-locking) read.
    Read(Pred),
    /// `SELECT ... FOR UPDATE`: a read that locks the rows it returns as
    /// a write would, and reads them as the level's writes do (see
    /// `Transactions::locking_reads`).
    LockingRead(Pred),
    Update(Pred, Assign),
    /// A key no other row of the schedule has, so that no insert fails on
    /// a duplicate.
    Insert(i64, i64),
    Delete(Pred),
}

impl Op {
    pub fn sql(self, table: &str) -> String {
        match self {
            Op::Read(p) => format!("SELECT k, v FROM {table}{} ORDER BY k", p.sql()),
            Op::LockingRead(p) => {
                format!("SELECT k, v FROM {table}{} ORDER BY k FOR UPDATE", p.sql())
            }
            Op::Update(p, Assign::Add(c)) => format!("UPDATE {table} SET v = v + {c}{}", p.sql()),
            Op::Update(p, Assign::Set(c)) => format!("UPDATE {table} SET v = {c}{}", p.sql()),
            Op::Insert(k, v) => format!("INSERT INTO {table} (k, v) VALUES ({k}, {v})"),
            Op::Delete(p) => format!("DELETE FROM {table}{}", p.sql()),
        }
    }

    /// A plain read: it takes no row locks (but InnoDB's SERIALIZABLE
    /// makes it a locking read, see `ReadView::LockingLatest`).
    pub fn is_read(self) -> bool {
        matches!(self, Op::Read(_))
    }

    /// The statement returns rows, which the model checks.
    pub fn returns_rows(self) -> bool {
        matches!(self, Op::Read(_) | Op::LockingRead(_))
    }

    /// The statement changes rows (an INSERT, UPDATE or DELETE).
    pub fn changes_rows(self) -> bool {
        !self.returns_rows()
    }

    /// The statement takes row locks under every level: a write or a
    /// `SELECT ... FOR UPDATE`.
    pub fn locks_rows(self) -> bool {
        !self.is_read()
    }
}

/// What a step of a session does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    Begin,
    Stmt(Op),
    Commit,
    Rollback,
}

/// One step: a session and what it sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub session: usize,
    pub action: Action,
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
    /// Every session's steps, in the order lancet sends them (a session
    /// that waits for a lock sends its later steps once it returns).
    pub steps: Vec<Step>,
}

/// The table every schedule uses, in the database lancet created for it.
pub const TABLE: &str = "lancet_txn";

impl Schedule {
    /// Draws a schedule at one of `levels` (a level and its mode), over
    /// a table placed as one of `placements` (if any), with the `SELECT
    /// ... FOR UPDATE` steps the DBMS takes.
    pub fn generate(
        rng: &mut Rng,
        levels: &[(IsolationLevel, Option<String>)],
        placements: &[&str],
        locking_reads: LockingReads,
    ) -> Schedule {
        let (level, mode) = levels[rng.random_range(0..levels.len())].clone();
        let placement = (!placements.is_empty())
            .then(|| placements[rng.random_range(0..placements.len())].to_string());
        let nrows = rng.random_range(2..=6i64);
        let rows: Vec<(i64, i64)> = (1..=nrows).map(|k| (k, rng.random_range(0..10))).collect();
        let sessions = if rng.random_bool(0.7) { 2 } else { 3 };
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
        let mut next_key = 100;
        let mut per_session: Vec<Vec<Action>> = (0..sessions)
            .map(|_| {
                let mut actions = vec![Action::Begin];
                for _ in 0..rng.random_range(1..=4) {
                    actions.push(Action::Stmt(draw_op(
                        rng,
                        nrows,
                        &mut next_key,
                        locking_reads,
                    )));
                }
                actions.push(if rng.random_bool(0.85) {
                    Action::Commit
                } else {
                    Action::Rollback
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
            steps.push(Step {
                session: s,
                action: per_session[s].remove(0),
            });
        }
        let mut schedule = Schedule {
            table: TABLE.to_string(),
            index_v: rng.random_bool(0.5),
            placement,
            rows,
            level,
            mode,
            sessions,
            mixed,
            steps,
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

    /// The statements that fill the table, after the provider's CREATE.
    pub fn fill_sql(&self) -> Vec<String> {
        if self.rows.is_empty() {
            return Vec::new();
        }
        let values: Vec<String> = self
            .rows
            .iter()
            .map(|(k, v)| format!("({k}, {v})"))
            .collect();
        vec![format!(
            "INSERT INTO {} (k, v) VALUES {}",
            self.table,
            values.join(", ")
        )]
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

fn draw_pred(rng: &mut Rng, nrows: i64) -> Pred {
    match rng.random_range(0..10) {
        0..=5 => Pred::Key(rng.random_range(1..=nrows + 1)),
        6 => {
            let a = rng.random_range(1..=nrows);
            Pred::KeyRange(a, a + rng.random_range(0..3))
        }
        7 => {
            let a = rng.random_range(0..10);
            Pred::ValueRange(a, a + rng.random_range(0..5))
        }
        8 => Pred::ValueAbove(rng.random_range(0..10)),
        _ => Pred::All,
    }
}

fn draw_op(rng: &mut Rng, nrows: i64, next_key: &mut i64, locking: LockingReads) -> Op {
    match rng.random_range(0..20) {
        // A quarter of the reads lock, where the DBMS has FOR UPDATE (no
        // draw otherwise, so that schedules elsewhere stay as they were).
        0..=7 if locking != LockingReads::None && rng.random_bool(0.25) => {
            Op::LockingRead(match locking {
                LockingReads::KeyEquality => Pred::Key(rng.random_range(1..=nrows + 1)),
                _ => draw_pred(rng, nrows),
            })
        }
        0..=7 => Op::Read(draw_pred(rng, nrows)),
        8..=14 => {
            let assign = if rng.random_bool(0.7) {
                Assign::Add(rng.random_range(1..=5))
            } else {
                Assign::Set(rng.random_range(0..10))
            };
            Op::Update(draw_pred(rng, nrows), assign)
        }
        15..=16 => {
            *next_key += 1;
            Op::Insert(*next_key, rng.random_range(0..10))
        }
        _ => Op::Delete(draw_pred(rng, nrows)),
    }
}
