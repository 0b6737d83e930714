//! Runs one schedule: a thread per session holds its connection, and the
//! driver sends each step only when the schedule says, waits to see
//! whether it returns or waits for a lock, and feeds the model what
//! happened in the order it happened. Where the order cannot be known
//! (a statement returned while no one watched and after the rows it reads
//! may have changed), the schedule is *undetermined*: its later checks are
//! skipped and counted, never guessed.

use super::anomaly::Anomaly;
use super::model::{Model, Outcome, Status, Wait};
use super::planted::{Planted, TxnFault};
use super::schedule::{Action, Op, Schedule};
use super::sessions::{pairs, run_now, Reply, Sessions};
use super::tables::{final_rows_sql, set_up_tables};
use crossbeam_channel::RecvTimeoutError;
use lancet_core::txn::{LevelRules, Transactions};
use lancet_core::{Connection, DbError, FailureKind};
use std::time::{Duration, Instant};

mod deviations;
mod waits;

pub use deviations::DeviationMet;
use deviations::Standards;

/// How long the driver waits, and for what.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// A statement not back in this time is taken to wait for a lock.
    pub block: Duration,
    /// How long a statement that must not wait (or no longer has to) may
    /// take before lancet calls it stuck.
    pub long: Duration,
    /// After a transaction ends, how long to wait for statements that may
    /// have waited for its locks (InnoDB's gap locks) to return.
    pub settle: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            block: Duration::from_millis(100),
            long: Duration::from_secs(10),
            settle: Duration::from_millis(300),
        }
    }
}

/// One line of what happened, for the finding's table.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct TraceLine {
    pub step: usize,
    pub session: usize,
    pub sql: String,
    /// `ok`, the rows read, `waited`, or the error.
    pub result: String,
    /// It was seen waiting for a lock before it returned.
    pub waited: bool,
}

/// What one run of a schedule came to.
#[derive(Debug, Default)]
pub struct ScheduleRun {
    pub anomalies: Vec<Anomaly>,
    pub trace: Vec<TraceLine>,
    /// Why the checks after some point were skipped.
    pub undetermined: Option<String>,
    /// A statement failed in a way no level allows: the step and error.
    pub failure: Option<(usize, DbError)>,
    pub final_rows: Vec<(i64, i64)>,
    /// Transactions that committed and that ended in a conflict.
    pub committed: usize,
    pub conflicts: usize,
    /// The documented deviations the schedule met (see `deviations`).
    pub deviations: Vec<DeviationMet>,
    /// Rows writes left open because they had waited for a lock, as
    /// `(step, key)` ([`Model::left_open`]): a documented deviation
    /// the model does not check.
    pub left_open: Vec<(usize, i64)>,
}

/// Everything one schedule run needs.
pub struct Run<'a> {
    pub tx: &'a dyn Transactions,
    /// Each session's rules.
    pub rules: Vec<&'a LevelRules>,
    pub schedule: &'a Schedule,
    pub timing: Timing,
    pub fault: Option<TxnFault>,
    /// What each session sends before its BEGIN: the schedule's session
    /// settings (`SET SESSION innodb_snapshot_isolation = ON`).
    pub before_begin: Vec<String>,
    /// `--txn-strict`: a documented deviation the schedule met is an
    /// anomaly of its own (where no other anomaly shows).
    pub strict: bool,
}

