//! Steps that rewrite the joins of a query's top-level FROM clause.

use lancet_core::ast::{
    BinaryOp, Expr, FromClause, Join, JoinConstraint, JoinKind, Select, SelectItem, TableFactor,
};

fn from_mut(s: &mut Select) -> Result<&mut FromClause, String> {
    s.from.as_mut().ok_or_else(|| "no FROM".to_string())
}

fn join_mut(s: &mut Select, join: usize) -> Result<&mut Join, String> {
    let from = from_mut(s)?;
    let n = from.joins.len();
    from.joins
        .get_mut(join)
        .ok_or_else(|| format!("FROM has {n} joins"))
}

/// Whether a kind is an inner join (a comma and CROSS JOIN included).
pub fn is_inner(kind: JoinKind) -> bool {
    matches!(
        kind,
        JoinKind::Inner | JoinKind::Cross | JoinKind::Comma | JoinKind::Straight
    )
}

/// Whether a join that NULL-extends its left side comes after join
/// `join` (RIGHT, FULL, or POSITIONAL, which pads the shorter side): it
/// would NULL-extend the rows built so far, so a filter on them no longer
/// commutes with it and fewer rows there are not fewer rows after it.
pub fn null_extends_after(from: &FromClause, join: usize) -> bool {
    from.joins
        .iter()
        .skip(join + 1)
        .any(|j| extends_left(j.kind))
}

/// Whether a join kind NULL-extends the rows on its left.
fn extends_left(kind: JoinKind) -> bool {
    matches!(
        kind,
        JoinKind::Right | JoinKind::Full | JoinKind::Positional
    )
}

fn is_lateral(f: &TableFactor) -> bool {
    matches!(f, TableFactor::Derived { lateral: true, .. })
}

fn has_wildcard(s: &Select) -> bool {
    s.items.iter().any(SelectItem::is_wildcard)
}

pub fn swap_first(s: &mut Select) -> Result<(), String> {
    if has_wildcard(s) {
        return Err("* would list the columns in another order".into());
    }
    let from = from_mut(s)?;
    let Some(j) = from.joins.first_mut() else {
        return Err("no join".into());
    };
    if !is_inner(j.kind) || !matches!(j.constraint, JoinConstraint::On(_) | JoinConstraint::None) {
        return Err("the first join is not a plain inner join".into());
    }
    if is_lateral(&j.factor) || is_lateral(&from.first) {
        return Err("a LATERAL operand".into());
    }
    std::mem::swap(&mut from.first, &mut from.joins[0].factor);
    Ok(())
}

/// The ON condition of inner join `join`, taken out; the join becomes a
/// comma or CROSS join.
fn take_inner_condition(s: &mut Select, join: usize) -> Result<Expr, String> {
    if null_extends_after(s.from.as_ref().ok_or("no FROM")?, join) {
        return Err("a RIGHT or FULL join follows".into());
    }
    let j = join_mut(s, join)?;
    if !matches!(j.kind, JoinKind::Inner | JoinKind::Straight) {
        return Err("not an inner join".into());
    }
    let JoinConstraint::On(c) = std::mem::replace(&mut j.constraint, JoinConstraint::None) else {
        return Err("the join has no ON condition".into());
    };
    Ok(c)
}

fn and_where(s: &mut Select, c: Expr) {
    s.selection = Some(match s.selection.take() {
        Some(w) => Expr::and(w, c),
        None => c,
    });
}

pub fn on_to_where(s: &mut Select, join: usize, comma: bool) -> Result<(), String> {
    let c = take_inner_condition(s, join)?;
    join_mut(s, join)?.kind = if comma {
        JoinKind::Comma
    } else {
        JoinKind::Cross
    };
    and_where(s, c);
    Ok(())
}

pub fn split_on(s: &mut Select, join: usize) -> Result<(), String> {
    if null_extends_after(s.from.as_ref().ok_or("no FROM")?, join) {
        return Err("a RIGHT or FULL join follows".into());
    }
    let j = join_mut(s, join)?;
    if !matches!(j.kind, JoinKind::Inner | JoinKind::Straight) {
        return Err("not an inner join".into());
    }
    let JoinConstraint::On(Expr::Binary {
        op: BinaryOp::And,
        left,
        right,
    }) = &j.constraint
    else {
        return Err("the ON condition is not a conjunction".into());
    };
    let (kept, moved) = ((**left).clone(), (**right).clone());
    j.constraint = JoinConstraint::On(kept);
    and_where(s, moved);
    Ok(())
}

pub fn straight(s: &mut Select, join: usize) -> Result<(), String> {
    let j = join_mut(s, join)?;
    if j.kind != JoinKind::Inner || !matches!(j.constraint, JoinConstraint::On(_)) {
        return Err("not an inner join with ON".into());
    }
    j.kind = JoinKind::Straight;
    Ok(())
}

