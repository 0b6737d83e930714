//! The expression positions of a query, in one fixed order: every
//! expression node of the select list, the FROM clause (ON conditions and
//! the queries of derived tables), WHERE, GROUP BY, HAVING and QUALIFY,
//! and of every subquery inside them. A transformation names its position
//! by its number in that order, so that a case replays without knowing
//! the dialect; what may be done at a position (its [`Site`]) is worked
//! out where the case is drawn. A GROUP BY key of the query is
//! transformed with every copy of it in the select list and HAVING
//! ([`replace_at`]), as a DBMS matches grouped expressions by their text.

use super::transformation::is_common_aggregate;
use lancet_core::ast::{
    ColumnRef, Expr, JoinConstraint, JoinKind, Query, Select, SetExpr, TableFactor,
};

/// How a position reads rows, which says what a transformation placed
/// there may refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Per row: WHERE, ON, the select list of an ungrouped query, the
    /// arguments of an aggregate.
    Row,
    /// Per group: the select list and HAVING of a grouped query outside
    /// aggregate arguments. Only what the grouping already determines may
    /// be added (no column outside an aggregate).
    Grouped,
    /// A GROUP BY key of the query itself: changed only with every copy
    /// of it in the select list, GROUP BY and HAVING, where nothing else
    /// reads its columns outside an aggregate (see [`replace_at`]). Only
    /// constants may be added, as in [`Phase::Grouped`].
    Key,
    /// Not to be changed: what is inside a GROUP BY key or a node equal
    /// to one (a DBMS matches grouped expressions by their text), keys
    /// of subqueries, window calls, ORDER BY and QUALIFY, ASOF,
    /// positional and FULL join conditions.
    Frozen,
}

/// What a position allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Site {
    pub phase: Phase,
    /// In the base query itself (not inside a subquery or a derived
    /// table), where the FROM clause's scope names its columns.
    pub outer: bool,
    /// Inside an aggregate's arguments.
    pub in_aggregate: bool,
    /// In the ON condition of this join of the base query.
    pub on_join: Option<usize>,
}

/// What a visitor tells the walk after seeing a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visit {
    Continue,
    /// The node was replaced: stop the walk.
    Stop,
}

/// Walks every expression position of `s` in the fixed order, calling
/// `f` with its number, the node and its site. `is_aggregate` tells
/// aggregate calls (it decides sites, never the order or the numbers).
pub fn walk(
    s: &mut Select,
    is_aggregate: &dyn Fn(&str) -> bool,
    f: &mut dyn FnMut(usize, &mut Expr, Site) -> Visit,
) {
    let mut w = Walker {
        next: 0,
        is_aggregate,
        f,
    };
    let _ = w.select(s, true);
}

/// The site of every position of `s`, in order.
pub fn sites(s: &Select, is_aggregate: &dyn Fn(&str) -> bool) -> Vec<(Expr, Site)> {
    let mut copy = s.clone();
    let mut out = Vec::new();
    walk(&mut copy, is_aggregate, &mut |_, e, site| {
        out.push((e.clone(), site));
        Visit::Continue
    });
    out
}

/// Replaces the node at position `at` by `f(node)` (`Err` if `f`
/// refuses it, or there is no such position). At a GROUP BY key of the
/// query, every copy of the key in the select list, GROUP BY and HAVING
/// is replaced alike, or none where the key's columns are read there
/// otherwise (then the query would read a column it no longer groups by).
pub fn replace_at(
    s: &mut Select,
    at: usize,
    f: &mut dyn FnMut(Expr) -> Result<Expr, String>,
) -> Result<(), String> {
    let mut outcome = Err(format!("no expression position {at}"));
    let mut key = None;
    walk(s, &|_| false, &mut |k, e, site| {
        if k != at {
            return Visit::Continue;
        }
        let old = std::mem::replace(e, Expr::int(0));
        outcome = match f(old.clone()) {
            Ok(new) => {
                if site.phase == Phase::Key {
                    key = Some((old, new.clone()));
                }
                *e = new;
                Ok(())
            }
            Err(why) => {
                *e = old;
                Err(why)
            }
        };
        Visit::Stop
    });
    match (outcome, key) {
        (Ok(()), Some((old, new))) => replace_key(s, &old, &new),
        (outcome, _) => outcome,
    }
}