impl Run<'_> {
    /// The statements that begin session `s`'s transaction, its
    /// settings first.
    fn begin_of(&self, s: usize) -> Vec<String> {
        let (level, mode) = self.schedule.level_of(s);
        let mut statements = self.before_begin.clone();
        statements.extend(self.tx.begin(level, mode));
        statements
    }

    /// Whether some session's writes may take locks beyond their rows.
    fn extra_write_locks(&self) -> bool {
        self.rules.iter().any(|r| r.extra_write_locks)
    }

    /// Creates the schedule's table through `setup`, runs the schedule on
    /// `sessions`, and reads the final rows through `setup`. Errors are
    /// the setup's (a DBMS gone, a table that cannot be made).
    pub fn execute(
        &self,
        setup: &mut dyn Connection,
        sessions: &Sessions,
        open: &mut dyn FnMut() -> anyhow::Result<Box<dyn Connection>>,
    ) -> anyhow::Result<ScheduleRun> {
        set_up_tables(self.tx, self.schedule, setup, sessions)?;
        let planted = match self.fault {
            None => None,
            Some(fault) => Some(Planted::plant(fault, self.tx, self.schedule, open)?),
        };
        let ids = self.session_ids(sessions);
        let mut state = Driving::new(self, sessions, planted, setup, ids);
        state.drive();
        state.finish();
        Ok(state.out)
    }
}

/// A statement in flight: its step, when it was sent, what the model
/// expected, and how many transaction ends had happened when the driver
/// last watched it.
#[derive(Clone, Copy)]
struct InFlight {
    step: usize,
    sent: Instant,
    watched_at: usize,
    /// What the model said of its waiting when it was sent.
    wait: Wait,
}

struct Driving<'r, 'a> {
    run: &'r Run<'a>,
    /// A connection beside the sessions (the one that set the table up):
    /// it asks the server whether a session waits for a lock, and reads
    /// the final rows.
    observer: &'r mut dyn Connection,
    /// Each session's id on the server, where it names them (see
    /// `Transactions::session_id_sql`).
    ids: Vec<Option<String>>,
    model: Model<'a>,
    /// The standard's rules beside the documented ones.
    standards: Standards<'a>,
    sessions: &'r Sessions,
    planted: Option<Planted>,
    inflight: Vec<Option<InFlight>>,
    /// Transactions ended so far (commits, rollbacks, conflicts).
    ends: usize,
    out: ScheduleRun,
}

impl<'r, 'a> Driving<'r, 'a> {
    fn new(
        run: &'r Run<'a>,
        sessions: &'r Sessions,
        planted: Option<Planted>,
        observer: &'r mut dyn Connection,
        ids: Vec<Option<String>>,
    ) -> Self {
        Driving {
            run,
            model: Model::mixed(run.schedule, run.rules.clone()),
            standards: Standards::new(run.schedule, &run.rules),
            sessions,
            planted,
            inflight: vec![None; run.schedule.sessions],
            observer,
            ids,
            ends: 0,
            out: ScheduleRun::default(),
        }
    }

    fn sql(&self, step: usize) -> (String, bool) {
        let s = self.run.schedule.steps[step];
        match s.action {
            Action::Begin => (self.run.begin_of(s.session).join("; "), false),
            Action::Commit => (
                self.run.tx.end(lancet_core::txn::TransactionEnd::Commit),
                false,
            ),
            Action::Rollback => (
                self.run.tx.end(lancet_core::txn::TransactionEnd::Rollback),
                false,
            ),
            Action::Stmt(op) => (
                self.run.schedule.statement_sql(step).unwrap_or_default(),
                op.returns_rows(),
            ),
        }
    }

    fn stopped(&self) -> bool {
        self.out.undetermined.is_some() || self.out.failure.is_some()
    }

    fn undetermined(&mut self, why: String) {
        if self.out.undetermined.is_none() {
            self.out.undetermined = Some(why);
        }
    }

    /// Sends the steps in order; a session that waits keeps its later
    /// steps until it returns.
    fn drive(&mut self) {
        let mut remaining: Vec<usize> = (0..self.run.schedule.steps.len()).collect();
        while !self.stopped() {
            self.poll();
            if self.stopped() {
                break;
            }
            let next = remaining.iter().position(|&i| {
                let s = self.run.schedule.steps[i].session;
                self.inflight[s].is_none()
            });
            match next {
                Some(at) => {
                    let step = remaining.remove(at);
                    let session = self.run.schedule.steps[step].session;
                    // A transaction a conflict ended sends nothing more.
                    if matches!(
                        self.model.status(session),
                        Status::Aborted | Status::Committed
                    ) {
                        continue;
                    }
                    self.send(step);
                }
                None if self.inflight.iter().all(Option::is_none) => break,
                None => self.wait_for_any(),
            }
        }
    }

