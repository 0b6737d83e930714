//! The transaction oracle as the runner drives it ([`SessionsOracle`]):
//! each database of a campaign gets the driver's sessions, and schedules
//! drawn from the database's RNG run on them. A schedule that shows an
//! anomaly runs twice more on a fresh table to see that it repeats, is
//! filed at once, and is then reduced to the fewest sessions, statements
//! and rows that still show the same anomaly at the same level
//! ([`super::filing`]).

use super::bench::{open_bench, Rules};
use super::driver::{ScheduleRun, Timing};
use super::planted::{faults, TxnFault};
use super::record::{ScheduleOrigin, TxnFinding};
use super::schedule::{Schedule, MAX_SESSIONS};
use super::settings::Knobs;
use super::NAME;
use lancet_core::fault::Fault;
use lancet_core::txn::{IsolationLevel, KnobScope, LevelRules, Transactions};
use lancet_core::{
    FindingFiles, PreparedSessions, Provider, Reduction, Rng, SessionsDatabase, SessionsFacts,
    SessionsOracle, SessionsRun, ShownAgain,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How the summary names the schedules whose sessions mix levels.
const MIXED: &str = "mixed levels";

/// The transaction oracle.
pub struct Txn;

impl SessionsOracle for Txn {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "transactions of several sessions in an order lancet drives, against the isolation \
         level's documented rules (the server DBMSs and SQLite; not in `all`)"
    }

    fn faults(&self) -> Vec<Fault> {
        faults()
    }

    fn checks_per_database(&self) -> u64 {
        500
    }

    fn facts(&self, record: &str) -> anyhow::Result<SessionsFacts> {
        Ok(super::files::facts(&super::files::parse(record)?))
    }

    fn files(&self, record: &str, id: &str) -> anyhow::Result<FindingFiles> {
        super::files::files(&super::files::parse(record)?, id)
    }

    fn file_id(&self, n: u64, signature: &str) -> String {
        TxnFinding::file_id(n, signature)
    }

    fn prepare(
        &self,
        provider: Arc<dyn Provider>,
        run: &SessionsRun,
    ) -> anyhow::Result<Box<dyn PreparedSessions>> {
        let fault = planted(run, TxnFault::of, faults(), NAME, "transaction schedules")?;
        // The DBMS has transactions lancet models, at some level asked for.
        levels_for(&*provider, run, NAME)?;
        let tx = provider.transactions().ok_or_else(|| {
            anyhow::anyhow!("{} has no transactions lancet models", provider.name())
        })?;
        let knobs = Knobs::prepare(tx, &parse_levels(&run.values("levels"))?)?;
        Ok(Box::new(PreparedTxn {
            provider,
            knobs,
            strict: run.flag("strict"),
            fault,
            reduce: run.reduce,
            timing: Timing::default(),
        }))
    }
}

/// The levels an oracle over transactions draws on `provider` in `run`:
/// those it models, as `--txn-levels` keeps them. An error names
/// `oracle` where the DBMS has no transactions lancet models, or none of
/// the levels asked for.
pub(crate) fn levels_for(
    provider: &dyn Provider,
    run: &SessionsRun,
    oracle: &str,
) -> anyhow::Result<Vec<LevelRules>> {
    let tx = provider.transactions().ok_or_else(|| {
        anyhow::anyhow!(
            "--oracle {oracle} needs a DBMS whose transactions lancet models (the servers and \
             SQLite); {} is not one of them",
            provider.name()
        )
    })?;
    let levels = parse_levels(&run.values("levels"))?;
    let rules: Vec<LevelRules> = tx
        .levels()
        .into_iter()
        .filter(|r| levels.is_empty() || levels.contains(&r.level))
        .collect();
    anyhow::ensure!(
        !rules.is_empty(),
        "{} models none of the levels asked for",
        provider.name()
    );
    Ok(rules)
}

/// The run's planted fault as oracle `oracle`'s own type (`of`
/// recognises it among `faults`, which act on `acts_on`); an error for a
/// fault of another oracle.
pub(crate) fn planted<F>(
    run: &SessionsRun,
    of: impl Fn(&Fault) -> Option<F>,
    faults: Vec<Fault>,
    oracle: &str,
    acts_on: &str,
) -> anyhow::Result<Option<F>> {
    let Some(f) = &run.fault else {
        return Ok(None);
    };
    of(f).map(Some).ok_or_else(|| {
        let known: Vec<&str> = faults.iter().map(|f| f.name()).collect();
        anyhow::anyhow!(
            "the planted fault {} does not act on {acts_on} (--oracle {oracle} plants {})",
            f.name(),
            known.join(", ")
        )
    })
}

