//! FROM clauses over a generated schema, and the [`QueryGenerator`] that
//! oracles draw queries from.
//!
//! Every factor gets its own alias (`a0`, `a1`, ...) and every column in
//! scope is qualified by it, so no reference is ambiguous whatever the
//! joins. Derived tables are plain select-project-filter (optionally a
//! UNION ALL of two such over the same relation): DISTINCT, GROUP BY,
//! aggregates and the other set operations would pick an arbitrary
//! representative among equal values and make results plan-dependent.

use crate::database::SqliteDatabase;
use crate::expr_gen::{relation_columns, ExprGen};
use lancet_core::schema::{Relation, RelationKind};
use lancet_core::{
    BinaryOp, DerivedForm, Expr, FromClause, Join, JoinConstraint, JoinKind, Query, QueryGenerator,
    Rng, Schema, Scope, ScopeColumn, Select, SelectItem, SetOperator, TableFactor, Truth, Value,
};
use lancet_core::{GeneratedDatabase, ProductivePool};
use rand::seq::IndexedRandom;
use rand::Rng as _;

mod generator;
pub use generator::{Generated, SqliteQueryGenerator};

/// The first release seen to plan `INDEXED BY` any full index of a table
/// whatever the WHERE clause (a full index scan).
const INDEXED_BY_FULL_SCAN_SINCE: i32 = 3_033_000;
/// The first SQLite with RIGHT and FULL OUTER JOIN.
const RIGHT_JOIN_SINCE: i32 = 3_039_000;

/// The first SQLite known to check ON clauses before flattening subqueries
/// (3.54.1 does; 3.50.2 does not; releases between are untested).
const FLATTENING_FIX: i32 = 3_054_000;

/// A column in scope, with what views built on it must know.
#[derive(Clone, Debug)]
pub struct Col {
    pub scope: ScopeColumn,
    /// The bare column name (`c1` of `a0.c1`), for USING and NATURAL.
    pub name: String,
    /// The collation a plain reference to it carries.
    pub collation: Option<String>,
}

/// What a FROM clause may contain.
#[derive(Clone, Copy, Debug)]
pub struct FromOptions {
    pub max_factors: usize,
    /// `INDEXED BY` / `NOT INDEXED` on base tables.
    pub index_hints: bool,
    pub derived_tables: bool,
    /// RIGHT and FULL JOIN (where the library has them).
    pub right_joins: bool,
    /// Views, and derived tables over views.
    pub views: bool,
    /// The cost bound: no factor joins if the product of the factors'
    /// rows would exceed this (a single factor is always allowed).
    pub max_rows: u64,
}

/// The cost model. Time goes where rows are multiplied: `lancet bench`
/// showed three-table products (tens of thousands of rows, about 0.9 ms a
/// query) taking half the DBMS time of TLP while being a tenth of its
/// queries. Most FROM clauses are therefore bounded to a product of
/// [`LIGHT_ROWS`] rows (counted per database after it is populated, so
/// generation stays a function of the seed), and correlated subqueries,
/// which run once per outer row, to FROM clauses of at most
/// [`SUBQUERY_ROWS`]. A share of [`HEAVY_SHARE`] of queries may read up to
/// [`HEAVY_ROWS`] rows with subqueries, on purpose: some bugs need them.
pub const LIGHT_ROWS: u64 = 400;
pub const HEAVY_ROWS: u64 = 20_000;
pub const HEAVY_SHARE: f64 = 0.05;
pub const SUBQUERY_ROWS: u64 = 100;
/// The share of predicates widened by an OR (see `predicate`).
pub const WIDENED_SHARE: f64 = 0.4;

/// Builds FROM clauses and select lists over one schema.
pub struct QueryBuilder<'s> {
    pub exprs: ExprGen<'s>,
    db: &'s SqliteDatabase,
    version: i32,
    /// The product of the rows of the last FROM clause's factors.
    pub last_rows: u64,
}

impl<'s> QueryBuilder<'s> {
    pub fn new(db: &'s SqliteDatabase, version: i32) -> QueryBuilder<'s> {
        QueryBuilder {
            exprs: ExprGen::new(&db.schema, version).with_sampled(&db.sampled),
            db,
            version,
            last_rows: 1,
        }
    }

    /// Whether this SQLite checks ON clauses before flattening subqueries (3.54+).
    pub fn flattening_fixed(&self) -> bool {
        self.version >= FLATTENING_FIX
    }

    fn schema(&self) -> &'s Schema {
        self.exprs.schema()
    }

