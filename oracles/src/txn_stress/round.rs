//! A stress round: a table of few rows, 2 to 8 sessions, and the short
//! transactions each session runs one after another, as fast as the DBMS
//! lets it, while the others run theirs. Drawn from a database's RNG at
//! one isolation level (and mode, and settings); what the sessions read
//! is known only when they run, so a read-then-write transaction's UPDATE
//! is written with the value its SELECT returned ([`Stmt::write_sql`]).

use lancet_core::txn::{
    level_label, IsolationLevel, LevelRules, ReadView, Settings, TxnKnob, WriteRule,
};
use lancet_core::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// The round's table.
pub const TABLE: &str = "lancet_stress";
/// The most sessions a round runs.
pub const MAX_SESSIONS: usize = 8;
/// How long a round's sessions may run before they stop beginning
/// transactions.
pub const TIME_LIMIT_MS: u64 = 10_000;
/// A round of at most this many transactions is reduced one transaction
/// at a time too.
const FEW: usize = 16;
/// A bank account's balance before the round.
const BALANCE: i64 = 100;

/// The invariant a round keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Accounts whose total never changes: each transaction moves an
    /// amount from one to another.
    Bank,
    /// Counters that only go up by one: each ends at its start plus the
    /// committed increments.
    Counters,
}

/// A statement of a round's transaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stmt {
    /// `UPDATE t SET v = v + delta WHERE k = key`: atomic at every level.
    Add { key: i64, delta: i64 },
    /// `SELECT v FROM t WHERE k = key`, then `UPDATE t SET v = r + delta
    /// WHERE k = key` with the value `r` read: only a level that forbids
    /// lost updates keeps it ([`read_then_write`]).
    ReadThenSet { key: i64, delta: i64 },
    /// `SELECT SUM(v) FROM t`: the bank's total, where the level's read
    /// view is a snapshot ([`reads_checked`]).
    ReadSum,
    /// `SELECT k, v FROM t ORDER BY k`: every account, adding up to the
    /// total.
    ReadAll,
}

impl Stmt {
    /// The row it changes and by how much, if it writes.
    pub fn delta(self) -> Option<(i64, i64)> {
        match self {
            Stmt::Add { key, delta } | Stmt::ReadThenSet { key, delta } => Some((key, delta)),
            Stmt::ReadSum | Stmt::ReadAll => None,
        }
    }

    /// Whether it is a read of the whole bank.
    pub fn reads_total(self) -> bool {
        matches!(self, Stmt::ReadSum | Stmt::ReadAll)
    }

    /// The query it sends first, if it reads (its rows come back).
    pub fn read_sql(self) -> Option<String> {
        match self {
            Stmt::ReadThenSet { key, .. } => Some(format!("SELECT v FROM {TABLE} WHERE k = {key}")),
            Stmt::ReadSum => Some(format!("SELECT SUM(v) FROM {TABLE}")),
            Stmt::ReadAll => Some(format!("SELECT k, v FROM {TABLE} ORDER BY k")),
            Stmt::Add { .. } => None,
        }
    }

    /// The write it sends, if it writes; `read` is the value its read
    /// returned (read-then-write).
    pub fn write_sql(self, read: i64) -> Option<String> {
        match self {
            Stmt::Add { key, delta } if delta < 0 => Some(format!(
                "UPDATE {TABLE} SET v = v - {} WHERE k = {key}",
                -delta
            )),
            Stmt::Add { key, delta } => Some(format!(
                "UPDATE {TABLE} SET v = v + {delta} WHERE k = {key}"
            )),
            Stmt::ReadThenSet { key, delta } => Some(format!(
                "UPDATE {TABLE} SET v = {} WHERE k = {key}",
                read + delta
            )),
            Stmt::ReadSum | Stmt::ReadAll => None,
        }
    }
}

/// One transaction of a session: its statements, then COMMIT or
/// ROLLBACK.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Txn {
    pub stmts: Vec<Stmt>,
    pub commit: bool,
}

/// A server setting a round runs under, by name and value (MariaDB's
/// `innodb_snapshot_isolation`): the provider's settings of
/// transactions, as the transaction oracle draws them.
pub type Setting = (String, String);

/// A round: everything its run needs, so that a finding replays it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Round {
    pub workload: Workload,
    pub level: IsolationLevel,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The settings every session runs under; empty: the server's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<Setting>,
    pub index_v: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    /// The rows before the round: accounts or counters.
    pub rows: Vec<(i64, i64)>,
    /// Each session's transactions, in the order it runs them.
    pub sessions: Vec<Vec<Txn>>,
}

/// Whether a read-then-write transaction keeps the invariant at a level:
/// its write must fail where the row changed after its read (first
/// updater wins), or the committed transactions must be serializable.
/// Elsewhere two such transactions may lose an update, as the level
/// allows.
pub fn read_then_write(rules: &LevelRules) -> bool {
    rules.writes == WriteRule::SnapshotOrAbort || rules.serializable
}