/// The factor at `index` (0: the first), its exposed name, and whether its
/// rows may be NULL-extended by an outer join.
pub fn factor_at(from: &FromClause, index: usize) -> Option<(&TableFactor, bool)> {
    let (factor, joined_by) = if index == 0 {
        (&from.first, None)
    } else {
        let j = from.joins.get(index - 1)?;
        (&j.factor, Some(j.kind))
    };
    let own = match joined_by {
        None => from.joins.iter().any(|j| extends_left(j.kind)),
        Some(kind) => !is_inner(kind) || null_extends_after(from, index - 1),
    };
    Some((factor, own))
}

/// The name a factor's columns are qualified with.
pub fn exposed_name(f: &TableFactor) -> &str {
    match f {
        TableFactor::Table { name, alias, .. } => alias.as_deref().unwrap_or(name),
        TableFactor::Derived { alias, .. } => alias,
    }
}

pub fn self_join(s: &mut Select, factor: usize, column: &str, inner: bool) -> Result<(), String> {
    if has_wildcard(s) {
        return Err("* would list the second copy's columns".into());
    }
    let from = from_mut(s)?;
    let (f, null_extended) = factor_at(from, factor).ok_or("no such factor")?;
    let TableFactor::Table { name, .. } = f else {
        return Err("not a base table".into());
    };
    if inner && null_extended {
        return Err("the table's rows may be NULL-extended".into());
    }
    let name = name.clone();
    let exposed = exposed_name(f).to_string();
    let alias = format!("{}{}", super::SELF_JOIN_ALIAS, from.joins.len() + 1);
    let on = Expr::binary(
        BinaryOp::Eq,
        Expr::column(Some(&exposed), column),
        Expr::column(Some(&alias), column),
    );
    from.joins.push(Join {
        kind: if inner {
            JoinKind::Inner
        } else {
            JoinKind::Left
        },
        factor: TableFactor::Table {
            name,
            alias: Some(alias),
            indexed_by: None,
        },
        constraint: JoinConstraint::On(on),
    });
    Ok(())
}

pub fn outer_to_inner(s: &mut Select, join: usize) -> Result<(), String> {
    if null_extends_after(s.from.as_ref().ok_or("no FROM")?, join) {
        return Err("a RIGHT or FULL join follows".into());
    }
    let j = join_mut(s, join)?;
    if !matches!(j.kind, JoinKind::Left | JoinKind::Right) {
        return Err("not a LEFT or RIGHT join".into());
    }
    if !matches!(j.constraint, JoinConstraint::On(_)) {
        return Err("no ON condition".into());
    }
    j.kind = JoinKind::Inner;
    Ok(())
}

pub fn inner_to_outer(s: &mut Select, join: usize, right: bool) -> Result<(), String> {
    if null_extends_after(s.from.as_ref().ok_or("no FROM")?, join) {
        return Err("a RIGHT or FULL join follows".into());
    }
    let j = join_mut(s, join)?;
    if j.kind != JoinKind::Inner || !matches!(j.constraint, JoinConstraint::On(_)) {
        return Err("not an inner join with ON".into());
    }
    if is_lateral(&j.factor) {
        return Err("a LATERAL operand".into());
    }
    // SQLite cannot scan a forced index as the right side of a RIGHT
    // JOIN ("no query solution").
    if right
        && matches!(
            j.factor,
            TableFactor::Table {
                indexed_by: Some(Some(_)),
                ..
            }
        )
    {
        return Err("a forced index on the right side".into());
    }
    j.kind = if right {
        JoinKind::Right
    } else {
        JoinKind::Left
    };
    Ok(())
}

pub fn drop_condition(s: &mut Select, join: usize) -> Result<(), String> {
    take_inner_condition(s, join)?;
    join_mut(s, join)?.kind = JoinKind::Cross;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(name: &str, alias: &str) -> TableFactor {
        TableFactor::Table {
            name: name.into(),
            alias: Some(alias.into()),
            indexed_by: None,
        }
    }

    /// `FROM t0 AS a0 POSITIONAL JOIN t1 AS a1`.
    fn positional() -> Select {
        Select {
            items: vec![SelectItem::Expr {
                expr: Expr::column(Some("a0"), "c0"),
                alias: None,
            }],
            from: Some(FromClause {
                first: table("t0", "a0"),
                joins: vec![Join {
                    kind: JoinKind::Positional,
                    factor: table("t1", "a1"),
                    constraint: JoinConstraint::None,
                }],
            }),
            ..Select::default()
        }
    }

    /// A POSITIONAL join pads the shorter side with NULLs: both its
    /// sides may be NULL-extended, so neither is inner-joined to itself
    /// (that would drop the padded rows); a LEFT self-join keeps them.
    #[test]
    fn both_sides_of_a_positional_join_may_be_null_extended() {
        let s = positional();
        let from = s.from.as_ref().unwrap();
        assert!(factor_at(from, 0).unwrap().1);
        assert!(factor_at(from, 1).unwrap().1);
        for factor in [0, 1] {
            assert!(self_join(&mut positional(), factor, "c0", true).is_err());
            assert!(self_join(&mut positional(), factor, "c0", false).is_ok());
        }
        assert!(swap_first(&mut positional()).is_err());
    }
}