/// `--txn-levels`: isolation levels by name.
pub fn parse_levels(text: &[String]) -> anyhow::Result<Vec<IsolationLevel>> {
    text.iter()
        .map(
            |t| match t.to_ascii_lowercase().replace(['_', ' '], "-").as_str() {
                "read-uncommitted" | "ru" => Ok(IsolationLevel::ReadUncommitted),
                "read-committed" | "rc" => Ok(IsolationLevel::ReadCommitted),
                "repeatable-read" | "rr" => Ok(IsolationLevel::RepeatableRead),
                "serializable" | "ser" => Ok(IsolationLevel::Serializable),
                other => anyhow::bail!(
                "unknown isolation level '{other}' (read-uncommitted, read-committed, repeatable-read, serializable)"
            ),
            },
        )
        .collect()
}

/// The transaction oracle ready for a run on one DBMS.
pub(crate) struct PreparedTxn {
    pub(crate) provider: Arc<dyn Provider>,
    /// The levels this run draws and the settings it turns, with the
    /// rules the provider models under each.
    pub(crate) knobs: Knobs,
    /// `--txn-strict`: documented deviations are findings.
    pub(crate) strict: bool,
    pub(crate) fault: Option<TxnFault>,
    /// Time for reducing one finding; `None`: no reduction.
    pub(crate) reduce: Option<Duration>,
    pub(crate) timing: Timing,
}

impl PreparedTxn {
    pub(crate) fn tx(&self) -> anyhow::Result<&dyn Transactions> {
        self.provider.transactions().ok_or_else(|| {
            anyhow::anyhow!("{} has no transactions lancet models", self.provider.name())
        })
    }

    pub(crate) fn rules(&self) -> anyhow::Result<Rules<'_>> {
        Ok(Rules {
            tx: self.tx()?,
            knobs: &self.knobs,
            strict: self.strict,
            fault: self.fault,
            timing: self.timing,
        })
    }
}

impl PreparedSessions for PreparedTxn {
    fn run_database(
        &self,
        db: &mut dyn SessionsDatabase,
        rng: &mut Rng,
        checks: u64,
    ) -> anyhow::Result<()> {
        let tx = self.tx()?;
        let rules = self.rules()?;
        let levels = self.knobs.levels();
        let placements = tx.placements();
        let locking_reads = tx.locking_reads();
        // The database's settings, then each schedule's session settings.
        let database_settings = self.knobs.draw(rng, KnobScope::Database);
        let more = tx.more_statements();
        let forms = super::forms::Forms::of(tx);
        let mut bench = open_bench(tx, &self.knobs, &database_settings, db)?;
        let (seed, thread, database) = db.origin();
        for index in 0..checks {
            if db.should_stop() {
                break;
            }
            let mut schedule =
                Schedule::generate(rng, &levels, &placements, locking_reads, &forms, more);
            schedule.settings = self.knobs.draw(rng, KnobScope::Session);
            schedule.settings.extend(bench.settings().clone());
            let started = Instant::now();
            let run = bench.run(&rules, &schedule)?;
            db.count_check(
                run.trace.len() as u64,
                started.elapsed(),
                !run.final_rows.is_empty(),
            );
            let label = if schedule.is_mixed() {
                MIXED.to_string()
            } else {
                schedule.label_of(0)
            };
            let counts = [
                ("schedules", 1),
                ("undetermined", u64::from(run.undetermined.is_some())),
                ("committed", run.committed as u64),
                ("conflicts", run.conflicts as u64),
            ];
            let left_open = (
                "with rows left open after a wait",
                u64::from(!run.left_open.is_empty()),
            );
            db.tally(label, &[&counts[..], &[left_open]].concat());
            // How many schedules met each documented deviation (one entry
            // per deviation: `Standards::met`).
            for d in &run.deviations {
                db.tally(format!("deviation {}", d.name), &[("schedules", 1)]);
            }
            // How many schedules ran under each setting's value.
            for (name, value) in &schedule.settings {
                db.tally(format!("{name}={value}"), &counts);
            }
            if run.anomalies.is_empty() && run.failure.is_none() {
                continue;
            }
            let origin = ScheduleOrigin {
                seed,
                thread,
                database,
                schedule: index,
            };
            let lost = run
                .failure
                .as_ref()
                .is_some_and(|(_, e)| e.kind != lancet_core::FailureKind::Statement);
            self.file(db, &rules, &mut bench, schedule, run, origin)?;
            if lost {
                // The sessions are gone with the server: a fresh database.
                break;
            }
        }
        Ok(())
    }

