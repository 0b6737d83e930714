//! The one-statement form of a chain of steps: which steps a query reads,
//! directly or through other steps, and the query with each of them
//! written in place (a CTE or a derived table), all the way down.

use super::NamedStep;
use lancet_core::{DerivedForm, Query, Select, SetExpr, TableFactor};
use std::collections::BTreeMap;

/// Replaces every step a query reads by its query, as a CTE or a derived
/// table, all the way down.
pub(super) fn inline_query(q: &mut Query, defs: &BTreeMap<String, Query>, form: DerivedForm) {
    fn body(b: &mut SetExpr, defs: &BTreeMap<String, Query>, form: DerivedForm) {
        match b {
            SetExpr::Select(s) => inline_select(s, defs, form),
            SetExpr::SetOp { left, right, .. } => {
                body(left, defs, form);
                body(right, defs, form);
            }
        }
    }
    body(&mut q.body, defs, form);
}

fn inline_select(s: &mut Select, defs: &BTreeMap<String, Query>, form: DerivedForm) {
    let Some(from) = &mut s.from else { return };
    for f in std::iter::once(&mut from.first).chain(from.joins.iter_mut().map(|j| &mut j.factor)) {
        if let TableFactor::Table { name, alias, .. } = f {
            if let Some(def) = defs.get(name.as_str()) {
                let mut q = def.clone();
                inline_query(&mut q, defs, form);
                *f = TableFactor::Derived {
                    query: Box::new(q),
                    alias: alias.clone().unwrap_or_else(|| name.clone()),
                    lateral: false,
                    form,
                };
            }
        }
    }
}

/// The names of the steps `select`'s FROM clause reads.
fn reads_of(select: &Select) -> Vec<String> {
    let Some(from) = &select.from else {
        return Vec::new();
    };
    std::iter::once(&from.first)
        .chain(from.joins.iter().map(|j| &j.factor))
        .filter_map(|f| match f {
            TableFactor::Table { name, .. } if name.starts_with("lancet_step") => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect()
}

/// The steps `last` reads, directly or through other steps, in order.
pub(super) fn needed_steps(last: &Select, steps: &[NamedStep]) -> Vec<NamedStep> {
    let mut needed = reads_of(last);
    for s in steps.iter().rev() {
        if needed.contains(&NamedStep::table_name(s.id)) {
            if let SetExpr::Select(select) = &s.query.body {
                needed.extend(reads_of(select));
            }
        }
    }
    steps
        .iter()
        .filter(|s| needed.contains(&NamedStep::table_name(s.id)))
        .cloned()
        .collect()
}
