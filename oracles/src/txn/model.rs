//! lancet's model of a schedule under one isolation level's documented
//! rules ([`LevelRules`]): which committed row versions each statement is
//! entitled to, which rows it changes, when it must wait for a lock and
//! when it must fail. The driver feeds it what happened, in the order it
//! happened; the model says what the DBMS should have answered and
//! records every departure as an [`Anomaly`].

use super::anomaly::{Anomaly, AnomalyKind};
use super::schedule::{Action, LockWait, Op, Pred, Schedule, Step};
use lancet_core::txn::{Conflict, LevelRules, ReadView, WriteRule};
use std::collections::{BTreeMap, BTreeSet};

/// One version of a row: its value, a number no other version has, the
/// transaction (session) that wrote it (`None`: the initial rows), and
/// the row it is a version of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Version {
    pub v: i64,
    pub id: u64,
    pub writer: Option<usize>,
    /// The row's identity apart from its key: the id of its first
    /// version, kept by every update, and by a move to a new key, so
    /// that the model follows a row across its change of key.
    pub row: u64,
}

/// Rows by key.
pub type State = BTreeMap<i64, Version>;

/// A session's reads: the step and the rows the DBMS returned.
pub type Reads = Vec<(usize, Vec<(i64, i64)>)>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    NotStarted,
    Active,
    Committed,
    Aborted,
}

/// Whether a statement must wait for a lock when it is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A row it changes is locked by another open transaction.
    Must,
    /// The rules say it never waits here.
    MustNot,
    /// It may: locks the model does not track (InnoDB's gap locks).
    May,
}

/// What a statement came to, as the driver saw it.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// A read's rows, or `None` for any other statement that succeeded.
    Ok(Option<Vec<(i64, i64)>>),
    /// An error the rules allow for some statement (the model says
    /// whether for this one).
    Conflict(Conflict),
}

#[derive(Clone, Debug)]
pub(super) struct Txn {
    pub(super) status: Status,
    snapshot: Option<State>,
    /// The transaction's own writes: a new version, or `None` for a
    /// deleted row.
    pub(super) writes: BTreeMap<i64, Option<Version>>,
    /// The statement in flight: its step, the committed rows when it
    /// started, and the keys it would change then.
    started: Option<Started>,
    /// Rows whose value the rules leave open after this transaction's
    /// writes (an InnoDB write that waited while rows began to match may
    /// or may not have met them). Each statement acts on each row alone,
    /// so only these rows go unchecked.
    uncertain: BTreeSet<i64>,
    /// Reads this transaction made, with what the DBMS returned, for the
    /// serial-order check.
    pub(super) reads: Reads,
    /// Under an exclusive BEGIN: the session whose open transaction held
    /// the write lock when this one's BEGIN was sent.
    begin_against: Option<usize>,
    /// Rows it may hold a lock on without having changed them: a
    /// PostgreSQL READ COMMITTED write that found a row changed by a
    /// concurrent commit locks its newest version before it re-checks
    /// the condition, and keeps the lock if the check fails (seen with
    /// lancet on PostgreSQL 18: a later UPDATE of that row waited until
    /// the lock timeout).
    maybe_locked: BTreeSet<i64>,
    /// Rows its `SELECT ... FOR UPDATE` steps locked without changing
    /// them: other transactions' writes and locking reads of them wait.
    pub(super) locked: BTreeSet<i64>,
    /// Rows its `FOR SHARE` steps locked (and it has not locked
    /// exclusively): other transactions' writes and `FOR UPDATE` wait,
    /// their `FOR SHARE` does not.
    pub(super) shared: BTreeSet<i64>,
    /// A write statement of it succeeded: under single-writer rules it
    /// holds the database's write lock from then on.
    wrote: bool,
    /// An UPDATE IGNORE of it may have skipped rows (see
    /// `Model::serial_unknown`).
    skipped: bool,
    /// A statement of it that may take row locks finished: under rules
    /// with locks beyond the rows (InnoDB), any row may be locked by it.
    took_locks: bool,
    /// Its savepoints, oldest first, each with what it had then.
    savepoints: Vec<(u8, Mark)>,
}

