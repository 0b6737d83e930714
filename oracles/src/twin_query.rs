//! The query a twin oracle runs over a database's tables and again over
//! their twins (copies with the same rows in another placement or physical
//! design), and the pair of queries it makes: shared by `dist-vs-local`
//! (Citus's placements) and `twins` (any recipe a provider offers).
//!
//! The query is any the generator makes (joins, subqueries, WHERE), plain,
//! DISTINCT, or grouped with COUNT, MIN and MAX. Aggregates whose result
//! depends on the order rows are added in (SUM and AVG over floats) are
//! not generated: the two copies may hand rows over in another order.

use crate::partition::{base_where, item, some_columns};
use crate::tlp_where::select_items;
use lancet_core::{
    Expr, OracleQuery, Query, QueryContext, QueryGenerator, RenameTables, Rng, Select, TableSet,
};
use rand::Rng as _;

/// Draws the query both copies must answer alike; `None` when the FROM
/// clause brings no column into scope.
pub(crate) fn draw(rng: &mut Rng, generator: &mut dyn QueryGenerator) -> Option<Select> {
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
    Some(query)
}

/// The query over the tables (role `tables`), then the same query with
/// every table of `twins` (table, twin) replaced by its twin (role
/// `twins`, which reads [`TableSet::Twins`]).
pub(crate) fn queries(query: &Select, twins: &[(String, String)]) -> [OracleQuery; 2] {
    let original = Query::select(query.clone());
    let mut on_twins = original.clone();
    on_twins.rename_tables(&|name| {
        twins
            .iter()
            .find(|(table, _)| table == name)
            .map(|(_, twin)| twin.clone())
    });
    [
        OracleQuery::new("tables", original),
        OracleQuery::new("twins", on_twins).with_context(QueryContext {
            tables: TableSet::Twins,
            ..QueryContext::default()
        }),
    ]
}
