//! The expression generator's shared builders: leaves (columns, sampled
//! constants, literals), CASE, calls, casts, comparisons and the
//! predicate forms (BETWEEN, IN, LIKE, regular expressions, truth and
//! NULL tests), and subqueries (EXISTS, IN, ANY/ALL, a scalar COUNT) over
//! one table of the schema. A provider's menus ([`ServerSchema::compound`],
//! [`ServerSchema::predicate`]) choose among them.

use crate::factors::one_table_from;
use crate::{Cols, ServerCategory, ServerSchema, ServerTable, TypedColumn};
use lancet_core::{BinaryOp, Expr, LikeKind, Query, Rng, Select, SelectItem, TypeName, Value};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// Generates expressions over some columns (and, for subqueries, the schema).
pub struct ExprGen<'s, S: ServerSchema> {
    pub schema: &'s S,
    /// Subquery aliases are numbered so that nested ones never clash.
    pub next_alias: u32,
    /// Whether subqueries may appear (not in CHECK, DEFAULT, generated
    /// columns or index expressions).
    pub subqueries: bool,
}

/// A subquery's table, its alias and its columns under the alias.
type Source<'s, S> = (
    &'s <S as ServerSchema>::Table,
    String,
    Vec<TypedColumn<<S as ServerSchema>::Category>>,
);