/// What a transaction had written and locked when it made a savepoint.
#[derive(Clone, Debug)]
struct Mark {
    writes: BTreeMap<i64, Option<Version>>,
    uncertain: BTreeSet<i64>,
    maybe_locked: BTreeSet<i64>,
    locked: BTreeSet<i64>,
    shared: BTreeSet<i64>,
}

#[derive(Clone, Debug)]
struct Started {
    step: usize,
    view: State,
    /// Rows it surely changes or locks, by the rules, when it starts.
    targets: BTreeSet<i64>,
    /// Rows it may change or lock or not: its subquery's views disagree.
    maybe: BTreeSet<i64>,
    /// The committed rows after each commit while it was in flight: a
    /// subquery that reads the newest rows as it goes may have read any.
    seen: Vec<State>,
    /// Whether it had to wait when it started; for a statement that never
    /// waits (NOWAIT, SKIP LOCKED), whether it meets a lock.
    verdict: Wait,
}

/// The model of one running schedule.
pub struct Model<'a> {
    pub(super) schedule: &'a Schedule,
    /// Each session's rules: one level for all, or each its own where
    /// the schedule mixes them.
    rules: Vec<&'a LevelRules>,
    pub(super) initial: State,
    pub(super) committed: State,
    next_id: u64,
    pub(super) txns: Vec<Txn>,
    /// Rows an uncertain write of a committed transaction left open:
    /// never checked again in this schedule.
    pub(super) uncertain_committed: BTreeSet<i64>,
    /// Sessions in the order they committed.
    pub commit_order: Vec<usize>,
    pub anomalies: Vec<Anomaly>,
    /// Rows a write left open because it had waited for a lock, as
    /// `(step, key)`: InnoDB's documented deviation (a scan that waited
    /// meets a row that began to match, or moved to a new key, or not,
    /// by where it was). Never checked by default; a strict mode can
    /// report them (MDEV-27992 shows here).
    pub left_open: Vec<(usize, i64)>,
    /// A committed transaction's UPDATE IGNORE skipped rows the model
    /// cannot name (which ones depends on the order it met them): no
    /// serial order is checked.
    pub(super) serial_unknown: bool,
}

mod conditions;
mod keys;
mod locks;
mod reads;
mod savepoints;
mod writes;
use writes::Effect;

