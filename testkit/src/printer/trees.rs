//! Trees for the printer's tests, built in a line each, and random ones
//! over the operators sqlparser parses in every dialect.

use lancet_core::ast::*;
use lancet_core::value::Value;

pub fn col(name: &str) -> Expr {
    Expr::column(None, name)
}

pub fn qcol(table: &str, name: &str) -> Expr {
    Expr::column(Some(table), name)
}

pub fn int(i: i64) -> Expr {
    Expr::int(i)
}

pub fn real(r: f64) -> Expr {
    Expr::lit(Value::Real(r))
}

pub fn text(s: &str) -> Expr {
    Expr::lit(Value::Text(s.to_string()))
}

pub fn bin(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    Expr::binary(op, left, right)
}

pub fn un(op: UnaryOp, e: Expr) -> Expr {
    Expr::unary(op, e)
}

pub fn item(expr: Expr) -> SelectItem {
    SelectItem::Expr { expr, alias: None }
}

pub fn table(name: &str) -> TableFactor {
    TableFactor::Table {
        name: name.to_string(),
        alias: None,
        indexed_by: None,
    }
}

/// `SELECT items`
pub fn select(items: Vec<Expr>) -> Select {
    Select {
        items: items.into_iter().map(item).collect(),
        ..Select::default()
    }
}

/// `SELECT items FROM name`
pub fn select_from(items: Vec<Expr>, name: &str) -> Select {
    Select {
        from: Some(FromClause {
            first: table(name),
            joins: vec![],
        }),
        ..select(items)
    }
}

/// `SELECT * FROM` a FROM clause.
pub fn select_star(from: FromClause) -> Query {
    Query::select(Select {
        items: vec![SelectItem::Wildcard],
        from: Some(from),
        ..Select::default()
    })
}

pub fn join(kind: JoinKind, factor: TableFactor, constraint: JoinConstraint) -> Join {
    Join {
        kind,
        factor,
        constraint,
    }
}

pub fn query(items: Vec<Expr>) -> Query {
    Query::select(select(items))
}

pub fn query_from(items: Vec<Expr>, name: &str) -> Query {
    Query::select(select_from(items, name))
}

pub fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// `a LIKE pattern` (or another kind) on the column `a`.
pub fn like(kind: LikeKind, pattern: &str, escape: Option<&str>, negated: bool) -> Expr {
    Expr::Like {
        kind,
        expr: Box::new(col("a")),
        pattern: Box::new(text(pattern)),
        escape: escape.map(|e| Box::new(text(e))),
        negated,
    }
}

pub fn between(expr: Expr, low: Expr, high: Expr, negated: bool, symmetric: bool) -> Expr {
    Expr::Between {
        expr: Box::new(expr),
        low: Box::new(low),
        high: Box::new(high),
        negated,
        symmetric,
    }
}

/// A compound of two bodies.
pub fn compound(op: SetOperator, left: SetExpr, right: SetExpr) -> SetExpr {
    SetExpr::SetOp {
        op,
        left: Box::new(left),
        right: Box::new(right),
    }
}

/// `SELECT i`, as a compound arm.
pub fn arm(i: i64) -> SetExpr {
    SetExpr::Select(Box::new(select(vec![int(i)])))
}

/// A query of `body` alone, without ORDER BY or LIMIT.
pub fn body_query(body: SetExpr) -> Query {
    Query {
        body,
        order_by: vec![],
        limit: None,
        offset: None,
    }
}

/// A small deterministic generator, independent of lancet's own.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Trees over operators that sqlparser parses in every dialect.
pub fn random_expr(r: &mut Lcg, depth: u32) -> Expr {
    use BinaryOp::*;
    if depth == 0 || r.below(4) == 0 {
        return match r.below(4) {
            0 => col(["a", "b", "c"][r.below(3) as usize]),
            1 => int(r.below(5) as i64),
            2 => int(-(r.below(5) as i64) - 1),
            _ => qcol("t0", "c0"),
        };
    }
    match r.below(9) {
        0 => {
            let op = [UnaryOp::Neg, UnaryOp::Plus, UnaryOp::Not][r.below(3) as usize];
            un(op, random_expr(r, depth - 1))
        }
        1 => Expr::IsNull {
            expr: Box::new(random_expr(r, depth - 1)),
            negated: r.below(2) == 0,
        },
        2 => Expr::IsBool {
            expr: Box::new(random_expr(r, depth - 1)),
            value: r.below(2) == 0,
            negated: r.below(2) == 0,
        },
        3 => between(
            random_expr(r, depth - 1),
            random_expr(r, depth - 1),
            random_expr(r, depth - 1),
            r.below(2) == 0,
            false,
        ),
        4 => Expr::InList {
            expr: Box::new(random_expr(r, depth - 1)),
            list: vec![random_expr(r, depth - 1), random_expr(r, depth - 1)],
            negated: r.below(2) == 0,
        },
        5 => Expr::Like {
            kind: LikeKind::Like,
            expr: Box::new(random_expr(r, depth - 1)),
            pattern: Box::new(random_expr(r, depth - 1)),
            escape: None,
            negated: r.below(2) == 0,
        },
        _ => {
            let ops = [
                Add,
                Sub,
                Mul,
                Div,
                Mod,
                Concat,
                BitAnd,
                BitOr,
                Eq,
                NotEq,
                Lt,
                LtEq,
                Gt,
                GtEq,
                And,
                Or,
                IsNotDistinctFrom,
                IsDistinctFrom,
            ];
            let op = ops[r.below(ops.len() as u64) as usize];
            bin(op, random_expr(r, depth - 1), random_expr(r, depth - 1))
        }
    }
}

/// Whether `e` compares null-safely anywhere, which sqlparser cannot
/// read in SQLite's spelling.
pub fn uses_null_safe_comparison(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Binary {
            op: BinaryOp::IsNotDistinctFrom | BinaryOp::IsDistinctFrom,
            ..
        }
    ) || e.children().into_iter().any(uses_null_safe_comparison)
}
