//! Planted faults: perturbations of query results the way a logic bug
//! would make them. An oracle that cannot catch its planted fault is
//! broken; `selftest` and the tests use this to prove each oracle works.
//!
//! A fault is a value of any type that implements [`PlantedFault`]: the
//! generic ones live here, a fault that only one oracle can see lives in
//! that oracle's file, so a new oracle adds its fault without touching
//! core. A fault says which queries it hits by their structure (the
//! query's AST: reads a derived table, joins with CROSS JOIN, counts rows
//! under a WHERE), never by searching SQL text; among those, it hits one
//! in `period`, chosen by a stable hash of the query's text, so a run with
//! a fault is as reproducible as one without. Faults apply to an oracle's
//! queries as [`crate::run_check`] runs them, in the fuzzing process and
//! in worker processes alike.

use crate::oracle_query::OracleQuery;
use crate::value::Row;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

/// A fault planted in query results. Faults are named (`--inject-fault
/// NAME`, and records name the fault a finding was made under) and found
/// again by name in the list of all faults the binary knows.
pub trait PlantedFault: Debug + Send + Sync {
    /// The name `--inject-fault` and records use.
    fn name(&self) -> &'static str;
    /// Perturbs the result of `query` if this fault hits it: its rows, or
    /// the time it took (a fault of a slow plan).
    fn perturb(&self, query: &FaultedQuery<'_>, result: &mut FaultedResult<'_>);
    /// A fault that acts somewhere other than on query rows (the
    /// transaction driver's, on a session's statements) gives itself, so
    /// that the code it acts in can recognise it by its type; `None`, the
    /// default, for a fault on rows, which `perturb` applies.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// A shared planted fault.
pub type Fault = Arc<dyn PlantedFault>;

/// A query a fault may hit: as the oracle built it, and as printed.
pub struct FaultedQuery<'a> {
    pub query: &'a OracleQuery,
    pub sql: &'a str,
}

impl FaultedQuery<'_> {
    /// Whether this query is the one in `period` that a fault hits, by a
    /// stable hash of its text.
    pub fn hit(&self, period: u64) -> bool {
        stable_hash(self.sql).is_multiple_of(period)
    }

    /// Whether some optimizer knob is off for this query.
    pub fn knobs_off(&self) -> bool {
        !self.query.context.knobs.is_default()
    }
}

/// What a fault may change of a query's result.
pub struct FaultedResult<'a> {
    pub rows: &'a mut Vec<Row>,
    /// The time the DBMS took, as the performance oracle reads it.
    pub time: &'a mut Duration,
}

/// FNV-1a: a stable hash (std's hasher may change between releases).
pub fn stable_hash(text: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Drops the first row of one query in `period` among those that return
/// rows: the fault every oracle comparing rows must catch.
#[derive(Debug)]
pub struct DropRow {
    pub period: u64,
}

impl PlantedFault for DropRow {
    fn name(&self) -> &'static str {
        "drop-row"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        if !r.rows.is_empty() && q.hit(self.period) {
            r.rows.remove(0);
        }
    }
}

/// Returns no rows at all for one query in `period`.
#[derive(Debug)]
pub struct EmptyResult {
    pub period: u64,
}

impl PlantedFault for EmptyResult {
    fn name(&self) -> &'static str {
        "empty-result"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        if q.hit(self.period) {
            r.rows.clear();
        }
    }
}

/// Two bugs in one fault, for testing how findings are grouped: a query
/// whose top-level WHERE has a BETWEEN loses its first row, and one whose
/// WHERE has a LIKE (not GLOB or ILIKE) returns its first row twice, as an engine would that
/// evaluated each construct wrongly in a filter (and right in a select
/// list, so NoREC's reference query is unaffected). Every oracle that
/// filters by a predicate sees both, through many query shapes; the
/// findings are two bugs.
#[derive(Debug)]
pub struct TwoFilterBugs;

impl TwoFilterBugs {
    /// Whether the top-level WHERE of `q` has an expression `f` accepts.
    fn filters_with(q: &crate::ast::Query, f: &dyn Fn(&crate::ast::Expr) -> bool) -> bool {
        match &q.body {
            crate::ast::SetExpr::Select(s) => s.selection.as_ref().is_some_and(|w| w.any(f)),
            crate::ast::SetExpr::SetOp { .. } => false,
        }
    }
}

impl PlantedFault for TwoFilterBugs {
    fn name(&self) -> &'static str {
        "two-filter-bugs"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        use crate::ast::Expr;
        if r.rows.is_empty() {
            return;
        }
        if Self::filters_with(&q.query.query, &|e| matches!(e, Expr::Between { .. })) {
            r.rows.remove(0);
        } else if Self::filters_with(&q.query.query, &|e| {
            matches!(
                e,
                Expr::Like {
                    kind: crate::ast::LikeKind::Like,
                    ..
                }
            )
        }) {
            let first = r.rows[0].clone();
            r.rows.push(first);
        }
    }
}

/// The faults core defines, which any oracle may plant.
pub fn generic_faults() -> Vec<Fault> {
    vec![
        Arc::new(DropRow { period: 5 }),
        Arc::new(EmptyResult { period: 5 }),
        Arc::new(TwoFilterBugs),
    ]
}
