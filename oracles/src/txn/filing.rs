//! One finding of a transaction campaign: run again on a fresh table to
//! see that it repeats, filed at once through the runner (written and
//! indexed: signature, bug, flood control), then reduced to the fewest
//! sessions, statements and rows that still show the same anomaly at the
//! same level.

use super::bench::{Bench, Rules};
use super::driver::ScheduleRun;
use super::oracle::PreparedTxn;
use super::record::{ScheduleOrigin, TxnFinding};
use super::schedule::Schedule;
use super::NAME;
use lancet_core::fault::PlantedFault;
use lancet_core::SessionsDatabase;
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// How many more times a finding's schedule runs on a fresh table, so
/// that the finding says how often it shows.
const AGAIN: u32 = 2;

impl PreparedTxn {
    /// Confirms, files and reduces one finding. Past the flood limit a
    /// finding of its signature is only counted.
    pub(crate) fn file(
        &self,
        db: &mut dyn SessionsDatabase,
        rules: &Rules<'_>,
        bench: &mut Bench<'_>,
        schedule: Schedule,
        run: ScheduleRun,
        origin: ScheduleOrigin,
    ) -> anyhow::Result<()> {
        let signature = rules.signature(&run, &schedule);
        if !db.reserve(&signature) {
            return Ok(());
        }
        let filed = self.confirm_and_file(db, rules, bench, &schedule, &run, &signature, origin);
        db.release(&signature);
        let id = filed?;
        if let Some(budget) = self.reduce {
            if let Some((small, small_run)) =
                self.shrink(db, rules, bench, &schedule, &signature, budget)
            {
                let reduced = self.finding(
                    db,
                    rules,
                    signature,
                    &small,
                    &small_run,
                    origin,
                    (1, 1),
                    Some(schedule.size()),
                )?;
                db.file_reduced(&id, &serde_json::to_string(&reduced)?)?;
            }
        }
        Ok(())
    }

    /// Runs the schedule twice more on a fresh table, then files it. Its
    /// id.
    #[allow(clippy::too_many_arguments)]
    fn confirm_and_file(
        &self,
        db: &mut dyn SessionsDatabase,
        rules: &Rules<'_>,
        bench: &mut Bench<'_>,
        schedule: &Schedule,
        run: &ScheduleRun,
        signature: &str,
        origin: ScheduleOrigin,
    ) -> anyhow::Result<String> {
        let mut repeated = 0;
        for _ in 0..AGAIN {
            if let Ok(again) = bench.run(rules, schedule) {
                if rules.signature(&again, schedule) == signature {
                    repeated += 1;
                }
            }
        }
        let finding = self.finding(
            db,
            rules,
            signature.to_string(),
            schedule,
            run,
            origin,
            (repeated, AGAIN),
            None,
        )?;
        db.file(&serde_json::to_string(&finding)?)
    }

    /// The record of a schedule's run.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finding(
        &self,
        db: &dyn SessionsDatabase,
        rules: &Rules<'_>,
        signature: String,
        schedule: &Schedule,
        run: &ScheduleRun,
        origin: ScheduleOrigin,
        repeated: (u32, u32),
        reduced_from: Option<usize>,
    ) -> anyhow::Result<TxnFinding> {
        let tx = rules.tx;
        let of = rules.of(schedule)?;
        // A session's BEGIN, after its settings.
        let before = rules.before_begin(schedule);
        let begin = |level, mode| -> Vec<String> {
            before
                .iter()
                .cloned()
                .chain(tx.begin(level, mode))
                .collect()
        };
        let provider = db.provider();
        Ok(TxnFinding {
            oracle: NAME.to_string(),
            dbms: provider.name().to_string(),
            version: provider
                .version()
                .unwrap_or_else(|e| format!("unknown ({e})")),
            lancet: db.lancet_version().to_string(),
            signature,
            rules: of[0].clone(),
            session_rules: if schedule.is_mixed() {
                of.iter().map(|r| (*r).clone()).collect()
            } else {
                Vec::new()
            },
            anomalies: run.anomalies.clone(),
            error: run.failure.as_ref().map(|(step, e)| match *step {
                // The read of the final rows after the schedule.
                usize::MAX => format!("the final read: {e}"),
                step => format!("step {}: {e}", step + 1),
            }),
            schedule: schedule.clone(),
            trace: run.trace.clone(),
            final_rows: run.final_rows.clone(),
            origin,
            repeated,
            fault: rules.fault.map(|f| f.name().to_string()),
            reduced_from,
            create_table: (0..schedule.table_count())
                .flat_map(|t| {
                    let (index, placement) = schedule.shape(t);
                    tx.create_table(&schedule.table_name(t), index, placement)
                })
                .collect(),
            begin: begin(schedule.level, schedule.mode.as_deref()),
            session_begins: if schedule.is_mixed() {
                (0..schedule.sessions)
                    .map(|s| {
                        let (level, mode) = schedule.level_of(s);
                        begin(level, mode)
                    })
                    .collect()
            } else {
                Vec::new()
            },
            client_command: tx.client_command(),
            database_settings: self.knobs.sql(
                tx,
                &self.knobs.database_part(&schedule.settings),
                lancet_core::txn::KnobScope::Database,
            ),
        })
    }

    /// Greedy reduction: the first candidate that still shows `signature`
    /// replaces the schedule, until none does or the time is up. A
    /// schedule already tried is not tried again: swaps of adjacent steps
    /// could otherwise undo each other until the time is up (in a
    /// campaign and in `lancet reduce` alike).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn shrink(
        &self,
        db: &dyn SessionsDatabase,
        rules: &Rules<'_>,
        bench: &mut Bench<'_>,
        schedule: &Schedule,
        signature: &str,
        budget: Duration,
    ) -> Option<(Schedule, ScheduleRun)> {
        let deadline = Instant::now() + budget;
        let mut best: Option<(Schedule, ScheduleRun)> = None;
        let mut current = schedule.clone();
        let key = |s: &Schedule| serde_json::to_string(s).unwrap_or_default();
        let mut tried: HashSet<String> = HashSet::from([key(schedule)]);
        'outer: loop {
            for candidate in super::shrink::candidates(&current) {
                if Instant::now() >= deadline || db.interrupted() {
                    break 'outer;
                }
                if !tried.insert(key(&candidate)) {
                    continue;
                }
                // Timing-dependent anomalies get a second try.
                for _ in 0..2 {
                    let Ok(run) = bench.run(rules, &candidate) else {
                        continue;
                    };
                    if rules.signature(&run, &candidate) == signature {
                        current = candidate.clone();
                        best = Some((candidate, run));
                        continue 'outer;
                    }
                }
            }
            break;
        }
        best
    }
}
