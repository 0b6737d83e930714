//! Query parts for the oracles: FROM clauses with every join kind, USING,
//! derived tables and LATERAL subqueries; typed predicates and expressions.

use crate::expr::{ExprGen, TypedColumn};
use crate::schema::PgSchema;
use crate::types::{Category, PgType};
use lancet_core::schema::RelationKind;
use lancet_core::{
    BinaryOp, DerivedForm, Expr, FromClause, Join, JoinConstraint, JoinKind, Query, QueryGenerator,
    Rng, Scope, ScopeColumn, Select, SelectItem, TableFactor, TypeName, UnaryOp, Value,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

pub struct PgQueryGenerator {
    schema: PgSchema,
    next_alias: u32,
    /// The columns of the last FROM clause, to type scope columns an oracle
    /// passes back without a type (TLP-HAVING's grouping keys).
    last_scope: Vec<TypedColumn>,
    /// PQS: the columns of the last pivot tables the evaluator understands.
    pivot_columns: Vec<Option<crate::pqs::PivotColumn>>,
    /// The expressions handed out since the last FROM clause, with their
    /// categories, so that the exact forms of what an oracle passes back
    /// can be chosen by type.
    generated: Vec<TypedColumn>,
    /// The scope columns of the last FROM clause that read a base table's
    /// column directly. Their values are as stored: equal values are
    /// identical (a char(n) column pads every value to n characters).
    stored: Vec<Expr>,
    /// Whether the last FROM clause has an outer join over Citus tables:
    /// its WHERE then gets no conjunct without a column (see
    /// [`no_pseudoconstant_conjunct`]).
    outer_join_on_citus: bool,
    /// With such an outer join: the distribution columns of the
    /// distributed tables in scope and the columns of views, which
    /// DISTINCT and GROUP BY read as text (see
    /// [`PgQueryGenerator::with_exact_equality`]).
    outer_distribution_columns: Vec<Expr>,
}

impl PgQueryGenerator {
    pub fn new(schema: PgSchema) -> PgQueryGenerator {
        PgQueryGenerator {
            schema,
            next_alias: 0,
            last_scope: Vec::new(),
            pivot_columns: Vec::new(),
            generated: Vec::new(),
            outer_join_on_citus: false,
            outer_distribution_columns: Vec::new(),
            stored: Vec::new(),
        }
    }

    /// The category of an expression this generator made or an oracle
    /// built from its parts: a column of the last FROM clause, an
    /// expression it generated, or a cast.
    fn category_of(&self, expr: &Expr) -> Option<Category> {
        if let Some(c) = self
            .last_scope
            .iter()
            .chain(self.generated.iter())
            .find(|c| &c.expr == expr)
        {
            return Some(c.category);
        }
        // Shapes an oracle or a reducer may build from generated parts.
        match expr {
            Expr::Cast { ty, .. } => Some(PgType::from_name(&ty.0).category),
            Expr::Collate { .. }
            | Expr::Binary {
                op: BinaryOp::Concat,
                ..
            } => Some(Category::Text),
            Expr::Literal(v) => match v {
                Value::Text(_) => Some(Category::Text),
                Value::Integer(_) => Some(Category::Int),
                Value::Decimal(_) => Some(Category::Numeric),
                Value::Real(_) => Some(Category::Float),
                Value::Boolean(_) => Some(Category::Bool),
                Value::Blob(_) => Some(Category::Bytea),
                Value::Null => None,
            },
            Expr::Unary {
                op: UnaryOp::Neg,
                expr,
            } => self.category_of(expr),
            Expr::Function { name, args, .. } => match name.to_ascii_lowercase().as_str() {
                "coalesce" | "nullif" | "greatest" | "least" => {
                    common_category(args.iter().filter_map(|a| self.category_of(a)))
                }
                "lower" | "upper" | "substr" | "replace" | "btrim" | "ltrim" | "rtrim" | "left"
                | "right" | "md5" | "reverse" => Some(Category::Text),
                _ => None,
            },
            Expr::Case {
                branches,
                otherwise,
                ..
            } => common_category(
                branches
                    .iter()
                    .map(|(_, e)| e)
                    .chain(otherwise.as_deref())
                    .filter_map(|e| self.category_of(e)),
            ),
            _ => None,
        }
    }

    /// Remembers the category of an expression handed to an oracle.
    fn record(&mut self, expr: &Expr, category: Category) {
        if self.category_of(expr).is_none() {
            self.generated.push(TypedColumn {
                expr: expr.clone(),
                category,
            });
        }
    }

    /// The scope's columns with their categories; a column without a type
    /// is typed from the last FROM clause, or left out.
    fn typed(&self, scope: &Scope) -> Vec<TypedColumn> {
        scope
            .columns
            .iter()
            .filter_map(|c| {
                let category = match &c.ty {
                    Some(t) => PgType::from_name(&t.0).category,
                    None => self.category_of(&c.expr)?,
                };
                Some(TypedColumn {
                    expr: c.expr.clone(),
                    category,
                })
            })
            .collect()
    }

    fn scope_of(columns: &[TypedColumn]) -> Vec<ScopeColumn> {
        columns
            .iter()
            .map(|c| ScopeColumn {
                expr: c.expr.clone(),
                ty: Some(TypeName(category_type(c.category).into())),
            })
            .collect()
    }

    /// A derived table over one relation, lateral (reading `outer`) or not.
    fn derived(
        &mut self,
        rng: &mut Rng,
        alias: &str,
        outer: &[TypedColumn],
        lateral: bool,
    ) -> Option<(TableFactor, Vec<TypedColumn>)> {
        // Citus joins a derived table over a distributed one to little
        // else: mostly over the others there.
        let local: Vec<&crate::schema::PgTable> = self
            .schema
            .relations
            .iter()
            .filter(|t| !t.placement.is_distributed())
            .collect();
        let table = match local.choose(rng) {
            Some(t) if self.schema.has_distributed() && rng.random_bool(0.9) => (*t).clone(),
            _ => self.schema.relations.choose(rng)?.clone(),
        };
        let inner_alias = format!("l{}", self.next_alias);
        self.next_alias += 1;
        let inner = table.typed_columns(&inner_alias);
        let mut visible = inner.clone();
        if lateral {
            visible.extend(outer.iter().cloned());
        }
        let mut g = ExprGen::new(&self.schema, false);
        g.next_alias = self.next_alias + 1000;
        let n = rng.random_range(1..=2);
        let mut items = Vec::new();
        let mut cols = Vec::new();
        for k in 0..n {
            let cat = match inner.choose(rng) {
                Some(c) if rng.random_bool(0.5) => c.category,
                _ => *[Category::Int, Category::Text, Category::Bool]
                    .choose(rng)
                    .unwrap_or(&Category::Int),
            };
            let e = g.expr(rng, &visible, cat, 2);
            items.push(SelectItem::Expr {
                expr: e,
                alias: Some(format!("c{k}")),
            });
            cols.push(TypedColumn {
                expr: Expr::column(Some(alias), &format!("c{k}")),
                category: cat,
            });
        }
        if !lateral && rng.random_bool(0.35) {
            if let Some((window, category)) = window_call(rng, &inner) {
                let k = items.len();
                items.push(SelectItem::Expr {
                    expr: window,
                    alias: Some(format!("c{k}")),
                });
                cols.push(TypedColumn {
                    expr: Expr::column(Some(alias), &format!("c{k}")),
                    category,
                });
            }
        }
        let selection = rng.random_bool(0.5).then(|| g.predicate(rng, &visible, 1));
        let query = Query::select(Select {
            items,
            from: Some(FromClause {
                first: TableFactor::Table {
                    name: table.name.clone(),
                    alias: Some(inner_alias),
                    indexed_by: None,
                },
                joins: vec![],
            }),
            selection,
            ..Select::default()
        });
        Some((
            TableFactor::Derived {
                query: Box::new(query),
                alias: alias.to_string(),
                lateral,
                form: if lateral {
                    DerivedForm::Subquery
                } else {
                    *[
                        DerivedForm::Subquery,
                        DerivedForm::Subquery,
                        DerivedForm::Cte,
                        DerivedForm::CteMaterialized,
                        DerivedForm::CteNotMaterialized,
                    ]
                    .choose(rng)
                    .unwrap_or(&DerivedForm::Subquery)
                },
            },
            cols,
        ))
    }
}

/// A window call over the columns of one relation whose value for a row
/// the window alone determines, whatever order rows arrive in: COUNT, MIN,
/// MAX (text read as `text`, so that equal char(n) values print alike),
/// SUM of exact numbers, RANK and DENSE_RANK, with the default frame (an
/// ORDER BY frame takes in all peers of the row). Never ROW_NUMBER, FIRST_VALUE
/// or a float SUM, whose values depend on that order. With its category.
fn window_call(rng: &mut Rng, columns: &[TypedColumn]) -> Option<(Expr, Category)> {
    let key = |rng: &mut Rng| -> Option<Expr> {
        // The first column is the distribution column of a distributed
        // table: a window partitioned by it is pushed down to the shards,
        // others are planned on the coordinator.
        let c = if rng.random_bool(0.5) {
            columns.first()
        } else {
            columns.choose(rng)
        }?;
        Some(match c.category {
            Category::Text => exact_text(c.expr.clone()),
            _ => c.expr.clone(),
        })
    };
    let partition_by: Vec<Expr> = (0..rng.random_range(0..=2))
        .filter_map(|_| key(rng))
        .collect();
    let mut order_by: Vec<lancet_core::OrderBy> = Vec::new();
    if rng.random_bool(0.5) {
        if let Some(e) = key(rng) {
            order_by.push(lancet_core::OrderBy {
                expr: e,
                descending: rng.random_bool(0.5),
                nulls_first: None,
            });
        }
    }
    let fitting = |want: &[Category]| -> Vec<&TypedColumn> {
        columns
            .iter()
            .filter(|c| want.contains(&c.category))
            .collect()
    };
    let (function, category) = match rng.random_range(0..6) {
        0 => (Expr::CountStar, Category::Int),
        1 => (
            Expr::func("count", vec![columns.choose(rng)?.expr.clone()]),
            Category::Int,
        ),
        2 | 3 => {
            let c = *fitting(&[
                Category::Int,
                Category::Numeric,
                Category::Float,
                Category::Text,
                Category::Date,
            ])
            .choose(rng)?;
            let arg = match c.category {
                Category::Text => exact_text(c.expr.clone()),
                _ => c.expr.clone(),
            };
            let name = if rng.random_bool(0.5) { "min" } else { "max" };
            (Expr::func(name, vec![arg]), c.category)
        }
        4 => {
            let c = *fitting(&[Category::Int, Category::Numeric]).choose(rng)?;
            (Expr::func("sum", vec![c.expr.clone()]), Category::Numeric)
        }
        _ => {
            if order_by.is_empty() {
                return None;
            }
            let name = if rng.random_bool(0.5) {
                "rank"
            } else {
                "dense_rank"
            };
            (Expr::func(name, vec![]), Category::Int)
        }
    };
    Some((
        Expr::Window {
            function: Box::new(function),
            partition_by,
            order_by,
        },
        category,
    ))
}

/// A type name for a category, for scope columns whose exact type is not known.
fn category_type(c: Category) -> &'static str {
    match c {
        Category::Int => "bigint",
        Category::Numeric => "numeric",
        Category::Float => "double precision",
        Category::Text => "text",
        Category::Bool => "boolean",
        Category::Bytea => "bytea",
        Category::Date => "date",
    }
}

