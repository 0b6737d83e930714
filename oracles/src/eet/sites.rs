//! The expression positions of a query, in one fixed order: every
//! expression node of the select list, the FROM clause (ON conditions and
//! the queries of derived tables), WHERE, GROUP BY, HAVING and QUALIFY,
//! and of every subquery inside them. A transformation names its position
//! by its number in that order, so that a case replays without knowing
//! the dialect; what may be done at a position (its [`Site`]) is worked
//! out where the case is drawn.

use lancet_core::ast::{Expr, JoinConstraint, JoinKind, Query, Select, SetExpr, TableFactor};

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
    /// Not to be changed: GROUP BY keys and what is inside a node equal to
    /// one (a DBMS matches grouped expressions by their text), window
    /// calls, ORDER BY and QUALIFY, ASOF, positional and FULL join
    /// conditions.
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
/// refuses it, or there is no such position).
pub fn replace_at(
    s: &mut Select,
    at: usize,
    f: &mut dyn FnMut(Expr) -> Result<Expr, String>,
) -> Result<(), String> {
    let mut outcome = Err(format!("no expression position {at}"));
    walk(s, &|_| false, &mut |k, e, _| {
        if k != at {
            return Visit::Continue;
        }
        let old = std::mem::replace(e, Expr::int(0));
        outcome = match f(old.clone()) {
            Ok(new) => {
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
    outcome
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
        let having_phase = if s.group_by_all {
            FROZEN
        } else {
            Phase::Grouped
        };
        let parts = s
            .selection
            .iter_mut()
            .map(|e| (e, Phase::Row))
            .chain(s.group_by.iter_mut().map(|e| (e, FROZEN)))
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
            _ if site.phase == Phase::Grouped && keys.contains(e) => Site {
                phase: FROZEN,
                ..site
            },
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
        assert_eq!(phases[5], (key, Phase::Frozen, false));
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