    /// A FROM clause of one to `max_factors` factors, and the columns it brings into scope.
    pub fn from_clause(&mut self, rng: &mut Rng, opts: FromOptions) -> (FromClause, Vec<Col>) {
        let n = match rng.random_range(0..100) {
            0..40 => 1,
            40..80 => 2,
            _ => 3,
        }
        .min(opts.max_factors.max(1));
        let kinds: Vec<JoinKind> = (1..n).map(|_| self.join_kind(rng, opts)).collect();
        let is_right = |k: &JoinKind| matches!(k, JoinKind::Right | JoinKind::Full);
        // Before 3.54, SQLite checked ON clauses after flattening subqueries
        // into the outer query, and rejected valid queries that had a RIGHT
        // or FULL JOIN and a flattened multi-table view ("ON clause
        // references tables to its right"). Such queries read base tables only.
        let base_only = kinds.iter().any(is_right) && !self.flattening_fixed();
        // Views (and derived tables over them) may hold the product of two
        // tables: at most one per FROM clause, and then at most two factors,
        // so that no query reads more than some tens of thousands of rows.
        let mut views_allowed = opts.views && !base_only && n <= 2;
        let mut factors: Vec<Vec<Col>> = Vec::with_capacity(n);
        let mut first = None;
        let mut joins = Vec::with_capacity(n - 1);
        let mut rows: u64 = 1;
        for i in 0..n {
            let alias = format!("a{i}");
            // An index on expressions cannot be scanned as the right side
            // of a RIGHT JOIN, so forcing one fails with "no query solution".
            let hint = opts.index_hints && !(i > 0 && is_right(&kinds[i - 1]));
            let (factor, cols, reads_view, factor_rows) =
                self.factor(rng, alias, opts, hint, views_allowed);
            let product = rows.saturating_mul(factor_rows.max(1));
            if i > 0 && product > opts.max_rows {
                // Over the cost bound: this factor and those after it go.
                break;
            }
            rows = product;
            if reads_view {
                views_allowed = false;
            }
            if i == 0 {
                first = Some(factor);
            } else {
                let constraint = self.join_constraint(rng, kinds[i - 1], &factors, &cols);
                joins.push(Join {
                    kind: kinds[i - 1],
                    factor,
                    constraint,
                });
            }
            factors.push(cols);
        }
        let first = first.expect("a FROM clause has a first factor");
        self.last_rows = rows;
        (FromClause { first, joins }, factors.concat())
    }

    fn join_kind(&mut self, rng: &mut Rng, opts: FromOptions) -> JoinKind {
        let outer = opts.right_joins && self.version >= RIGHT_JOIN_SINCE;
        match rng.random_range(0..100) {
            0..30 => JoinKind::Inner,
            30..50 => JoinKind::Left,
            50..60 if outer => JoinKind::Right,
            60..68 if outer => JoinKind::Full,
            68..80 => JoinKind::Cross,
            80..95 => JoinKind::Comma,
            _ => JoinKind::Inner,
        }
    }

    /// How the factor `right` joins the factors before it. USING and
    /// NATURAL name only columns that exactly one factor on the left has:
    /// with RIGHT or FULL joins SQLite rejects the others as ambiguous.
    fn join_constraint(
        &mut self,
        rng: &mut Rng,
        kind: JoinKind,
        left: &[Vec<Col>],
        right: &[Col],
    ) -> JoinConstraint {
        let owners = |name: &str| {
            left.iter()
                .filter(|f| f.iter().any(|c| c.name == name))
                .count()
        };
        let left_cols: Vec<Col> = left.concat();
        match kind {
            JoinKind::Comma => JoinConstraint::None,
            JoinKind::Cross if rng.random_bool(0.8) => JoinConstraint::None,
            _ => match rng.random_range(0..100) {
                0..10 => {
                    let unique: Vec<&String> = right
                        .iter()
                        .map(|c| &c.name)
                        .filter(|n| owners(n) == 1)
                        .collect();
                    match unique.choose(rng) {
                        Some(name) => JoinConstraint::Using(vec![(*name).clone()]),
                        None => self.on(rng, &left_cols, right),
                    }
                }
                10..17 if kind != JoinKind::Cross && right.iter().all(|c| owners(&c.name) <= 1) => {
                    JoinConstraint::Natural
                }
                17..22 => JoinConstraint::None,
                _ => self.on(rng, &left_cols, right),
            },
        }
    }

