//! One stress finding: its round run twice more on a fresh table to see
//! whether it repeats (a violation that does not is a race, and the
//! finding says so), filed at once through the runner, then reduced to
//! fewer sessions and transactions while the same violation still shows.

use super::bench::StressBench;
use super::oracle::{Judged, PreparedStress};
use super::record::{endings, session_statements, tail, RoundOrigin, StressFinding};
use super::round::Round;
use super::NAME;
use crate::file_finding::file_finding;
use lancet_core::fault::PlantedFault;
use lancet_core::txn::LevelRules;
use lancet_core::SessionsDatabase;
use std::time::{Duration, Instant};

/// How many more times a finding's round runs, so that the finding says
/// how often it shows.
const AGAIN: u32 = 2;
/// How many times reduction runs a candidate round before it gives it up:
/// a race shows in some runs only.
const TRIES: usize = 3;

impl PreparedStress {
    /// Confirms, files and reduces one finding
    /// ([`crate::file_finding::file_finding`]): past the flood limit a
    /// finding of its signature is only counted.
    pub(crate) fn file(
        &self,
        db: &mut dyn SessionsDatabase,
        bench: &mut StressBench<'_>,
        rules: &LevelRules,
        round: Round,
        judged: Judged,
        origin: RoundOrigin,
    ) -> anyhow::Result<()> {
        let Some(signature) = judged.signature.clone() else {
            return Ok(());
        };
        file_finding(
            db,
            bench,
            &signature,
            |db, bench| {
                let repeated = (0..AGAIN)
                    .filter(|_| {
                        self.judged(bench, &round, rules)
                            .is_ok_and(|j| j.signature == judged.signature)
                    })
                    .count() as u32;
                let finding =
                    self.finding(db, rules, &round, &judged, origin, (repeated, AGAIN), None)?;
                Ok(serde_json::to_string(&finding)?)
            },
            |db, bench| {
                let Some(budget) = self.reduce else {
                    return Ok(None);
                };
                let Some((small, small_run)) =
                    self.shrink(db, bench, rules, &round, &signature, budget)
                else {
                    return Ok(None);
                };
                let at = Some(round.size());
                let reduced = self.finding(db, rules, &small, &small_run, origin, (1, 1), at)?;
                Ok(Some(serde_json::to_string(&reduced)?))
            },
        )
    }

    /// The record of a round's run.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finding(
        &self,
        db: &dyn SessionsDatabase,
        rules: &LevelRules,
        round: &Round,
        judged: &Judged,
        origin: RoundOrigin,
        repeated: (u32, u32),
        reduced_from: Option<usize>,
    ) -> anyhow::Result<StressFinding> {
        let tx = self.tx()?;
        let run = &judged.run;
        Ok(StressFinding {
            made: crate::maker::Maker::of(NAME, db),
            signature: judged.signature.clone().unwrap_or_default(),
            rules: rules.clone(),
            violations: judged.violations.clone(),
            error: run
                .failure
                .as_ref()
                .map(|(s, sql, e)| format!("session {}: `{sql}`: {e}", s + 1)),
            round: round.clone(),
            endings: endings(run),
            tail: tail(run),
            session_statements: session_statements(run),
            final_rows: run.final_rows.clone(),
            origin,
            repeated,
            fault: self.fault.map(|f| f.name().to_string()),
            reduced_from,
            create_table: tx.create_table(
                super::round::TABLE,
                lancet_core::txn::IndexV::of(round.index_v, false, false),
                round.placement.as_deref(),
            ),
            client_command: tx.client_command(),
        })
    }

    /// Greedy reduction ([`crate::greedy::reduce`]) of a round until the
    /// time is up: fewer sessions, fewer transactions; a candidate runs up
    /// to [`TRIES`] times, since a race shows in some runs only.
    pub(crate) fn shrink(
        &self,
        db: &dyn SessionsDatabase,
        bench: &mut StressBench<'_>,
        rules: &LevelRules,
        round: &Round,
        signature: &str,
        budget: Duration,
    ) -> Option<(Round, Judged)> {
        let deadline = Instant::now() + budget;
        crate::greedy::reduce(
            round,
            Round::candidates,
            |candidate| {
                (0..TRIES).find_map(|_| {
                    let judged = self.judged(bench, candidate, rules).ok()?;
                    (judged.signature.as_deref() == Some(signature)).then_some(judged)
                })
            },
            || Instant::now() >= deadline || db.interrupted(),
        )
    }
}
