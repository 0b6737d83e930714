//! The stress oracle as the runner drives it ([`SessionsOracle`]): each
//! database of a campaign gets the sessions of a [`StressBench`], and
//! rounds drawn from the database's RNG run on them, one level per round
//! (of those the provider models, as `--txn-levels` keeps them). A round
//! that breaks an invariant runs twice more to see whether it repeats, is
//! filed at once, and is then reduced to fewer sessions and transactions
//! while it still shows the same violation ([`super::filing`]).

use super::bench::{open_bench, StressBench};
use super::invariant::{judge, Violation};
use super::planted::{faults, StressFault};
use super::record::{signature_of, RoundOrigin, StressFinding};
use super::round::{Round, Setting, MAX_SESSIONS};
use super::run::RoundRun;
use super::NAME;
use crate::txn::settings::Knobs;
use crate::txn::{levels_for, parse_levels, planted};
use lancet_core::fault::Fault;
use lancet_core::txn::{IsolationLevel, KnobScope, LevelRules, Settings, Transactions};
use lancet_core::{
    FindingFiles, PreparedSessions, Provider, Reduction, Rng, SessionsDatabase, SessionsFacts,
    SessionsOracle, SessionsRun, ShownAgain,
};
use rand::Rng as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The stress oracle.
pub struct TxnStress;

impl SessionsOracle for TxnStress {
    fn name(&self) -> &'static str {
        NAME
    }

    fn description(&self) -> &'static str {
        "many short transactions of 2 to 8 sessions at once over few rows, then an invariant: \
         a bank's total, counters at their committed increments (the server DBMSs and SQLite; \
         not in `all`)"
    }

    fn faults(&self) -> Vec<Fault> {
        faults()
    }

    fn checks_per_database(&self) -> u64 {
        20
    }

    fn facts(&self, record: &str) -> anyhow::Result<SessionsFacts> {
        Ok(super::files::facts(&super::files::parse(record)?))
    }

    fn files(&self, record: &str, id: &str) -> anyhow::Result<FindingFiles> {
        super::files::files(&super::files::parse(record)?, id)
    }

    fn file_id(&self, n: u64, signature: &str) -> String {
        super::record::file_id(n, signature)
    }

    fn prepare(
        &self,
        provider: Arc<dyn Provider>,
        run: &SessionsRun,
    ) -> anyhow::Result<Box<dyn PreparedSessions>> {
        let fault = planted(run, StressFault::of, faults(), NAME, "stress rounds")?;
        let rules = levels_for(&*provider, run, NAME)?;
        let levels = parse_levels(&run.values("levels"))?;
        let knobs = match provider.transactions() {
            Some(tx) => Knobs::prepare(tx, &levels)?,
            None => anyhow::bail!("{} has no transactions lancet models", provider.name()),
        };
        Ok(Box::new(PreparedStress {
            provider,
            rules,
            knobs,
            fault,
            reduce: run.reduce,
        }))
    }
}

/// The stress oracle ready for a run on one DBMS.
pub(crate) struct PreparedStress {
    provider: Arc<dyn Provider>,
    /// The levels (and modes) this run draws, as the provider models them.
    rules: Vec<LevelRules>,
    /// The DBMS's transaction settings, and the levels' rules under each
    /// combination of their values.
    knobs: Knobs,
    pub(crate) fault: Option<StressFault>,
    /// Time for reducing one finding; `None`: no reduction.
    pub(crate) reduce: Option<Duration>,
}

/// A round's run with what it showed: the invariants it broke and its
/// signature (`None`: clean).
pub(crate) struct Judged {
    pub(crate) run: RoundRun,
    pub(crate) violations: Vec<Violation>,
    pub(crate) signature: Option<String>,
}

impl PreparedStress {
    pub(crate) fn tx(&self) -> anyhow::Result<&dyn Transactions> {
        self.provider.transactions().ok_or_else(|| {
            anyhow::anyhow!("{} has no transactions lancet models", self.provider.name())
        })
    }

    /// The settings a round runs under: a value for each of the DBMS's
    /// session settings for transactions (`Transactions::knobs`), drawn
    /// per round as the transaction oracle draws them per schedule, and
    /// sent before each BEGIN. A database's settings (SQLite's journal
    /// mode) are not drawn: a round's sessions share the database's.
    fn settings(&self, rng: &mut Rng) -> Vec<Setting> {
        self.knobs
            .draw(rng, KnobScope::Session)
            .into_iter()
            .collect()
    }

    /// The rules of `level` (and `mode`) under `settings`, where the run
    /// prepared that combination of the DBMS's transaction settings.
    fn rules_under(
        &self,
        level: IsolationLevel,
        mode: Option<&str>,
        settings: &[Setting],
    ) -> Option<&LevelRules> {
        let settings: Settings = settings.iter().cloned().collect();
        self.knobs
            .rules_under(&settings)?
            .iter()
            .find(|r| r.level == level && r.mode.as_deref() == mode)
    }