    /// An ON condition: mostly an equality between the new factor and one
    /// before it (so joins match rows), sometimes any predicate.
    fn on(&mut self, rng: &mut Rng, left: &[Col], right: &[Col]) -> JoinConstraint {
        let mut visible: Vec<ScopeColumn> = left.iter().map(|c| c.scope.clone()).collect();
        visible.extend(right.iter().map(|c| c.scope.clone()));
        let link = match (left.choose(rng), right.choose(rng)) {
            (Some(l), Some(r)) if rng.random_bool(0.7) => {
                let op = *[
                    BinaryOp::Eq,
                    BinaryOp::Eq,
                    BinaryOp::Eq,
                    BinaryOp::LtEq,
                    BinaryOp::IsNotDistinctFrom,
                ]
                .choose(rng)
                .unwrap_or(&BinaryOp::Eq);
                Some(Expr::binary(op, l.scope.expr.clone(), r.scope.expr.clone()))
            }
            _ => None,
        };
        let on = match link {
            Some(link) if rng.random_bool(0.7) => link,
            Some(link) => {
                let more = self.exprs.predicate(rng, &visible, 1, 0);
                let op = if rng.random_bool(0.7) {
                    BinaryOp::And
                } else {
                    BinaryOp::Or
                };
                Expr::binary(op, link, more)
            }
            None => self.exprs.predicate(rng, &visible, 2, 0),
        };
        JoinConstraint::On(on)
    }

    /// One factor: a base table (perhaps with an index hint), a view, or a
    /// derived table, aliased `alias`; and whether it reads a view.
    fn factor(
        &mut self,
        rng: &mut Rng,
        alias: String,
        opts: FromOptions,
        index_hint: bool,
        views_allowed: bool,
    ) -> (TableFactor, Vec<Col>, bool, u64) {
        let schema = self.schema();
        let tables: Vec<&Relation> = schema.tables().collect();
        let views: Vec<&Relation> = if views_allowed {
            schema.views().collect()
        } else {
            vec![]
        };
        let roll = rng.random_range(0..100);
        if opts.derived_tables && roll >= 85 {
            return self.derived(rng, alias, views_allowed);
        }
        let rel = match views.choose(rng) {
            Some(v) if roll >= 65 => *v,
            _ => match tables.choose(rng) {
                Some(t) => *t,
                None => return self.derived(rng, alias, views_allowed),
            },
        };
        let indexed_by = if index_hint && rel.kind == RelationKind::Table {
            self.index_hint(rng, rel)
        } else {
            None
        };
        let cols = columns_of(rel, &alias);
        let reads_view = rel.kind == RelationKind::View;
        (
            TableFactor::Table {
                name: rel.name.clone(),
                alias: Some(alias),
                indexed_by,
            },
            cols,
            reads_view,
            self.db.rows(&rel.name),
        )
    }

    /// `INDEXED BY` a full (not partial) index of `table`, or `NOT INDEXED`.
    /// A partial index would fail with "no query solution" unless the WHERE
    /// clause implies its predicate.
    fn index_hint(&self, rng: &mut Rng, table: &Relation) -> Option<Option<String>> {
        if !rng.random_bool(0.15) {
            return None;
        }
        // Before 3.33, INDEXED BY fails with "no query solution" unless the
        // WHERE clause constrains the index's first column (seen on 3.26,
        // 3.28 and 3.31.1; 3.33.0 plans a full scan of the index): there,
        // only NOT INDEXED.
        let usable: Vec<&str> = if self.version < INDEXED_BY_FULL_SCAN_SINCE {
            Vec::new()
        } else {
            self.schema()
                .indexes_on(&table.name)
                .filter(|i| self.db.is_full_index(&i.name))
                .map(|i| i.name.as_str())
                .collect()
        };
        match usable.choose(rng) {
            Some(name) if rng.random_bool(0.75) => Some(Some((*name).to_string())),
            _ => Some(None),
        }
    }

