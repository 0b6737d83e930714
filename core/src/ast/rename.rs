//! Pointing a query at other tables: renaming every table it reads.

use super::*;

/// Renames the tables a query reads, everywhere in it (joins, derived
/// tables, subqueries in any expression, set operations), and drops the
/// index hints (SQLite's INDEXED BY) of those it renames. Used to point a
/// query at a database's twin tables; `rename` returns the new name, or
/// `None` to keep a name.
pub trait RenameTables {
    fn rename_tables(&mut self, rename: &dyn Fn(&str) -> Option<String>);
}

impl RenameTables for Query {
    fn rename_tables(&mut self, rename: &dyn Fn(&str) -> Option<String>) {
        self.body.rename_tables(rename);
        for o in &mut self.order_by {
            o.expr.rename_tables(rename);
        }
        for e in self.limit.iter_mut().chain(self.offset.iter_mut()) {
            e.rename_tables(rename);
        }
    }
}

impl RenameTables for SetExpr {
    fn rename_tables(&mut self, rename: &dyn Fn(&str) -> Option<String>) {
        match self {
            SetExpr::Select(s) => s.rename_tables(rename),
            SetExpr::SetOp { left, right, .. } => {
                left.rename_tables(rename);
                right.rename_tables(rename);
            }
        }
    }
}

impl RenameTables for Select {
    fn rename_tables(&mut self, rename: &dyn Fn(&str) -> Option<String>) {
        for expr in self.items.iter_mut().flat_map(SelectItem::exprs_mut) {
            expr.rename_tables(rename);
        }
        if let Some(from) = &mut self.from {
            from.rename_tables(rename);
        }
        for e in self
            .selection
            .iter_mut()
            .chain(self.group_by.iter_mut())
            .chain(self.having.iter_mut())
            .chain(self.qualify.iter_mut())
        {
            e.rename_tables(rename);
        }
    }
}

impl RenameTables for FromClause {
    fn rename_tables(&mut self, rename: &dyn Fn(&str) -> Option<String>) {
        self.first.rename_tables(rename);
        for j in &mut self.joins {
            j.factor.rename_tables(rename);
            if let JoinConstraint::On(e) = &mut j.constraint {
                e.rename_tables(rename);
            }
        }
    }
}

impl RenameTables for TableFactor {
    fn rename_tables(&mut self, rename: &dyn Fn(&str) -> Option<String>) {
        match self {
            TableFactor::Table {
                name,
                alias,
                indexed_by,
            } => {
                if let Some(new) = rename(name) {
                    // Column references say `t0.c0` when the table has no
                    // alias: keep the old name as its alias.
                    if alias.is_none() {
                        *alias = Some(name.clone());
                    }
                    *name = new;
                    // An index hint names an index of the old table (or
                    // asks for none): the new one has its own design.
                    *indexed_by = None;
                }
            }
            TableFactor::Derived { query, .. } => query.rename_tables(rename),
        }
    }
}

impl RenameTables for Expr {
    fn rename_tables(&mut self, rename: &dyn Fn(&str) -> Option<String>) {
        match self {
            Expr::Exists { query, .. } | Expr::Subquery(query) => query.rename_tables(rename),
            Expr::InSubquery { expr, query, .. } | Expr::QuantifiedSubquery { expr, query, .. } => {
                expr.rename_tables(rename);
                query.rename_tables(rename);
            }
            _ => {
                for c in self.children_mut() {
                    c.rename_tables(rename);
                }
            }
        }
    }
}

#[cfg(test)]
mod rename_tests {
    use super::*;

    #[test]
    fn every_table_reference_is_renamed() {
        let sub = Query::select(Select {
            items: vec![SelectItem::Expr {
                expr: Expr::int(1),
                alias: None,
            }],
            from: Some(FromClause::table("t1", Some("s0"))),
            ..Select::default()
        });
        let mut q = Query::select(Select {
            items: vec![SelectItem::Wildcard],
            from: Some(FromClause::table("t0", None)),
            selection: Some(Expr::Exists {
                query: Box::new(sub),
                negated: false,
            }),
            ..Select::default()
        });
        q.rename_tables(&|n| Some(format!("twin.{n}")));
        let json = serde_json::to_string(&q).unwrap();
        assert!(
            json.contains("twin.t0") && json.contains("twin.t1"),
            "{json}"
        );
        // An unaliased table keeps its old name as alias.
        assert!(json.contains(r#""alias":"t0""#), "{json}");
    }
}
