//! Renaming every alias of a query consistently: a bijection onto fresh
//! names, applied to every definition and every qualified column reference
//! alike, keeps what each reference means (shadowing included).

use lancet_core::ast::{
    Expr, FromClause, JoinConstraint, Query, Select, SelectItem, SetExpr, TableFactor,
};
use std::collections::BTreeMap;

/// Renames every alias defined anywhere in `query` (and the exposed name
/// of every unaliased table, which gets an alias) to `lancet_r0`,
/// `lancet_r1`, ...
pub fn rename_aliases(query: &mut Query) {
    let mut names = BTreeMap::new();
    collect_query(query, &mut names);
    let map: BTreeMap<String, String> = names
        .into_keys()
        .enumerate()
        .map(|(i, n)| (n, format!("lancet_r{i}")))
        .collect();
    rename_query(query, &map);
}

type Names = BTreeMap<String, ()>;

fn collect_query(q: &Query, out: &mut Names) {
    collect_set(&q.body, out);
}

fn collect_set(s: &SetExpr, out: &mut Names) {
    match s {
        SetExpr::Select(s) => collect_select(s, out),
        SetExpr::SetOp { left, right, .. } => {
            collect_set(left, out);
            collect_set(right, out);
        }
    }
}

fn collect_select(s: &Select, out: &mut Names) {
    if let Some(from) = &s.from {
        for f in std::iter::once(&from.first).chain(from.joins.iter().map(|j| &j.factor)) {
            match f {
                TableFactor::Table { name, alias, .. } => {
                    out.insert(alias.clone().unwrap_or_else(|| name.clone()), ());
                }
                TableFactor::Derived { query, alias, .. } => {
                    out.insert(alias.clone(), ());
                    collect_query(query, out);
                }
            }
        }
        for j in &from.joins {
            if let JoinConstraint::On(e) = &j.constraint {
                collect_expr(e, out);
            }
        }
    }
    for e in select_exprs(s) {
        collect_expr(e, out);
    }
}

fn select_exprs(s: &Select) -> impl Iterator<Item = &Expr> {
    s.items
        .iter()
        .flat_map(SelectItem::exprs)
        .chain(s.selection.iter())
        .chain(s.group_by.iter())
        .chain(s.having.iter())
        .chain(s.qualify.iter())
}

fn subquery(e: &Expr) -> Option<&Query> {
    match e {
        Expr::Exists { query, .. }
        | Expr::InSubquery { query, .. }
        | Expr::QuantifiedSubquery { query, .. }
        | Expr::Subquery(query) => Some(query),
        _ => None,
    }
}

fn collect_expr(e: &Expr, out: &mut Names) {
    if let Some(q) = subquery(e) {
        collect_query(q, out);
    }
    for c in e.children() {
        collect_expr(c, out);
    }
}

type Map = BTreeMap<String, String>;

fn rename_query(q: &mut Query, map: &Map) {
    rename_set(&mut q.body, map);
    for o in &mut q.order_by {
        rename_expr(&mut o.expr, map);
    }
}

fn rename_set(s: &mut SetExpr, map: &Map) {
    match s {
        SetExpr::Select(s) => rename_select(s, map),
        SetExpr::SetOp { left, right, .. } => {
            rename_set(left, map);
            rename_set(right, map);
        }
    }
}

fn rename_factor(f: &mut TableFactor, map: &Map) {
    match f {
        TableFactor::Table { name, alias, .. } => {
            let exposed = alias.clone().unwrap_or_else(|| name.clone());
            if let Some(new) = map.get(&exposed) {
                *alias = Some(new.clone());
            }
        }
        TableFactor::Derived { query, alias, .. } => {
            if let Some(new) = map.get(alias.as_str()) {
                *alias = new.clone();
            }
            rename_query(query, map);
        }
    }
}

fn rename_from(from: &mut FromClause, map: &Map) {
    rename_factor(&mut from.first, map);
    for j in &mut from.joins {
        rename_factor(&mut j.factor, map);
        if let JoinConstraint::On(e) = &mut j.constraint {
            rename_expr(e, map);
        }
    }
}

fn rename_select(s: &mut Select, map: &Map) {
    if let Some(from) = &mut s.from {
        rename_from(from, map);
    }
    for expr in s.items.iter_mut().flat_map(SelectItem::exprs_mut) {
        rename_expr(expr, map);
    }
    for e in s
        .selection
        .iter_mut()
        .chain(s.group_by.iter_mut())
        .chain(s.having.iter_mut())
        .chain(s.qualify.iter_mut())
    {
        rename_expr(e, map);
    }
}

fn rename_expr(e: &mut Expr, map: &Map) {
    match e {
        Expr::Column(c) => {
            if let Some(new) = c.table.as_ref().and_then(|t| map.get(t)) {
                c.table = Some(new.clone());
            }
        }
        Expr::Exists { query, .. } | Expr::Subquery(query) => rename_query(query, map),
        Expr::InSubquery { query, .. } | Expr::QuantifiedSubquery { query, .. } => {
            rename_query(query, map)
        }
        _ => {}
    }
    for c in e.children_mut() {
        rename_expr(c, map);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renames_definitions_and_references_alike() {
        let inner = Query::select(Select {
            items: vec![SelectItem::Expr {
                expr: Expr::column(Some("a0"), "c0"),
                alias: None,
            }],
            from: Some(FromClause::table("t1", Some("a0"))),
            selection: Some(Expr::binary(
                lancet_core::ast::BinaryOp::Eq,
                Expr::column(Some("a0"), "c0"),
                Expr::column(Some("t0"), "c1"),
            )),
            ..Select::default()
        });
        let mut q = Query::select(Select {
            items: vec![SelectItem::Expr {
                expr: Expr::column(Some("t0"), "c0"),
                alias: None,
            }],
            from: Some(FromClause::table("t0", None)),
            selection: Some(Expr::Exists {
                query: Box::new(inner),
                negated: false,
            }),
            ..Select::default()
        });
        rename_aliases(&mut q);
        let SetExpr::Select(outer) = &q.body else {
            panic!("a select")
        };
        let Some(FromClause {
            first: TableFactor::Table { alias, .. },
            ..
        }) = &outer.from
        else {
            panic!("a table")
        };
        // t0 (unaliased) and a0, in name order: a0 -> r0, t0 -> r1.
        assert_eq!(alias.as_deref(), Some("lancet_r1"));
        let Some(Expr::Exists { query, .. }) = &outer.selection else {
            panic!("EXISTS")
        };
        let SetExpr::Select(inner) = &query.body else {
            panic!("a select")
        };
        let Some(Expr::Binary { left, right, .. }) = &inner.selection else {
            panic!("a comparison")
        };
        assert_eq!(**left, Expr::column(Some("lancet_r0"), "c0"));
        assert_eq!(**right, Expr::column(Some("lancet_r1"), "c1"));
    }
}
