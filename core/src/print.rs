//! Printing the syntax tree as SQL text for one dialect. Where dialects
//! spell SQL differently, the printer asks the dialect's rules
//! ([`crate::dialect`]); everything else is printed the same for all.
//!
//! The printer parenthesizes every operand that is not atomic, so the text
//! means exactly what the tree means under every dialect's precedence rules
//! (SQLite's `NOT` and `COLLATE` bind differently from PostgreSQL's, and a
//! generated `- -1` would be a comment). Reproducers are a little noisier
//! for it, but never wrong.
//!
//! Expressions are printed in [`expr`] (with the rule for what needs no
//! parentheses), WITH clauses in [`cte`]; queries, selects and FROM clauses
//! here.

use crate::ast::*;
use crate::dialect::{Dialect, SqlDialect};
use crate::value::Value;
use std::fmt::Write;

mod cte;
mod expr;
use cte::{ctes_of_body, ctes_of_select};
use expr::is_atomic;

/// Anything that can be printed as SQL text.
pub trait ToSql {
    fn print(&self, p: &mut Printer);

    fn to_sql(&self, dialect: Dialect) -> String {
        let mut p = Printer::new(dialect);
        self.print(&mut p);
        p.finish()
    }
}

/// Accumulates SQL text for one dialect.
pub struct Printer {
    dialect: Dialect,
    out: String,
    /// For each query being printed, innermost last: the derived tables
    /// its WITH clause defines, which its FROM clauses name by alias only.
    cte_scopes: Vec<Vec<String>>,
}

impl Printer {
    pub fn new(dialect: Dialect) -> Printer {
        Printer {
            dialect,
            out: String::with_capacity(256),
            cte_scopes: Vec::new(),
        }
    }

    pub fn finish(self) -> String {
        self.out
    }

