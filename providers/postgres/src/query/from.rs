//! FROM clauses: the first relation, joins of every kind (on Citus, only
//! those its planner takes), derived tables and LATERAL subqueries.

use super::*;
use crate::schema::PgTable;

/// A FROM clause under construction: its columns so far, those that
/// hold stored values, the base tables by alias and the joins.
struct Draft {
    scope_cols: Vec<TypedColumn>,
    /// A view's column may be an expression (COALESCE(c, 'a') is an
    /// unpadded char): only base tables' columns hold stored values.
    stored: Vec<Expr>,
    /// The base tables in scope by alias (Citus joins depend on placement).
    placed: Vec<(String, PgTable)>,
    joins: Vec<Join>,
}

impl Draft {
    /// Adds a base table's columns under `alias` to the stored ones
    /// (unless it is a view).
    fn store(&mut self, table: &PgTable, alias: &str) {
        if table.kind != RelationKind::View {
            self.stored
                .extend(table.typed_columns(alias).into_iter().map(|c| c.expr));
        }
    }
}

impl PgQueryGenerator {
    /// [`QueryGenerator::from_clause`]: every join kind, USING, derived
    /// tables and LATERAL subqueries, and on Citus only joins it plans.
    /// With the clause's columns and the facts kept of it.
    pub(super) fn build_from_clause(
        &mut self,
        rng: &mut Rng,
    ) -> (FromClause, Vec<TypedColumn>, FromFacts) {
        let Some(first_table) = self.core.schema.relations.choose(rng).cloned() else {
            // No table could be created: a FROM-less query over a constant.
            let (from, cols) = QueryCore::<PgSchema, FromFacts>::constant_from();
            return (from, cols, FromFacts::default());
        };
        let mut draft = Draft {
            scope_cols: first_table.typed_columns("a0"),
            stored: Vec::new(),
            placed: Vec::new(),
            joins: Vec::new(),
        };
        draft.store(&first_table, "a0");
        let first = table_factor(&first_table.name, "a0");
        draft.placed.push(("a0".to_string(), first_table));
        let citus = self.core.schema.has_distributed();
        for j in 1..=QueryCore::<PgSchema, FromFacts>::join_count(rng) {
            self.add_join(rng, &mut draft, &format!("a{j}"), citus);
        }
        let facts = from_facts(&draft, citus);
        let from = FromClause {
            first,
            joins: draft.joins,
        };
        (from, draft.scope_cols, facts)
    }

