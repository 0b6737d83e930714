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
//! The oracle applies to any provider whose generated database reports
//! twins ([`lancet_core::QueryGenerator::twin_tables`]); elsewhere it draws
//! no case.

use crate::partition::{base_where, item, multiset_verdict, some_columns};
use crate::tlp_where::select_items;
use lancet_core::fault::{Fault, FaultedQuery, FaultedResult, PlantedFault};
use lancet_core::{
    Case, CaseError, CasePolicy, Expr, GenerateContext, ItemPolicy, Oracle, OracleQuery, Query,
    QueryContext, RenameTables, Row, Select, TableSet, Verdict,
};
use rand::Rng as _;

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
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let tables = generator.twin_tables();
        if tables.is_empty() {
            return None;
        }
        let (from, scope) = generator.from_clause(rng);
        if scope.columns.is_empty() {
            return None;
        }
        let selection = base_where(rng, generator, &scope).or_else(|| {
            rng.random_bool(0.4)
                .then(|| generator.predicate(rng, &scope))
        });
        let query = match rng.random_range(0..10) {
            // DISTINCT keeps an arbitrary one of equal values: exact forms.
            0..2 => Select {
                distinct: true,
                items: some_columns(rng, &scope, 3)
                    .into_iter()
                    .map(|c| item(generator.with_exact_equality(c)))
                    .collect(),
                from: Some(from),
                selection,
                ..Select::default()
            },
            // Grouped: the keys in exact form, COUNT, MIN and MAX (their
            // results do not depend on the order rows are combined in).
            2..4 => {
                let keys: Vec<Expr> = some_columns(rng, &scope, 2)
                    .into_iter()
                    .flat_map(|c| generator.exact_group_keys(c))
                    .collect();
                let mut items: Vec<_> = keys.iter().cloned().map(item).collect();
                items.push(item(Expr::CountStar));
                for f in ["MIN", "MAX"] {
                    if rng.random_bool(0.5) {
                        let proposed = generator.expression(rng, &scope);
                        let arg = generator.aggregate_argument(rng, &scope, f, proposed);
                        items.push(item(generator.with_exact_equality(Expr::Function {
                            name: f.into(),
                            args: vec![arg],
                            distinct: false,
                        })));
                    }
                }
                Select {
                    items,
                    from: Some(from),
                    selection,
                    group_by: keys,
                    ..Select::default()
                }
            }
            _ => Select {
                items: select_items(rng, generator, &from, &scope),
                from: Some(from),
                selection,
                ..Select::default()
            },
        };
        Some(Case::new(self.name(), query).and_inputs(Twins { tables }))
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
        let twins = &inputs.tables;
        let original = Query::select(case.query.clone());
        let mut on_twins = original.clone();
        on_twins.rename_tables(&|name| {
            twins
                .iter()
                .find(|(table, _)| table == name)
                .map(|(_, twin)| twin.clone())
        });
        Ok(vec![
            OracleQuery::new("tables", original),
            OracleQuery::new("twins", on_twins).with_context(QueryContext {
                tables: TableSet::Twins,
                ..QueryContext::default()
            }),
        ])
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

/// Drops the first row of one query in `period` among those that read no
/// twin table ([`lancet_core::TWIN_SCHEMA`]): a fault of one execution path
/// only (Citus's distributed tables), which only dist-vs-local can see.
#[derive(Debug)]
pub struct DropRowOffTwins {
    pub period: u64,
}

impl PlantedFault for DropRowOffTwins {
    fn name(&self) -> &'static str {
        "drop-row-off-twins"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        let twin = format!("{}.", lancet_core::TWIN_SCHEMA);
        let reads_twin = q
            .query
            .query
            .table_names()
            .iter()
            .any(|t| t.starts_with(&twin));
        if !r.rows.is_empty() && !reads_twin && q.hit(self.period) {
            r.rows.remove(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{FromClause, ToSql, Value};
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
