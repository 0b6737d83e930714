//! The passes of a reduction, each trying simpler candidates of what the
//! reduction has so far and keeping those that still fail the same way:
//! the setup statements whole (delta debugging), the oracle's inputs or
//! the failing statement, and each setup statement in place. They share a
//! [`Budget`]: the reduction's deadline and how many candidates it tried.

use super::target::Target;
use super::{ddmin, is_schema_of, sql_text, tables_read, Reducer};
use lancet_core::{Case, KnobSetting};
use lancet_findings::findings::Finding;
use lancet_findings::judge::Symptom;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What a reduction has so far: the setup, the oracle's case (a logic
/// finding), the failing statement (an error or crash finding).
#[derive(Clone, PartialEq)]
pub(super) struct Candidate {
    pub setup: Vec<String>,
    pub case: Option<Case>,
    pub statement: Option<String>,
}

/// A reduction's time and count: past the deadline or at an abort it
/// stops, keeping the best so far.
pub(super) struct Budget<'a> {
    deadline: Instant,
    abort: Option<&'a AtomicBool>,
    /// Candidates replayed.
    pub tests: u64,
    /// Whether the reduction stopped before it was done.
    pub stopped: bool,
}

impl<'a> Budget<'a> {
    pub fn new(deadline: Instant, abort: Option<&'a AtomicBool>) -> Budget<'a> {
        Budget {
            deadline,
            abort,
            tests: 0,
            stopped: false,
        }
    }

    /// Whether the time is up (and the reduction therefore stopped).
    fn over(&mut self) -> bool {
        let over = Instant::now() >= self.deadline
            || self.abort.is_some_and(|a| a.load(Ordering::Relaxed));
        self.stopped |= over;
        over
    }
}

/// What a failed final replay names: the reduced finding, whose
/// candidates held on databases a provider may have emptied for reuse
/// (`Provider::reset_database`): a reset that leaves something a fresh
/// database lacks, or a DBMS that does not repeat itself.
const REDUCED: &str = "the reduced finding (though its candidates held, on databases emptied for reuse where the DBMS allows)";

impl Reducer<'_> {
    /// The finding as it starts, checked to fail on a fresh database.
    pub(super) fn reproduce(
        &self,
        original: &Finding,
        target: &Target,
        budget: &mut Budget,
    ) -> anyhow::Result<Candidate> {
        let provider = self.databases.provider();
        self.derive.set(
            original
                .setup
                .iter()
                .any(|s| provider.is_derived_statement(s)),
        );
        let setup: Vec<String> = original
            .setup
            .iter()
            .filter(|s| !provider.is_derived_statement(s))
            .cloned()
            .collect();
        let statement = original.queries.first().map(|q| q.sql.clone());
        budget.tests += 1;
        let case = match target {
            Target::Logic { oracle, .. } => {
                let case = original.case.clone().ok_or_else(|| {
                    anyhow::anyhow!("the finding has no oracle case to rebuild its queries from")
                })?;
                if self.logic(&setup, *oracle, &case, target).is_none() {
                    anyhow::bail!("{}", self.no_reproduction("the finding", &original.setup));
                }
                Some(case)
            }
            Target::Failure(..) => {
                let stmt = statement.clone().unwrap_or_default();
                if !self.fails(&setup, &stmt, target) {
                    anyhow::bail!("{}", self.no_reproduction("the finding", &original.setup));
                }
                None
            }
        };
        Ok(Candidate {
            setup,
            case,
            statement,
        })
    }

    /// Statements an oracle's case was computed against (PQS's tables):
    /// they stay as they are.
    pub(super) fn pinned_statements(&self, current: &Candidate, target: &Target) -> Vec<String> {
        match (target, &current.case) {
            (Target::Logic { oracle, .. }, Some(c)) if oracle.case_depends_on_schema() => {
                let tables = tables_read(c);
                current
                    .setup
                    .iter()
                    .filter(|s| is_schema_of(s, &tables))
                    .cloned()
                    .collect()
            }
            _ => vec![],
        }
    }

    /// Pass 1: the setup statements, whole, by delta debugging.
    pub(super) fn shrink_setup_whole(
        &self,
        current: &mut Candidate,
        pinned: &[String],
        target: &Target,
        budget: &mut Budget,
    ) {
        let items: Vec<(usize, String)> = current.setup.iter().cloned().enumerate().collect();
        let (kept, movable): (Vec<_>, Vec<_>) =
            items.into_iter().partition(|(_, s)| pinned.contains(s));
        let merge = |part: &[(usize, String)]| -> Vec<String> {
            let mut all: Vec<(usize, String)> =
                part.iter().cloned().chain(kept.iter().cloned()).collect();
            all.sort_by_key(|(i, _)| *i);
            all.into_iter().map(|(_, s)| s).collect()
        };
        let (case, statement) = (current.case.clone(), current.statement.clone());
        let movable = ddmin::ddmin(movable, |cand| {
            if budget.over() {
                return None;
            }
            budget.tests += 1;
            Some(self.holds(&merge(cand), case.as_ref(), statement.as_deref(), target))
        });
        current.setup = merge(&movable);
    }

