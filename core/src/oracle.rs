//! The interface every test oracle implements, against the core model only.
//!
//! An oracle is split in three so that the reducer can shrink its inputs
//! and rebuild the queries with the same oracle: `generate` draws a
//! [`Case`], `queries` builds the queries whose results must stand in the
//! oracle's relation, and `compare` checks the relation. The one check
//! executor ([`crate::check`]) runs the queries, each in its
//! [`QueryContext`], for fuzzing, confirmation, replay and reduction alike.

use crate::ast::Query;
use crate::case::{Case, CaseError, CasePolicy};
use crate::compare::RowDiff;
use crate::knobs::{Knob, KnobSetting};
use crate::provider::QueryGenerator;
use crate::rng::Rng;
use crate::session::DataReader;
use crate::value::Row;
use serde::{Deserialize, Serialize};

/// Where one query of a check runs: the optimizer configuration it runs
/// under and the tables it reads. Recorded with findings; reproducers
/// render it with the DBMS client's own commands.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueryContext {
    /// The knobs turned off for this query (none: the DBMS's defaults).
    /// The check executor applies it before the query and restores the
    /// defaults after the check.
    #[serde(default, skip_serializing_if = "KnobSetting::is_default")]
    pub knobs: KnobSetting,
    /// Which copy of the tables the query reads. The oracle writes the
    /// query over that copy itself; this says so in reports.
    #[serde(default, skip_serializing_if = "TableSet::is_primary")]
    pub tables: TableSet,
}

/// A database's tables, or their twins: identical rows in another
/// placement or storage (Citus: distributed tables and plain local copies).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TableSet {
    #[default]
    Primary,
    Twins,
}

impl TableSet {
    fn is_primary(&self) -> bool {
        *self == TableSet::Primary
    }
}

impl QueryContext {
    pub fn is_default(&self) -> bool {
        *self == QueryContext::default()
    }
}

/// One query of an oracle's check, with its role in the relation.
#[derive(Clone, Debug, PartialEq)]
pub struct OracleQuery {
    /// `original`, `partitioned`, ...: used in reports.
    pub role: String,
    pub query: Query,
    pub context: QueryContext,
    /// Set for a statement that stores the query's rows in a temporary
    /// table of this name instead of returning them (the stepwise
    /// oracle's reference evaluates each step alone). It yields no result
    /// to compare; a session materializes a name once and keeps it.
    pub materialize: Option<String>,
}

impl OracleQuery {
    /// A query run in the default context.
    pub fn new(role: &str, query: Query) -> OracleQuery {
        OracleQuery {
            role: role.to_string(),
            query,
            context: QueryContext::default(),
            materialize: None,
        }
    }

    /// A statement that stores `query`'s rows in temporary table `name`.
    pub fn materialized(name: &str, query: Query) -> OracleQuery {
        OracleQuery {
            role: format!("materialize {name}"),
            materialize: Some(name.to_string()),
            ..OracleQuery::new("", query)
        }
    }

    /// The SQL it runs: the query, or the statement that materializes it
    /// (`CREATE TEMPORARY TABLE`, which SQLite, PostgreSQL and MySQL all
    /// read the same way).
    pub fn sql(&self, dialect: crate::dialect::Dialect) -> String {
        use crate::print::ToSql;
        let q = self.query.to_sql(dialect);
        match &self.materialize {
            Some(name) => format!("CREATE TEMPORARY TABLE {name} AS {q}"),
            None => q,
        }
    }

    pub fn with_context(mut self, context: QueryContext) -> OracleQuery {
        self.context = context;
        self
    }
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
