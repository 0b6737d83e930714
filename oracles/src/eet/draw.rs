//! Drawing a transformation for one position: which transformations the
//! dialect and the position allow, and the predicates they carry, drawn
//! over the columns the position may read.

use super::sites::{Phase, Site};
use super::transformation::{condition, Transformation};
use crate::transform::is_integer;
use crate::transform::rewrite::yields_truth;
use lancet_core::ast::{BinaryOp, Expr, FromClause, JoinKind, TableFactor, UnaryOp};
use lancet_core::{GenerateContext, Scope};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// What a position offers to draw from: the base query's FROM clause and
/// scope (for the columns a predicate there may read and their types).
pub struct Position<'a> {
    pub node: &'a Expr,
    pub site: Site,
    pub from: Option<&'a FromClause>,
    pub scope: &'a Scope,
}

/// A transformation that keeps `pos.node`'s value at its position, or
/// `None` where none applies (a frozen position, a literal, a constant).
pub fn draw(cx: &mut GenerateContext<'_>, pos: &Position<'_>) -> Option<Transformation> {
    let e = pos.node;
    if pos.site.phase == Phase::Frozen || matches!(e, Expr::Literal(_)) {
        return None;
    }
    let generator = &*cx.generator;
    let reads_data = e.any(&|x| {
        matches!(x, Expr::Column(_) | Expr::CountStar)
            || matches!(x, Expr::Function { name, .. } if generator.is_aggregate(name))
    });
    if !reads_data {
        return None;
    }
    let rules = cx.dialect.rules();
    let integer = pos.site.outer
        && rules.integer_columns_hold_integers()
        && matches!(e, Expr::Column(_))
        && pos
            .scope
            .columns
            .iter()
            .any(|c| &c.expr == e && is_integer(c));
    let wrappable = rules.wrapping_keeps_type() || keeps_its_type_when_wrapped(e, integer);
    let subquery_fits = wrappable
        && pos.site.phase == Phase::Row
        && !pos.site.in_aggregate
        && !e.any(&|x| {
            matches!(x, Expr::CountStar | Expr::Window { .. })
                || matches!(x, Expr::Function { name, .. } if generator.is_aggregate(name))
        });
    let truth = yields_truth(e);
    let mut kinds: Vec<u8> = Vec::new();
    if wrappable {
        kinds.extend([0, 0]);
        // A NULL arm changes the CASE's type where wrapping may
        // (MariaDB: NULL with a BIGINT UNSIGNED makes a DECIMAL, which
        // CAST(... AS SIGNED) saturates): there both arms are `e`.
        if rules.wrapping_keeps_type() {
            kinds.extend([1, 2, 3]);
        }
    }
    if subquery_fits {
        kinds.extend([4, 4]);
    }
    if truth {
        kinds.extend([5, 6]);
        // MariaDB 10.11 reads `NOT (NOT p)` as `NOT p` where `p` holds
        // `x op ANY/ALL (subquery)` (docs/bugs-found.md): drawn elsewhere
        // only, so that the known bug does not flood every run.
        if !e.any(&|x| matches!(x, Expr::QuantifiedSubquery { .. })) {
            kinds.push(7);
        }
    }
    if integer {
        kinds.extend([8, 9]);
    }
    let kind = *kinds.choose(cx.rng)?;
    Some(match kind {
        0 => Transformation::SameArms {
            predicate: predicate(cx, pos).unwrap_or_else(|| constant(cx, None)),
        },
        1 => Transformation::TrueBranch {
            tautology: always(cx, pos, true),
        },
        2 => Transformation::FalseBranch {
            contradiction: always(cx, pos, false),
        },
        3 => Transformation::NullBranch,
        4 => Transformation::ScalarSubquery,
        5 => Transformation::AndTrue {
            tautology: always(cx, pos, true),
        },
        6 => Transformation::OrFalse {
            contradiction: always(cx, pos, false),
        },
        7 => Transformation::DoubleNegation,
        8 => Transformation::AddZero,
        _ => Transformation::TimesOne,
    })
}