    fn replay(&self, record: &str, db: &mut dyn SessionsDatabase) -> anyhow::Result<ShownAgain> {
        let finding = self.recorded(record)?;
        let rules = self.rules_of(&finding)?;
        let mut bench = open_bench(rules.tx, &self.knobs, &finding.schedule.settings, db)?;
        let (signature, run) = run_again(&mut bench, &rules, &finding)?;
        let ends = endings(&run);
        if signature != finding.signature {
            return Ok(ShownAgain {
                same: false,
                said: format!(
                    "the schedule now shows {signature}, not {} ({ends})",
                    finding.signature
                ),
            });
        }
        let anomalies: Vec<String> = run
            .anomalies
            .iter()
            .map(|a| format!("{} at step {}: {}", a.kind.name(), a.step + 1, a.detail))
            .collect();
        Ok(ShownAgain {
            same: true,
            said: format!(
                "the schedule still shows {signature}: {} ({ends})",
                anomalies.join("; ")
            ),
        })
    }

    fn reduce(
        &self,
        record: &str,
        db: &mut dyn SessionsDatabase,
        budget: Duration,
    ) -> anyhow::Result<Reduction> {
        let finding = self.recorded(record)?;
        let rules = self.rules_of(&finding)?;
        let mut bench = open_bench(rules.tx, &self.knobs, &finding.schedule.settings, db)?;
        let (shown, _) = run_again(&mut bench, &rules, &finding)?;
        let before = finding.schedule.size();
        if shown != finding.signature {
            return Ok(Reduction::NotShown(format!(
                "its schedule now shows {shown}, not {}",
                finding.signature
            )));
        }
        let reduced = self.shrink(
            db,
            &rules,
            &mut bench,
            &finding.schedule,
            &finding.signature,
            budget,
        );
        // Steps only reordered are not smaller: the schedule was reduced.
        let Some((small, run)) = reduced.filter(|(s, _)| s.size() < before) else {
            return Ok(Reduction::Already(format!(
                "no smaller schedule shows {} ({before} statements and rows)",
                finding.signature
            )));
        };
        let size = finding.reduced_from.unwrap_or(before);
        let reduced = self.finding(
            db,
            &rules,
            finding.signature.clone(),
            &small,
            &run,
            finding.origin,
            (1, 1),
            Some(size),
        )?;
        Ok(Reduction::Smaller {
            said: format!(
                "{before} -> {} statements and rows, {} -> {} session(s)",
                reduced.schedule.size(),
                finding.schedule.sessions,
                reduced.schedule.sessions,
            ),
            record: serde_json::to_string(&reduced)?,
        })
    }
}

impl PreparedTxn {
    /// A finding's record, with its planted fault as the run says: a
    /// replay with the fault off (`--no-fault`) or with the run's
    /// (`--known`) is prepared with that fault.
    fn recorded(&self, record: &str) -> anyhow::Result<TxnFinding> {
        super::files::parse(record)
    }

    /// The rules a recorded schedule runs under: each of its sessions'
    /// levels as this DBMS models them, and this run's fault.
    fn rules_of(&self, finding: &TxnFinding) -> anyhow::Result<Rules<'_>> {
        let s = &finding.schedule;
        anyhow::ensure!(
            (1..=MAX_SESSIONS).contains(&s.sessions)
                && s.steps.iter().all(|step| step.session < s.sessions),
            "the schedule has {} sessions (steps of sessions up to {}); lancet drives 1 to {MAX_SESSIONS}",
            s.sessions,
            s.steps.iter().map(|step| step.session + 1).max().unwrap_or(0),
        );
        // Its settings and levels, as this DBMS models them; a finding of
        // a deviation is checked as --txn-strict checks it.
        let mut rules = self.rules()?;
        rules.of(s)?;
        rules.strict |= finding.anomalies.iter().any(|a| a.deviation.is_some());
        Ok(rules)
    }
}

/// Runs a finding's schedule again: the signature it shows and the run.
/// A timing-dependent anomaly gets a second try, as in the campaign.
fn run_again(
    bench: &mut super::bench::Bench<'_>,
    rules: &Rules<'_>,
    finding: &TxnFinding,
) -> anyhow::Result<(String, ScheduleRun)> {
    let mut last = None;
    for _ in 0..2 {
        let run = bench.run(rules, &finding.schedule)?;
        let signature = rules.signature(&run, &finding.schedule);
        let same = signature == finding.signature;
        last = Some((signature, run));
        if same {
            break;
        }
    }
    last.ok_or_else(|| anyhow::anyhow!("the schedule did not run"))
}

/// How a run's transactions ended, as `lancet replay` and the known bugs
/// of a run (`--known`) say it.
fn endings(run: &ScheduleRun) -> String {
    format!(
        "{} committed, {} ended in a conflict",
        run.committed, run.conflicts
    )
}
