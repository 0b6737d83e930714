//! TLP-DISTINCT: `SELECT DISTINCT c FROM f [WHERE w]` must equal, as a set,
//! the `UNION` of its three partitions on `p`.

use crate::partition::{
    base_where, item, original_and_partitioned, some_columns, verdict_from_diff, where_partitions,
};
use lancet_core::compare::set_diff;
use lancet_core::shrink::CasePolicy;
use lancet_core::{
    Case, DataReader, Oracle, OracleQuery, QueryGenerator, Rng, Row, Select, SetOperator, Verdict,
};

pub struct TlpDistinct;

const RELATION: &str =
    "RS(SELECT DISTINCT ...) = RS(WHERE p) ∪ RS(WHERE NOT p) ∪ RS(WHERE p IS NULL), as sets";

impl Oracle for TlpDistinct {
    fn name(&self) -> &'static str {
        "tlp-distinct"
    }

    fn description(&self) -> &'static str {
        "TLP on SELECT DISTINCT: the distinct rows equal the UNION of the three partitions"
    }

    fn generate(
        &self,
        rng: &mut Rng,
        generator: &mut dyn QueryGenerator,
        _data: &mut dyn DataReader,
    ) -> Option<Case> {
        let (from, scope) = generator.from_clause(rng);
        if scope.columns.is_empty() {
            return None;
        }
        // DISTINCT keeps an arbitrary one of several equal values: select
        // expressions whose equal values are identical.
        let items = some_columns(rng, &scope, 3)
            .into_iter()
            .map(|c| item(generator.with_exact_equality(c)))
            .collect();
        let selection = base_where(rng, generator, &scope);
        let predicate = generator.predicate(rng, &scope);
        Some(Case {
            query: Select {
                distinct: true,
                items,
                from: Some(from),
                selection,
                ..Select::default()
            },
            predicate: Some(predicate),
            pivot: None,
        })
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy::ALL)
    }

    fn queries(&self, case: &Case) -> Vec<OracleQuery> {
        original_and_partitioned(case, where_partitions, SetOperator::Union)
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Verdict {
        set_verdict(RELATION, results)
    }
}

/// Compares the first two results as sets.
pub(crate) fn set_verdict(relation: &str, results: &[Vec<Row>]) -> Verdict {
    verdict_from_diff(relation, results, set_diff(&results[0], &results[1]))
}