/// Whether a read of the whole bank must show its total: the level's
/// reads see committed rows only (not [`ReadView::Uncommitted`]), and the
/// table is in one place (a table a DBMS spreads over nodes, a
/// `placement`, is read with a snapshot per node, which no rule lancet
/// has promises to be one moment).
pub fn reads_checked(rules: &LevelRules, placement: Option<&str>) -> bool {
    rules.read_view != ReadView::Uncommitted && placement.is_none()
}

/// Whether such a read still shows the total after its transaction's own
/// writes: they were made on the rows its reads see (first updater wins,
/// locking reads of the newest rows, or a snapshot per statement). Not
/// where a transaction's writes change rows newer than its snapshot
/// (InnoDB's REPEATABLE READ): its reads then mix the two.
pub fn reads_after_writes_checked(rules: &LevelRules) -> bool {
    match rules.read_view {
        ReadView::Statement | ReadView::LockingLatest => true,
        ReadView::Begin | ReadView::FirstStatement => rules.writes == WriteRule::SnapshotOrAbort,
        ReadView::Uncommitted => false,
    }
}

impl Round {
    /// Draws a round at `rules`' level under `settings`, its table placed
    /// as one of `placements` (none: the DBMS's one way).
    pub fn generate(
        rng: &mut Rng,
        rules: &LevelRules,
        settings: Vec<Setting>,
        placements: &[&str],
    ) -> Round {
        let workload = if rng.random_bool(0.6) {
            Workload::Bank
        } else {
            Workload::Counters
        };
        let placement = (!placements.is_empty())
            .then(|| placements[rng.random_range(0..placements.len())].to_string());
        let index_v = rng.random_bool(0.5);
        let rows: Vec<(i64, i64)> = match workload {
            Workload::Bank => (1..=rng.random_range(2..=6))
                .map(|k| (k, BALANCE))
                .collect(),
            Workload::Counters => (1..=rng.random_range(1..=4)).map(|k| (k, 0)).collect(),
        };
        let n = rng.random_range(2..=MAX_SESSIONS);
        let per_session = (rng.random_range(100..=400) / n).max(10);
        let draw = Draw {
            keys: rows.len() as i64,
            in_key_order: rng.random_bool(0.5),
            read_then_write: read_then_write(rules),
            reads: workload == Workload::Bank && reads_checked(rules, placement.as_deref()),
            reads_after_writes: reads_after_writes_checked(rules),
        };
        let sessions = (0..n)
            .map(|_| {
                (0..per_session)
                    .map(|_| match workload {
                        Workload::Bank => draw.transfer(rng),
                        Workload::Counters => draw.increments(rng),
                    })
                    .collect()
            })
            .collect();
        Round {
            workload,
            level: rules.level,
            mode: rules.mode.clone(),
            settings,
            index_v,
            placement,
            rows,
            sessions,
        }
    }

    /// The level, mode and settings as people name them:
    /// `REPEATABLE READ [innodb_snapshot_isolation=ON]`, with the table's
    /// placement where it has one.
    pub fn label(&self) -> String {
        let mut label = level_label(self.level, self.mode.as_deref());
        if !self.settings.is_empty() {
            let s: Vec<String> = self
                .settings
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            label.push_str(&format!(" [{}]", s.join(", ")));
        }
        if let Some(p) = &self.placement {
            label.push_str(&format!(" on {p}"));
        }
        label
    }

    /// What a signature names of it: the level and mode, the settings
    /// that change the level's rules (not those that only choose a
    /// plan: one bug is one group under any plan), and the placement.
    pub fn signature_label(&self, knobs: &[TxnKnob]) -> String {
        let settings: Settings = self.settings.iter().cloned().collect();
        let mut label = level_label(self.level, self.mode.as_deref());
        label.push_str(&crate::txn::settings::Knobs::signature_part(
            &settings, knobs,
        ));
        if let Some(p) = &self.placement {
            label.push_str(&format!(" on {p}"));
        }
        label
    }

    /// How many statements and rows it has: what reduction makes
    /// smaller.
    pub fn size(&self) -> usize {
        let statements: usize = self
            .sessions
            .iter()
            .flatten()
            .map(|t| t.stmts.len() + 2)
            .sum();
        statements + self.rows.len()
    }

    /// Transaction `index` of session `session`, if the round has it.
    pub fn txn(&self, session: usize, index: usize) -> Option<&Txn> {
        self.sessions.get(session)?.get(index)
    }

    /// The transactions it has, all sessions together.
    pub fn transactions(&self) -> usize {
        self.sessions.iter().map(Vec::len).sum()
    }