    /// Joins one more factor (a table, a derived table or a LATERAL
    /// subquery) to the draft under `alias`, by a join kind and condition
    /// PostgreSQL (and on Citus, Citus) plans; or none where Citus plans
    /// no join of it.
    fn add_join(&mut self, rng: &mut Rng, draft: &mut Draft, alias: &str, citus: bool) {
        let Some((factor, cols, lateral)) = self.join_factor(rng, draft, alias, citus) else {
            return;
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
        let mut recurring_outer = false;
        if citus {
            let (recurring, join) = citus_rules(rng, draft, &factor, alias, &cols, kind);
            recurring_outer = recurring;
            match join {
                CitusJoin::Keep => {}
                CitusJoin::Use(kind, constraint) => {
                    draft.joins.push(Join {
                        kind,
                        factor,
                        constraint,
                    });
                    draft.scope_cols.extend(cols);
                    return;
                }
                CitusJoin::Skip => {
                    if matches!(factor, TableFactor::Table { .. }) {
                        draft.placed.pop();
                    }
                    return;
                }
            }
        }
        let constraint = self.join_constraint(rng, draft, (&factor, &cols), kind);
        // Citus refuses outer joins whose ON reads no column.
        let constraint = match constraint {
            JoinConstraint::On(on)
                if recurring_outer
                    || (citus
                        && matches!(kind, JoinKind::Left | JoinKind::Right | JoinKind::Full)
                        && !mentions_column(&on)) =>
            {
                match equal_pair(rng, &draft.scope_cols, &cols) {
                    Some(eq) => JoinConstraint::On(eq),
                    None => JoinConstraint::On(on),
                }
            }
            other => other,
        };
        draft.joins.push(Join {
            kind,
            factor,
            constraint,
        });
        draft.scope_cols.extend(cols);
    }

    /// The factor a join adds: a LATERAL subquery for a tenth (not on
    /// Citus, which refuses most lateral joins over distributed tables),
    /// a derived table for a tenth, else a relation of the schema
    /// (recorded in the draft's placed and stored columns). With its
    /// columns and whether it is lateral.
    fn join_factor(
        &mut self,
        rng: &mut Rng,
        draft: &mut Draft,
        alias: &str,
        citus: bool,
    ) -> Option<(TableFactor, Vec<TypedColumn>, bool)> {
        match rng.random_range(0..10) {
            0 if !citus => self
                .derived(rng, alias, &draft.scope_cols, true)
                .map(|(f, c)| (f, c, true)),
            1 => self
                .derived(rng, alias, &draft.scope_cols, false)
                .map(|(f, c)| (f, c, false)),
            _ => {
                let t = self.core.schema.relations.choose(rng)?.clone();
                draft.store(&t, alias);
                let cols = t.typed_columns(alias);
                let factor = table_factor(&t.name, alias);
                draft.placed.push((alias.to_string(), t));
                Some((factor, cols, false))
            }
        }
    }

    /// The condition of a join that is not Citus's to decide: none for
    /// comma and CROSS joins, an equality for FULL joins, USING a column
    /// both sides share for a quarter where there is one (not on Citus),
    /// else an ON condition that mostly matches rows.
    fn join_constraint(
        &mut self,
        rng: &mut Rng,
        draft: &Draft,
        (factor, cols): (&TableFactor, &[TypedColumn]),
        kind: JoinKind,
    ) -> JoinConstraint {
        if matches!(kind, JoinKind::Comma | JoinKind::Cross) {
            return JoinConstraint::None;
        }
        let common = match factor {
            TableFactor::Table { .. } => using_candidates(&draft.scope_cols, cols),
            _ => vec![],
        };
        if kind == JoinKind::Full {
            // FULL JOIN needs a merge- or hash-joinable condition.
            let on = equal_pair(rng, &draft.scope_cols, cols)
                .unwrap_or(Expr::Literal(lancet_core::Value::Boolean(true)));
            JoinConstraint::On(on)
        } else if !common.is_empty()
            && !self.core.schema.has_citus_tables()
            && rng.random_bool(0.25)
        {
            // (Not on Citus: 13.2 deparses a USING column of
            // an outer join for the workers under a name that
            // does not exist, 42703 "column a2.c0_1": a known
            // bug, met in most runs.)
            JoinConstraint::Using(vec![common.choose(rng).cloned().unwrap_or_default()])
        } else {
            // Mostly an equality between the new factor and one before
            // it, so that joins match rows (a random ON condition is
            // often false on every pair), at times with a random
            // condition; else any predicate.
            JoinConstraint::On(
                self.core
                    .join_condition(rng, (&draft.scope_cols, cols), 0.3),
            )
        }
    }
}

/// The columns a USING may name: a column of the new table that exactly
/// one column in scope has, of the same category.
fn using_candidates(scope_cols: &[TypedColumn], cols: &[TypedColumn]) -> Vec<String> {
    let named =
        |s: &TypedColumn, name: &str| matches!(&s.expr, Expr::Column(r) if r.column == name);
    cols.iter()
        .filter_map(|c| match &c.expr {
            Expr::Column(r) => Some((r.column.clone(), c.category)),
            _ => None,
        })
        .filter(|(name, cat)| {
            scope_cols.iter().filter(|s| named(s, name)).count() == 1
                && scope_cols
                    .iter()
                    .any(|s| named(s, name) && s.category == *cat)
        })
        .map(|(n, _)| n)
        .collect()
}

/// What the generator keeps of a finished FROM clause: its stored
/// columns, whether it has an outer join on Citus, and then the columns
/// DISTINCT and GROUP BY must read as text (a view's column may be a
/// distribution column too).
fn from_facts(draft: &Draft, citus: bool) -> FromFacts {
    let outer_join_on_citus = citus
        && draft
            .joins
            .iter()
            .any(|j| matches!(j.kind, JoinKind::Left | JoinKind::Right | JoinKind::Full));
    let outer_distribution_columns = if outer_join_on_citus {
        draft
            .placed
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
    FromFacts {
        stored: draft.stored.clone(),
        outer_join_on_citus,
        outer_distribution_columns,
    }
}

/// Citus's view of a join: whether it is an outer join whose preserved
/// side is recurring (reference, local or plain tables) and whose other
/// side is a distributed table, and how placement restricts it. Such a
/// join's ON gets only the join's equality. Citus 13.2.2 and 14.0.1
/// prune shards by a constant condition on the distribution column in
/// such an ON and lose the preserved rows those shards would have kept
/// (`ref LEFT JOIN dist ON r.k = d.k AND d.k IN (7, 1)` gives 7 rows of
/// 13; README, Citus bugs).
fn citus_rules(
    rng: &mut Rng,
    draft: &Draft,
    factor: &TableFactor,
    alias: &str,
    cols: &[TypedColumn],
    kind: JoinKind,
) -> (bool, CitusJoin) {
    let placed = &draft.placed;
    let newest = match factor {
        TableFactor::Table { .. } => placed.last().map(|(_, t)| t.clone()),
        _ => None,
    };
    let before = &placed[..placed.len().saturating_sub(usize::from(newest.is_some()))];
    let scope_distributed = before.iter().any(|(_, t)| t.placement.is_distributed());
    let new_distributed = newest
        .as_ref()
        .is_some_and(|t| t.placement.is_distributed());
    let recurring_outer = (kind == JoinKind::Left && new_distributed && !scope_distributed)
        || (kind == JoinKind::Right && scope_distributed && !new_distributed);
    let join = citus_join(
        rng,
        placed,
        newest.as_ref(),
        alias,
        &draft.scope_cols,
        cols,
        kind,
    );
    (recurring_outer, join)
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

/// Whether `e` reads a column (outside subqueries).
fn mentions_column(e: &Expr) -> bool {
    matches!(e, Expr::Column(_)) || e.children().into_iter().any(mentions_column)
}