    /// The rules of the dialect being printed.
    fn rules(&self) -> &'static dyn SqlDialect {
        self.dialect.rules()
    }

    fn s(&mut self, text: &str) {
        self.out.push_str(text);
    }

    /// Appends text as it is: for providers printing statements of their
    /// own (SQLite's DDL) around the core nodes they contain.
    pub fn push(&mut self, text: &str) {
        self.s(text);
    }

    /// Prints `items` with `f`, separated by `sep` (column lists, rows).
    pub fn list<T>(&mut self, items: &[T], sep: &str, mut f: impl FnMut(&mut Self, &T)) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.s(sep);
            }
            f(self, item);
        }
    }

    fn literal(&mut self, v: &Value) {
        match v {
            Value::Null => self.s("NULL"),
            Value::Integer(i) if *i < 0 => {
                let _ = write!(self.out, "({i})");
            }
            Value::Integer(i) => {
                let _ = write!(self.out, "{i}");
            }
            Value::Real(r) => self.rules().real_literal(*r, &mut self.out),
            Value::Text(t) => self.string(t),
            Value::Blob(b) => {
                let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
                self.rules().blob_literal(&hex, &mut self.out);
            }
            Value::Boolean(b) => self.s(if *b { "TRUE" } else { "FALSE" }),
            Value::Decimal(text) if text.starts_with('-') => {
                let _ = write!(self.out, "({text})");
            }
            Value::Decimal(text) => self.s(text),
        }
    }

    /// A collation name, quoted where the dialect would fold its case.
    pub fn collation(&mut self, name: &str) {
        if self.rules().quotes_collation_names() {
            let _ = write!(self.out, "\"{name}\"");
        } else {
            self.s(name);
        }
    }

    fn string(&mut self, t: &str) {
        let backslash_escapes = self.rules().backslash_escapes();
        self.out.push('\'');
        for c in t.chars() {
            match c {
                '\'' => self.s("''"),
                '\\' if backslash_escapes => self.s("\\\\"),
                c => self.out.push(c),
            }
        }
        self.out.push('\'');
    }

    /// Prints `e`, wrapped in parentheses unless it is atomic.
    fn operand(&mut self, e: &Expr) {
        if is_atomic(e) {
            e.print(self);
        } else {
            self.out.push('(');
            e.print(self);
            self.out.push(')');
        }
    }

    fn binary(&mut self, op: BinaryOp, left: &Expr, right: &Expr) {
        use BinaryOp::*;
        let d = self.rules();
        match op {
            Concat => {
                if let Some(function) = d.concat_function() {
                    self.s(function);
                    self.s("(");
                    left.print(self);
                    self.s(", ");
                    right.print(self);
                    self.s(")");
                    return;
                }
            }
            IsDistinctFrom if d.null_safe_not_equal().is_none() => {
                self.s("NOT (");
                self.operand(left);
                self.out.push(' ');
                self.s(d.null_safe_equal());
                self.out.push(' ');
                self.operand(right);
                self.s(")");
                return;
            }
            _ => {}
        }
        self.operand(left);
        self.out.push(' ');
        self.binary_operator_text(op);
        self.out.push(' ');
        self.operand(right);
    }

    /// The text of a binary operator in this dialect.
    fn binary_operator_text(&mut self, op: BinaryOp) {
        use BinaryOp::*;
        let d = self.rules();
        let text = match op {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Mod => "%",
            Concat => "||",
            BitAnd => "&",
            BitOr => "|",
            ShiftLeft => "<<",
            ShiftRight => ">>",
            Eq => "=",
            NotEq => "<>",
            Lt => "<",
            LtEq => "<=",
            Gt => ">",
            GtEq => ">=",
            IsNotDistinctFrom => d.null_safe_equal(),
            // Only quantified comparisons get here without the operator: a
            // dialect that lacks it has none of those either.
            IsDistinctFrom => d.null_safe_not_equal().unwrap_or("IS DISTINCT FROM"),
            And => "AND",
            Or => "OR",
            RegexMatch => d.regex_match(),
            IntDiv => "DIV",
            BitXor => "^",
            Xor => "XOR",
        };
        self.s(text);
    }

    fn order_by_list(&mut self, items: &[OrderBy]) {
        self.list(items, ", ", |p, o| {
            o.expr.print(p);
            if o.descending {
                p.s(" DESC");
            }
            match o.nulls_first {
                Some(true) => p.s(" NULLS FIRST"),
                Some(false) => p.s(" NULLS LAST"),
                None => {}
            }
        });
    }

    fn query_in_parens(&mut self, q: &Query) {
        self.out.push('(');
        q.print(self);
        self.out.push(')');
    }

    fn table_factor(&mut self, t: &TableFactor) {
        match t {
            TableFactor::Table {
                name,
                alias,
                indexed_by,
            } => {
                self.s(name);
                if let Some(a) = alias {
                    self.s(" AS ");
                    self.s(a);
                }
                match indexed_by {
                    Some(Some(index)) => {
                        self.s(" INDEXED BY ");
                        self.s(index);
                    }
                    Some(None) => self.s(" NOT INDEXED"),
                    None => {}
                }
            }
            TableFactor::Derived { alias, form, .. }
                if form.is_cte()
                    && self
                        .cte_scopes
                        .last()
                        .is_some_and(|scope| scope.contains(alias)) =>
            {
                self.s(alias);
            }
            TableFactor::Derived {
                query,
                alias,
                lateral,
                ..
            } => {
                if *lateral {
                    self.s("LATERAL ");
                }
                self.query_in_parens(query);
                self.s(" AS ");
                self.s(alias);
            }
        }
    }

    /// Prints a compound body; `wrap` says that a compound must be wrapped
    /// to be read as one arm.
    fn set_expr(&mut self, body: &SetExpr, wrap: bool) {
        match body {
            SetExpr::Select(s) => s.print_body(self),
            SetExpr::SetOp { op, left, right } => {
                if wrap {
                    // SQLite allows no parentheses around compound arms; a
                    // derived table means the same in every dialect.
                    self.s("SELECT * FROM (");
                    self.set_expr(body, false);
                    self.s(") AS lancet_arm");
                    return;
                }
                // Where all compound operators have one precedence (SQLite),
                // a left-deep tree prints flat. Where INTERSECT binds tighter
                // than UNION and EXCEPT, `a UNION b INTERSECT c` is
                // `a UNION (b INTERSECT c)`, so a UNION or EXCEPT under an
                // INTERSECT is wrapped as well.
                let wrap_left = self.rules().intersect_binds_tighter()
                    && *op == SetOperator::Intersect
                    && matches!(&**left, SetExpr::SetOp { op: inner, .. }
                        if *inner != SetOperator::Intersect);
                self.set_expr(left, wrap_left);
                self.s(match op {
                    SetOperator::Union => " UNION ",
                    SetOperator::UnionAll => " UNION ALL ",
                    SetOperator::Intersect => " INTERSECT ",
                    SetOperator::Except => " EXCEPT ",
                });
                self.set_expr(right, true);
            }
        }
    }
}

impl ToSql for Select {
    /// A SELECT printed on its own (not as part of a [`Query`]) carries
    /// the WITH clause of its CTEs itself.
    fn print(&self, p: &mut Printer) {
        let mut ctes = Vec::new();
        ctes_of_select(self, &mut ctes);
        p.with_clause(ctes);
        self.print_body(p);
        p.end_cte_scope();
    }
}

