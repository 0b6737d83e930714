//! Query parts for the oracles: FROM clauses with every join MySQL has
//! (comma, INNER, LEFT, RIGHT, CROSS, NATURAL; no FULL) and derived
//! tables, typed predicates and expressions, and the exact forms of
//! equality that collations make necessary.

use crate::expr::ExprGen;
use crate::schema::{MySchema, TypedColumn};
use crate::types::Category;
use lancet_core::{
    BinaryOp, DerivedForm, Expr, FromClause, Join, JoinConstraint, JoinKind, ProductivePool, Query,
    QueryGenerator, Rng, Scope, ScopeColumn, Select, SelectItem, TableFactor, TypeName, Value,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

pub struct MyQueryGenerator {
    schema: MySchema,
    next_alias: u32,
    /// The columns of the last FROM clause, with categories.
    last_scope: Vec<TypedColumn>,
    /// Expressions handed out since the last FROM clause, with categories.
    generated: Vec<TypedColumn>,
    /// PQS: the columns of the last pivot tables the evaluator understands.
    pivot_columns: Vec<Option<lancet_core::pivot::PivotColumn>>,
    /// FROM clauses whose checks saw rows (see [`lancet_core::feedback`]).
    productive: ProductivePool<(FromClause, Scope, Vec<TypedColumn>)>,
}

/// The share of FROM clauses drawn from those that saw rows.
const REUSED_SHARE: f64 = 0.6;
/// The share of predicates widened by an OR with a selective comparison.
const WIDENED_SHARE: f64 = 0.4;

const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "bit_and",
    "bit_or",
    "bit_xor",
    "group_concat",
    "std",
    "stddev",
    "variance",
];

impl MyQueryGenerator {
    pub fn new(schema: MySchema) -> MyQueryGenerator {
        MyQueryGenerator {
            schema,
            next_alias: 0,
            last_scope: Vec::new(),
            generated: Vec::new(),
            pivot_columns: Vec::new(),
            productive: ProductivePool::default(),
        }
    }

    fn category_of(&self, expr: &Expr) -> Option<Category> {
        if let Some(c) = self
            .last_scope
            .iter()
            .chain(&self.generated)
            .find(|c| &c.expr == expr)
        {
            return Some(c.category);
        }
        match expr {
            Expr::Literal(Value::Text(_)) => Some(Category::Text),
            Expr::Literal(Value::Integer(_)) => Some(Category::Int),
            Expr::Literal(Value::Decimal(_)) => Some(Category::Decimal),
            Expr::Literal(Value::Real(_)) => Some(Category::Float),
            Expr::Literal(Value::Blob(_)) => Some(Category::Blob),
            Expr::Cast { ty, .. } => match ty.0.as_str() {
                "CHAR" => Some(Category::Text),
                "BINARY" => Some(Category::Blob),
                "SIGNED" | "UNSIGNED" => Some(Category::Int),
                "DOUBLE" => Some(Category::Float),
                "DATE" => Some(Category::Date),
                _ => Some(Category::Decimal),
            },
            _ => None,
        }
    }

    fn typed(&self, scope: &Scope) -> Vec<TypedColumn> {
        scope
            .columns
            .iter()
            .filter_map(|c| {
                Some(TypedColumn {
                    expr: c.expr.clone(),
                    category: match &c.ty {
                        Some(t) => category_of_type(&t.0),
                        None => self.category_of(&c.expr)?,
                    },
                })
            })
            .collect()
    }