/// Where wrapping may change what a value means to its context (SQLite's
/// affinity and collation, MySQL's ENUM, SET and FLOAT columns), only
/// values that carry none of it are wrapped: truth values, computed
/// numbers, counts and integer columns, with no COLLATE inside.
fn keeps_its_type_when_wrapped(e: &Expr, integer_column: bool) -> bool {
    if e.any(&|x| matches!(x, Expr::Collate { .. })) {
        return false;
    }
    use BinaryOp::*;
    yields_truth(e)
        || integer_column
        || match e {
            Expr::Binary { op, .. } => matches!(
                op,
                Add | Sub
                    | Mul
                    | Div
                    | Mod
                    | IntDiv
                    | BitAnd
                    | BitOr
                    | BitXor
                    | ShiftLeft
                    | ShiftRight
            ),
            Expr::Unary { op, .. } => matches!(op, UnaryOp::Neg | UnaryOp::BitNot),
            Expr::CountStar => true,
            Expr::Function { name, .. } => name.eq_ignore_ascii_case("count"),
            _ => false,
        }
}

/// A generated predicate over the columns the position may read: the
/// whole scope in the base query's WHERE and ungrouped select list, the
/// tables joined so far in an ON condition; `None` elsewhere (a grouped
/// position, a subquery, a derived table), where only constants may be
/// added. Inside an aggregate's arguments, no subquery.
fn predicate(cx: &mut GenerateContext<'_>, pos: &Position<'_>) -> Option<Expr> {
    let site = pos.site;
    if !site.outer || site.phase != Phase::Row {
        return None;
    }
    let visible;
    let scope = match site.on_join {
        None => pos.scope,
        Some(j) => {
            visible = joined_so_far(pos.scope, pos.from?, j);
            if visible.columns.is_empty() {
                return None;
            }
            &visible
        }
    };
    let p = cx.generator.predicate(cx.rng, scope);
    let has_subquery = p.any(&|x| {
        matches!(
            x,
            Expr::Subquery(_)
                | Expr::Exists { .. }
                | Expr::InSubquery { .. }
                | Expr::QuantifiedSubquery { .. }
        )
    });
    (!(site.in_aggregate && has_subquery)).then_some(p)
}

/// A constant truth value: `a = b` or `a <> b` of small integers, TRUE
/// (`Some(true)`), FALSE or either.
fn constant(cx: &mut GenerateContext<'_>, value: Option<bool>) -> Expr {
    let value = value.unwrap_or_else(|| cx.rng.random_bool(0.5));
    let a = cx.rng.random_range(0..4);
    let b = cx.rng.random_range(0..4);
    condition(None, value, a, b)
}

/// A condition always TRUE (`value`) or never TRUE: EET's tautology or
/// contradiction over a generated truth-valued predicate where the
/// position may read columns, else a constant one.
fn always(cx: &mut GenerateContext<'_>, pos: &Position<'_>, value: bool) -> Expr {
    // Not over a quantified subquery: `NOT q` below a NOT of the query
    // meets MariaDB's ANY/ALL negation bug (see `draw`).
    let fits =
        |q: &Expr| yields_truth(q) && !q.any(&|x| matches!(x, Expr::QuantifiedSubquery { .. }));
    match predicate(cx, pos).filter(fits) {
        Some(q) if cx.rng.random_bool(0.7) => condition(Some(q), value, 0, 0),
        _ => constant(cx, Some(value)),
    }
}

/// The columns of `scope` an ON condition of join `j` may read: those of
/// the tables joined since the last comma (which binds looser than JOIN,
/// and in MySQL and PostgreSQL hides the tables before it).
fn joined_so_far(scope: &Scope, from: &FromClause, j: usize) -> Scope {
    let name = |f: &TableFactor| match f {
        TableFactor::Table { name, alias, .. } => alias.clone().unwrap_or_else(|| name.clone()),
        TableFactor::Derived { alias, .. } => alias.clone(),
    };
    let mut names = Vec::new();
    let mut reaches_first = true;
    for join in from.joins.iter().take(j + 1).rev() {
        names.push(name(&join.factor));
        if join.kind == JoinKind::Comma {
            reaches_first = false;
            break;
        }
    }
    if reaches_first {
        names.push(name(&from.first));
    }
    Scope {
        columns: scope
            .columns
            .iter()
            .filter(|c| matches!(&c.expr, Expr::Column(r) if r.table.as_ref().is_some_and(|t| names.contains(t))))
            .cloned()
            .collect(),
    }
}