const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "bool_and",
    "bool_or",
    "every",
    "string_agg",
    "array_agg",
    "bit_and",
    "bit_or",
    "stddev",
    "variance",
];

impl QueryGenerator for PgQueryGenerator {
    fn from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope) {
        self.generated.clear();
        self.stored.clear();
        let Some(first_table) = self.schema.relations.choose(rng).cloned() else {
            // No table could be created: a FROM-less query over a constant.
            let (factor, cols) = (
                TableFactor::Derived {
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
                vec![TypedColumn {
                    expr: Expr::column(Some("a0"), "c0"),
                    category: Category::Int,
                }],
            );
            return (
                FromClause {
                    first: factor,
                    joins: vec![],
                },
                Scope {
                    columns: Self::scope_of(&cols),
                },
            );
        };
        let mut scope_cols = first_table.typed_columns("a0");
        // A view's column may be an expression (COALESCE(c, 'a') is an
        // unpadded char): only base tables' columns hold stored values.
        let mut stored: Vec<Expr> = Vec::new();
        if first_table.kind != RelationKind::View {
            stored.extend(scope_cols.iter().map(|c| c.expr.clone()));
        }
        let first = TableFactor::Table {
            name: first_table.name.clone(),
            alias: Some("a0".into()),
            indexed_by: None,
        };
        let mut joins = Vec::new();
        // The base tables in scope by alias (Citus joins depend on placement).
        let mut placed: Vec<(String, crate::schema::PgTable)> =
            vec![("a0".to_string(), first_table.clone())];
        let citus = self.schema.has_distributed();
        let extra = match rng.random_range(0..20) {
            0..8 => 0,
            8..18 => 1,
            _ => 2,
        };
        for j in 1..=extra {
            let alias = format!("a{j}");
            let (factor, cols, lateral) = match rng.random_range(0..10) {
                // Citus refuses most lateral joins over distributed tables.
                0 if !citus => match self.derived(rng, &alias, &scope_cols, true) {
                    Some((f, c)) => (f, c, true),
                    None => continue,
                },
                1 => match self.derived(rng, &alias, &scope_cols, false) {
                    Some((f, c)) => (f, c, false),
                    None => continue,
                },
                _ => {
                    let Some(t) = self.schema.relations.choose(rng).cloned() else {
                        continue;
                    };
                    if t.kind != RelationKind::View {
                        stored.extend(t.typed_columns(&alias).into_iter().map(|c| c.expr));
                    }
                    placed.push((alias.clone(), t.clone()));
                    (
                        TableFactor::Table {
                            name: t.name.clone(),
                            alias: Some(alias.clone()),
                            indexed_by: None,
                        },
                        t.typed_columns(&alias),
                        false,
                    )
                }
            };
            let kind = if lateral {
                *[JoinKind::Inner, JoinKind::Left, JoinKind::Cross]
                    .choose(rng)
                    .unwrap_or(&JoinKind::Cross)
            } else {
                *[
                    JoinKind::Comma,
                    JoinKind::Inner,
                    JoinKind::Inner,
                    JoinKind::Left,
                    JoinKind::Right,
                    JoinKind::Full,
                    JoinKind::Cross,
                ]
                .choose(rng)
                .unwrap_or(&JoinKind::Inner)
            };
            if citus {
                let newest = match &factor {
                    TableFactor::Table { .. } => placed.last().map(|(_, t)| t.clone()),
                    _ => None,
                };
                match citus_join(
                    rng,
                    &placed,
                    newest.as_ref(),
                    &alias,
                    &scope_cols,
                    &cols,
                    kind,
                ) {
                    CitusJoin::Keep => {}
                    CitusJoin::Use(kind, constraint) => {
                        joins.push(Join {
                            kind,
                            factor,
                            constraint,
                        });
                        scope_cols.extend(cols);
                        continue;
                    }
                    CitusJoin::Skip => {
                        if matches!(factor, TableFactor::Table { .. }) {
                            placed.pop();
                        }
                        continue;
                    }
                }
            }
            let constraint = match kind {
                JoinKind::Comma | JoinKind::Cross => JoinConstraint::None,
                _ => {
                    // USING a column both sides have with the same category.
                    let common: Vec<String> = match &factor {
                        TableFactor::Table { .. } => cols
                            .iter()
                            .filter_map(|c| match &c.expr {
                                Expr::Column(r) => Some((r.column.clone(), c.category)),
                                _ => None,
                            })
                            .filter(|(name, cat)| {
                                scope_cols
                                    .iter()
                                    .filter(
                                        |s| matches!(&s.expr, Expr::Column(r) if &r.column == name),
                                    )
                                    .count()
                                    == 1
                                    && scope_cols.iter().any(|s| {
                                        matches!(&s.expr, Expr::Column(r) if &r.column == name)
                                            && s.category == *cat
                                    })
                            })
                            .map(|(n, _)| n)
                            .collect(),
                        _ => vec![],
                    };
                    if kind == JoinKind::Full {
                        // FULL JOIN needs a merge- or hash-joinable condition.
                        let pairs: Vec<(Expr, Expr)> = scope_cols
                            .iter()
                            .flat_map(|l| {
                                cols.iter()
                                    .filter(move |r| r.category == l.category)
                                    .map(move |r| (l.expr.clone(), r.expr.clone()))
                            })
                            .collect();
                        match pairs.choose(rng) {
                            Some((l, r)) => JoinConstraint::On(Expr::binary(
                                lancet_core::BinaryOp::Eq,
                                l.clone(),
                                r.clone(),
                            )),
                            None => {
                                JoinConstraint::On(Expr::Literal(lancet_core::Value::Boolean(true)))
                            }
                        }
                    } else if !common.is_empty()
                        && !self.schema.has_citus_tables()
                        && rng.random_bool(0.25)
                    {
                        // (Not on Citus: 13.2 deparses a USING column of
                        // an outer join for the workers under a name that
                        // does not exist, 42703 "column a2.c0_1": a known
                        // bug, met in most runs.)
                        JoinConstraint::Using(vec![common.choose(rng).cloned().unwrap_or_default()])
                    } else {
                        let mut visible = scope_cols.clone();
                        visible.extend(cols.iter().cloned());
                        let mut g = ExprGen::new(&self.schema, true);
                        g.next_alias = self.next_alias;
                        let on = g.predicate(rng, &visible, 1);
                        self.next_alias = g.next_alias;
                        JoinConstraint::On(on)
                    }
                }
            };
            // Citus refuses outer joins whose ON reads no column.
            let constraint = match constraint {
                JoinConstraint::On(on)
                    if citus
                        && matches!(kind, JoinKind::Left | JoinKind::Right | JoinKind::Full)
                        && !mentions_column(&on) =>
                {
                    match equal_pair(rng, &scope_cols, &cols) {
                        Some(eq) => JoinConstraint::On(eq),
                        None => JoinConstraint::On(on),
                    }
                }
                other => other,
            };
            joins.push(Join {
                kind,
                factor,
                constraint,
            });
            scope_cols.extend(cols);
        }
        let scope = Scope {
            columns: Self::scope_of(&scope_cols),
        };
        self.last_scope = scope_cols;
        self.stored = stored;
        self.outer_join_on_citus = citus
            && joins
                .iter()
                .any(|j| matches!(j.kind, JoinKind::Left | JoinKind::Right | JoinKind::Full));
        self.outer_distribution_columns = if self.outer_join_on_citus {
            // A view's column may be a distribution column too.
            placed
                .iter()
                .flat_map(|(alias, t)| {
                    let columns: Vec<&str> = if t.kind == RelationKind::View {
                        t.columns.iter().map(|(c, _)| c.as_str()).collect()
                    } else if t.placement.is_distributed() {
                        t.placement.column().into_iter().collect()
                    } else {
                        Vec::new()
                    };
                    columns
                        .into_iter()
                        .map(|c| Expr::column(Some(alias.as_str()), c))
                        .collect::<Vec<_>>()
                })
                .collect()
        } else {
            Vec::new()
        };
        (FromClause { first, joins }, scope)
    }

    fn predicate(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let cols = self.typed(scope);
        let mut g = ExprGen::new(&self.schema, true);
        g.next_alias = self.next_alias;
        let mut p = g.predicate(rng, &cols, 2);
        // Citus on PostgreSQL 15 and 16 returns wrong results for outer
        // joins with a pseudoconstant qual (citusdata/citus#7696, #7697,
        // and over derived tables, where its XX000 guard misses them).
        if self.outer_join_on_citus {
            let mut tries = 0;
            while !no_pseudoconstant_conjunct(&p) && tries < 10 {
                p = g.predicate(rng, &cols, 2);
                tries += 1;
            }
            if !no_pseudoconstant_conjunct(&p) {
                if let Some(c) = cols.choose(rng) {
                    p = Expr::binary(BinaryOp::Or, Expr::is_null(c.expr.clone()), p);
                }
            }
        }
        self.next_alias = g.next_alias;
        p
    }

    fn expression(&mut self, rng: &mut Rng, scope: &Scope) -> Expr {
        let cols = self.typed(scope);
        let cat = match cols.choose(rng) {
            Some(c) if rng.random_bool(0.6) => c.category,
            _ => *Category::ALL.choose(rng).unwrap_or(&Category::Int),
        };
        let mut g = ExprGen::new(&self.schema, true);
        g.next_alias = self.next_alias;
        let e = g.expr(rng, &cols, cat, 2);
        self.next_alias = g.next_alias;
        self.record(&e, cat);
        e
    }

    fn pivot_tables(&mut self, rng: &mut Rng) -> Option<(FromClause, Scope)> {
        let tables: Vec<&crate::schema::PgTable> = self
            .schema
            .relations
            .iter()
            .filter(|t| t.writable)
            .collect();
        let n = rng.random_range(1..=2.min(tables.len()).max(1));
        let chosen: Vec<crate::schema::PgTable> = (0..n)
            .filter_map(|_| tables.choose(rng).map(|t| (*t).clone()))
            .collect();
        let mut factors = Vec::new();
        let mut columns = Vec::new();
        self.pivot_columns.clear();
        for (i, t) in chosen.iter().enumerate() {
            let alias = format!("p{i}");
            factors.push(TableFactor::Table {
                name: t.name.clone(),
                alias: Some(alias.clone()),
                indexed_by: None,
            });
            for (name, ty) in &t.columns {
                let expr = Expr::column(Some(&alias), name);
                columns.push(ScopeColumn {
                    expr: expr.clone(),
                    ty: Some(TypeName(ty.name.clone())),
                });
                self.pivot_columns.push(
                    crate::pqs::Kind::of(ty).map(|kind| crate::pqs::PivotColumn { expr, kind }),
                );
            }
        }
        let mut factors = factors.into_iter();
        let first = factors.next()?;
        let from = FromClause {
            first,
            joins: factors
                .map(|factor| Join {
                    kind: JoinKind::Comma,
                    factor,
                    constraint: JoinConstraint::None,
                })
                .collect(),
        };
        Some((from, Scope { columns }))
    }

    fn pivot_predicate(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        pivot: &[lancet_core::Value],
    ) -> Option<(Expr, lancet_core::Truth)> {
        if scope.columns.len() != self.pivot_columns.len() {
            return None;
        }
        crate::pqs::pivot_predicate(rng, &self.pivot_columns, pivot)
    }

    fn twin_tables(&self) -> Vec<(String, String)> {
        let twins: Option<Vec<(String, String)>> = self
            .schema
            .relations
            .iter()
            .map(|t| t.twin.clone().map(|twin| (t.name.clone(), twin)))
            .collect();
        twins.unwrap_or_default()
    }

    fn is_aggregate(&self, name: &str) -> bool {
        AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name))
    }

    /// Text is cast to `text`: a `bpchar` that is not a stored char(n)
    /// column (`COALESCE(c, 'a')`, a CASE over one, a derived table's or a
    /// view's column) may hold `'a'` and `'a  '`, which are equal (trailing
    /// blanks do not count) but print differently, and DISTINCT, GROUP BY,
    /// MIN and MAX may return either. The cast strips trailing blanks of a
    /// bpchar, orders as bpchar does (bpchar compares without its trailing
    /// blanks), and changes nothing for text and varchar. Other types need
    /// nothing here: equal numbers that print differently (`-0` and `0`,
    /// `1.0` and `1.00`) are equal to the result comparison too.
    fn with_exact_equality(&self, expr: Expr) -> Expr {
        // Citus 13.2 groups by a distribution column on the shards alone,
        // also when an outer join makes it NULL on every shard: one NULL
        // group per shard (`SELECT a.k, count(*) FROM a FULL JOIN b ON a.k
        // = b.k GROUP BY a.k`). Read as text, the key is an expression
        // Citus groups again on the coordinator.
        if self.outer_distribution_columns.contains(&expr) {
            return exact_text(expr);
        }
        let is_text_cast = |e: &Expr| matches!(e, Expr::Cast { ty, .. } if ty.0 == "text");
        if self.category_of(&expr) == Some(Category::Text)
            && !self.stored.contains(&expr)
            && !is_text_cast(&expr)
        {
            exact_text(expr)
        } else {
            expr
        }
    }

    /// The exact form of `expr`, and for numbers its text as well: `-0` and
    /// `0` (floats), `1.0` and `1.00` (numerics) are one group, and a HAVING
    /// predicate that reads the key's text (`CAST(c AS text) = '0'`) tells
    /// them apart. PostgreSQL evaluates a HAVING without aggregates as a
    /// WHERE, on every row of the group, so every row must hold the same
    /// value. With the text as a key, all rows of a group print the same.
    fn exact_group_keys(&self, expr: Expr) -> Vec<Expr> {
        let category = self.category_of(&expr);
        let exact = self.with_exact_equality(expr.clone());
        match category {
            // Text: a stored column, or cast to text.
            Some(
                Category::Int | Category::Bool | Category::Date | Category::Bytea | Category::Text,
            ) => vec![exact],
            // Numbers, and anything whose type is not known: its text.
            _ => vec![exact, exact_text(expr)],
        }
    }

    /// PostgreSQL's SUM and AVG take numbers only, MIN and MAX no boolean
    /// or bytea; COUNT takes anything. A `proposed` argument of another
    /// category is replaced by a column (mostly) or an expression of a
    /// category the aggregate takes.
    fn aggregate_argument(
        &mut self,
        rng: &mut Rng,
        scope: &Scope,
        function: &str,
        proposed: Expr,
    ) -> Expr {
        let takes: &[Category] = match function.to_ascii_uppercase().as_str() {
            "SUM" | "AVG" | "TOTAL" => &[Category::Int, Category::Numeric, Category::Float],
            "MIN" | "MAX" => &[
                Category::Int,
                Category::Numeric,
                Category::Float,
                Category::Text,
                Category::Date,
            ],
            _ => return proposed,
        };
        match self.category_of(&proposed) {
            Some(c) if !takes.contains(&c) => {}
            // Accepted, or not known (then it is the oracle's own).
            _ => return proposed,
        }
        let cols = self.typed(scope);
        let fitting: Vec<&TypedColumn> = cols
            .iter()
            .filter(|c| takes.contains(&c.category))
            .collect();
        if rng.random_bool(0.7) {
            if let Some(c) = fitting.choose(rng) {
                return c.expr.clone();
            }
        }
        let category = *takes.choose(rng).unwrap_or(&Category::Int);
        let mut g = ExprGen::new(&self.schema, true);
        g.next_alias = self.next_alias;
        let e = g.expr(rng, &cols, category, 2);
        self.next_alias = g.next_alias;
        self.record(&e, category);
        e
    }
}

