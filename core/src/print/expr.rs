//! Printing expressions: every operand that is not atomic is
//! parenthesized (see the module above), and dialects are asked where they
//! spell an operator, a literal or a cast differently.

use super::*;

/// Expressions that print as one unit and need no parentheses as operands.
/// Every literal does: negative numbers print with their own parentheses
/// (or, in PostgreSQL, inside quotes), so wrapping them again would only
/// double the parentheses.
pub(super) fn is_atomic(e: &Expr) -> bool {
    matches!(
        e,
        Expr::Literal(_)
            | Expr::Column(_)
            | Expr::Function { .. }
            | Expr::CountStar
            | Expr::Subquery(_)
            | Expr::Cast { .. }
            | Expr::Case { .. }
    )
}

impl ToSql for Expr {
    // Long because: one match arm per Expr variant, read as a table of how each prints.
    fn print(&self, p: &mut Printer) {
        match self {
            Expr::Literal(v) => p.literal(v),
            Expr::Column(c) => {
                if let Some(t) = &c.table {
                    p.s(t);
                    p.out.push('.');
                }
                p.s(&c.column);
            }
            Expr::Unary { op, expr } => {
                p.s(match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    UnaryOp::BitNot => "~",
                    UnaryOp::Not => "NOT ",
                });
                p.operand(expr);
            }
            Expr::Binary { op, left, right } => p.binary(*op, left, right),
            Expr::IsNull { expr, negated } => {
                p.operand(expr);
                p.s(if *negated { " IS NOT NULL" } else { " IS NULL" });
            }
            Expr::IsBool {
                expr,
                value,
                negated,
            } => {
                p.operand(expr);
                p.s(if *negated { " IS NOT " } else { " IS " });
                p.s(if *value { "TRUE" } else { "FALSE" });
            }
            Expr::Like {
                kind,
                expr,
                pattern,
                escape,
                negated,
            } => {
                p.operand(expr);
                if *negated {
                    p.s(" NOT");
                }
                p.s(match kind {
                    LikeKind::Like => " LIKE ",
                    LikeKind::Glob => " GLOB ",
                    LikeKind::ILike => " ILIKE ",
                    LikeKind::SimilarTo => " SIMILAR TO ",
                });
                p.operand(pattern);
                if let Some(e) = escape {
                    p.s(" ESCAPE ");
                    p.operand(e);
                }
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
                symmetric,
            } => {
                p.operand(expr);
                p.s(if *negated {
                    " NOT BETWEEN "
                } else {
                    " BETWEEN "
                });
                if *symmetric {
                    p.s("SYMMETRIC ");
                }
                p.operand(low);
                p.s(" AND ");
                p.operand(high);
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                p.operand(expr);
                p.s(if *negated { " NOT IN (" } else { " IN (" });
                p.list(list, ", ", |p, e| e.print(p));
                p.s(")");
            }
            Expr::Quantified {
                expr,
                op,
                all,
                list,
            } => {
                p.operand(expr);
                p.out.push(' ');
                p.binary_operator_text(*op);
                p.s(if *all { " ALL (ARRAY[" } else { " ANY (ARRAY[" });
                p.list(list, ", ", |p, e| e.print(p));
                p.s("])");
            }
            Expr::QuantifiedSubquery {
                expr,
                op,
                all,
                query,
            } => {
                p.operand(expr);
                p.out.push(' ');
                p.binary_operator_text(*op);
                p.s(if *all { " ALL " } else { " ANY " });
                p.query_in_parens(query);
            }
            Expr::InSubquery {
                expr,
                query,
                negated,
            } => {
                p.operand(expr);
                p.s(if *negated { " NOT IN " } else { " IN " });
                p.query_in_parens(query);
            }
            Expr::Exists { query, negated } => {
                p.s(if *negated { "NOT EXISTS " } else { "EXISTS " });
                p.query_in_parens(query);
            }
            Expr::Subquery(q) => p.query_in_parens(q),
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                p.s("CASE");
                if let Some(o) = operand {
                    p.out.push(' ');
                    p.operand(o);
                }
                for (when, then) in branches {
                    p.s(" WHEN ");
                    when.print(p);
                    p.s(" THEN ");
                    then.print(p);
                }
                if let Some(o) = otherwise {
                    p.s(" ELSE ");
                    o.print(p);
                }
                p.s(" END");
            }
            Expr::Cast { expr, ty } => {
                p.s("CAST(");
                expr.print(p);
                p.s(" AS ");
                p.s(&ty.0);
                p.s(")");
            }
            Expr::Collate { expr, collation } => {
                p.operand(expr);
                p.s(" COLLATE ");
                p.collation(collation);
            }
            Expr::Function {
                name,
                args,
                distinct,
            } => {
                p.s(name);
                p.out.push('(');
                if *distinct {
                    p.s("DISTINCT ");
                }
                p.list(args, ", ", |p, e| e.print(p));
                p.out.push(')');
            }
            Expr::CountStar => p.s("COUNT(*)"),
            Expr::Window {
                function,
                partition_by,
                order_by,
            } => {
                function.print(p);
                p.s(" OVER (");
                if !partition_by.is_empty() {
                    p.s("PARTITION BY ");
                    p.list(partition_by, ", ", |p, e| e.print(p));
                }
                if !order_by.is_empty() {
                    if !partition_by.is_empty() {
                        p.s(" ");
                    }
                    p.s("ORDER BY ");
                    p.order_by_list(order_by);
                }
                p.out.push(')');
            }
        }
    }
}
