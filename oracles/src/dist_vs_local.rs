//! dist-vs-local: a database whose tables all have twins (copies with the
//! same rows in another placement: Citus keeps each distributed, reference
//! or Citus-local table beside a plain PostgreSQL copy written by the same
//! statements) must give the same answer to a query over either copy.
//!
//! `RS(Q over the tables) = RS(Q over their twins)`, as multisets of whole
//! rows. The query is any the generator makes (joins, subqueries, WHERE),
//! plain, DISTINCT, or grouped with COUNT, MIN and MAX. It is one query
//! run twice, so nothing about partitioning predicates is assumed: what it
//! tests is the other execution path (Citus's distributed planner and
//! executor against PostgreSQL's). Aggregates whose result depends on the
//! order rows are added in (SUM and AVG over floats) are not generated.
//!
//! It is the twins oracle's `placement` recipe alone ([`crate::twins`]
//! draws its query and makes its queries): what it keeps of its own is
//! its name, its records (inputs `twins`: the tables and their twins; a
//! Citus database has built them from the start, so a case builds
//! nothing), the side it calls wrong, and the feature it requires. It
//! applies to any provider whose generated database reports twins
//! ([`lancet_core::QueryGenerator::twin_tables`]); elsewhere it draws no
//! case.

use crate::partition::multiset_verdict;
use crate::twins::{DropRowOffTwins, TwinDesign, PLACEMENT};
use lancet_core::fault::Fault;
use lancet_core::{
    Case, CaseError, CasePolicy, GenerateContext, ItemPolicy, Oracle, OracleQuery, Row, Verdict,
};

pub struct DistVsLocal;

/// What dist-vs-local draws beside its query: each table the query may
/// read and its twin, a copy with the same rows in another placement.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Twins {
    pub tables: Vec<(String, String)>,
}

impl lancet_core::OracleInputs for Twins {
    const KIND: &'static str = "twins";
    const WHAT: &'static str = "twin tables";
}

const RELATION: &str =
    "RS(Q over the tables) = RS(Q over their local twins), as multisets of whole rows";

impl Oracle for DistVsLocal {
    fn requires(&self) -> &'static [lancet_core::Feature] {
        &[lancet_core::Feature::TwinTables]
    }

    fn name(&self) -> &'static str {
        "dist-vs-local"
    }

    fn description(&self) -> &'static str {
        "a query over the tables (Citus: distributed, reference, local) equals the same query over plain local copies with the same rows"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let (query, design) = crate::twins::draw(cx, Some(PLACEMENT))?;
        let inputs = Twins {
            tables: design.tables,
        };
        Some(Case::new(self.name(), query).and_inputs(inputs))
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy {
            predicate: false,
            ..CasePolicy::with_items(ItemPolicy::Free)
        })
    }

    fn wrong_by_relation(&self) -> Option<(&'static str, &'static str)> {
        Some((
            "tables",
            "the twins are plain local tables with the same rows, which the distributed \
             planner does not touch: the query over the distributed tables must return what \
             the twins return",
        ))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let inputs = case.inputs::<Twins>()?;
        let design = TwinDesign::placed(inputs.tables.clone());
        Ok(crate::twins::queries(&case.query, &design))
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        multiset_verdict(RELATION, results)
    }

    /// A row lost only by queries that read no twin: a fault of the
    /// distributed path alone, which no other oracle sees.
    fn planted_fault(&self) -> Fault {
        std::sync::Arc::new(DropRowOffTwins { period: 3 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::item;
    use lancet_core::{Expr, FromClause, Query, Select, TableSet, ToSql, Value};
    use lancet_testkit::standard::STANDARD;

    fn case() -> Case {
        Case::new(
            "dist-vs-local",
            Select {
                items: vec![lancet_core::SelectItem::Wildcard],
                from: Some(FromClause::table("t0", Some("a0"))),
                selection: Some(Expr::InSubquery {
                    expr: Box::new(Expr::column(Some("a0"), "c0")),
                    query: Box::new(Query::select(Select {
                        items: vec![item(Expr::column(None, "c0"))],
                        from: Some(FromClause::table("t1", None)),
                        ..Select::default()
                    })),
                    negated: false,
                }),
                ..Select::default()
            },
        )
        .and_inputs(Twins {
            tables: vec![
                ("t0".into(), "lancet_twin.t0".into()),
                ("t1".into(), "lancet_twin.t1".into()),
            ],
        })
    }

    #[test]
    fn the_second_query_reads_the_twins_everywhere() {
        let qs = DistVsLocal.queries(&case()).unwrap();
        assert_eq!(
            qs[0].query.to_sql(STANDARD),
            "SELECT * FROM t0 AS a0 WHERE a0.c0 IN (SELECT c0 FROM t1)"
        );
        assert_eq!(
            qs[1].query.to_sql(STANDARD),
            "SELECT * FROM lancet_twin.t0 AS a0 WHERE a0.c0 IN (SELECT c0 FROM lancet_twin.t1 AS t1)"
        );
        assert_eq!(qs[1].context.tables, TableSet::Twins);
        assert_eq!(qs[0].context.tables, TableSet::Primary);
    }

    #[test]
    fn a_case_without_twins_is_refused() {
        let mut c = case();
        c.inputs = lancet_core::Inputs::none();
        assert!(DistVsLocal.queries(&c).is_err());
    }

    #[test]
    fn compares_whole_rows_as_multisets() {
        let r = |a: i64| vec![Value::Integer(a)];
        let v = DistVsLocal
            .compare(&case(), &[vec![r(1), r(1)], vec![r(1)]])
            .unwrap();
        assert!(matches!(v, Verdict::Disagree(_)));
    }
}