    fn gen(&self) -> ExprGen<'_> {
        let mut g = ExprGen::new(&self.schema, true);
        g.next_alias = self.next_alias;
        g
    }

    fn build_from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope) {
        self.generated.clear();
        let Some(first) = self.schema.relations.choose(rng).cloned() else {
            // No table could be created: a one-row derived table.
            let from = FromClause {
                first: TableFactor::Derived {
                    query: Box::new(Query::select(Select {
                        items: vec![SelectItem::Expr {
                            expr: Expr::int(1),
                            alias: Some("c0".into()),
                        }],
                        ..Select::default()
                    })),
                    alias: "a0".into(),
                    lateral: false,
                    form: DerivedForm::Subquery,
                },
                joins: vec![],
            };
            let cols = vec![TypedColumn {
                expr: Expr::column(Some("a0"), "c0"),
                category: Category::Int,
            }];
            self.last_scope = cols.clone();
            return (from, scope_of(&cols));
        };
        let mut cols = first.typed_columns("a0");
        let first = TableFactor::Table {
            name: first.name.clone(),
            alias: Some("a0".into()),
            indexed_by: None,
        };
        let mut joins = Vec::new();
        let extra = match rng.random_range(0..20) {
            0..8 => 0,
            8..18 => 1,
            _ => 2,
        };
        for j in 1..=extra {
            let alias = format!("a{j}");
            let (factor, new_cols) = if rng.random_bool(0.15) {
                self.derived(rng, &alias)
            } else {
                let Some(t) = self.schema.relations.choose(rng) else {
                    continue;
                };
                (
                    TableFactor::Table {
                        name: t.name.clone(),
                        alias: Some(alias.clone()),
                        indexed_by: None,
                    },
                    t.typed_columns(&alias),
                )
            };
            let kind = *[
                JoinKind::Inner,
                JoinKind::Inner,
                JoinKind::Left,
                JoinKind::Left,
                JoinKind::Right,
                JoinKind::Cross,
                JoinKind::Comma,
                JoinKind::Straight,
            ]
            .choose(rng)
            .unwrap_or(&JoinKind::Inner);
            let mut visible = cols.clone();
            visible.extend(new_cols.iter().cloned());
            // NATURAL only on the first join: after two tables, the left
            // side may hold two columns of one name, which MySQL refuses
            // as ambiguous. Columns are always qualified, so the merged
            // column is never named bare.
            let natural = j == 1
                && matches!(kind, JoinKind::Inner | JoinKind::Left | JoinKind::Right)
                && rng.random_bool(0.1);
            let constraint = match kind {
                JoinKind::Cross | JoinKind::Comma => JoinConstraint::None,
                _ if natural => JoinConstraint::Natural,
                _ => JoinConstraint::On(self.join_condition(rng, &cols, &new_cols, &visible)),
            };
            joins.push(Join {
                kind,
                factor,
                constraint,
            });
            cols = visible;
        }
        self.last_scope = cols.clone();
        (FromClause { first, joins }, scope_of(&cols))
    }

    /// An ON condition: mostly an equality between a column on each side
    /// (joins that match rows), else a random predicate.
    fn join_condition(
        &mut self,
        rng: &mut Rng,
        left: &[TypedColumn],
        right: &[TypedColumn],
        visible: &[TypedColumn],
    ) -> Expr {
        if rng.random_bool(0.6) {
            let pairs: Vec<(&TypedColumn, &TypedColumn)> = left
                .iter()
                .flat_map(|l| right.iter().map(move |r| (l, r)))
                .filter(|(l, r)| l.category == r.category)
                .collect();
            if let Some((l, r)) = pairs.choose(rng) {
                return Expr::binary(BinaryOp::Eq, l.expr.clone(), r.expr.clone());
            }
        }
        let mut g = self.gen();
        let p = g.predicate(rng, visible, 1);
        self.next_alias = g.next_alias;
        p
    }

    /// `(SELECT [DISTINCT] x AS c0, ... FROM t [WHERE p]) AS alias`.
    fn derived(&mut self, rng: &mut Rng, alias: &str) -> (TableFactor, Vec<TypedColumn>) {
        let table = self.schema.relations.choose(rng).cloned();
        let inner_alias = format!("d{}", self.next_alias);
        self.next_alias += 1;
        let inner = table
            .as_ref()
            .map(|t| t.typed_columns(&inner_alias))
            .unwrap_or_default();
        let mut g = self.gen();
        let n = rng.random_range(1..=3);
        let mut items = Vec::new();
        let mut cols = Vec::new();
        for i in 0..n {
            let (e, category) = match inner.choose(rng) {
                Some(c) if rng.random_bool(0.7) => (c.expr.clone(), c.category),
                _ => {
                    let category = *Category::ALL.choose(rng).unwrap_or(&Category::Int);
                    (g.expr(rng, &inner, category, 1), category)
                }
            };
            items.push(SelectItem::Expr {
                expr: e,
                alias: Some(format!("c{i}")),
            });
            cols.push(TypedColumn {
                expr: Expr::column(Some(alias), &format!("c{i}")),
                category,
            });
        }
        let selection = rng.random_bool(0.5).then(|| g.predicate(rng, &inner, 1));
        self.next_alias = g.next_alias;
        let select = Select {
            distinct: rng.random_bool(0.2),
            items,
            from: table.map(|t| FromClause {
                first: TableFactor::Table {
                    name: t.name.clone(),
                    alias: Some(inner_alias.clone()),
                    indexed_by: None,
                },
                joins: vec![],
            }),
            selection,
            ..Select::default()
        };
        (
            TableFactor::Derived {
                query: Box::new(Query::select(select)),
                alias: alias.to_string(),
                lateral: false,
                form: DerivedForm::Subquery,
            },
            cols,
        )
    }
}

/// The category of a type name as a scope column carries it.
fn category_of_type(ty: &str) -> Category {
    let t = ty.to_ascii_uppercase();
    if t.contains("INT") || t == "SIGNED" || t == "UNSIGNED" {
        Category::Int
    } else if t.starts_with("DECIMAL") {
        Category::Decimal
    } else if t == "DOUBLE" || t == "FLOAT" {
        Category::Float
    } else if t.contains("BLOB") || t.contains("BINARY") {
        Category::Blob
    } else if t.starts_with("DATE") {
        Category::Date
    } else {
        Category::Text
    }
}

