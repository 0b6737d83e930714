//! FROM clauses: the first relation, joins of every kind (on Citus, only
//! those its planner takes), derived tables and LATERAL subqueries.

use super::*;

impl PgQueryGenerator {
    /// [`QueryGenerator::from_clause`]: every join kind, USING, derived
    /// tables and LATERAL subqueries, and on Citus only joins it plans.
    pub(super) fn build_from_clause(&mut self, rng: &mut Rng) -> (FromClause, Scope) {
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
            // An outer join whose preserved side is recurring (reference,
            // local or plain tables) and whose other side is a distributed
            // table: its ON gets only the join's equality. Citus 13.2.2 and
            // 14.0.1 prune shards by a constant condition on the
            // distribution column in such an ON and lose the preserved rows
            // those shards would have kept (`ref LEFT JOIN dist ON r.k =
            // d.k AND d.k IN (7, 1)` gives 7 rows of 13; README, Citus bugs).
            let mut recurring_outer = false;
            if citus {
                let newest = match &factor {
                    TableFactor::Table { .. } => placed.last().map(|(_, t)| t.clone()),
                    _ => None,
                };
                let before = &placed[..placed.len().saturating_sub(usize::from(newest.is_some()))];
                let scope_distributed = before.iter().any(|(_, t)| t.placement.is_distributed());
                let new_distributed = newest
                    .as_ref()
                    .is_some_and(|t| t.placement.is_distributed());
                recurring_outer = (kind == JoinKind::Left && new_distributed && !scope_distributed)
                    || (kind == JoinKind::Right && scope_distributed && !new_distributed);
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
                        // Mostly an equality between the new factor and one
                        // before it, so that joins match rows (a random ON
                        // condition is often false on every pair), at
                        // times with a random condition; else any predicate.
                        let on = match equal_pair(rng, &scope_cols, &cols) {
                            Some(link) if rng.random_bool(0.6) => {
                                if rng.random_bool(0.7) {
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
                        };
                        self.next_alias = g.next_alias;
                        JoinConstraint::On(on)
                    }
                }
            };
            // Citus refuses outer joins whose ON reads no column.
            let constraint = match constraint {
                JoinConstraint::On(on) if recurring_outer => {
                    match equal_pair(rng, &scope_cols, &cols) {
                        Some(eq) => JoinConstraint::On(eq),
                        None => JoinConstraint::On(on),
                    }
                }
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
pub(super) fn no_pseudoconstant_conjunct(p: &Expr) -> bool {
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