    /// `(SELECT ... FROM rel AS sN [WHERE ...] [UNION ALL ...]) AS alias`,
    /// whether it reads a view, and at most how many rows it has.
    fn derived(
        &mut self,
        rng: &mut Rng,
        alias: String,
        views_allowed: bool,
    ) -> (TableFactor, Vec<Col>, bool, u64) {
        let schema = self.schema();
        let sources: Vec<&Relation> = schema
            .relations
            .iter()
            .filter(|r| views_allowed || r.kind == RelationKind::Table)
            .collect();
        let Some(&rel) = sources.choose(rng) else {
            // No relation at all: a one-row table of a literal.
            let select = Select {
                items: vec![SelectItem::Expr {
                    expr: Expr::int(1),
                    alias: Some("c0".into()),
                }],
                ..Select::default()
            };
            let col = Col {
                scope: ScopeColumn {
                    expr: Expr::column(Some(&alias), "c0"),
                    ty: None,
                },
                name: "c0".into(),
                collation: None,
            };
            return (
                TableFactor::Derived {
                    query: Box::new(Query::select(select)),
                    alias,
                    lateral: false,
                    form: DerivedForm::Subquery,
                },
                vec![col],
                false,
                1,
            );
        };
        let inner_alias = self.exprs.fresh_alias();
        let inner = columns_of(rel, &inner_alias);
        let (items, cols) = self.select_list(rng, &inner, &alias, 4);
        let inner_scope: Vec<ScopeColumn> = inner.iter().map(|c| c.scope.clone()).collect();
        let from = crate::expr_gen::table_from(rel, inner_alias);
        let arm = |this: &mut Self, rng: &mut Rng| Select {
            distinct: false,
            items: items.clone(),
            from: Some(from.clone()),
            selection: rng
                .random_bool(0.6)
                .then(|| this.exprs.predicate(rng, &inner_scope, 2, 1)),
            group_by: vec![],
            group_by_all: false,
            having: None,
            qualify: None,
        };
        let first = arm(self, rng);
        let reads_view = rel.kind == RelationKind::View;
        let mut rows = self.db.rows(&rel.name);
        let query = if !reads_view && rng.random_bool(0.15) {
            rows *= 2;
            // Both arms read the same relation through the same select
            // list, so each column has one affinity and collation. Only
            // over a base table: doubling a view could double a big one.
            let second = arm(self, rng);
            Query::set_operation(SetOperator::UnionAll, vec![first, second])
        } else {
            Query::select(first)
        };
        (
            TableFactor::Derived {
                query: Box::new(query),
                alias,
                lateral: false,
                form: DerivedForm::Subquery,
            },
            cols,
            reads_view,
            rows,
        )
    }

    /// A select list over `source` of 1 to `max` items named `c0, c1, ...`,
    /// and the columns they become when read through `alias`. Plain
    /// references keep their type and collation; expressions have neither.
    pub fn select_list(
        &mut self,
        rng: &mut Rng,
        source: &[Col],
        alias: &str,
        max: usize,
    ) -> (Vec<SelectItem>, Vec<Col>) {
        let scope: Vec<ScopeColumn> = source.iter().map(|c| c.scope.clone()).collect();
        let n = rng.random_range(1..=max.max(1));
        let mut items = Vec::with_capacity(n);
        let mut cols = Vec::with_capacity(n);
        for k in 0..n {
            let name = format!("c{k}");
            let (expr, ty, collation) = match source.choose(rng) {
                Some(c) if rng.random_bool(0.7) => (
                    c.scope.expr.clone(),
                    c.scope.ty.clone(),
                    c.collation.clone(),
                ),
                _ => (self.exprs.expression(rng, &scope, 2, 1), None, None),
            };
            items.push(SelectItem::Expr {
                expr,
                alias: Some(name.clone()),
            });
            cols.push(Col {
                scope: ScopeColumn {
                    expr: Expr::column(Some(alias), &name),
                    ty,
                },
                name,
                collation,
            });
        }
        (items, cols)
    }
}

/// The columns of a table or view read through `alias`.
pub fn columns_of(rel: &Relation, alias: &str) -> Vec<Col> {
    relation_columns(rel, alias)
        .into_iter()
        .zip(&rel.columns)
        .map(|(scope, c)| Col {
            scope,
            name: c.name.clone(),
            collation: c.collation.clone(),
        })
        .collect()
}