impl Select {
    fn print_body(&self, p: &mut Printer) {
        p.s(if self.distinct {
            "SELECT DISTINCT "
        } else {
            "SELECT "
        });
        p.list(&self.items, ", ", |p, item| match item {
            SelectItem::Wildcard => p.s("*"),
            SelectItem::WildcardExcluding(names) => {
                // Generators make one only where the dialect has a keyword.
                let keyword = p.rules().wildcard_exclude().unwrap_or("EXCLUDE");
                p.s("* ");
                p.s(keyword);
                p.s(" (");
                p.list(names, ", ", |p, n| p.s(n));
                p.out.push(')');
            }
            SelectItem::WildcardReplacing(replaced) => {
                p.s("* REPLACE (");
                p.list(replaced, ", ", |p, (e, n)| {
                    e.print(p);
                    p.s(" AS ");
                    p.s(n);
                });
                p.out.push(')');
            }
            SelectItem::Expr { expr, alias } => {
                expr.print(p);
                if let Some(a) = alias {
                    p.s(" AS ");
                    p.s(a);
                }
            }
        });
        if let Some(from) = &self.from {
            p.s(" FROM ");
            from.print(p);
        }
        if let Some(w) = &self.selection {
            p.s(" WHERE ");
            w.print(p);
        }
        if self.group_by_all {
            p.s(" GROUP BY ALL");
        } else if !self.group_by.is_empty() {
            p.s(" GROUP BY ");
            p.list(&self.group_by, ", ", |p, e| e.print(p));
        }
        if let Some(h) = &self.having {
            p.s(" HAVING ");
            h.print(p);
        }
        if let Some(q) = &self.qualify {
            p.s(" QUALIFY ");
            q.print(p);
        }
    }
}

impl ToSql for FromClause {
    fn print(&self, p: &mut Printer) {
        p.table_factor(&self.first);
        for j in &self.joins {
            let natural = matches!(j.constraint, JoinConstraint::Natural);
            p.s(match j.kind {
                // Where a comma binds looser than JOIN, `a, b JOIN c ON
                // a.x = c.x` cannot see `a` (and a NATURAL join after a
                // comma would match other columns). The tree is left-deep;
                // CROSS JOIN keeps it so.
                // A comma or CROSS join has no NATURAL form in every dialect;
                // without a constraint both are inner joins, so this is one.
                JoinKind::Comma | JoinKind::Cross if natural => " NATURAL JOIN ",
                JoinKind::Comma if p.rules().comma_binds_looser_than_join() => " CROSS JOIN ",
                JoinKind::Comma => ", ",
                JoinKind::Inner if natural => " NATURAL JOIN ",
                JoinKind::Inner => " JOIN ",
                JoinKind::Left if natural => " NATURAL LEFT JOIN ",
                JoinKind::Left => " LEFT JOIN ",
                JoinKind::Right if natural => " NATURAL RIGHT JOIN ",
                JoinKind::Right => " RIGHT JOIN ",
                JoinKind::Full if natural => " NATURAL FULL JOIN ",
                JoinKind::Full => " FULL JOIN ",
                JoinKind::Cross => " CROSS JOIN ",
                // No NATURAL form; the generator never asks for one.
                JoinKind::Straight => " STRAIGHT_JOIN ",
                JoinKind::AsOf => " ASOF JOIN ",
                JoinKind::AsOfLeft => " ASOF LEFT JOIN ",
                JoinKind::Positional => " POSITIONAL JOIN ",
            });
            p.table_factor(&j.factor);
            match &j.constraint {
                JoinConstraint::On(e) => {
                    p.s(" ON ");
                    e.print(p);
                }
                JoinConstraint::Using(cols) => {
                    p.s(" USING (");
                    p.list(cols, ", ", |p, c| p.s(c));
                    p.s(")");
                }
                JoinConstraint::None | JoinConstraint::Natural => {}
            }
        }
    }
}

impl ToSql for Query {
    fn print(&self, p: &mut Printer) {
        let mut ctes = Vec::new();
        ctes_of_body(&self.body, &mut ctes);
        p.with_clause(ctes);
        p.set_expr(&self.body, false);
        if !self.order_by.is_empty() {
            p.s(" ORDER BY ");
            p.order_by_list(&self.order_by);
        }
        if let Some(l) = &self.limit {
            p.s(" LIMIT ");
            l.print(p);
        } else if self.offset.is_some() {
            // Some dialects accept OFFSET only after a LIMIT.
            if let Some(unlimited) = p.rules().unlimited_limit() {
                p.s(" LIMIT ");
                p.s(unlimited);
            }
        }
        if let Some(o) = &self.offset {
            p.s(" OFFSET ");
            o.print(p);
        }
        p.end_cte_scope();
    }
}
