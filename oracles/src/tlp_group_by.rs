//! TLP-GROUP BY: `SELECT g FROM f [WHERE w] GROUP BY g` must equal, as a
//! set, the `UNION` of the three partitions on `p`, each grouped.

use crate::partition::{
    base_where, item, original_and_partitioned, set_verdict, some_columns, where_partitions,
};
use lancet_core::{
    Case, CaseError, CasePolicy, GenerateContext, ItemPolicy, Oracle, OracleQuery, Row, Select,
    SetOperator, Verdict,
};

pub struct TlpGroupBy;

const RELATION: &str =
    "RS(... GROUP BY g) = RS(WHERE p GROUP BY g) ∪ RS(WHERE NOT p GROUP BY g) ∪ RS(WHERE p IS NULL GROUP BY g), as sets";

impl Oracle for TlpGroupBy {
    fn name(&self) -> &'static str {
        "tlp-group-by"
    }

    fn description(&self) -> &'static str {
        "TLP on GROUP BY: the groups equal the UNION of the groups of the three partitions"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (from, scope) = generator.from_clause(rng);
        if scope.columns.is_empty() {
            return None;
        }
        let keys: Vec<_> = some_columns(rng, &scope, 2)
            .into_iter()
            .map(|c| generator.with_exact_equality(c))
            .collect();
        let selection = base_where(rng, generator, &scope);
        let predicate = generator.predicate(rng, &scope);
        Some(Case::with_predicate_of(
            self.name(),
            Select {
                items: keys.iter().cloned().map(item).collect(),
                from: Some(from),
                selection,
                group_by: keys,
                ..Select::default()
            },
            predicate,
        ))
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy::with_items(ItemPolicy::Fixed))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        original_and_partitioned(self.name(), case, where_partitions, SetOperator::Union)
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        set_verdict(RELATION, results)
    }
}
