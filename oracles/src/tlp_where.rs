//! TLP-WHERE: `SELECT c FROM f [WHERE w]` must return the same multiset of
//! rows as the `UNION ALL` of its three partitions on a predicate `p`.

use crate::partition::{
    base_where, item, multiset_verdict, original_and_partitioned, where_partitions,
    wildcard_is_safe,
};
use lancet_core::{
    Case, CaseError, CasePolicy, FromClause, GenerateContext, Oracle, OracleQuery, QueryGenerator,
    Rng, Row, Select, SelectItem, SetOperator, Verdict,
};
use rand::Rng as _;

pub struct TlpWhere;

/// The relation, as reports state it.
const RELATION: &str =
    "RS(original) = RS(WHERE p) ⊎ RS(WHERE NOT p) ⊎ RS(WHERE p IS NULL), as multisets of whole rows";

/// A select list for a base query: `*`, some of the scope's columns, and
/// now and then a computed expression.
pub(crate) fn select_items(
    rng: &mut Rng,
    generator: &mut dyn QueryGenerator,
    from: &FromClause,
    scope: &lancet_core::Scope,
) -> Vec<SelectItem> {
    if wildcard_is_safe(from) && rng.random_bool(0.15) {
        return vec![SelectItem::Wildcard];
    }
    let mut items = Vec::new();
    for column in &scope.columns {
        if rng.random_bool(0.5) {
            items.push(item(column.expr.clone()));
        }
    }
    if items.is_empty() || rng.random_bool(0.2) {
        items.push(item(generator.expression(rng, scope)));
    }
    items
}

/// `SELECT c FROM f [WHERE w]` over a generated FROM clause, and its
/// scope; `None` if the FROM clause brings no columns.
pub(crate) fn base_select(
    rng: &mut Rng,
    generator: &mut dyn QueryGenerator,
) -> Option<(Select, lancet_core::Scope)> {
    let (from, scope) = generator.from_clause(rng);
    if scope.columns.is_empty() {
        return None;
    }
    let items = select_items(rng, generator, &from, &scope);
    let selection = base_where(rng, generator, &scope);
    let select = Select {
        items,
        from: Some(from),
        selection,
        ..Select::default()
    };
    Some((select, scope))
}

impl Oracle for TlpWhere {
    fn name(&self) -> &'static str {
        "tlp-where"
    }

    fn description(&self) -> &'static str {
        "ternary logic partitioning of WHERE: a query equals the UNION ALL of its parts where p, NOT p, p IS NULL"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (base, scope) = base_select(rng, generator)?;
        let predicate = generator.predicate(rng, &scope);
        Some(Case::with_predicate_of(self.name(), base, predicate))
    }

    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy::ALL)
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        original_and_partitioned(self.name(), case, where_partitions, SetOperator::UnionAll)
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        multiset_verdict(RELATION, results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{Expr, FromClause, ToSql, Value};
    use lancet_testkit::standard::STANDARD;

    fn base(selection: Option<Expr>) -> Case {
        Case::with_predicate_of(
            "tlp-where",
            Select {
                items: vec![SelectItem::Wildcard],
                from: Some(FromClause::table("t0", None)),
                selection,
                ..Select::default()
            },
            Expr::column(None, "c0"),
        )
    }

    #[test]
    fn builds_the_three_partitions_with_union_all() {
        let qs = TlpWhere.queries(&base(None)).unwrap();
        assert_eq!(qs[0].query.to_sql(STANDARD), "SELECT * FROM t0");
        assert_eq!(
            qs[1].query.to_sql(STANDARD),
            "SELECT * FROM t0 WHERE c0 UNION ALL SELECT * FROM t0 WHERE NOT c0 \
             UNION ALL SELECT * FROM t0 WHERE c0 IS NULL"
        );
    }

    #[test]
    fn keeps_the_original_where_in_every_partition() {
        let w = Expr::binary(
            lancet_core::BinaryOp::Gt,
            Expr::column(None, "c1"),
            Expr::int(1),
        );
        let qs = TlpWhere.queries(&base(Some(w))).unwrap();
        assert_eq!(
            qs[1].query.to_sql(STANDARD),
            "SELECT * FROM t0 WHERE (c1 > 1) AND c0 UNION ALL SELECT * FROM t0 WHERE (c1 > 1) AND (NOT c0) \
             UNION ALL SELECT * FROM t0 WHERE (c1 > 1) AND (c0 IS NULL)"
        );
    }

    #[test]
    fn compares_whole_rows_as_multisets() {
        let case = base(None);
        let r = |a: i64, b: &str| vec![Value::Integer(a), Value::Text(b.into())];
        let compare = |results: &[Vec<Row>]| TlpWhere.compare(&case, results).unwrap();
        let same = compare(&[vec![r(1, "a"), r(1, "a")], vec![r(1, "a"), r(1, "a")]]);
        assert_eq!(same, Verdict::Agree { nonempty: true });
        // A duplicate lost: a set comparison would miss it.
        let lost = compare(&[vec![r(1, "a"), r(1, "a")], vec![r(1, "a")]]);
        let Verdict::Disagree(d) = lost else {
            panic!("a lost duplicate must be reported")
        };
        assert_eq!(d.row_counts, vec![2, 1]);
        assert_eq!(d.diff.only_in_first, vec![(r(1, "a"), 1)]);
        // Same first column, different second column: whole rows count.
        let other = compare(&[vec![r(1, "a")], vec![r(1, "b")]]);
        assert!(matches!(other, Verdict::Disagree(_)));
        let empty = compare(&[vec![], vec![]]);
        assert_eq!(empty, Verdict::Agree { nonempty: false });
    }
}