    /// The statements that fill the table (made empty) with its rows.
    pub fn fill_sql(&self) -> Vec<String> {
        let values: Vec<String> = self
            .rows
            .iter()
            .map(|(k, v)| format!("({k}, {v})"))
            .collect();
        vec![format!(
            "INSERT INTO {TABLE} (k, v) VALUES {}",
            values.join(", ")
        )]
    }

    /// Smaller rounds that may still show what this one showed, the
    /// likeliest first: a session fewer, then each session's
    /// transactions halved, then one session's; a round of few
    /// transactions also without each one of them.
    pub fn candidates(&self) -> Vec<Round> {
        let mut out = Vec::new();
        if self.sessions.len() > 1 {
            for s in (0..self.sessions.len()).rev() {
                let mut r = self.clone();
                r.sessions.remove(s);
                out.push(r);
            }
        }
        if self.sessions.iter().any(|t| t.len() > 1) {
            let mut r = self.clone();
            for txns in &mut r.sessions {
                txns.truncate(txns.len().div_ceil(2));
            }
            out.push(r);
        }
        for s in 0..self.sessions.len() {
            if self.sessions[s].len() > 1 {
                let mut r = self.clone();
                let keep = r.sessions[s].len() / 2;
                r.sessions[s].truncate(keep);
                out.push(r);
            }
        }
        if self.transactions() <= FEW {
            for s in 0..self.sessions.len() {
                for i in 0..self.sessions[s].len() {
                    let mut r = self.clone();
                    r.sessions[s].remove(i);
                    if !r.sessions[s].is_empty() {
                        out.push(r);
                    }
                }
            }
        }
        out
    }
}

/// What a round's transactions may hold, by its level's rules.
struct Draw {
    keys: i64,
    /// Each transaction writes its rows in the order of their keys, so
    /// that writers wait for each other without deadlocks (half the
    /// rounds): a DBMS that looks for deadlocks only after a wait
    /// (PostgreSQL's `deadlock_timeout`, 1 s by default) runs many more
    /// transactions.
    in_key_order: bool,
    read_then_write: bool,
    /// Reads of the whole bank, before the transaction's writes.
    reads: bool,
    /// And after them.
    reads_after_writes: bool,
}

impl Draw {
    /// Two distinct keys, in a random order (so that transactions lock
    /// rows in different orders and deadlock).
    fn two_keys(&self, rng: &mut Rng) -> (i64, i64) {
        let a = rng.random_range(1..=self.keys);
        let b = (a + rng.random_range(1..self.keys) - 1) % self.keys + 1;
        (a, b)
    }

    fn write(&self, rng: &mut Rng, key: i64, delta: i64) -> Stmt {
        if self.read_then_write && rng.random_bool(0.5) {
            Stmt::ReadThenSet { key, delta }
        } else {
            Stmt::Add { key, delta }
        }
    }

    /// A transaction's writes, by key where the round wants that.
    fn ordered(&self, mut writes: Vec<Stmt>) -> Vec<Stmt> {
        if self.in_key_order {
            writes.sort_by_key(|w| w.delta().map(|(key, _)| key));
        }
        writes
    }

    fn read(rng: &mut Rng) -> Stmt {
        if rng.random_bool(0.5) {
            Stmt::ReadSum
        } else {
            Stmt::ReadAll
        }
    }

    /// A bank transaction: a read of the whole bank (a read-only
    /// transaction), or one or two transfers, with reads before or after
    /// where the level's reads show the total.
    fn transfer(&self, rng: &mut Rng) -> Txn {
        let mut stmts = Vec::new();
        if self.reads && rng.random_bool(0.15) {
            for _ in 0..rng.random_range(1..=2) {
                stmts.push(Draw::read(rng));
            }
        } else {
            if self.reads && rng.random_bool(0.2) {
                stmts.push(Draw::read(rng));
            }
            let mut writes = Vec::new();
            for _ in 0..rng.random_range(1..=2) {
                let (from, to) = self.two_keys(rng);
                let amount = rng.random_range(1..=20);
                writes.push(self.write(rng, from, -amount));
                writes.push(self.write(rng, to, amount));
            }
            stmts.extend(self.ordered(writes));
            if self.reads && self.reads_after_writes && rng.random_bool(0.2) {
                stmts.push(Draw::read(rng));
            }
        }
        Txn {
            stmts,
            commit: rng.random_bool(0.9),
        }
    }

    /// A counters transaction: one to three increments.
    fn increments(&self, rng: &mut Rng) -> Txn {
        let stmts = (0..rng.random_range(1..=3))
            .map(|_| {
                let key = rng.random_range(1..=self.keys);
                self.write(rng, key, 1)
            })
            .collect();
        Txn {
            stmts: self.ordered(stmts),
            commit: rng.random_bool(0.9),
        }
    }
}