    /// The rules a round runs under: its level and mode under its
    /// settings, as this DBMS models them. A recorded round is checked
    /// against them.
    pub(crate) fn rules_of(&self, round: &Round) -> anyhow::Result<&LevelRules> {
        anyhow::ensure!(
            (1..=MAX_SESSIONS).contains(&round.sessions.len()),
            "the round has {} sessions; lancet runs 1 to {MAX_SESSIONS}",
            round.sessions.len()
        );
        self.rules_under(round.level, round.mode.as_deref(), &round.settings)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "{} does not model {} (its level under those transaction settings)",
                    self.provider.name(),
                    round.label()
                )
            })
    }

    /// Runs `round` on `bench` and judges it.
    pub(crate) fn judged(
        &self,
        bench: &mut StressBench<'_>,
        round: &Round,
        rules: &LevelRules,
    ) -> anyhow::Result<Judged> {
        let run = bench.run(round, self.fault)?;
        let violations = judge(round, rules, &run);
        let signature = signature_of(
            round,
            &violations,
            run.failure.as_ref().map(|f| &f.2),
            self.knobs.knobs(),
        );
        Ok(Judged {
            run,
            violations,
            signature,
        })
    }

    /// Runs a recorded round again (twice where it does not show its
    /// signature at once: a race).
    fn run_again(
        &self,
        bench: &mut StressBench<'_>,
        finding: &StressFinding,
    ) -> anyhow::Result<Judged> {
        let rules = self.rules_of(&finding.round)?;
        let mut last = self.judged(bench, &finding.round, rules)?;
        if last.signature.as_deref() != Some(&finding.signature) {
            last = self.judged(bench, &finding.round, rules)?;
        }
        Ok(last)
    }
}

impl PreparedSessions for PreparedStress {
    fn run_database(
        &self,
        db: &mut dyn SessionsDatabase,
        rng: &mut Rng,
        checks: u64,
    ) -> anyhow::Result<()> {
        let tx = self.tx()?;
        let placements = tx.placements();
        let mut bench = open_bench(tx, db)?;
        let (seed, thread, database) = db.origin();
        for index in 0..checks {
            if db.should_stop() {
                break;
            }
            let level = &self.rules[rng.random_range(0..self.rules.len())];
            let settings = self.settings(rng);
            // The settings may change the level's rules (InnoDB's
            // snapshot isolation), and with them what a transaction of
            // the round may hold.
            let rules = self
                .rules_under(level.level, level.mode.as_deref(), &settings)
                .unwrap_or(level);
            let round = Round::generate(rng, rules, settings, &placements);
            let started = Instant::now();
            let judged = self.judged(&mut bench, &round, rules)?;
            let run = &judged.run;
            db.count_check(
                run.statements,
                started.elapsed(),
                !run.final_rows.is_empty(),
            );
            let (committed, conflicts, unknown) = run.counts();
            let counts = [
                ("rounds", 1),
                (
                    "transactions",
                    run.logs.iter().map(|l| l.len() as u64).sum(),
                ),
                ("committed", committed),
                ("conflicts", conflicts),
                ("unknown commits", unknown),
            ];
            // A line per level (and placement) and one per setting's
            // value, as the transaction oracle counts schedules.
            db.tally(round.signature_label(&[]), &counts);
            for (name, value) in &round.settings {
                db.tally(format!("{name}={value}"), &counts);
            }
            if judged.signature.is_none() {
                continue;
            }
            let lost = run
                .failure
                .as_ref()
                .is_some_and(|(_, _, e)| e.kind != lancet_core::FailureKind::Statement);
            let origin = RoundOrigin {
                seed,
                thread,
                database,
                round: index,
            };
            self.file(db, &mut bench, rules, round, judged, origin)?;
            if lost {
                // The sessions are gone with the server: a fresh database.
                break;
            }
        }
        Ok(())
    }

    fn replay(&self, record: &str, db: &mut dyn SessionsDatabase) -> anyhow::Result<ShownAgain> {
        let finding = super::files::parse(record)?;
        let mut bench = open_bench(self.tx()?, db)?;
        let again = self.run_again(&mut bench, &finding)?;
        let (committed, conflicts, _) = again.run.counts();
        let ends = format!("{committed} committed, {conflicts} ended in a conflict");
        match &again.signature {
            Some(s) if *s == finding.signature => {
                let seen: Vec<String> = again
                    .violations
                    .iter()
                    .map(|v| format!("{}: {}", v.invariant.name(), v.detail))
                    .collect();
                Ok(ShownAgain {
                    same: true,
                    said: format!("the round still shows {s}: {} ({ends})", seen.join("; ")),
                })
            }
            shown => Ok(ShownAgain {
                same: false,
                said: format!(
                    "the round now shows {}, not {} ({ends}; a race may need more runs)",
                    shown.as_deref().unwrap_or("nothing"),
                    finding.signature
                ),
            }),
        }
    }

    fn reduce(
        &self,
        record: &str,
        db: &mut dyn SessionsDatabase,
        budget: Duration,
    ) -> anyhow::Result<Reduction> {
        let finding = super::files::parse(record)?;
        let rules = self.rules_of(&finding.round)?;
        let mut bench = open_bench(self.tx()?, db)?;
        let before = finding.round.size();
        let Some((small, judged)) = self.shrink(
            db,
            &mut bench,
            rules,
            &finding.round,
            &finding.signature,
            budget,
        ) else {
            let again = self.run_again(&mut bench, &finding)?;
            if again.signature.as_deref() != Some(&finding.signature) {
                return Ok(Reduction::NotShown(format!(
                    "its round now shows {}, not {} (a race may need more runs)",
                    again.signature.as_deref().unwrap_or("nothing"),
                    finding.signature
                )));
            }
            return Ok(Reduction::Already(format!(
                "no smaller round shows {} ({before} statements and rows)",
                finding.signature
            )));
        };
        let reduced = self.finding(
            db,
            rules,
            &small,
            &judged,
            finding.origin,
            (1, 1),
            Some(finding.reduced_from.unwrap_or(before)),
        )?;
        Ok(Reduction::Smaller {
            said: format!(
                "{before} -> {} statements and rows, {} -> {} session(s)",
                small.size(),
                finding.round.sessions.len(),
                small.sessions.len(),
            ),
            record: serde_json::to_string(&reduced)?,
        })
    }
}
