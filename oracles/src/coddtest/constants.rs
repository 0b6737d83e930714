//! The constants of a query: subexpressions whose value is the same on
//! every row, which constant folding may replace by a literal, and the
//! replacement itself.

use lancet_core::{Expr, JoinConstraint, Select, UnaryOp, Value};

/// Functions whose value changes between calls or rows (random numbers,
/// clocks, counters of the session): never a constant, in any dialect.
const NONDETERMINISTIC: &[&str] = &[
    "random",
    "randomblob",
    "rand",
    "random_bytes",
    "uuid",
    "uuid_short",
    "gen_random_uuid",
    "now",
    "sysdate",
    "curdate",
    "curtime",
    "current_date",
    "current_time",
    "current_timestamp",
    "localtime",
    "localtimestamp",
    "utc_date",
    "utc_time",
    "utc_timestamp",
    "unix_timestamp",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "timeofday",
    "changes",
    "total_changes",
    "last_insert_rowid",
    "last_insert_id",
    "row_count",
    "found_rows",
    "connection_id",
    "nextval",
    "currval",
    "setseed",
    "sleep",
    "pg_sleep",
    "txid_current",
];

/// SQLite's date and time functions read the clock when an argument is
/// `'now'`.
const CLOCK_READERS: &[&str] = &[
    "date",
    "time",
    "datetime",
    "julianday",
    "strftime",
    "unixepoch",
    "timediff",
];

/// Whether `e` is a constant of any query it stands in that is worth
/// folding: it reads no column (and holds no subquery: the oracle's own
/// subqueries are taken whole, see [`super::subquery`]), calls no
/// aggregate, window or nondeterministic function, and is more than a
/// literal.
pub fn is_foldable(e: &Expr, is_aggregate: &dyn Fn(&str) -> bool) -> bool {
    let trivial = match e {
        Expr::Literal(_) => true,
        Expr::Unary {
            op: UnaryOp::Neg | UnaryOp::Plus,
            expr,
        } => matches!(**expr, Expr::Literal(_)),
        _ => false,
    };
    !trivial
        && !e.may_read_columns()
        && !e.contains_aggregate(is_aggregate)
        && !e.any(&|n| matches!(n, Expr::Window { .. }) || reads_clock(n))
}

fn reads_clock(e: &Expr) -> bool {
    let Expr::Function { name, args, .. } = e else {
        return false;
    };
    let name = name.to_ascii_lowercase();
    NONDETERMINISTIC.contains(&name.as_str())
        || (CLOCK_READERS.contains(&name.as_str())
            && args.iter().any(|a| {
                matches!(a, Expr::Literal(Value::Text(t)) if t.to_ascii_lowercase().contains("now"))
            }))
}

/// The expressions of a select a fold may touch: its items, its WHERE,
/// and its joins' ON conditions (not the insides of derived tables or
/// subqueries: another scope).
fn roots(s: &Select) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = s.items.iter().flat_map(|i| i.exprs()).collect();
    out.extend(s.selection.iter());
    if let Some(from) = &s.from {
        for j in &from.joins {
            if let JoinConstraint::On(on) = &j.constraint {
                out.push(on);
            }
        }
    }
    out
}

fn roots_mut(s: &mut Select) -> Vec<&mut Expr> {
    let mut out: Vec<&mut Expr> = s.items.iter_mut().flat_map(|i| i.exprs_mut()).collect();
    out.extend(s.selection.iter_mut());
    if let Some(from) = &mut s.from {
        for j in &mut from.joins {
            if let JoinConstraint::On(on) = &mut j.constraint {
                out.push(on);
            }
        }
    }
    out
}

/// Every foldable subexpression of `s`, outermost first (a constant
/// inside a larger one is listed too: either may be folded).
pub fn foldable(s: &Select, is_aggregate: &dyn Fn(&str) -> bool) -> Vec<Expr> {
    fn visit(e: &Expr, ok: &dyn Fn(&Expr) -> bool, out: &mut Vec<Expr>) {
        if ok(e) {
            out.push(e.clone());
        }
        for c in e.children() {
            visit(c, ok, out);
        }
    }
    let ok = |e: &Expr| is_foldable(e, is_aggregate);
    let mut out = Vec::new();
    for r in roots(s) {
        visit(r, &ok, &mut out);
    }
    out
}

/// `s` with every occurrence of `constant` among the expressions a fold
/// may touch replaced by `literal`; the number replaced.
pub fn fold(s: &Select, constant: &Expr, literal: &Expr) -> (Select, usize) {
    fn replace(e: &mut Expr, constant: &Expr, literal: &Expr, n: &mut usize) {
        if e == constant {
            *e = literal.clone();
            *n += 1;
            return;
        }
        for c in e.children_mut() {
            replace(c, constant, literal, n);
        }
    }
    let mut folded = s.clone();
    let mut n = 0;
    for r in roots_mut(&mut folded) {
        replace(r, constant, literal, &mut n);
    }
    (folded, n)
}

/// `SELECT * FROM t0 WHERE c0 < (1 + 2)` and its constant `1 + 2`, for
/// tests.
#[cfg(test)]
pub(crate) fn example() -> (Select, Expr) {
    use lancet_core::{BinaryOp, FromClause, SelectItem};
    let sum = Expr::binary(BinaryOp::Add, Expr::int(1), Expr::int(2));
    let s = Select {
        items: vec![SelectItem::Wildcard],
        from: Some(FromClause::table("t0", None)),
        selection: Some(Expr::binary(
            BinaryOp::Lt,
            Expr::column(None, "c0"),
            sum.clone(),
        )),
        ..Select::default()
    };
    (s, sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{BinaryOp, SelectItem};

    fn agg(name: &str) -> bool {
        name.eq_ignore_ascii_case("max")
    }

    #[test]
    fn constants_read_no_column_call_no_aggregate_and_no_clock() {
        let sum = Expr::binary(BinaryOp::Add, Expr::int(1), Expr::int(2));
        assert!(is_foldable(&sum, &agg));
        assert!(!is_foldable(&Expr::int(1), &agg));
        assert!(!is_foldable(&Expr::unary(UnaryOp::Neg, Expr::int(1)), &agg));
        let col = Expr::binary(BinaryOp::Add, Expr::column(None, "c0"), Expr::int(2));
        assert!(!is_foldable(&col, &agg));
        assert!(!is_foldable(&Expr::func("MAX", vec![Expr::int(1)]), &agg));
        assert!(!is_foldable(&Expr::func("random", vec![]), &agg));
        let now = Expr::func("date", vec![Expr::lit(Value::Text("NOW".into()))]);
        assert!(!is_foldable(&now, &agg));
        let fixed = Expr::func("date", vec![Expr::lit(Value::Text("2020-01-01".into()))]);
        assert!(is_foldable(&fixed, &agg));
    }

    #[test]
    fn folds_every_occurrence_in_items_and_where() {
        let (s, sum) = example();
        assert_eq!(foldable(&s, &agg), vec![sum.clone()]);
        let (folded, n) = fold(&s, &sum, &Expr::int(3));
        assert_eq!(n, 1);
        assert!(foldable(&folded, &agg).is_empty());
        let mut twice = s.clone();
        twice.items = vec![SelectItem::Expr {
            expr: sum.clone(),
            alias: None,
        }];
        assert_eq!(fold(&twice, &sum, &Expr::int(3)).1, 2);
    }
}
