//! The query generator's shared state and steps: the scope of the last
//! FROM clause and the expressions handed out since (to type what an
//! oracle passes back), reuse of FROM clauses whose checks saw rows,
//! widened predicates, PQS pivot tables and predicates, join conditions
//! and aggregate arguments. A provider's [`lancet_core::QueryGenerator`]
//! holds a [`QueryCore`] and adds its FROM clauses and exact forms.

use crate::pivot::PivotColumn;
use crate::{Cols, ColumnType, ExprGen, ServerCategory, ServerSchema, ServerTable, TypedColumn};
use lancet_core::{
    BinaryOp, DerivedForm, Expr, FromClause, ProductivePool, Query, Rng, Scope, ScopeColumn,
    Select, SelectItem, TableFactor, Truth, TypeName, Value,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// A FROM clause kept for reuse, with its typed scope and the facts the
/// provider keeps of it.
#[derive(Clone, Debug)]
struct Kept<C, F> {
    from: FromClause,
    scope: Scope,
    columns: Vec<TypedColumn<C>>,
    facts: F,
}

/// The state a server query generator shares: `F` is what the provider
/// keeps of the last FROM clause beside its columns (PostgreSQL: which
/// columns hold stored values, Citus's outer joins), `()` for none.
pub struct QueryCore<S: ServerSchema, F = ()> {
    pub schema: S,
    /// Subquery and derived-table aliases are numbered so that none clash.
    pub next_alias: u32,
    /// The columns of the last FROM clause, to type scope columns an
    /// oracle passes back without a type (TLP-HAVING's grouping keys).
    pub last_scope: Vec<TypedColumn<S::Category>>,
    /// The expressions handed out since the last FROM clause, with their
    /// categories, so that the exact forms of what an oracle passes back
    /// can be chosen by type.
    pub generated: Vec<TypedColumn<S::Category>>,
    /// What the provider keeps of the last FROM clause.
    pub facts: F,
    /// PQS: the columns of the last pivot tables the evaluator understands.
    pivot_columns: Vec<Option<PivotColumn>>,
    /// FROM clauses whose checks saw rows (see [`lancet_core::feedback`]).
    productive: ProductivePool<Kept<S::Category, F>>,
}

impl<S: ServerSchema, F: Clone + Default> QueryCore<S, F> {
    pub fn new(schema: S) -> QueryCore<S, F> {
        QueryCore {
            schema,
            next_alias: 0,
            last_scope: Vec::new(),
            generated: Vec::new(),
            facts: F::default(),
            pivot_columns: Vec::new(),
            productive: ProductivePool::default(),
        }
    }

    /// Runs `f` with an expression generator that numbers its aliases on
    /// from this generator's, and takes the numbering back.
    pub fn with_gen<T>(
        &mut self,
        subqueries: bool,
        f: impl FnOnce(&mut ExprGen<'_, S>, &Self) -> T,
    ) -> T {
        let mut g = ExprGen::new(&self.schema, subqueries);
        g.next_alias = self.next_alias;
        let out = f(&mut g, self);
        let next = g.next_alias;
        self.next_alias = next;
        out
    }

    /// The category of an expression this generator made or an oracle
    /// built from its parts: a column of the last FROM clause, an
    /// expression it handed out, or what its shape says.
    pub fn category_of(&self, expr: &Expr) -> Option<S::Category> {
        if let Some(c) = self
            .last_scope
            .iter()
            .chain(&self.generated)
            .find(|c| &c.expr == expr)
        {
            return Some(c.category);
        }
        S::Category::of_shape(expr, &|e| self.category_of(e))
    }

    /// Remembers the category of an expression handed to an oracle.
    pub fn record(&mut self, expr: &Expr, category: S::Category) {
        if self.category_of(expr).is_none() {
            self.generated.push(TypedColumn {
                expr: expr.clone(),
                category,
            });
        }
    }

    /// The scope's columns with their categories; a column without a type
    /// is typed from the last FROM clause, or left out.
    pub fn typed(&self, scope: &Scope) -> Vec<TypedColumn<S::Category>> {
        scope
            .columns
            .iter()
            .filter_map(|c| {
                let category = match &c.ty {
                    Some(t) => S::Category::of_type_name(&t.0),
                    None => self.category_of(&c.expr)?,
                };
                Some(TypedColumn {
                    expr: c.expr.clone(),
                    category,
                })
            })
            .collect()
    }

    /// The scope of typed columns, each with its category's type name.
    pub fn scope_of(columns: &[TypedColumn<S::Category>]) -> Scope {
        Scope {
            columns: columns
                .iter()
                .map(|c| ScopeColumn {
                    expr: c.expr.clone(),
                    ty: Some(TypeName(c.category.scope_type().into())),
                })
                .collect(),
        }
    }

    /// A FROM clause that saw rows, drawn again for `share` of the
    /// checks with the state it was made with; `None`: build a fresh one
    /// and hand it to [`QueryCore::keep`].
    pub fn reuse(&mut self, rng: &mut Rng, share: f64) -> Option<(FromClause, Scope)> {
        let kept = self.productive.draw(rng, share)?;
        self.generated.clear();
        self.last_scope = kept.columns;
        self.facts = kept.facts;
        Some((kept.from, kept.scope))
    }

    /// Makes a fresh FROM clause the current one, for the pool should its
    /// check see rows.
    pub fn keep(
        &mut self,
        from: FromClause,
        columns: Vec<TypedColumn<S::Category>>,
        facts: F,
    ) -> (FromClause, Scope) {
        let scope = Self::scope_of(&columns);
        self.generated.clear();
        self.last_scope = columns.clone();
        self.facts = facts.clone();
        self.productive.generated(Kept {
            from: from.clone(),
            scope: scope.clone(),
            columns,
            facts,
        });
        (from, scope)
    }

    /// [`lancet_core::QueryGenerator::check_ended`].
    pub fn check_ended(&mut self, saw_rows: bool) {
        self.productive.check_ended(saw_rows);
    }

    /// A predicate over the scope. Random predicates are FALSE or NULL on
    /// every row of a small table more often than not: `widened_share` of
    /// them are widened by OR with the menu's selective comparison, and see
    /// rows more often.
    pub fn predicate(&mut self, rng: &mut Rng, scope: &Scope, widened_share: f64) -> Expr {
        self.predicate_with(rng, scope, widened_share, true)
    }

    /// [`QueryCore::predicate`], with subqueries only if `subqueries`.
    pub fn predicate_with(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        widened_share: f64,
        subqueries: bool,
    ) -> Expr {
        let cols = self.typed(scope);
        self.with_gen(subqueries, |g, _| {
            let p = g.predicate(rng, &cols, 2);
            if rng.random_bool(widened_share) {
                let wide = (S::MENU.selective)(g, rng, &cols);
                Expr::binary(BinaryOp::Or, p, wide)
            } else {
                p
            }
        })
    }

    /// An expression over the scope, mostly of a column's category,
    /// remembered with its category.
    pub fn expression(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let cols = self.typed(scope);
        let category = match cols.choose(rng) {
            Some(c) if rng.random_bool(0.6) => c.category,
            _ => any_category::<S>(rng),
        };
        let e = self.with_gen(true, |g, _| g.expr(rng, &cols, category, 2));
        self.record(&e, category);
        e
    }

    /// An argument for an aggregate that takes only `takes` in place of a
    /// `proposed` one of another category: a column (for `column_share`),
    /// else `otherwise` if given, else an expression of a category it
    /// takes. An argument whose category is not known is the oracle's
    /// own, and stays.
    pub fn aggregate_argument(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        (takes, column_share): (&[S::Category], f64),
        proposed: Expr,
        otherwise: Option<Expr>,
    ) -> Expr {
        // A column of `scope` by its declared type: an oracle's own scope
        // (CODDTest's subquery over one relation) was never recorded.
        let declared = scope
            .columns
            .iter()
            .find(|c| c.expr == proposed)
            .and_then(|c| c.ty.as_ref())
            .map(|t| S::Category::of_type_name(&t.0));
        match declared.or_else(|| self.category_of(&proposed)) {
            Some(c) if !takes.contains(&c) => {}
            _ => return proposed,
        }
        let cols = self.typed(scope);
        let fitting: Vec<_> = cols
            .iter()
            .filter(|c| takes.contains(&c.category))
            .collect();
        if rng.random_bool(column_share) {
            if let Some(c) = fitting.choose(rng) {
                return c.expr.clone();
            }
        }
        if let Some(e) = otherwise {
            return e;
        }
        let Some(category) = takes.choose(rng).copied() else {
            return proposed;
        };
        let e = self.with_gen(true, |g, _| g.expr(rng, &cols, category, 2));
        self.record(&e, category);
        e
    }

    /// PQS: one or two base tables, by the pivot of
    /// [`crate::pivot::pivot_from`], noting which columns the
    /// evaluator reads.
    pub fn pivot_tables(&mut self, rng: &mut Rng) -> Option<(FromClause, Scope)> {
        let writable: Vec<&S::Table> = self
            .schema
            .parts()
            .0
            .iter()
            .filter(|t| t.writable())
            .collect();
        let n = rng.random_range(1..=2);
        let mut drawn: Vec<&S::Table> = (0..n)
            .filter_map(|_| writable.choose(rng).copied())
            .collect();
        if let [a, b] = drawn[..] {
            if !self.schema.cross_joinable(a, b) {
                drawn.pop();
            }
        }
        let tables: Vec<_> = drawn
            .into_iter()
            .map(|t| {
                let cols = t
                    .columns()
                    .iter()
                    .map(|(c, ty)| {
                        (
                            c.clone(),
                            TypeName(ty.declared().0.to_string()),
                            (S::PQS.kind)(ty),
                        )
                    })
                    .collect();
                (t.name().to_string(), cols)
            })
            .collect();
        let (from, scope, pivot_columns) = crate::pivot::pivot_from(&tables)?;
        self.pivot_columns = pivot_columns;
        Some((from, scope))
    }

    /// PQS: a predicate over the pivot columns and its truth on the
    /// pivot row; `None` where the evaluator declines.
    pub fn pivot_predicate(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        pivot: &[Value],
    ) -> Option<(Expr, Truth)> {
        if scope.columns.len() != self.pivot_columns.len() {
            return None;
        }
        crate::pivot::predicate_on_pivot(
            rng,
            S::PQS.semantics,
            &self.pivot_columns,
            pivot,
            S::PQS.read,
        )
    }

    /// The FROM clause when no table could be created: a one-row derived
    /// table `(SELECT 1 AS c0) AS a0`.
    pub fn constant_from() -> (FromClause, Vec<TypedColumn<S::Category>>) {
        let select = Select {
            items: vec![SelectItem::Expr {
                expr: Expr::int(1),
                alias: Some("c0".into()),
            }],
            ..Select::default()
        };
        let from = FromClause {
            first: TableFactor::Derived {
                query: Box::new(Query::select(select)),
                alias: "a0".into(),
                lateral: false,
                form: DerivedForm::Subquery,
            },
            joins: vec![],
        };
        let category = S::Category::of_type_name("integer");
        let cols = vec![TypedColumn {
            expr: Expr::column(Some("a0"), "c0"),
            category,
        }];
        (from, cols)
    }

    /// How many tables join the first: none in 40% of FROM clauses, one
    /// in 50%, two in 10%.
    pub fn join_count(rng: &mut Rng) -> usize {
        match rng.random_range(0..20) {
            0..8 => 0,
            8..18 => 1,
            _ => 2,
        }
    }

    /// An ON condition: for 60% an equality between a column on each side
    /// (a random condition is often false on every pair), `mixed_share`
    /// of those joined with a random predicate by AND (mostly) or OR;
    /// else any predicate over both sides.
    pub fn join_condition(
        &mut self,
        rng: &mut Rng,
        (left, right): (&Cols<S>, &Cols<S>),
        mixed_share: f64,
    ) -> Expr {
        let mut visible = left.to_vec();
        visible.extend(right.iter().cloned());
        let link = equal_pair(rng, left, right);
        self.with_gen(true, |g, _| match link {
            Some(link) if rng.random_bool(0.6) => {
                if mixed_share == 0.0 || !rng.random_bool(mixed_share) {
                    link
                } else {
                    let op = if rng.random_bool(0.7) {
                        BinaryOp::And
                    } else {
                        BinaryOp::Or
                    };
                    Expr::binary(op, link, g.predicate(rng, &visible, 1))
                }
            }
            _ => g.predicate(rng, &visible, 1),
        })
    }
}

/// A category drawn at random.
pub(crate) fn any_category<S: ServerSchema>(rng: &mut Rng) -> S::Category {
    let all = S::Category::CATEGORIES;
    all[rng.random_range(0..all.len())]
}

/// `l = r` for a random pair of columns of one category, one from each side.
pub fn equal_pair<C: ServerCategory>(
    rng: &mut Rng,
    left: &[TypedColumn<C>],
    right: &[TypedColumn<C>],
) -> Option<Expr> {
    let pairs: Vec<(&Expr, &Expr)> = left
        .iter()
        .flat_map(|l| {
            right
                .iter()
                .filter(move |r| r.category == l.category)
                .map(move |r| (&l.expr, &r.expr))
        })
        .collect();
    pairs
        .choose(rng)
        .map(|(l, r)| Expr::binary(BinaryOp::Eq, (*l).clone(), (*r).clone()))
}

/// The `QueryGenerator` methods a server provider's generator hands to its
/// [`QueryCore`] (its field `core`) as they are: FROM clauses reused or
/// joined from `$joins`, predicates widened by `$widened`, the aggregate
/// names of `$aggregates`, pivots. The provider's impl adds what differs
/// (exact equality, group keys, aggregate arguments).
#[macro_export]
macro_rules! delegate_to_query_core {
    (reused: $reused:expr, widened: $widened:expr, aggregates: $aggregates:expr, joins: $joins:expr) => {
        fn from_clause(
            &mut self,
            rng: &mut lancet_core::Rng,
        ) -> (lancet_core::FromClause, lancet_core::Scope) {
            if let Some(kept) = self.core.reuse(rng, $reused) {
                return kept;
            }
            let (from, cols) = self.core.joined_from(rng, &$joins);
            self.core.keep(from, cols, ())
        }

        fn predicate(
            &mut self,
            rng: &mut lancet_core::Rng,
            scope: &lancet_core::Scope,
        ) -> lancet_core::Expr {
            self.core.predicate(rng, scope, $widened)
        }

        fn expression(
            &mut self,
            rng: &mut lancet_core::Rng,
            scope: &lancet_core::Scope,
        ) -> lancet_core::Expr {
            self.core.expression(rng, scope)
        }

        fn is_aggregate(&self, name: &str) -> bool {
            $aggregates.iter().any(|a| a.eq_ignore_ascii_case(name))
        }

        fn check_ended(&mut self, saw_rows: bool) {
            self.core.check_ended(saw_rows);
        }

        fn pivot_predicate(
            &mut self,
            rng: &mut lancet_core::Rng,
            scope: &lancet_core::Scope,
            pivot: &[lancet_core::Value],
        ) -> Option<(lancet_core::Expr, lancet_core::Truth)> {
            self.core.pivot_predicate(rng, scope, pivot)
        }

        fn pivot_tables(
            &mut self,
            rng: &mut lancet_core::Rng,
        ) -> Option<(lancet_core::FromClause, lancet_core::Scope)> {
            self.core.pivot_tables(rng)
        }
    };
}