/// Replaces every copy of the GROUP BY key `old` in `s`'s select list,
/// GROUP BY and HAVING (not inside subqueries) by `new`; `Err` where
/// the grouped parts then read one of `old`'s columns outside a key and
/// an aggregate's arguments, or hold a subquery.
fn replace_key(s: &mut Select, old: &Expr, new: &Expr) -> Result<(), String> {
    fn replace(e: &mut Expr, old: &Expr, new: &Expr) {
        // The key as already replaced holds `old` inside.
        if e == new {
            return;
        }
        if e == old {
            *e = new.clone();
            return;
        }
        for c in e.children_mut() {
            replace(c, old, new);
        }
    }
    for item in &mut s.items {
        for e in item.exprs_mut() {
            replace(e, old, new);
        }
    }
    for e in s.group_by.iter_mut().chain(s.having.iter_mut()) {
        replace(e, old, new);
    }
    let mut columns = Vec::new();
    columns_of(old, &mut columns);
    let keys = s.group_by.clone();
    let reads_outside = s
        .items
        .iter()
        .flat_map(|i| i.exprs())
        .chain(s.having.iter())
        .chain(s.qualify.iter())
        .any(|e| !grouped_only(e, &keys, &columns, false));
    if reads_outside {
        return Err("the key's columns are read outside the key".into());
    }
    Ok(())
}

/// The columns `e` reads (outside subqueries).
fn columns_of(e: &Expr, out: &mut Vec<ColumnRef>) {
    if let Expr::Column(c) = e {
        out.push(c.clone());
    }
    for c in e.children() {
        columns_of(c, out);
    }
}

/// Whether `e` reads none of `columns` except inside a node equal to one
/// of `keys` or an aggregate's arguments, and holds no subquery.
fn grouped_only(e: &Expr, keys: &[Expr], columns: &[ColumnRef], in_aggregate: bool) -> bool {
    if !in_aggregate && keys.contains(e) {
        return true;
    }
    match e {
        Expr::Column(c) if !in_aggregate && columns.contains(c) => return false,
        Expr::Exists { .. }
        | Expr::Subquery(_)
        | Expr::InSubquery { .. }
        | Expr::QuantifiedSubquery { .. } => return false,
        _ => {}
    }
    let in_aggregate = in_aggregate
        || matches!(e, Expr::CountStar)
        || matches!(e, Expr::Function { name, .. } if is_common_aggregate(name));
    e.children()
        .into_iter()
        .all(|c| grouped_only(c, keys, columns, in_aggregate))
}

struct Walker<'a> {
    next: usize,
    is_aggregate: &'a dyn Fn(&str) -> bool,
    f: &'a mut dyn FnMut(usize, &mut Expr, Site) -> Visit,
}

const FROZEN: Phase = Phase::Frozen;