impl<'s, S: ServerSchema> ExprGen<'s, S> {
    pub fn new(schema: &'s S, subqueries: bool) -> ExprGen<'s, S> {
        ExprGen {
            schema,
            next_alias: 0,
            subqueries,
        }
    }

    /// An expression of `category`: a leaf at depth 0 and for
    /// [`crate::Menu::leaf_share`] of the rest, else the provider's menu.
    pub fn expr(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        category: S::Category,
        depth: u32,
    ) -> Expr {
        if depth == 0 || rng.random_bool(S::MENU.leaf_share) {
            return self.leaf(rng, cols, category);
        }
        (S::MENU.compound)(self, rng, cols, category, depth)
    }

    /// A boolean expression, from the provider's menu.
    pub fn predicate(&mut self, rng: &mut Rng, cols: &Cols<S>, depth: u32) -> Expr {
        (S::MENU.predicate)(self, rng, cols, depth)
    }

    /// A column of `category` drawn from `cols`, if there is one.
    pub fn column_of(rng: &mut Rng, cols: &Cols<S>, category: S::Category) -> Option<Expr> {
        let matching: Vec<_> = cols.iter().filter(|c| c.category == category).collect();
        matching.choose(rng).map(|c| c.expr.clone())
    }

    /// A leaf: a column of the category (mostly) if there is one, else
    /// half the time a constant from the data where there is any, else a
    /// literal.
    pub fn leaf(&mut self, rng: &mut Rng, cols: &Cols<S>, category: S::Category) -> Expr {
        if rng.random_bool(0.7) {
            if let Some(c) = Self::column_of(rng, cols, category) {
                return c;
            }
        }
        if !self.schema.parts().1.is_empty() && rng.random_bool(0.5) {
            if let Some(v) = self.schema.parts().1.pick(rng, category) {
                return v;
            }
        }
        (S::Category::LITERAL)(rng, category)
    }

    /// `column op value` over a random column, with a value sampled from
    /// the data where there is any: a comparison that selects some rows
    /// (see [`crate::Menu::selective`]); a literal of `fallback` without
    /// columns.
    pub fn selective(&mut self, rng: &mut Rng, cols: &Cols<S>, fallback: S::Category) -> Expr {
        let Some(c) = cols.choose(rng) else {
            return (S::Category::LITERAL)(rng, fallback);
        };
        let value = self.leaf(rng, &[], c.category);
        let op = *[BinaryOp::Eq, BinaryOp::LtEq, BinaryOp::GtEq]
            .choose(rng)
            .unwrap_or(&BinaryOp::Eq);
        Expr::binary(op, c.expr.clone(), value)
    }

    /// A constant from the data of `category`, else a literal.
    pub fn constant(&self, rng: &mut Rng, category: S::Category) -> Expr {
        match self.schema.parts().1.pick(rng, category) {
            Some(v) => v,
            None => (S::Category::LITERAL)(rng, category),
        }
    }

    /// `CASE WHEN p THEN x [ELSE y] END`, with an ELSE in `else_share`.
    pub fn case(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        category: S::Category,
        d: u32,
        else_share: f64,
    ) -> Expr {
        let cond = self.predicate(rng, cols, d);
        let then = self.expr(rng, cols, category, d);
        let otherwise = rng
            .random_bool(else_share)
            .then(|| Box::new(self.expr(rng, cols, category, d)));
        Expr::Case {
            operand: None,
            branches: vec![(cond, then)],
            otherwise,
        }
    }

    /// `name(x, ...)` over one fresh expression per category of `args`.
    pub fn call(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        name: &str,
        args: &[S::Category],
        d: u32,
    ) -> Expr {
        let args = args.iter().map(|c| self.expr(rng, cols, *c, d)).collect();
        Expr::func(name, args)
    }

    /// `x op y` over fresh expressions of the categories given.
    pub fn binary(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        op: BinaryOp,
        (left, right): (S::Category, S::Category),
        d: u32,
    ) -> Expr {
        let a = self.expr(rng, cols, left, d);
        let b = self.expr(rng, cols, right, d);
        Expr::binary(op, a, b)
    }

    /// `CAST(x AS ty)` over an expression of `from`.
    pub fn cast(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        from: S::Category,
        ty: TypeName,
        d: u32,
    ) -> Expr {
        Expr::Cast {
            expr: Box::new(self.expr(rng, cols, from, d)),
            ty,
        }
    }

    /// `p op q` over two predicates (AND, OR, XOR).
    pub fn connective(&mut self, rng: &mut Rng, cols: &Cols<S>, op: BinaryOp, d: u32) -> Expr {
        let a = self.predicate(rng, cols, d);
        let b = self.predicate(rng, cols, d);
        Expr::binary(op, a, b)
    }

    /// `x IS [NOT] NULL`.
    pub fn is_null(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        category: S::Category,
        d: u32,
    ) -> Expr {
        Expr::IsNull {
            expr: Box::new(self.expr(rng, cols, category, d)),
            negated: rng.random_bool(0.5),
        }
    }

    /// `p IS [NOT] TRUE|FALSE`.
    pub fn is_bool(&mut self, rng: &mut Rng, cols: &Cols<S>, d: u32) -> Expr {
        Expr::IsBool {
            expr: Box::new(self.predicate(rng, cols, d)),
            value: rng.random_bool(0.5),
            negated: rng.random_bool(0.5),
        }
    }

    /// `x [NOT] BETWEEN [SYMMETRIC] low AND high`, the bounds of depth
    /// `bound_depth`, SYMMETRIC in `symmetric_share`.
    pub fn between(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        category: S::Category,
        (d, bound_depth): (u32, u32),
        symmetric_share: f64,
    ) -> Expr {
        Expr::Between {
            expr: Box::new(self.expr(rng, cols, category, d)),
            low: Box::new(self.expr(rng, cols, category, bound_depth)),
            high: Box::new(self.expr(rng, cols, category, bound_depth)),
            negated: rng.random_bool(0.3),
            symmetric: symmetric_share > 0.0 && rng.random_bool(symmetric_share),
        }
    }

    /// `x [NOT] IN (a, b, c)`: one to three items of depth `item_depth`.
    pub fn in_list(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        category: S::Category,
        (d, item_depth): (u32, u32),
    ) -> Expr {
        let n = rng.random_range(1..4);
        Expr::InList {
            expr: Box::new(self.expr(rng, cols, category, d)),
            list: (0..n)
                .map(|_| self.expr(rng, cols, category, item_depth))
                .collect(),
            negated: rng.random_bool(0.3),
        }
    }

    /// `s [NOT] LIKE|ILIKE|SIMILAR TO pattern` over text, with one of the
    /// shared patterns.
    pub fn like(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        kind: LikeKind,
        text: S::Category,
        d: u32,
    ) -> Expr {
        Expr::Like {
            kind,
            expr: Box::new(self.expr(rng, cols, text, d)),
            pattern: Box::new(pattern(rng, lancet_core::patterns::LIKE)),
            escape: None,
            negated: rng.random_bool(0.3),
        }
    }

    /// `s ~ pattern` (REGEXP) over text, with one of the shared patterns.
    pub fn regex(&mut self, rng: &mut Rng, cols: &Cols<S>, text: S::Category, d: u32) -> Expr {
        Expr::binary(
            BinaryOp::RegexMatch,
            self.expr(rng, cols, text, d),
            pattern(rng, lancet_core::patterns::REGEX),
        )
    }
}

/// One of `patterns` as a text literal.
fn pattern(rng: &mut Rng, patterns: &[&str]) -> Expr {
    Expr::Literal(Value::Text(
        patterns.choose(rng).copied().unwrap_or("%").to_string(),
    ))
}

/// Subqueries over one table of the schema, aliased `sN`.
impl<'s, S: ServerSchema> ExprGen<'s, S> {
    /// A table to read in a subquery, aliased `sN`, and its columns.
    pub fn subquery_source(&mut self, rng: &mut Rng) -> Option<Source<'s, S>> {
        let table = self.schema.parts().0.choose(rng)?;
        let alias = format!("s{}", self.next_alias);
        self.next_alias += 1;
        let cols = table.typed_columns(&alias);
        Some((table, alias, cols))
    }