    /// Pass 2: the oracle's inputs (simpler cases it proposes), or the
    /// failing statement of an error finding.
    pub(super) fn shrink_inputs(
        &self,
        current: &mut Candidate,
        target: &Target,
        budget: &mut Budget,
    ) {
        match (target, &mut current.case) {
            (Target::Logic { oracle, .. }, Some(c)) => 'case: loop {
                for cand in oracle.shrink(c) {
                    if budget.over() {
                        break 'case;
                    }
                    budget.tests += 1;
                    if self.logic(&current.setup, *oracle, &cand, target).is_some() {
                        *c = cand;
                        continue 'case;
                    }
                }
                break;
            },
            (Target::Failure(Symptom::Error(_), _), _) => {
                let Some(stmt) = &mut current.statement else {
                    return;
                };
                'stmt: loop {
                    for cand in sql_text::statement_variants(
                        stmt,
                        self.databases.provider().dialect(),
                        &self.catalog,
                    ) {
                        if budget.over() {
                            break 'stmt;
                        }
                        budget.tests += 1;
                        if self.fails(&current.setup, &cand, target) {
                            *stmt = cand;
                            continue 'stmt;
                        }
                    }
                    break;
                }
            }
            _ => {}
        }
    }

    /// Pass 3: each setup statement simplified in place (rows, column
    /// options, expressions), the first simpler form that holds kept.
    pub(super) fn shrink_statements_in_place(
        &self,
        current: &mut Candidate,
        pinned: &[String],
        target: &Target,
        budget: &mut Budget,
    ) {
        let mut i = 0;
        while i < current.setup.len() && !budget.over() {
            if pinned.contains(&current.setup[i]) {
                i += 1;
                continue;
            }
            let mut improved = false;
            let dialect = self.databases.provider().dialect();
            for cand in sql_text::statement_variants(&current.setup[i], dialect, &self.catalog) {
                if budget.over() {
                    break;
                }
                let mut trial = current.setup.clone();
                trial[i] = cand;
                budget.tests += 1;
                let (case, statement) = (current.case.as_ref(), current.statement.as_deref());
                if self.holds(&trial, case, statement, target) {
                    current.setup = trial;
                    improved = true;
                    break;
                }
            }
            if !improved {
                i += 1;
            }
        }
    }

    /// The reduced finding, from a final replay of exactly what is
    /// written, on a database made for it.
    /// An error or crash finding's knobs, fewest that still fail: each
    /// knob change is dropped in turn (turned back to its default) and
    /// stays dropped if the statement still fails the same way. The
    /// reproducer then turns off only what the failure needs.
    pub(super) fn shrink_failure_knobs(
        &self,
        current: &Candidate,
        target: &mut Target,
        budget: &mut Budget,
    ) {
        let Target::Failure(_, knobs) = &*target else {
            return;
        };
        let mut changes = knobs.changes.clone();
        let Some(statement) = &current.statement else {
            return;
        };
        let mut i = 0;
        while i < changes.len() && !budget.over() {
            let mut fewer = changes.clone();
            fewer.remove(i);
            let Target::Failure(symptom, _) = &*target else {
                return;
            };
            let candidate = Target::Failure(
                symptom.clone(),
                KnobSetting {
                    changes: fewer.clone(),
                },
            );
            budget.tests += 1;
            if self.fails(&current.setup, statement, &candidate) {
                changes = fewer;
                *target = candidate;
            } else {
                i += 1;
            }
        }
    }

    pub(super) fn final_replay(
        &self,
        original: &Finding,
        current: Candidate,
        target: &Target,
    ) -> anyhow::Result<Finding> {
        self.reuse.set(false);
        let mut finding = original.clone();
        finding.setup = self.full_setup(&current.setup);
        self.derive.set(false);
        let not_shown = || self.no_reproduction(REDUCED, &finding.setup);
        match (target, &current.case) {
            (Target::Logic { oracle, .. }, Some(c)) => {
                let shown = self
                    .logic(&finding.setup, *oracle, c, target)
                    .ok_or_else(|| anyhow::anyhow!("{}", not_shown()))?;
                finding.queries = shown.queries;
                finding.diff = Some(shown.disagreement.diff);
                finding.relation = Some(shown.disagreement.relation);
                finding.case = Some(c.clone());
            }
            _ => {
                let stmt = current.statement.unwrap_or_default();
                if !self.fails(&finding.setup, &stmt, target) {
                    anyhow::bail!("{}", not_shown());
                }
                if let Some(q) = finding.queries.first_mut() {
                    q.sql = stmt;
                    // The knobs the shrinking left (see
                    // `shrink_failure_knobs`), and the client's lines
                    // that set them.
                    if let Target::Failure(_, knobs) = target {
                        if q.context.knobs != *knobs {
                            q.client_lines = self
                                .databases
                                .provider()
                                .knob_commands(&KnobSetting::default(), knobs);
                            q.context.knobs = knobs.clone();
                        }
                    }
                }
            }
        }
        finding.confirmed = true;
        Ok(finding)
    }
}