impl Walker<'_> {
    fn select(&mut self, s: &mut Select, outer: bool) -> Visit {
        let agg = self.is_aggregate;
        let grouped = !s.group_by.is_empty()
            || s.group_by_all
            || s.having.is_some()
            || s.items
                .iter()
                .flat_map(|i| i.exprs())
                .any(|e| e.contains_aggregate(agg));
        let keys = s.group_by.clone();
        let site = |phase| Site {
            phase,
            outer,
            in_aggregate: false,
            on_join: None,
        };
        let item_phase = match (grouped, s.group_by_all) {
            (_, true) => FROZEN,
            (true, false) => Phase::Grouped,
            (false, false) => Phase::Row,
        };
        for item in &mut s.items {
            for e in item.exprs_mut() {
                if self.expr(e, site(item_phase), &keys) == Visit::Stop {
                    return Visit::Stop;
                }
            }
        }
        if let Some(from) = &mut s.from {
            if self.factor(&mut from.first) == Visit::Stop {
                return Visit::Stop;
            }
            for (j, join) in from.joins.iter_mut().enumerate() {
                if self.factor(&mut join.factor) == Visit::Stop {
                    return Visit::Stop;
                }
                if let JoinConstraint::On(e) = &mut join.constraint {
                    let phase = match join.kind {
                        // PostgreSQL runs a FULL JOIN only on a merge- or
                        // hash-joinable condition, which a wrapper hides.
                        JoinKind::AsOf
                        | JoinKind::AsOfLeft
                        | JoinKind::Positional
                        | JoinKind::Full => FROZEN,
                        _ => Phase::Row,
                    };
                    let on = Site {
                        on_join: Some(j),
                        ..site(phase)
                    };
                    if self.expr(e, on, &[]) == Visit::Stop {
                        return Visit::Stop;
                    }
                }
            }
        }
        let key_phase = if outer { Phase::Key } else { FROZEN };
        let having_phase = if s.group_by_all {
            FROZEN
        } else {
            Phase::Grouped
        };
        let parts = s
            .selection
            .iter_mut()
            .map(|e| (e, Phase::Row))
            .chain(s.group_by.iter_mut().map(|e| (e, key_phase)))
            .chain(s.having.iter_mut().map(|e| (e, having_phase)))
            .chain(s.qualify.iter_mut().map(|e| (e, FROZEN)));
        for (e, phase) in parts {
            if self.expr(e, site(phase), &keys) == Visit::Stop {
                return Visit::Stop;
            }
        }
        Visit::Continue
    }

    fn factor(&mut self, f: &mut TableFactor) -> Visit {
        match f {
            TableFactor::Table { .. } => Visit::Continue,
            TableFactor::Derived { query, .. } => self.query(query),
        }
    }

    fn query(&mut self, q: &mut Query) -> Visit {
        if self.body(&mut q.body) == Visit::Stop {
            return Visit::Stop;
        }
        let frozen = Site {
            phase: FROZEN,
            outer: false,
            in_aggregate: false,
            on_join: None,
        };
        for o in &mut q.order_by {
            if self.expr(&mut o.expr, frozen, &[]) == Visit::Stop {
                return Visit::Stop;
            }
        }
        Visit::Continue
    }

    fn body(&mut self, b: &mut SetExpr) -> Visit {
        match b {
            SetExpr::Select(s) => self.select(s, false),
            SetExpr::SetOp { left, right, .. } => {
                if self.body(left) == Visit::Stop {
                    return Visit::Stop;
                }
                self.body(right)
            }
        }
    }

    fn expr(&mut self, e: &mut Expr, site: Site, keys: &[Expr]) -> Visit {
        let k = self.next;
        self.next += 1;
        if (self.f)(k, e, site) == Visit::Stop {
            return Visit::Stop;
        }
        let agg = self.is_aggregate;
        let child = match e {
            _ if site.phase == Phase::Key || (site.phase == Phase::Grouped && keys.contains(e)) => {
                Site {
                    phase: FROZEN,
                    ..site
                }
            }
            Expr::Window { .. } => Site {
                phase: FROZEN,
                ..site
            },
            Expr::Function { name, .. } if agg(name) && site.phase != FROZEN => Site {
                phase: Phase::Row,
                in_aggregate: true,
                ..site
            },
            _ => site,
        };
        for c in e.children_mut() {
            if self.expr(c, child, keys) == Visit::Stop {
                return Visit::Stop;
            }
        }
        match e {
            Expr::Exists { query, .. }
            | Expr::Subquery(query)
            | Expr::InSubquery { query, .. }
            | Expr::QuantifiedSubquery { query, .. } => self.query(query),
            _ => Visit::Continue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::ast::{FromClause, SelectItem};

    fn col(c: &str) -> Expr {
        Expr::column(Some("t0"), c)
    }

    #[test]
    fn grouped_positions_freeze_keys_and_open_aggregate_arguments() {
        let key = Expr::binary(lancet_core::BinaryOp::Add, col("c0"), Expr::int(1));
        let s = Select {
            items: vec![
                SelectItem::Expr {
                    expr: key.clone(),
                    alias: None,
                },
                SelectItem::Expr {
                    expr: Expr::func("MAX", vec![col("c1")]),
                    alias: None,
                },
            ],
            from: Some(FromClause::table("t0", None)),
            group_by: vec![key.clone()],
            ..Select::default()
        };
        let agg = |n: &str| n.eq_ignore_ascii_case("max");
        let phases: Vec<(Expr, Phase, bool)> = sites(&s, &agg)
            .into_iter()
            .map(|(e, site)| (e, site.phase, site.in_aggregate))
            .collect();
        assert_eq!(phases[0], (key.clone(), Phase::Grouped, false));
        // Inside the key: frozen.
        assert_eq!(phases[1].1, Phase::Frozen);
        assert_eq!(phases[2].1, Phase::Frozen);
        assert_eq!(phases[3].1, Phase::Grouped);
        assert_eq!(phases[4], (col("c1"), Phase::Row, true));
        // The GROUP BY key itself.
        assert_eq!(phases[5], (key, Phase::Key, false));
        // Inside it: frozen.
        assert_eq!(phases[6].1, Phase::Frozen);
    }

    #[test]
    fn a_key_is_replaced_with_its_copies_or_not_at_all() {
        let key = Expr::binary(lancet_core::BinaryOp::Add, col("c0"), Expr::int(1));
        let grouped = |items: Vec<Expr>| Select {
            items: items
                .into_iter()
                .map(|expr| SelectItem::Expr { expr, alias: None })
                .collect(),
            from: Some(FromClause::table("t0", None)),
            group_by: vec![key.clone()],
            ..Select::default()
        };
        let key_at = |s: &Select| {
            sites(s, &|_| false)
                .iter()
                .position(|(_, site)| site.phase == Phase::Key)
                .unwrap()
        };
        let wrapped = Expr::not(Expr::not(key.clone()));
        // The key, and its copy inside an item, change together.
        let plus = Expr::binary(lancet_core::BinaryOp::Mul, key.clone(), Expr::int(2));
        let mut s = grouped(vec![plus, Expr::func("MAX", vec![col("c0")])]);
        let at = key_at(&s);
        replace_at(&mut s, at, &mut |e| Ok(Expr::not(Expr::not(e)))).unwrap();
        assert_eq!(s.group_by, vec![wrapped.clone()]);
        assert_eq!(
            s.items[0].exprs()[0],
            &Expr::binary(lancet_core::BinaryOp::Mul, wrapped, Expr::int(2))
        );
        // An aggregate's argument reads rows: it stays.
        assert_eq!(s.items[1].exprs()[0], &Expr::func("MAX", vec![col("c0")]));
        // A column of the key read alone outside an aggregate: refused.
        let mut s = grouped(vec![key.clone(), col("c0")]);
        let at = key_at(&s);
        assert!(replace_at(&mut s, at, &mut |e| Ok(Expr::not(Expr::not(e)))).is_err());
    }

    #[test]
    fn replacing_a_position_changes_that_node_only() {
        let mut s = Select {
            items: vec![SelectItem::Expr {
                expr: col("c0"),
                alias: None,
            }],
            selection: Some(Expr::binary(
                lancet_core::BinaryOp::Lt,
                col("c0"),
                col("c1"),
            )),
            ..Select::default()
        };
        replace_at(&mut s, 2, &mut |e| Ok(Expr::not(e))).unwrap();
        assert_eq!(s.items[0].exprs()[0], &col("c0"));
        let Some(Expr::Binary { left, .. }) = &s.selection else {
            panic!("the WHERE changed shape");
        };
        assert_eq!(**left, Expr::not(col("c0")));
        assert!(replace_at(&mut s, 99, &mut |e| Ok(e)).is_err());
    }
}
