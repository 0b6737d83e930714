//! Uncorrelated subqueries: `(SELECT agg FROM r AS cq [WHERE p])` and
//! `EXISTS (SELECT * FROM r AS cq [WHERE p])` over one relation of the
//! database, reading only its own alias, so that its value is a constant
//! of any query it stands in (CODDTest's folding of a subquery by an
//! auxiliary query).

use lancet_core::{
    BinaryOp, Expr, FromClause, Query, QueryGenerator, Rng, Schema, Scope, ScopeColumn, Select,
    SelectItem,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// The subquery's alias: no generated FROM clause uses it, so nothing
/// outside can be read through it, and it reads nothing outside.
pub const ALIAS: &str = "cq";

/// A scalar subquery and, for MIN and MAX, the declared type of the
/// column it aggregates (to compare it with a column of the same type).
pub struct Scalar {
    pub expr: Expr,
    pub ty: Option<lancet_core::TypeName>,
}

/// `(SELECT COUNT(*) | MIN(c) | MAX(c) FROM r AS cq [WHERE p])`, or a
/// fifth of the time `EXISTS (SELECT * FROM r AS cq [WHERE p])`, with `p`
/// over `r`'s columns alone.
pub fn draw(rng: &mut Rng, generator: &mut dyn QueryGenerator, schema: &Schema) -> Option<Scalar> {
    let relation = schema.relations.choose(rng)?;
    let inner = Scope::of_relation(relation, ALIAS);
    let column = relation.columns.choose(rng)?;
    let exists = rng.random_bool(0.2);
    let (item, ty) = if exists {
        (Expr::int(1), None)
    } else if rng.random_bool(0.25) {
        (Expr::CountStar, None)
    } else {
        let name = *["MIN", "MAX"].choose(rng)?;
        let proposed = Expr::column(Some(ALIAS), &column.name);
        let arg = generator.aggregate_argument(rng, &inner, name, proposed.clone());
        // A replaced argument has a type of its own: not comparable with
        // a column by declared type.
        let ty = (arg == proposed).then(|| column.ty.clone()).flatten();
        (Expr::func(name, vec![arg]), ty)
    };
    let selection = rng
        .random_bool(0.7)
        .then(|| generator.predicate(rng, &inner));
    let query = Query::select(Select {
        items: vec![SelectItem::Expr {
            expr: item,
            alias: None,
        }],
        from: Some(FromClause::table(&relation.name, Some(ALIAS))),
        selection,
        ..Select::default()
    });
    let expr = if exists {
        Expr::Exists {
            query: Box::new(query),
            negated: rng.random_bool(0.3),
        }
    } else {
        Expr::Subquery(Box::new(query))
    };
    Some(Scalar { expr, ty })
}

/// Puts `scalar` into `s`: an EXISTS as a new WHERE conjunct or disjunct
/// (or a select item); a scalar subquery compared with a column of the
/// outer scope of the same declared type in a new WHERE conjunct or
/// disjunct where there is one (half the time), else as a new select
/// item.
pub fn place(rng: &mut Rng, s: &mut Select, scope: &Scope, scalar: Scalar) {
    if matches!(scalar.expr, Expr::Exists { .. }) && rng.random_bool(0.8) {
        add_condition(rng, s, scalar.expr);
        return;
    }
    let same_type: Vec<&ScopeColumn> = scope
        .columns
        .iter()
        .filter(|c| scalar.ty.is_some() && c.ty == scalar.ty)
        .collect();
    match same_type.choose(rng) {
        Some(c) if rng.random_bool(0.5) => {
            let op = *[
                BinaryOp::Eq,
                BinaryOp::Lt,
                BinaryOp::LtEq,
                BinaryOp::Gt,
                BinaryOp::GtEq,
                BinaryOp::NotEq,
            ]
            .choose(rng)
            .unwrap_or(&BinaryOp::Eq);
            add_condition(rng, s, Expr::binary(op, c.expr.clone(), scalar.expr));
        }
        _ => s.items.push(SelectItem::Expr {
            expr: scalar.expr,
            alias: None,
        }),
    }
}

/// `s`'s WHERE with `p` added: `p` alone, `w AND p` or `w OR p`.
pub fn add_condition(rng: &mut Rng, s: &mut Select, p: Expr) {
    s.selection = Some(match s.selection.take() {
        None => p,
        Some(w) if rng.random_bool(0.5) => Expr::and(w, p),
        Some(w) => Expr::binary(BinaryOp::Or, w, p),
    });
}