    /// `SELECT item FROM table AS alias [WHERE p]`: correlated (the WHERE
    /// also sees the outer columns) and filtered as
    /// [`ServerSchema::subquery_shape`] says; the WHERE of depth `d` at
    /// most 1.
    #[allow(clippy::too_many_arguments)]
    pub fn subquery(
        &mut self,
        rng: &mut Rng,
        outer: &Cols<S>,
        item: Expr,
        (table, alias, inner): (&S::Table, &str, &Cols<S>),
        d: u32,
    ) -> Query {
        let shape = self.schema.subquery_shape();
        let mut visible = inner.to_vec();
        if rng.random_bool(shape.correlated) {
            visible.extend(outer.iter().cloned());
        }
        let selection = rng
            .random_bool(shape.filtered)
            .then(|| self.predicate(rng, &visible, d.min(1)));
        Query::select(Select {
            items: vec![SelectItem::Expr {
                expr: item,
                alias: None,
            }],
            from: Some(one_table_from(table.name(), alias)),
            selection,
            ..Select::default()
        })
    }

    /// `[NOT] EXISTS (SELECT 1 FROM ...)`; `None` without a table.
    pub fn exists(&mut self, rng: &mut Rng, cols: &Cols<S>, d: u32) -> Option<Expr> {
        let (table, alias, inner) = self.subquery_source(rng)?;
        let q = self.subquery(rng, cols, Expr::int(1), (table, &alias, &inner), d);
        Some(Expr::Exists {
            query: Box::new(q),
            negated: rng.random_bool(0.3),
        })
    }

    /// A comparable column of a subquery's table, its subquery, and a
    /// probe of its category of depth `d`: the parts of IN and ANY/ALL.
    fn probed_subquery(
        &mut self,
        rng: &mut Rng,
        cols: &Cols<S>,
        d: u32,
    ) -> Option<(Expr, Box<Query>)> {
        let (table, alias, inner) = self.subquery_source(rng)?;
        let comparable: Vec<_> = inner.iter().filter(|c| c.category.comparable()).collect();
        let item = (*comparable.choose(rng)?).clone();
        let q = self.subquery(rng, cols, item.expr, (table, &alias, &inner), d);
        let probe = self.expr(rng, cols, item.category, d);
        Some((probe, Box::new(q)))
    }

    /// `x [NOT] IN (SELECT c FROM ...)`; `None` without a table.
    pub fn in_subquery(&mut self, rng: &mut Rng, cols: &Cols<S>, d: u32) -> Option<Expr> {
        let (probe, query) = self.probed_subquery(rng, cols, d)?;
        Some(Expr::InSubquery {
            expr: Box::new(probe),
            query,
            negated: rng.random_bool(0.3),
        })
    }

    /// `x op ANY|ALL (SELECT c FROM ...)`: NULLs and empty subqueries
    /// give the three-valued cases IN does not reach.
    pub fn quantified_subquery(&mut self, rng: &mut Rng, cols: &Cols<S>, d: u32) -> Option<Expr> {
        let (probe, query) = self.probed_subquery(rng, cols, d)?;
        Some(Expr::QuantifiedSubquery {
            expr: Box::new(probe),
            op: *BinaryOp::COMPARISONS[..6]
                .choose(rng)
                .unwrap_or(&BinaryOp::Eq),
            all: rng.random_bool(0.5),
            query,
        })
    }

    /// `(SELECT COUNT(*) FROM t AS sN WHERE ...)`: always one row; `None`
    /// without a table.
    pub fn scalar_count(&mut self, rng: &mut Rng, cols: &Cols<S>, d: u32) -> Option<Expr> {
        let (table, alias, inner) = self.subquery_source(rng)?;
        let q = self.subquery(rng, cols, Expr::CountStar, (table, &alias, &inner), d);
        Some(Expr::Subquery(Box::new(q)))
    }
}
