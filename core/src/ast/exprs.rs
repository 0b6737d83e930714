//! Building expressions and walking them: the constructors generators
//! and oracles use, and the traversals the shrinker and checks need.

use super::*;

impl Expr {
    pub fn lit(v: Value) -> Expr {
        Expr::Literal(v)
    }
    pub fn int(i: i64) -> Expr {
        Expr::Literal(Value::Integer(i))
    }
    pub fn column(table: Option<&str>, column: &str) -> Expr {
        Expr::Column(ColumnRef {
            table: table.map(str::to_string),
            column: column.to_string(),
        })
    }
    pub fn unary(op: UnaryOp, expr: Expr) -> Expr {
        Expr::Unary {
            op,
            expr: Box::new(expr),
        }
    }
    #[allow(clippy::should_implement_trait)]
    pub fn not(expr: Expr) -> Expr {
        Expr::unary(UnaryOp::Not, expr)
    }
    pub fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        }
    }
    pub fn and(left: Expr, right: Expr) -> Expr {
        Expr::binary(BinaryOp::And, left, right)
    }
    pub fn is_null(expr: Expr) -> Expr {
        Expr::IsNull {
            expr: Box::new(expr),
            negated: false,
        }
    }
    pub fn func(name: &str, args: Vec<Expr>) -> Expr {
        Expr::Function {
            name: name.to_string(),
            args,
            distinct: false,
        }
    }

    /// The direct children of this expression, in printing order. Subqueries
    /// are not entered: their expressions live in another scope.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Literal(_) | Expr::Column(_) | Expr::CountStar => vec![],
            Expr::Exists { .. } | Expr::Subquery(_) => vec![],
            Expr::Unary { expr, .. }
            | Expr::IsNull { expr, .. }
            | Expr::IsBool { expr, .. }
            | Expr::Cast { expr, .. }
            | Expr::Collate { expr, .. }
            | Expr::InSubquery { expr, .. }
            | Expr::QuantifiedSubquery { expr, .. } => vec![expr],
            Expr::Binary { left, right, .. } => vec![left, right],
            Expr::Like {
                expr,
                pattern,
                escape,
                ..
            } => {
                let mut v = vec![&**expr, &**pattern];
                if let Some(e) = escape {
                    v.push(e);
                }
                v
            }
            Expr::Between {
                expr, low, high, ..
            } => vec![expr, low, high],
            Expr::InList { expr, list, .. } | Expr::Quantified { expr, list, .. } => {
                let mut v = vec![&**expr];
                v.extend(list.iter());
                v
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                let mut v = vec![];
                if let Some(o) = operand {
                    v.push(&**o);
                }
                for (w, t) in branches {
                    v.push(w);
                    v.push(t);
                }
                if let Some(o) = otherwise {
                    v.push(&**o);
                }
                v
            }
            Expr::Function { args, .. } => args.iter().collect(),
            Expr::Window {
                function,
                partition_by,
                order_by,
            } => {
                let mut v = vec![&**function];
                v.extend(partition_by.iter());
                v.extend(order_by.iter().map(|o| &o.expr));
                v
            }
        }
    }

    /// The direct children, mutably, in the same order as [`Expr::children`].
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Expr::Literal(_) | Expr::Column(_) | Expr::CountStar => vec![],
            Expr::Exists { .. } | Expr::Subquery(_) => vec![],
            Expr::Unary { expr, .. }
            | Expr::IsNull { expr, .. }
            | Expr::IsBool { expr, .. }
            | Expr::Cast { expr, .. }
            | Expr::Collate { expr, .. }
            | Expr::InSubquery { expr, .. }
            | Expr::QuantifiedSubquery { expr, .. } => vec![&mut **expr],
            Expr::Binary { left, right, .. } => vec![&mut **left, &mut **right],
            Expr::Like {
                expr,
                pattern,
                escape,
                ..
            } => {
                let mut v = vec![&mut **expr, &mut **pattern];
                if let Some(e) = escape {
                    v.push(&mut **e);
                }
                v
            }
            Expr::Between {
                expr, low, high, ..
            } => vec![&mut **expr, &mut **low, &mut **high],
            Expr::InList { expr, list, .. } | Expr::Quantified { expr, list, .. } => {
                let mut v = vec![&mut **expr];
                v.extend(list.iter_mut());
                v
            }
            Expr::Case {
                operand,
                branches,
                otherwise,
            } => {
                let mut v = vec![];
                if let Some(o) = operand {
                    v.push(&mut **o);
                }
                for (w, t) in branches {
                    v.push(w);
                    v.push(t);
                }
                if let Some(o) = otherwise {
                    v.push(&mut **o);
                }
                v
            }
            Expr::Function { args, .. } => args.iter_mut().collect(),
            Expr::Window {
                function,
                partition_by,
                order_by,
            } => {
                let mut v = vec![&mut **function];
                v.extend(partition_by.iter_mut());
                v.extend(order_by.iter_mut().map(|o| &mut o.expr));
                v
            }
        }
    }

    /// Whether this expression contains an aggregate call at its own level.
    pub fn contains_aggregate(&self, is_aggregate: &dyn Fn(&str) -> bool) -> bool {
        match self {
            Expr::CountStar => true,
            // A window call is computed per row, after grouping: it does
            // not make its query an aggregate one.
            Expr::Window { .. } => false,
            Expr::Function { name, .. } if is_aggregate(name) => true,
            _ => self
                .children()
                .into_iter()
                .any(|c| c.contains_aggregate(is_aggregate)),
        }
    }
}

impl SelectItem {
    /// The expressions of the item: none for `*`, the replacements of
    /// `* REPLACE`.
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            SelectItem::Wildcard | SelectItem::WildcardExcluding(_) => vec![],
            SelectItem::WildcardReplacing(r) => r.iter().map(|(e, _)| e).collect(),
            SelectItem::Expr { expr, .. } => vec![expr],
        }
    }

    /// The expressions of the item, to change in place.
    pub fn exprs_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            SelectItem::Wildcard | SelectItem::WildcardExcluding(_) => vec![],
            SelectItem::WildcardReplacing(r) => r.iter_mut().map(|(e, _)| e).collect(),
            SelectItem::Expr { expr, .. } => vec![expr],
        }
    }

    /// Whether the item is `*` in one of its forms: every column of the
    /// FROM clause, whatever it holds.
    pub fn is_wildcard(&self) -> bool {
        !matches!(self, SelectItem::Expr { .. })
    }
}
