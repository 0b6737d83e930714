//! Constant propagation (CODDTest's second form): a WHERE conjunct
//! `c = L` makes column `c` a constant of the rows that pass it, so `c`
//! may be replaced by `L` in the other conjuncts and in the select list:
//! `WHERE c = 5 AND f(c)` to `WHERE c = 5 AND f(5)`. Equality is not
//! identity everywhere (`-0.0 = 0.0`, `1.0 = 1.00`, `'a' = 'A'` under a
//! case-blind collation), so an auxiliary query reads what `c` holds on
//! every row where `c = L` is true, as the provider's literal probe reads
//! it: exactly one distinct reading, or nothing is propagated.

use super::probe_select;
use crate::transform::rewrite::conjuncts;
use lancet_core::{BinaryOp, Expr, Query, Select};

/// `s` with `c = literal` added to its WHERE as a conjunct, and that
/// conjunct.
pub fn with_equality(s: &Select, column: &Expr, literal: &Expr) -> (Select, Expr) {
    let eq = Expr::binary(BinaryOp::Eq, column.clone(), literal.clone());
    let mut out = s.clone();
    out.selection = Some(match out.selection.take() {
        None => eq.clone(),
        Some(w) => Expr::and(w, eq.clone()),
    });
    (out, eq)
}

/// `s` with `column` replaced by `literal` in its select list and in
/// every top-level WHERE conjunct but `eq`; `s` unchanged where `eq` is
/// no longer a top-level conjunct of its WHERE (a reduced case).
pub fn propagate(s: &Select, eq: &Expr, column: &Expr, literal: &Expr) -> Select {
    let holds = s
        .selection
        .as_ref()
        .is_some_and(|w| conjuncts(w).contains(&eq));
    if !holds {
        return s.clone();
    }
    fn replace(e: &mut Expr, column: &Expr, literal: &Expr) {
        if e == column {
            *e = literal.clone();
            return;
        }
        for c in e.children_mut() {
            replace(c, column, literal);
        }
    }
    let mut out = s.clone();
    for item in &mut out.items {
        for e in item.exprs_mut() {
            replace(e, column, literal);
        }
    }
    fn outside(e: &mut Expr, eq: &Expr, column: &Expr, literal: &Expr) {
        match e {
            Expr::Binary {
                op: BinaryOp::And,
                left,
                right,
            } => {
                outside(left, eq, column, literal);
                outside(right, eq, column, literal);
            }
            conjunct if conjunct != eq => replace(conjunct, column, literal),
            _ => {}
        }
    }
    if let Some(w) = &mut out.selection {
        outside(w, eq, column, literal);
    }
    out
}

/// `SELECT DISTINCT probe FROM f WHERE eq`: what `c` holds wherever the
/// equality is true, over `s`'s FROM clause.
pub fn auxiliary(s: &Select, eq: &Expr, probe: &[Expr]) -> Query {
    Query::select(Select {
        distinct: true,
        from: s.from.clone(),
        selection: Some(eq.clone()),
        ..probe_select(probe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{FromClause, SelectItem, ToSql};
    use lancet_testkit::standard::STANDARD;

    #[test]
    fn propagates_into_other_conjuncts_and_items_only_while_the_equality_holds() {
        let c = Expr::column(None, "c0");
        let five = Expr::int(5);
        let eq = Expr::binary(BinaryOp::Eq, c.clone(), five.clone());
        let s = Select {
            items: vec![SelectItem::Expr {
                expr: c.clone(),
                alias: None,
            }],
            from: Some(FromClause::table("t0", None)),
            selection: Some(Expr::and(
                Expr::binary(
                    BinaryOp::Gt,
                    Expr::func("abs", vec![c.clone()]),
                    Expr::int(1),
                ),
                eq.clone(),
            )),
            ..Select::default()
        };
        let folded = propagate(&s, &eq, &c, &five);
        assert_eq!(
            Query::select(folded).to_sql(STANDARD),
            "SELECT 5 FROM t0 WHERE (abs(5) > 1) AND (c0 = 5)"
        );
        let mut reduced = s.clone();
        reduced.selection = Some(Expr::binary(BinaryOp::Or, eq.clone(), Expr::int(1)));
        assert_eq!(propagate(&reduced, &eq, &c, &five), reduced);
        assert_eq!(
            auxiliary(&s, &eq, std::slice::from_ref(&c)).to_sql(STANDARD),
            "SELECT DISTINCT c0 FROM t0 WHERE c0 = 5"
        );
    }
}
