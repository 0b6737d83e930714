//! Reading a query's structure: every FROM clause in it, wherever it is
//! (the top level, derived tables and CTEs, subqueries in any expression,
//! both sides of set operations). What a planted fault uses to say which
//! queries it hits by their shape, not their text.

use super::*;

impl Query {
    /// Calls `f` on every FROM clause of this query, outermost first.
    pub fn for_each_from(&self, f: &mut dyn FnMut(&FromClause)) {
        self.body.for_each_from(f);
        for o in &self.order_by {
            o.expr.for_each_from(f);
        }
        for e in self.limit.iter().chain(self.offset.iter()) {
            e.for_each_from(f);
        }
    }

    /// Whether some FROM clause of this query reads a derived table or a
    /// CTE.
    pub fn reads_derived(&self) -> bool {
        let mut found = false;
        self.for_each_from(&mut |from| {
            found |= std::iter::once(&from.first)
                .chain(from.joins.iter().map(|j| &j.factor))
                .any(|t| matches!(t, TableFactor::Derived { .. }));
        });
        found
    }

    /// The names of the tables this query reads, as written.
    pub fn table_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        self.for_each_from(&mut |from| {
            for t in std::iter::once(&from.first).chain(from.joins.iter().map(|j| &j.factor)) {
                if let TableFactor::Table { name, .. } = t {
                    names.push(name.clone());
                }
            }
        });
        names
    }
}

impl SetExpr {
    fn for_each_from(&self, f: &mut dyn FnMut(&FromClause)) {
        match self {
            SetExpr::Select(s) => s.for_each_from(f),
            SetExpr::SetOp { left, right, .. } => {
                left.for_each_from(f);
                right.for_each_from(f);
            }
        }
    }
}

impl Select {
    fn for_each_from(&self, f: &mut dyn FnMut(&FromClause)) {
        if let Some(from) = &self.from {
            f(from);
            for t in std::iter::once(&from.first).chain(from.joins.iter().map(|j| &j.factor)) {
                if let TableFactor::Derived { query, .. } = t {
                    query.for_each_from(f);
                }
            }
            for j in &from.joins {
                if let JoinConstraint::On(e) = &j.constraint {
                    e.for_each_from(f);
                }
            }
        }
        for expr in self.items.iter().flat_map(SelectItem::exprs) {
            expr.for_each_from(f);
        }
        for e in self
            .selection
            .iter()
            .chain(self.group_by.iter())
            .chain(self.having.iter())
            .chain(self.qualify.iter())
        {
            e.for_each_from(f);
        }
    }
}

impl Expr {
    /// Whether this expression, or one inside it outside subqueries,
    /// satisfies `f`.
    pub fn any(&self, f: &dyn Fn(&Expr) -> bool) -> bool {
        f(self) || self.children().into_iter().any(|c| c.any(f))
    }

    /// Whether this expression may read a column: one of its own, or
    /// (conservatively) any subquery's. One that does not is a constant
    /// of any query it stands in, for constant folding (coddtest) and the
    /// providers' literals for it.
    pub fn may_read_columns(&self) -> bool {
        self.any(&|e| {
            matches!(
                e,
                Expr::Column(_)
                    | Expr::Subquery(_)
                    | Expr::Exists { .. }
                    | Expr::InSubquery { .. }
                    | Expr::QuantifiedSubquery { .. }
            )
        })
    }

    fn for_each_from(&self, f: &mut dyn FnMut(&FromClause)) {
        match self {
            Expr::Exists { query, .. } | Expr::Subquery(query) => query.for_each_from(f),
            Expr::InSubquery { expr, query, .. } | Expr::QuantifiedSubquery { expr, query, .. } => {
                expr.for_each_from(f);
                query.for_each_from(f);
            }
            _ => {
                for c in self.children() {
                    c.for_each_from(f);
                }
            }
        }
    }
}

#[cfg(test)]
mod walk_tests {
    use super::*;

    #[test]
    fn froms_in_subqueries_and_derived_tables_are_visited() {
        let inner = Query::select(Select {
            items: vec![SelectItem::Wildcard],
            from: Some(FromClause::table("t1", None)),
            ..Select::default()
        });
        let derived = Query::select(Select {
            items: vec![SelectItem::Wildcard],
            from: Some(FromClause {
                first: TableFactor::Derived {
                    query: Box::new(inner.clone()),
                    alias: "d".into(),
                    lateral: false,
                    form: DerivedForm::Cte,
                },
                joins: vec![],
            }),
            ..Select::default()
        });
        let q = Query::select(Select {
            items: vec![SelectItem::Wildcard],
            from: Some(FromClause::table("t0", None)),
            selection: Some(Expr::Exists {
                query: Box::new(derived),
                negated: false,
            }),
            ..Select::default()
        });
        assert_eq!(q.table_names(), ["t0", "t1"]);
        assert!(q.reads_derived());
        assert!(!inner.reads_derived());
    }
}
