//! How a schedule shrinks for the reducer: one session, one statement or
//! one row fewer, each a candidate the oracle keeps ([`super::filing`])
//! if the same anomaly still shows.

use super::schedule::{table_of, Action, Op, Schedule};

/// The schedules one simplification away from `schedule`, largest cuts
/// first.
pub fn candidates(schedule: &Schedule) -> Vec<Schedule> {
    let mut out = Vec::new();
    if schedule.sessions > 1 {
        for s in 0..schedule.sessions {
            out.push(without_session(schedule, s));
        }
    }
    for (i, step) in schedule.steps.iter().enumerate() {
        if let Action::Stmt(op) = step.action {
            let mut c = schedule.clone();
            c.steps.remove(i);
            // A savepoint goes with the statements that name it.
            if let Op::Savepoint(n) = op {
                let named = |a: Action| matches!(a, Action::Stmt(Op::RollbackTo(m) | Op::Release(m)) if m == n);
                let mut at = 0;
                c.steps.retain(|st| {
                    at += 1;
                    at <= i || st.session != step.session || !named(st.action)
                });
            }
            out.push(c);
        }
    }
    // A statement earlier in the order, which makes the schedule read
    // more like a sequence of turns.
    for i in 1..schedule.steps.len() {
        if schedule.steps[i].session != schedule.steps[i - 1].session {
            let mut c = schedule.clone();
            c.steps.swap(i, i - 1);
            out.push(c);
        }
    }
    for i in 0..schedule.rows.len() {
        let mut c = schedule.clone();
        c.rows.remove(i);
        out.push(c);
    }
    // Without the last table, its statements and rows, and the
    // statements whose subquery reads it (which would fail on a fresh
    // database, where no such table is left from earlier schedules).
    let t = schedule.more_tables.len();
    if t > 0 {
        let mut c = schedule.clone();
        c.steps.retain(|st| match st.action {
            Action::Stmt(op) => st.table != t && !reads_table(op, t),
            _ => true,
        });
        c.rows.retain(|(k, _)| table_of(*k) != t);
        c.more_tables.pop();
        out.push(c);
    }
    // Every session at one of the mix's levels.
    let mut seen = Vec::new();
    for l in &schedule.mixed {
        if !seen.contains(l) {
            seen.push(l.clone());
            out.push(Schedule {
                level: l.level,
                mode: l.mode.clone(),
                mixed: Vec::new(),
                ..schedule.clone()
            });
        }
    }
    if schedule.unique_v {
        out.push(Schedule {
            unique_v: false,
            ..schedule.clone()
        });
    }
    if schedule.index_v {
        out.push(Schedule {
            index_v: false,
            unique_v: false,
            ..schedule.clone()
        });
    }
    out
}

fn without_session(schedule: &Schedule, gone: usize) -> Schedule {
    let mut c = schedule.clone();
    c.steps.retain(|st| st.session != gone);
    for st in &mut c.steps {
        if st.session > gone {
            st.session -= 1;
        }
    }
    c.sessions -= 1;
    if !c.mixed.is_empty() {
        c.mixed.remove(gone);
        c.settle_levels();
    }
    c
}

/// Whether `op`'s condition has a subquery over table `t`.
fn reads_table(op: super::schedule::Op, t: usize) -> bool {
    use super::schedule::{Op, Pred};
    let pred = match op {
        Op::Read(p)
        | Op::LockingRead(p, _)
        | Op::Update(p, _)
        | Op::Delete(p)
        | Op::Move(p, _)
        | Op::UpdateIgnore(p, _) => p,
        _ => return false,
    };
    matches!(pred, Pred::Sub(sub) if sub.from() == t)
}
