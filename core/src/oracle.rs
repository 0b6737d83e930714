//! The interface every test oracle implements, against the core model only.
//!
//! An oracle is split in three so that the reducer can shrink its inputs
//! and rebuild the queries with the same oracle: `generate` draws a
//! [`Case`], `queries` builds the queries whose results must stand in the
//! oracle's relation, and `compare` checks the relation. The one check
//! executor ([`crate::check`]) runs the queries, each in its
//! [`QueryContext`], for fuzzing, confirmation, replay and reduction alike.

use crate::case::{Case, CaseError, CasePolicy};
use crate::compare::RowDiff;
use crate::knobs::Knob;
use crate::provider::QueryGenerator;
use crate::rng::Rng;
use crate::session::DataReader;
use crate::value::Row;
use serde::{Deserialize, Serialize};

pub use crate::oracle_query::{OracleQuery, QueryContext, TableSet};

/// A broken relation, as reported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    /// The relation that should have held, e.g. `RS(original) = RS(partitioned) as multisets`.
    pub relation: String,
    /// Row counts of each query, in order.
    pub row_counts: Vec<usize>,
    /// The rows that differ (for value comparisons: the two values as one-column rows).
    pub diff: RowDiff,
    /// A performance finding: the queries returned the same rows, but one
    /// took far longer than its equivalent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
}

/// How far apart the run times of two equivalent queries were: the
/// median of several runs of each, in milliseconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Per query role, its median time.
    pub medians_ms: Vec<(String, f64)>,
    /// How many runs each median is of.
    pub runs: usize,
}

/// The outcome of comparing an oracle's results.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The relation holds. `nonempty` is true when the original result had
    /// rows (checks on empty results find little; we report their share).
    Agree {
        nonempty: bool,
    },
    Disagree(Disagreement),
}

/// What an oracle draws its case from: the database's seeded RNG, the
/// provider's query generator, read access to the data, and the
/// provider's optimizer knobs.
pub struct GenerateContext<'a> {
    pub rng: &'a mut Rng,
    pub generator: &'a mut dyn QueryGenerator,
    pub data: &'a mut dyn DataReader,
    /// The knobs the provider documents for this DBMS build (its flavor's
    /// included); empty where it has none.
    pub knobs: &'a [Knob],
    /// The distinct plans this database's checks ran: an oracle that reads
    /// plans records them here (plan coverage, in the run's summary).
    pub plans: &'a mut crate::plans::PlanCoverage,
    /// The database's schema (column types, NOT NULL and UNIQUE), for
    /// oracles whose transformations depend on it.
    pub schema: &'a crate::schema::Schema,
    /// The dialect's rules, for oracles that draw a step only where the
    /// dialect declares it (STRAIGHT_JOIN, integer columns).
    pub dialect: crate::dialect::Dialect,
    /// What oracles keep about this database between its checks.
    pub memo: &'a mut OracleMemo,
}

/// What oracles keep per database between checks (the stepwise oracle's
/// validated steps), each under its own name. Lives as long as the
/// database; an oracle itself stays stateless and shared by threads.
#[derive(Default)]
pub struct OracleMemo(std::collections::HashMap<&'static str, Box<dyn std::any::Any + Send>>);

impl OracleMemo {
    /// `oracle`'s memo, made with `T::default()` on first use.
    pub fn of<T: Default + Send + 'static>(&mut self, oracle: &'static str) -> &mut T {
        let entry = self
            .0
            .entry(oracle)
            .or_insert_with(|| Box::new(T::default()));
        if !entry.is::<T>() {
            *entry = Box::new(T::default());
        }
        entry
            .downcast_mut::<T>()
            .expect("the entry holds a T: it was just checked or made")
    }
}

pub trait Oracle: Send + Sync {
    /// The `--oracle` name.
    fn name(&self) -> &'static str;
    /// One line for `--help`.
    fn description(&self) -> &'static str;
    /// Draws the oracle's inputs; `None` if this database offers nothing to
    /// test.
    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case>;
    /// The queries whose results must stand in the relation. Fails on a
    /// case this oracle did not draw or that lacks what it needs (an old
    /// or hand-edited record).
    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError>;
    /// Checks the relation on the results of [`Oracle::queries`], in order
    /// (as many results as queries).
    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError>;
    /// [`Oracle::compare`] with the time each query took inside the DBMS,
    /// for oracles whose relation is about time (the performance oracle).
    fn compare_timed(
        &self,
        case: &Case,
        results: &[Vec<Row>],
        _times: &[std::time::Duration],
    ) -> Result<Verdict, CaseError> {
        self.compare(case, results)
    }
    /// The cases one simplification step away from `case` whose queries
    /// still stand in this oracle's relation by construction, for the
    /// reducer (see [`crate::shrink`]). Empty by default: an oracle that
    /// does not say what may change gets only its setup reduced.
    fn shrink(&self, case: &Case) -> Vec<Case> {
        match self.shrink_policy() {
            Some(policy) => crate::shrink::case_variants(case, &policy),
            None => Vec::new(),
        }
    }
    /// What the default [`Oracle::shrink`] may simplify in this oracle's cases.
    fn shrink_policy(&self) -> Option<CasePolicy> {
        None
    }
    /// Whether this oracle's cases were computed against the database's
    /// schema and settings (PQS evaluates its predicate with the column
    /// types and collations and `PRAGMA case_sensitive_like`): the reducer
    /// then keeps the settings and the CREATE TABLE of every table the case
    /// reads exactly as they were.
    fn case_depends_on_schema(&self) -> bool {
        false
    }
    /// When this oracle's relation alone says which query is wrong: the
    /// role of that query and why (PQS: lancet's evaluator computed that
    /// the pivot row belongs in the result, so the query that lacks it is
    /// wrong). `None`: either side may be wrong, and lancet asks the DBMS
    /// itself with every optimization off (see the binary's `wrong_side`).
    fn wrong_by_relation(&self) -> Option<(&'static str, &'static str)> {
        None
    }
    /// Why this oracle's check run again with every optimization off is
    /// no independent witness of which side is wrong, if it is not: when
    /// one side is built to run as it would unoptimized (stepwise's
    /// materialized steps, the knob differential's switches off), the
    /// other side takes its path then, and the relation holds with both
    /// sides wrong. `None`: the run is a witness (see the binary's
    /// `wrong_side`).
    fn all_off_is_no_witness(&self) -> Option<&'static str> {
        None
    }
    /// The provider features this oracle cannot draw a case without.
    fn requires(&self) -> &'static [crate::provider::Feature] {
        &[]
    }
    /// The planted fault `selftest` proves this oracle catches.
    fn planted_fault(&self) -> crate::fault::Fault {
        std::sync::Arc::new(crate::fault::DropRow { period: 5 })
    }
    /// Every planted fault this oracle is known to catch (`--inject-fault`
    /// names them): its own, and others its relation sees.
    fn faults(&self) -> Vec<crate::fault::Fault> {
        vec![self.planted_fault()]
    }
}
