//! TLP-DISTINCT: `SELECT DISTINCT c FROM f [WHERE w]` must equal, as a set,
//! the `UNION` of its three partitions on `p`.

use crate::partition::{
    base_where, item, original_and_partitioned, set_verdict, some_columns, where_partitions,
};
use lancet_core::{
    Case, CaseError, CasePolicy, GenerateContext, Oracle, OracleQuery, Row, Select, SetOperator,
    Verdict,
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

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
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
        Some(Case::with_predicate_of(
            self.name(),
            Select {
                distinct: true,
                items,
                from: Some(from),
                selection,
                ..Select::default()
            },
            predicate,
        ))
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy::ALL)
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        original_and_partitioned(self.name(), case, where_partitions, SetOperator::Union)
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        set_verdict(RELATION, results)
    }
}