/// The category PostgreSQL resolves CASE, COALESCE, GREATEST... to:
/// integers widen to numeric, numeric to float.
fn common_category(categories: impl Iterator<Item = Category>) -> Option<Category> {
    categories.reduce(|a, b| match (a, b) {
        _ if a == b => a,
        (Category::Float, _) | (_, Category::Float) if a.is_number() && b.is_number() => {
            Category::Float
        }
        _ if a.is_number() && b.is_number() => Category::Numeric,
        // Unlike categories would not type-check; keep the first.
        _ => a,
    })
}

/// `CAST(expr AS text)`.
fn exact_text(expr: Expr) -> Expr {
    Expr::Cast {
        expr: Box::new(expr),
        ty: TypeName("text".into()),
    }
}

/// How a Citus join of a new factor to the tables in scope must look.
enum CitusJoin {
    /// Placement does not restrict it: draw as for PostgreSQL.
    Keep,
    /// This kind and condition (on distribution columns).
    Use(JoinKind, JoinConstraint),
    /// No join of this factor that Citus plans: leave it out.
    Skip,
}

/// Citus plans joins of two distributed tables only on their
/// distribution columns (co-located: any join kind, pushed down whole;
/// not co-located: inner joins, repartitioned), never as a cartesian
/// product. Joins with reference, Citus-local and plain tables are free.
fn citus_join(
    rng: &mut Rng,
    placed: &[(String, crate::schema::PgTable)],
    newest: Option<&crate::schema::PgTable>,
    alias: &str,
    scope_cols: &[TypedColumn],
    cols: &[TypedColumn],
    kind: JoinKind,
) -> CitusJoin {
    let in_scope = &placed[..placed.len().saturating_sub(usize::from(newest.is_some()))];
    let distributed: Vec<&(String, crate::schema::PgTable)> = in_scope
        .iter()
        .filter(|(_, t)| t.placement.is_distributed())
        .collect();
    let Some(t) = newest.filter(|t| t.placement.is_distributed()) else {
        return CitusJoin::Keep;
    };
    if distributed.is_empty() {
        return CitusJoin::Keep;
    }
    let (Some(key), crate::schema::Placement::Distributed { colocation, .. }) =
        (t.placement.column(), &t.placement)
    else {
        return CitusJoin::Keep;
    };
    let mine = Expr::column(Some(alias), key);
    let colocated: Vec<&&(String, crate::schema::PgTable)> = distributed
        .iter()
        .filter(|(_, o)| {
            matches!(&o.placement, crate::schema::Placement::Distributed { colocation: g, .. } if g == colocation)
        })
        .collect();
    if let Some((other_alias, other)) = colocated.choose(rng).map(|p| (&p.0, &p.1)) {
        let theirs = Expr::column(Some(other_alias), other.placement.column().unwrap_or(key));
        let mut on = Expr::binary(BinaryOp::Eq, mine, theirs);
        let kind = match kind {
            JoinKind::Comma | JoinKind::Cross => JoinKind::Inner,
            k => k,
        };
        if kind == JoinKind::Inner && rng.random_bool(0.3) {
            if let Some(extra) = equal_pair(rng, scope_cols, cols) {
                on = Expr::and(on, extra);
            }
        }
        return CitusJoin::Use(kind, JoinConstraint::On(on));
    }
    // Not co-located: a repartition join, inner, on the new table's
    // distribution column and a column of the same category (slow:
    // seldom).
    let category = cols.iter().find(|c| c.expr == mine).map(|c| c.category);
    let partners: Vec<&TypedColumn> = scope_cols
        .iter()
        .filter(|c| Some(c.category) == category)
        .collect();
    match partners.choose(rng) {
        Some(p) if rng.random_bool(0.3) => CitusJoin::Use(
            JoinKind::Inner,
            JoinConstraint::On(Expr::binary(BinaryOp::Eq, mine, p.expr.clone())),
        ),
        _ => CitusJoin::Skip,
    }
}

/// `l = r` for a random pair of columns of one category, one from each side.
fn equal_pair(rng: &mut Rng, left: &[TypedColumn], right: &[TypedColumn]) -> Option<Expr> {
    let pairs: Vec<(Expr, Expr)> = left
        .iter()
        .flat_map(|l| {
            right
                .iter()
                .filter(move |r| r.category == l.category)
                .map(move |r| (l.expr.clone(), r.expr.clone()))
        })
        .collect();
    pairs
        .choose(rng)
        .map(|(l, r)| Expr::binary(BinaryOp::Eq, l.clone(), r.clone()))
}

/// Whether `e` reads a column (outside subqueries).
/// Whether every top-level conjunct of `p` reads a column outside
/// subqueries: PostgreSQL makes a conjunct without one a pseudoconstant
/// (a one-time filter).
fn no_pseudoconstant_conjunct(p: &Expr) -> bool {
    match p {
        Expr::Binary {
            op: BinaryOp::And,
            left,
            right,
        } => no_pseudoconstant_conjunct(left) && no_pseudoconstant_conjunct(right),
        other => mentions_column(other),
    }
}

fn mentions_column(e: &Expr) -> bool {
    matches!(e, Expr::Column(_)) || e.children().into_iter().any(mentions_column)
}
