//! Subqueries in expressions: IN, EXISTS and scalar subqueries over the
//! schema's relations, correlated or not, in the forms whose value every
//! plan agrees on (see the parent module).

use super::*;

impl<'s> ExprGen<'s> {
    /// `FROM rel AS sN` for a subquery, and its columns. A correlated
    /// subquery runs once per outer row, so it reads a base table (at most
    /// a few dozen rows); an uncorrelated one runs once and may read a view
    /// (a view over a join can hold a thousand rows or more).
    fn subquery_source(
        &mut self,
        rng: &mut Rng,
        correlated: bool,
    ) -> Option<(&'s Relation, String, Vec<ScopeColumn>)> {
        let rel = if correlated {
            let tables: Vec<&'s Relation> = self.schema.tables().collect();
            *tables.choose(rng)?
        } else {
            self.schema.relations.choose(rng)?
        };
        let alias = self.fresh_alias();
        let cols = relation_columns(rel, &alias);
        Some((rel, alias, cols))
    }

    /// Whether the next subquery correlates with the outer columns.
    fn correlate(rng: &mut Rng, outer: &[ScopeColumn]) -> bool {
        !outer.is_empty() && rng.random_bool(0.5)
    }

    /// The WHERE of a subquery over `inner`: correlated with `outer` if
    /// `correlated`, else over the inner columns alone.
    fn subquery_where(
        &mut self,
        rng: &mut Rng,
        inner: &[ScopeColumn],
        outer: &[ScopeColumn],
        correlated: bool,
        depth: u32,
    ) -> Option<Expr> {
        let depth = depth.min(2);
        if correlated {
            // An inner column against an outer one, and perhaps more.
            let i = inner.choose(rng)?.expr.clone();
            let o = outer.choose(rng)?.expr.clone();
            let op = *[
                BinaryOp::Eq,
                BinaryOp::Eq,
                BinaryOp::Lt,
                BinaryOp::IsNotDistinctFrom,
            ]
            .choose(rng)?;
            let link = Expr::binary(op, i, o);
            if rng.random_bool(0.4) {
                let mut all = inner.to_vec();
                all.extend_from_slice(outer);
                // No subquery inside a correlated one: that would run once
                // per inner row per outer row.
                let budget = std::mem::take(&mut self.subqueries);
                let more = self.pred(rng, &all, depth.saturating_sub(1));
                self.subqueries = budget;
                return Some(Expr::and(link, more));
            }
            return Some(link);
        }
        if rng.random_bool(0.15) {
            return None;
        }
        Some(self.pred(rng, inner, depth))
    }

    fn subquery(from: FromClause, items: Vec<SelectItem>, selection: Option<Expr>) -> Box<Query> {
        Box::new(Query::select(Select {
            distinct: false,
            items,
            from: Some(from),
            selection,
            group_by: vec![],
            group_by_all: false,
            having: None,
            qualify: None,
        }))
    }

    pub(super) fn in_subquery(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        let expr = self.operand(rng, cols, depth);
        let correlated = Self::correlate(rng, cols);
        let Some((rel, alias, inner)) = self.subquery_source(rng, correlated) else {
            return expr;
        };
        let item = match inner.choose(rng) {
            Some(c) if rng.random_bool(0.85) => c.expr.clone(),
            _ => self.expr(rng, &inner, depth.min(1)),
        };
        let selection = self.subquery_where(rng, &inner, cols, correlated, depth);
        Expr::InSubquery {
            expr: Box::new(expr),
            query: Self::subquery(
                table_from(rel, alias),
                vec![SelectItem::Expr {
                    expr: item,
                    alias: None,
                }],
                // Never DISTINCT: of equal values (integer 0, real 0.0) it
                // keeps either, and the IN comparison's affinity tells
                // them apart ('0' against '0.0' in a TEXT column), so the
                // result would depend on the plan.
                selection,
            ),
            negated: rng.random_bool(0.3),
        }
    }

    pub(super) fn exists(&mut self, rng: &mut Rng, cols: &[ScopeColumn], depth: u32) -> Expr {
        let correlated = Self::correlate(rng, cols);
        let Some((rel, alias, inner)) = self.subquery_source(rng, correlated) else {
            return Expr::Literal(Value::Null);
        };
        let selection = self.subquery_where(rng, &inner, cols, correlated, depth);
        Expr::Exists {
            query: Self::subquery(
                table_from(rel, alias),
                vec![SelectItem::Expr {
                    expr: Expr::int(1),
                    alias: None,
                }],
                selection,
            ),
            negated: rng.random_bool(0.3),
        }
    }

    /// `(SELECT agg FROM rel AS sN [WHERE ...])`: one row, one value.
    pub(super) fn scalar_subquery(
        &mut self,
        rng: &mut Rng,
        cols: &[ScopeColumn],
        depth: u32,
    ) -> Expr {
        let correlated = Self::correlate(rng, cols);
        let Some((rel, alias, inner)) = self.subquery_source(rng, correlated) else {
            return Expr::Literal(Value::Null);
        };
        // MIN/MAX only where equal values are identical: any representative
        // SQLite picks is then the same value.
        let ordered: Vec<&ScopeColumn> = if rel.kind == RelationKind::Table {
            rel.columns
                .iter()
                .zip(&inner)
                .filter(|(c, _)| {
                    matches!(
                        affinity(c.ty.as_ref()),
                        Affinity::Integer | Affinity::Numeric
                    ) && types::is_binary(c.collation.as_deref())
                })
                .map(|(_, s)| s)
                .collect()
        } else {
            vec![]
        };
        let agg = match rng.random_range(0..3) {
            0 if !ordered.is_empty() => {
                let c = ordered.choose(rng).map(|c| c.expr.clone());
                let name = if rng.random_bool(0.5) { "MIN" } else { "MAX" };
                Expr::func(name, c.into_iter().collect())
            }
            1 => match inner.choose(rng) {
                Some(c) => Expr::func("COUNT", vec![c.expr.clone()]),
                None => Expr::CountStar,
            },
            _ => Expr::CountStar,
        };
        let selection = self.subquery_where(rng, &inner, cols, correlated, depth);
        Expr::Subquery(Self::subquery(
            table_from(rel, alias),
            vec![SelectItem::Expr {
                expr: agg,
                alias: None,
            }],
            selection,
        ))
    }
}
