//! The interface every test oracle implements, against the core model only.
//!
//! An oracle is split in three so that the reducer can shrink its inputs
//! and rebuild the queries with the same oracle: `generate` draws a
//! [`Case`], `queries` builds the queries whose results must stand in the
//! oracle's relation, and `compare` checks the relation.

use crate::ast::{Expr, Query, Select};
use crate::compare::RowDiff;
use crate::provider::QueryGenerator;
use crate::rng::Rng;
use crate::session::ExecError;
use crate::value::Row;
use serde::{Deserialize, Serialize};

/// An oracle's inputs: the base query and the predicate (or pivot) it
/// transforms. Stored with every finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// The base query (`SELECT c FROM f [WHERE w]` for TLP).
    pub query: Select,
    /// The predicate the oracle partitions or rectifies on.
    pub predicate: Option<Expr>,
    /// PQS: the pivot row the result must contain.
    pub pivot: Option<Row>,
}

/// One query of an oracle's check, with its role in the relation.
#[derive(Clone, Debug, PartialEq)]
pub struct OracleQuery {
    /// `original`, `partitioned`, ...: used in reports.
    pub role: String,
    pub query: Query,
}

/// A broken relation, as reported.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Disagreement {
    /// The relation that should have held, e.g. `RS(original) = RS(partitioned) as multisets`.
    pub relation: String,
    /// Row counts of each query, in order.
    pub row_counts: Vec<usize>,
    /// The rows that differ (for value comparisons: the two values as one-column rows).
    pub diff: RowDiff,
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

/// Read access to the database under test, for oracles that look at its
/// data (PQS picks a pivot row). Queries run here are logged and counted
/// like any other.
pub trait DataReader {
    fn fetch(&mut self, query: &Query) -> Result<Vec<Row>, ExecError>;
}

pub trait Oracle: Send + Sync {
    /// The `--oracle` name.
    fn name(&self) -> &'static str;
    /// One line for `--help`.
    fn description(&self) -> &'static str;
    /// Draws the oracle's inputs; `None` if this database offers nothing to
    /// test. `data` reads the database (most oracles need not).
    fn generate(
        &self,
        rng: &mut Rng,
        generator: &mut dyn QueryGenerator,
        data: &mut dyn DataReader,
    ) -> Option<Case>;
    /// The queries whose results must stand in the relation.
    fn queries(&self, case: &Case) -> Vec<OracleQuery>;
    /// Checks the relation on the results of [`Oracle::queries`], in order.
    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Verdict;
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
    fn shrink_policy(&self) -> Option<crate::shrink::CasePolicy> {
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
    /// The planted fault `selftest` proves this oracle catches.
    fn planted_fault(&self) -> crate::fault::Fault {
        crate::fault::Fault::DropRow { period: 5 }
    }
}
