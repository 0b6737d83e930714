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
use crate::file_finding::file_finding;
use lancet_core::fault::PlantedFault;
use lancet_core::SessionsDatabase;
use std::time::{Duration, Instant};

/// How many more times a finding's schedule runs on a fresh table, so
/// that the finding says how often it shows.
const AGAIN: u32 = 2;

impl PreparedTxn {
    /// Confirms, files and reduces one finding
    /// ([`crate::file_finding::file_finding`]): past the flood limit a
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
        let record = |finding: TxnFinding| Ok(serde_json::to_string(&finding)?);
        file_finding(
            db,
            bench,
            &signature,
            |db, bench| {
                let repeated = self.repeated(rules, bench, &schedule, &signature);
                let finding = self.finding(
                    db,
                    rules,
                    signature.clone(),
                    &schedule,
                    &run,
                    origin,
                    (repeated, AGAIN),
                    None,
                )?;
                record(finding)
            },
            |db, bench| {
                let Some(budget) = self.reduce else {
                    return Ok(None);
                };
                let Some((small, small_run)) =
                    self.shrink(db, rules, bench, &schedule, &signature, budget)
                else {
                    return Ok(None);
                };
                let reduced = self.finding(
                    db,
                    rules,
                    signature.clone(),
                    &small,
                    &small_run,
                    origin,
                    (1, 1),
                    Some(schedule.size()),
                )?;
                record(reduced).map(Some)
            },
        )
    }

    /// How many of [`AGAIN`] runs of the schedule on a fresh table show
    /// `signature`.
    fn repeated(
        &self,
        rules: &Rules<'_>,
        bench: &mut Bench<'_>,
        schedule: &Schedule,
        signature: &str,
    ) -> u32 {
        (0..AGAIN)
            .filter(|_| {
                bench
                    .run(rules, schedule)
                    .is_ok_and(|again| rules.signature(&again, schedule) == signature)
            })
            .count() as u32
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
        Ok(TxnFinding {
            made: crate::maker::Maker::of(NAME, db),
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

    /// Greedy reduction ([`crate::greedy::reduce`]) until the time is
    /// up, in a campaign and in `lancet reduce` alike; a timing-dependent
    /// anomaly gets a second try on each candidate.
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
        crate::greedy::reduce(
            schedule,
            super::shrink::candidates,
            |candidate| {
                (0..2).find_map(|_| {
                    let run = bench.run(rules, candidate).ok()?;
                    (rules.signature(&run, candidate) == signature).then_some(run)
                })
            },
            || Instant::now() >= deadline || db.interrupted(),
        )
    }
}
