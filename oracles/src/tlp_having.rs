//! TLP-HAVING: `SELECT g, agg FROM f [WHERE w] GROUP BY g` must equal, as a
//! multiset, the `UNION ALL` of the same with `HAVING p`, `HAVING NOT p`
//! and `HAVING p IS NULL`.

use crate::partition::{
    base_where, having_partitions, item, multiset_verdict, original_and_partitioned, some_columns,
};
use lancet_core::{
    Case, CaseError, CasePolicy, Expr, GenerateContext, ItemPolicy, Oracle, OracleQuery, Row,
    Scope, ScopeColumn, Select, SetOperator, Verdict,
};
use rand::seq::IndexedRandom;

pub struct TlpHaving;

const RELATION: &str =
    "RS(... GROUP BY g) = RS(HAVING p) ⊎ RS(HAVING NOT p) ⊎ RS(HAVING p IS NULL), as multisets";

impl Oracle for TlpHaving {
    fn name(&self) -> &'static str {
        "tlp-having"
    }

    fn description(&self) -> &'static str {
        "TLP on HAVING: the groups equal the UNION ALL of the groups where p, NOT p, p IS NULL"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (from, scope) = generator.from_clause(rng);
        if scope.columns.is_empty() {
            return None;
        }
        // A HAVING predicate sees one row's value per group: group so that
        // those values are identical, not merely equal.
        let mut keys: Vec<Expr> = Vec::new();
        let mut group_by: Vec<Expr> = Vec::new();
        for column in some_columns(rng, &scope, 2) {
            let exact = generator.exact_group_keys(column);
            keys.push(exact[0].clone());
            group_by.extend(exact);
        }
        let mut items: Vec<_> = keys.iter().cloned().map(item).collect();
        // Aggregates whose value does not depend on the order of rows.
        let column = scope.columns.choose(rng).map(|c| c.expr.clone())?;
        let aggregate = match ["count*", "count", "min", "max"].choose(rng).copied() {
            Some(name @ ("count" | "min" | "max")) => {
                let name = name.to_ascii_uppercase();
                // An argument of a type the dialect accepts (no MIN(boolean)).
                let argument = generator.aggregate_argument(rng, &scope, &name, column);
                let argument = if name == "COUNT" {
                    argument
                } else {
                    generator.with_exact_equality(argument)
                };
                Expr::func(&name, vec![argument])
            }
            _ => Expr::CountStar,
        };
        items.push(item(aggregate));
        let selection = base_where(rng, generator, &scope);
        // HAVING may refer only to the grouping keys: any other column would
        // be taken from an arbitrary row of the group.
        let key_scope = Scope {
            columns: keys
                .iter()
                .map(|k| ScopeColumn {
                    expr: k.clone(),
                    ty: None,
                })
                .collect(),
        };
        let predicate = generator.predicate(rng, &key_scope);
        Some(Case::with_predicate_of(
            self.name(),
            Select {
                items,
                from: Some(from),
                selection,
                group_by,
                ..Select::default()
            },
            predicate,
        ))
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy::with_items(ItemPolicy::Fixed))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        original_and_partitioned(self.name(), case, having_partitions, SetOperator::UnionAll)
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        multiset_verdict(RELATION, results)
    }
}