impl<'a> Model<'a> {
    /// The model of a schedule whose sessions all follow `rules`.
    pub fn new(schedule: &'a Schedule, rules: &'a LevelRules) -> Model<'a> {
        Model::mixed(schedule, vec![rules; schedule.sessions])
    }

    /// The model of a schedule whose session `s` follows `rules[s]`.
    pub fn mixed(schedule: &'a Schedule, rules: Vec<&'a LevelRules>) -> Model<'a> {
        assert_eq!(rules.len(), schedule.sessions, "one level per session");
        let mut next_id = 0;
        let initial: State = schedule
            .rows
            .iter()
            .map(|&(k, v)| {
                next_id += 1;
                (
                    k,
                    Version {
                        v,
                        id: next_id,
                        writer: None,
                        row: next_id,
                    },
                )
            })
            .collect();
        Model {
            schedule,
            rules,
            committed: initial.clone(),
            initial,
            next_id,
            txns: vec![
                Txn {
                    status: Status::NotStarted,
                    snapshot: None,
                    writes: BTreeMap::new(),
                    started: None,
                    uncertain: BTreeSet::new(),
                    reads: Vec::new(),
                    begin_against: None,
                    maybe_locked: BTreeSet::new(),
                    locked: BTreeSet::new(),
                    shared: BTreeSet::new(),
                    wrote: false,
                    skipped: false,
                    took_locks: false,
                    savepoints: Vec::new(),
                };
                schedule.sessions
            ],
            uncertain_committed: BTreeSet::new(),
            commit_order: Vec::new(),
            anomalies: Vec::new(),
            left_open: Vec::new(),
            serial_unknown: false,
        }
    }

    /// The rules session `session` follows.
    pub(super) fn rules_of(&self, session: usize) -> &'a LevelRules {
        self.rules[session]
    }

    pub fn status(&self, session: usize) -> Status {
        self.txns[session].status
    }

    /// Whether row `k` is left open for `session` (its own uncertain
    /// writes, or a committed one's).
    fn unsure(&self, session: usize, k: i64) -> bool {
        self.uncertain_committed.contains(&k) || self.txns[session].uncertain.contains(&k)
    }

    pub(super) fn anomaly(&mut self, kind: AnomalyKind, step: usize, detail: String) {
        self.anomalies.push(Anomaly {
            kind,
            step,
            detail,
            at_end: false,
            deviation: None,
        });
    }

    /// `session`'s view of the rows under `base`: its own writes on top.
    fn overlay(&self, session: usize, base: &State) -> State {
        let mut rows = base.clone();
        for (&k, w) in &self.txns[session].writes {
            match w {
                Some(version) => {
                    rows.insert(k, *version);
                }
                None => {
                    rows.remove(&k);
                }
            }
        }
        rows
    }

    /// Whether a read of `session` may show row `k` as any of its
    /// versions: under a dirty-read view, another open transaction has
    /// written it, or has a write in flight, which may have changed some
    /// rows already while it waits for a lock on another (seen with
    /// lancet on MariaDB: `UPDATE t SET v = v + 3` waiting for row 5 had
    /// changed row 4, which a READ UNCOMMITTED read then showed).
    fn dirty_for(&self, session: usize, k: i64) -> bool {
        self.rules_of(session).read_view == ReadView::Uncommitted
            && (0..self.txns.len()).any(|t| {
                t != session
                    && self.txns[t].status == Status::Active
                    && (self.txns[t].writes.contains_key(&k)
                        || self.txns[t].uncertain.contains(&k)
                        || self.writing(t, Op::changes_rows))
            })
    }

    /// The committed rows a plain read of `session` sees, before its own
    /// writes, at the moment the statement starts.
    fn read_base(&self, session: usize) -> State {
        match self.rules_of(session).read_view {
            ReadView::Statement | ReadView::LockingLatest | ReadView::Uncommitted => {
                self.committed.clone()
            }
            ReadView::FirstStatement | ReadView::Begin => self.txns[session]
                .snapshot
                .clone()
                .unwrap_or_else(|| self.committed.clone()),
        }
    }

    /// Step `step` is being sent: takes snapshots the rules take at this
    /// moment and says whether the statement must wait.
    pub fn start(&mut self, step: usize) -> Wait {
        let s = self.schedule.steps[step];
        let session = s.session;
        let rules = self.rules_of(session);
        if s.action == Action::Begin {
            // One transaction holds the write lock from its BEGIN: this
            // BEGIN must fail while another holds it.
            self.txns[session].begin_against = if rules.exclusive_begin {
                (0..self.txns.len()).find(|&t| t != session && self.holds_write_lock(t))
            } else {
                None
            };
            self.txns[session].status = Status::Active;
            if rules.read_view == ReadView::Begin {
                self.txns[session].snapshot = Some(self.committed.clone());
            }
            return Wait::MustNot;
        }
        if self.txns[session].status != Status::Active {
            return Wait::MustNot;
        }
        let Action::Stmt(op) = s.action else {
            return Wait::MustNot;
        };
        // A savepoint statement reads nothing: the first statement that
        // does takes the snapshot (seen on PostgreSQL 18.6 and SQLite
        // 3.40: a commit between SAVEPOINT and the first read is seen).
        if rules.read_view == ReadView::FirstStatement
            && self.txns[session].snapshot.is_none()
            && !op.is_savepoint()
        {
            self.txns[session].snapshot = Some(self.committed.clone());
        }
        let view = self.read_base(session);
        let (targets, maybe) = match op {
            Op::Update(p, _)
            | Op::Delete(p)
            | Op::LockingRead(p, _)
            | Op::Move(p, _)
            | Op::UpdateIgnore(p, _) => self.targets(session, s.table, p, &view, &[]),
            // The key it inserts or writes: a row there, or one another
            // transaction is inserting, holds it up.
            Op::Upsert(k, ..) | Op::InsertIgnore(k, _) => (BTreeSet::from([k]), BTreeSet::new()),
            _ => Default::default(),
        };
        let shared = matches!(op, Op::LockingRead(_, lock) if lock.mode.shared());
        let verdict = match op {
            Op::Read(_) if rules.read_view == ReadView::LockingLatest => Wait::May,
            Op::Read(_) => Wait::MustNot,
            _ if op.is_savepoint() => Wait::MustNot,
            _ if targets.iter().any(|&k| {
                !self.unsure(session, k) && self.locker(session, k, shared).is_some()
            }) =>
            {
                Wait::Must
            }
            _ if rules.extra_write_locks => Wait::May,
            // Locks the model cannot place: a row whose writer it is unsure
            // of, a row it may or may not pick that another locks, or
            // another session's write in flight, which may hold the locks
            // of rows it has reached already.
            _ if targets
                .iter()
                .chain(&maybe)
                .any(|&k| self.unsure_writer(session, k))
                || maybe
                    .iter()
                    .any(|&k| self.locker(session, k, shared).is_some())
                || self.write_in_flight(session) =>
            {
                Wait::May
            }
            _ => Wait::MustNot,
        };
        // Keys an insert or upsert writes: a row there, or one another
        // transaction is inserting, may hold it up.
        let verdict = self.key_wait(session, op, s.table, verdict);
        self.txns[session].started = Some(Started {
            step,
            view,
            targets,
            maybe,
            seen: Vec::new(),
            verdict,
        });
        match op {
            // It never waits: whether it meets a lock is its verdict.
            Op::LockingRead(_, lock) if lock.never_waits() => Wait::MustNot,
            _ => verdict,
        }
    }

    /// Step `step` finished with `outcome`; `waited`: it had been seen
    /// waiting for a lock.
    pub fn finish(&mut self, step: usize, outcome: Outcome, waited: bool) {
        let s = self.schedule.steps[step];
        let session = s.session;
        let started = self.txns[session].started.take();
        match (s.action, outcome) {
            (Action::Begin, Outcome::Ok(_)) => {
                if let Some(holder) = self.txns[session].begin_against {
                    self.anomaly(
                        AnomalyKind::DidNotWait,
                        step,
                        format!(
                            "BEGIN returned while session {}'s transaction held the write lock it takes (one writer at a time: it must fail at once)",
                            holder + 1
                        ),
                    );
                }
            }
            (Action::Commit, Outcome::Ok(_)) => self.commit(session),
            (Action::Rollback, _) => self.abort(session),
            (_, Outcome::Conflict(c)) => {
                let started = started.filter(|st| st.step == step);
                self.conflict(step, c, started.as_ref())
            }
            (Action::Stmt(op), Outcome::Ok(rows)) => {
                if self.txns[session].status != Status::Active {
                    return;
                }
                let Some(started) = started.filter(|st| st.step == step) else {
                    return;
                };
                self.txns[session].wrote |= op.changes_rows();
                self.txns[session].took_locks |=
                    op.locks_rows() || self.rules_of(session).read_view == ReadView::LockingLatest;
                match op {
                    Op::Read(p) => self.read(step, p, &started, rows.unwrap_or_default()),
                    Op::Insert(k, v) => {
                        let version = self.version(v, session);
                        self.txns[session].writes.insert(k, Some(version));
                    }
                    Op::Update(p, a) => self.write(step, p, Effect::Set(a), &started, waited),
                    Op::Delete(p) => self.write(step, p, Effect::Delete, &started, waited),
                    Op::LockingRead(p, lock) => {
                        let rows = rows.unwrap_or_default();
                        self.write(step, p, Effect::Lock(lock, rows), &started, waited)
                    }
                    Op::Move(p, pivot) => {
                        self.write(step, p, Effect::Move(pivot), &started, waited)
                    }
                    Op::UpdateIgnore(p, a) => {
                        self.write(step, p, Effect::SetIgnore(a), &started, waited)
                    }
                    Op::Upsert(k, v, c) => self.upsert(step, k, v, Some(c), &started),
                    Op::InsertIgnore(k, v) => self.upsert(step, k, v, None, &started),
                    Op::Savepoint(n) => self.savepoint(session, n),
                    Op::RollbackTo(n) => self.rollback_to(session, n),
                    Op::Release(n) => self.release(session, n),
                }
            }
        }
    }

    /// The first version of a new row.
    fn version(&mut self, v: i64, session: usize) -> Version {
        let new = self.version_of(0, v, session);
        Version { row: new.id, ..new }
    }

    /// A new version of row `row`.
    fn version_of(&mut self, row: u64, v: i64, session: usize) -> Version {
        self.next_id += 1;
        Version {
            v,
            id: self.next_id,
            writer: Some(session),
            row,
        }
    }

    fn commit(&mut self, session: usize) {
        if self.txns[session].status != Status::Active {
            return;
        }
        let open = std::mem::take(&mut self.txns[session].uncertain);
        self.uncertain_committed.extend(open);
        let writes = std::mem::take(&mut self.txns[session].writes);
        for (k, w) in writes {
            match w {
                Some(version) => {
                    self.committed.insert(k, version);
                }
                None => {
                    self.committed.remove(&k);
                }
            }
        }
        self.serial_unknown |= self.txns[session].skipped;
        self.txns[session].status = Status::Committed;
        self.commit_order.push(session);
        // Statements in flight may read these rows as they go.
        for t in 0..self.txns.len() {
            if let Some(st) = self.txns[t].started.as_mut() {
                st.seen.push(self.committed.clone());
            }
        }
    }

    fn abort(&mut self, session: usize) {
        if matches!(
            self.txns[session].status,
            Status::Active | Status::NotStarted
        ) {
            self.txns[session].writes.clear();
            self.txns[session].status = Status::Aborted;
        }
    }

    /// The DBMS refused a statement with a conflict: allowed or not, the
    /// transaction is over (lancet rolls it back).
    /// `started`: the statement as the model saw it sent (what it said
    /// of its locks then: its verdict).
    fn conflict(&mut self, step: usize, conflict: Conflict, started: Option<&Started>) {
        let verdict = started.map(|st| st.verdict);
        let s = self.schedule.steps[step];
        let rules = self.rules_of(s.session);
        let nowait = matches!(s.action, Action::Stmt(Op::LockingRead(_, lock)) if lock.wait == LockWait::NoWait);
        let allowed = match conflict {
            // An exclusive BEGIN fails only while another holds the lock.
            _ if s.action == Action::Begin && rules.exclusive_begin => {
                self.txns[s.session].begin_against.is_some()
            }
            // NOWAIT fails for a lock only where one may be held.
            Conflict::LockTimeout if nowait && verdict == Some(Wait::MustNot) => {
                self.anomaly(
                    AnomalyKind::SpuriousConflict,
                    step,
                    "NOWAIT failed with a lock error while no other open transaction held or may have held a lock on a row it locks".into(),
                );
                self.abort(s.session);
                return;
            }
            // Deadlocks and lock timeouts end waits, at every level.
            Conflict::Deadlock | Conflict::LockTimeout => true,
            Conflict::Serialization => {
                rules.serializable || rules.writes == WriteRule::SnapshotOrAbort
            }
            Conflict::DuplicateKey => self.may_duplicate(step, started),
        };
        if !allowed {
            self.anomaly(
                AnomalyKind::SpuriousConflict,
                step,
                match conflict {
                    Conflict::DuplicateKey => "a duplicate-key error, where no version of another row the model knows (committed, written by an open transaction, or in flight) holds the key or value it writes".to_string(),
                    _ => format!(
                        "a {conflict:?} failure, which {} never raises by its documented rules",
                        rules.label()
                    ),
                },
            );
        }
        self.abort(s.session);
    }
}

/// Rows as `{(k, v), ...}`.
pub fn show(rows: &[(i64, i64)]) -> String {
    let parts: Vec<String> = rows
        .iter()
        .map(|(k, v)| format!("({k}, {})", super::schedule::value_sql(*v)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}