/// A type name for a category, for scope columns.
fn category_type(c: Category) -> &'static str {
    match c {
        Category::Int => "BIGINT",
        Category::Decimal => "DECIMAL",
        Category::Float => "DOUBLE",
        Category::Text => "TEXT",
        Category::Blob => "BLOB",
        Category::Date => "DATETIME",
    }
}

fn scope_of(cols: &[TypedColumn]) -> Scope {
    Scope {
        columns: cols
            .iter()
            .map(|c| ScopeColumn {
                expr: c.expr.clone(),
                ty: Some(TypeName(category_type(c.category).into())),
            })
            .collect(),
    }
}

impl QueryGenerator for MyQueryGenerator {
    fn from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope) {
        if let Some((from, scope, last)) = self.productive.draw(rng, REUSED_SHARE) {
            self.generated.clear();
            self.last_scope = last;
            return (from, scope);
        }
        let (from, scope) = self.build_from_clause(rng);
        self.productive
            .generated((from.clone(), scope.clone(), self.last_scope.clone()));
        (from, scope)
    }

    fn check_ended(&mut self, saw_rows: bool) {
        self.productive.check_ended(saw_rows);
    }

    fn predicate(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let cols = self.typed(scope);
        let mut g = self.gen();
        let mut p = g.predicate(rng, &cols, 2);
        if rng.random_bool(WIDENED_SHARE) {
            let wide = g.selective_comparison(rng, &cols);
            p = Expr::binary(BinaryOp::Or, p, wide);
        }
        self.next_alias = g.next_alias;
        p
    }

    fn expression(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let cols = self.typed(scope);
        let category = match cols.choose(rng) {
            Some(c) if rng.random_bool(0.6) => c.category,
            _ => *Category::ALL.choose(rng).unwrap_or(&Category::Int),
        };
        let mut g = self.gen();
        let e = g.expr(rng, &cols, category, 2);
        self.next_alias = g.next_alias;
        if self.category_of(&e).is_none() {
            self.generated.push(TypedColumn {
                expr: e.clone(),
                category,
            });
        }
        e
    }

    fn pivot_tables(&mut self, rng: &mut Rng) -> Option<(FromClause, Scope)> {
        let n = rng.random_range(1..=2);
        let tables: Vec<_> = (0..n)
            .filter_map(|_| self.schema.random_table(rng))
            .map(|t| {
                let cols = t
                    .columns
                    .iter()
                    .map(|(c, ty)| (c.clone(), TypeName(ty.sql.clone()), crate::pqs::kind_of(ty)))
                    .collect();
                (t.name, cols)
            })
            .collect();
        let (from, scope, pivot_columns) = lancet_core::pivot::pivot_from(&tables)?;
        self.pivot_columns = pivot_columns;
        Some((from, scope))
    }

    fn pivot_predicate(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        pivot: &[Value],
    ) -> Option<(Expr, lancet_core::Truth)> {
        if scope.columns.len() != self.pivot_columns.len() {
            return None;
        }
        crate::pqs::pivot_predicate(rng, &self.pivot_columns, pivot)
    }

    fn is_aggregate(&self, name: &str) -> bool {
        AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    /// Text and dates are read as their bytes: under a case-insensitive or
    /// PAD SPACE collation `'a'`, `'A'` and `'a '` are equal, and DISTINCT,
    /// GROUP BY, MIN and MAX may return any of them. Numbers need nothing
    /// (equal numbers that print differently are equal to the comparison).
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        match self.category_of(&expr) {
            Some(Category::Int | Category::Decimal | Category::Float | Category::Blob) => expr,
            _ => Expr::Cast {
                expr: Box::new(expr),
                ty: TypeName("BINARY".into()),
            },
        }
    }

    /// MySQL's SUM and AVG read text as numbers (with warnings); a text
    /// argument is replaced by a number column or expression, so that sums
    /// stay exact where they can.
    fn aggregate_argument(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        function: &str,
        proposed: Expr,
    ) -> Expr {
        if !matches!(
            function.to_ascii_uppercase().as_str(),
            "SUM" | "AVG" | "TOTAL"
        ) {
            return proposed;
        }
        if self
            .category_of(&proposed)
            .is_none_or(|c| c == Category::Int || c == Category::Decimal)
        {
            return proposed;
        }
        let cols = self.typed(scope);
        let exact: Vec<&TypedColumn> = cols
            .iter()
            .filter(|c| matches!(c.category, Category::Int | Category::Decimal))
            .collect();
        match exact.choose(rng) {
            Some(c) => c.expr.clone(),
            None => Expr::int(1),
        }
    }
}