    /// Collects statements that returned while the driver did other things.
    fn poll(&mut self) {
        for s in 0..self.inflight.len() {
            if let Some(f) = self.inflight[s] {
                if let Ok(reply) = self.sessions.threads[s].recv.try_recv() {
                    self.inflight[s] = None;
                    self.returned(f, reply, true, false);
                }
            }
        }
    }

    fn send(&mut self, step: usize) {
        let st = self.run.schedule.steps[step];
        let session = st.session;
        let wait = self.model.start(step);
        self.standards.start(step);
        let (sql, is_query) = self.sql(step);
        let sent = Instant::now();
        let f = InFlight {
            step,
            sent,
            watched_at: self.ends,
            wait,
        };
        let planted = self.planted.as_mut();
        if let Some(reply) = planted.and_then(|p| p.reply(self.run.schedule, step, &sql, is_query))
        {
            self.returned(f, reply, false, true);
            return;
        }
        if st.action == Action::Begin {
            // A DBMS that sets the level in a statement of its own
            // (MariaDB) gets the statements one by one.
            let begin = self.run.begin_of(session);
            for pre in &begin[..begin.len().saturating_sub(1)] {
                let thread = &self.sessions.threads[session];
                let reply = if thread.run(pre, false) {
                    thread.recv.recv_timeout(self.run.timing.long).ok()
                } else {
                    None
                };
                match reply {
                    Some(Ok(_)) => {}
                    Some(Err(e)) => {
                        self.out.failure = Some((step, e));
                        return;
                    }
                    None => {
                        self.out.failure = Some((step, lost("no answer to the level's setting")));
                        return;
                    }
                }
            }
        }
        let sql = if st.action == Action::Begin {
            self.run
                .begin_of(session)
                .last()
                .cloned()
                .unwrap_or_default()
        } else {
            sql
        };
        if !self.sessions.threads[session].run(&sql, is_query) {
            self.out.failure = Some((step, lost("the session's thread is gone")));
            return;
        }
        let patience = match wait {
            Wait::MustNot => self.run.timing.long,
            Wait::Must | Wait::May => self.run.timing.block,
        };
        match self.sessions.threads[session].recv.recv_timeout(patience) {
            Ok(reply) => {
                if (wait == Wait::Must || self.model.must_refuse(session)) && reply.is_ok() {
                    self.check_did_wait(step);
                }
                self.returned(f, reply, false, true);
            }
            Err(RecvTimeoutError::Timeout) if wait != Wait::MustNot => {
                match self.unless_waiting(session) {
                    Some(reply) => {
                        if wait == Wait::Must && reply.is_ok() {
                            self.check_did_wait(step);
                        }
                        self.returned(f, reply, false, true);
                    }
                    None => {
                        self.inflight[session] = Some(f);
                        self.trace(step, "waiting for a lock".into(), true);
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                self.inflight[session] = Some(f);
                self.trace(step, "waiting for a lock".into(), true);
                if wait == Wait::MustNot {
                    match st.action {
                        Action::Stmt(Op::Read(_)) => self
                            .model
                            .read_blocked(step, patience.as_millis()),
                        _ => self.undetermined(format!(
                            "step {} did not return in {} s where lancet's model sees no lock for it to wait for",
                            step + 1,
                            patience.as_secs()
                        )),
                    }
                    self.undetermined("a statement that must not wait is stuck".into());
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                self.out.failure = Some((step, lost("the session's thread died")));
            }
        }
    }

    /// A write that must wait (or a NOWAIT read that must fail) returned
    /// at once. That is a finding only if a transaction holding the lock
    /// could not have let go of it: it has no statement in flight (which
    /// could have failed and released its locks, or rolled back to a
    /// savepoint), so only lancet's COMMIT or ROLLBACK could end it.
    fn check_did_wait(&mut self, step: usize) {
        let session = self.run.schedule.steps[step].session;
        let lockers = self.model.blockers(session);
        if lockers.iter().any(|&l| self.inflight[l].is_none()) {
            self.model.did_not_wait(step);
        }
    }

    /// A statement returned. `late`: it had been waiting; `watched`: the
    /// driver was waiting for it (not a poll).
    fn returned(&mut self, f: InFlight, reply: Reply, late: bool, watched: bool) {
        let step = f.step;
        let st = self.run.schedule.steps[step];
        if late && !watched && f.watched_at != self.ends {
            // It returned at some moment after transactions ended that
            // the driver did not watch it across.
            self.undetermined(format!(
                "step {} returned after {} ms at a moment lancet cannot place among the other steps",
                step + 1,
                f.sent.elapsed().as_millis()
            ));
        }
        match reply {
            Ok(rows) => {
                let rows = match rows.map(|r| pairs(&r)).transpose() {
                    Ok(rows) => rows,
                    Err(why) => {
                        self.out.failure = Some((step, DbError::statement(None, why)));
                        return;
                    }
                };
                let shown = rows
                    .as_ref()
                    .map_or("ok".to_string(), |r| super::model::show(r));
                self.trace(step, shown, late);
                if self.stopped() {
                    return;
                }
                let outcome = Outcome::Ok(rows);
                self.standards.finish(step, &outcome, late);
                self.model.finish(step, outcome, late);
                // ROLLBACK TO SAVEPOINT may free locks as an end does.
                if matches!(
                    st.action,
                    Action::Commit | Action::Rollback | Action::Stmt(Op::RollbackTo(_))
                ) {
                    if st.action == Action::Commit {
                        self.out.committed += 1;
                    }
                    self.ended();
                }
            }
            Err(e) => match self.run.tx.conflict(&e) {
                // A statement of a schedule runs past the session's time
                // limit only while it waits for a lock.
                _ if e.kind == FailureKind::Timeout => {
                    self.conflicted(step, lancet_core::txn::Conflict::LockTimeout, e, late)
                }
                Some(c) if e.kind == FailureKind::Statement => {
                    // A lock timeout after a wait for a lock the rules say
                    // it never waits for. At least a second: a DBMS that
                    // never waits (SQLite's SQLITE_BUSY) answers at once,
                    // if late on a loaded machine, never that late.
                    if c == lancet_core::txn::Conflict::LockTimeout
                        && f.wait == Wait::MustNot
                        && f.sent.elapsed() >= Duration::from_secs(1)
                        && !st_is_read(st.action)
                        && !never_waits(st.action)
                    {
                        self.model
                            .blocking_write(step, f.sent.elapsed().as_millis());
                    }
                    self.conflicted(step, c, e, late)
                }
                _ => {
                    self.trace(step, format!("error: {e}"), late);
                    self.out.failure = Some((step, e));
                }
            },
        }
    }

    /// A statement failed with a conflict: the model judges it, and
    /// lancet rolls the transaction back at once, so that its locks go
    /// now on every DBMS.
    fn conflicted(&mut self, step: usize, c: lancet_core::txn::Conflict, e: DbError, late: bool) {
        let st = self.run.schedule.steps[step];
        // A lock timeout that ended a certain deadlock: the DBMS did not
        // detect it.
        if c == lancet_core::txn::Conflict::LockTimeout && !never_waits(st.action) {
            let mut waiting: Vec<bool> = self.inflight.iter().map(Option::is_some).collect();
            waiting[st.session] = true;
            if let Some(cycle) = self.model.deadlock_cycle(st.session, &waiting) {
                self.model
                    .undetected_deadlock(step, &cycle, "a lock timeout ended it");
            }
        }
        self.trace(step, format!("{c:?}: {e}"), late);
        self.out.conflicts += 1;
        self.standards.finish(step, &Outcome::Conflict(c), late);
        self.model.finish(step, Outcome::Conflict(c), late);
        // lancet ends the transaction at once, so that its
        // locks go now on every DBMS.
        let rollback = self.run.tx.end(lancet_core::txn::TransactionEnd::Rollback);
        let thread = &self.sessions.threads[st.session];
        // A BEGIN that failed started nothing to roll back (SQLite refuses
        // a ROLLBACK outside a transaction).
        let open = !matches!(st.action, Action::Rollback | Action::Begin);
        if open && thread.run(&rollback, false) {
            match thread.recv.recv_timeout(self.run.timing.long) {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => self.out.failure = Some((step, e)),
                Err(_) => self.undetermined("a ROLLBACK did not return".into()),
            }
        }
        self.ended();
    }

    fn trace(&mut self, step: usize, result: String, waited: bool) {
        let (sql, _) = self.sql(step);
        let session = self.run.schedule.steps[step].session;
        // A statement seen waiting and then returning is one line.
        if let Some(line) = self
            .out
            .trace
            .iter_mut()
            .find(|l| l.step == step && l.result == "waiting for a lock")
        {
            line.result = result;
            line.waited = true;
            return;
        }
        self.out.trace.push(TraceLine {
            step,
            session,
            sql,
            result,
            waited,
        });
    }

    /// Ends what is still open and reads the final rows.
    fn finish(&mut self) {
        // Anything left open is rolled back, so the table can go.
        let rollback = self.run.tx.end(lancet_core::txn::TransactionEnd::Rollback);
        for s in 0..self.inflight.len() {
            if self.inflight[s].take().is_some() {
                let _ = self.sessions.threads[s]
                    .recv
                    .recv_timeout(self.run.timing.long);
            }
            // Every session, whatever the model thinks of it: a failed
            // statement may have left a transaction open.
            if self.sessions.threads[s].run(&rollback, false) {
                let _ = self.sessions.threads[s]
                    .recv
                    .recv_timeout(self.run.timing.long);
            }
        }
        if self.stopped() {
            self.out.anomalies = std::mem::take(&mut self.model.anomalies);
            self.out.left_open = std::mem::take(&mut self.model.left_open);
            return;
        }
        let sql = final_rows_sql(self.run.schedule);
        match run_now(self.observer, &sql, true) {
            Ok(Some(rows)) => match pairs(&rows) {
                Ok(rows) => {
                    self.model.end(&rows);
                    self.standards.end(&rows);
                    self.out.final_rows = rows;
                }
                Err(why) => self.out.failure = Some((usize::MAX, DbError::statement(None, why))),
            },
            Ok(None) => {}
            Err(e) => self.out.failure = Some((usize::MAX, e)),
        }
        self.out.anomalies = std::mem::take(&mut self.model.anomalies);
        self.out.left_open = std::mem::take(&mut self.model.left_open);
        if self.stopped() {
            return;
        }
        self.out.deviations = self.standards.met(&self.out.anomalies);
        if self.run.strict && self.out.anomalies.is_empty() {
            self.out.anomalies = self
                .out
                .deviations
                .iter()
                .map(|d| Anomaly {
                    deviation: Some(d.name.clone()),
                    detail: format!(
                        "the documented deviation {} (which --txn-strict reports): by the standard's rules, {}",
                        d.name, d.anomaly.detail
                    ),
                    ..d.anomaly.clone()
                })
                .collect();
        }
    }
}

fn lost(why: &str) -> DbError {
    DbError {
        kind: FailureKind::ConnectionLost,
        code: None,
        message: why.to_string(),
    }
}

/// Whether a step is a locking read that never waits (NOWAIT, SKIP
/// LOCKED): its lock error comes at once, whatever the model's verdict.
fn never_waits(action: Action) -> bool {
    matches!(action, Action::Stmt(Op::LockingRead(_, lock)) if lock.never_waits())
}

/// Whether a step is a plain read.
fn st_is_read(action: Action) -> bool {
    matches!(action, Action::Stmt(op) if op.is_read())
}
