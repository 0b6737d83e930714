//! Equivalence and containment transformations (after queryFuzz and
//! GraphGenie): a query and a chain of transformations of it
//! ([`rewrite`]) whose results must stand in the chain's
//! relation: equal, a subset or a superset, as multisets or as sets.
//!
//! The base query is plain rows (monotone: containment steps apply),
//! DISTINCT rows, or groups with a count and MIN or MAX (equalities
//! only). Select lists of DISTINCT, GROUP BY and set operations use the
//! generator's exact forms, so that a DBMS choosing one of several equal
//! values (`'a'` or `'A'` under NOCASE) cannot break a relation.

pub mod rewrite;

use self::rewrite::{
    apply_chain, chain_relation, conjuncts, is_monotone, top_select, truth_nodes, Containment,
    Relation, Rewrite, Step, EXISTS_ALIAS,
};
use crate::partition::{exact_groups, item, some_columns};
use lancet_core::compare::{multiset_diff, set_diff, RowDiff};
use lancet_core::fault::{Fault, FaultedQuery, FaultedResult, PlantedFault};
use lancet_core::schema::RelationKind;
use lancet_core::{
    Case, CaseError, CasePolicy, Disagreement, Expr, GenerateContext, ItemPolicy, JoinKind, Oracle,
    OracleQuery, Query, Row, Scope, ScopeColumn, Select, SetOperator, TableFactor, Verdict,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

pub struct Transform;

/// What the transform oracle draws beside its base query: the chain of
/// rewrites applied to it, in order.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Chain {
    pub steps: Vec<Step>,
}

impl lancet_core::OracleInputs for Chain {
    const KIND: &'static str = "transforms";
    const WHAT: &'static str = "transformation steps";
}

/// At most this many steps before the wrappers (set operation, renaming,
/// derived table or CTE).
const MAX_CORE_STEPS: usize = 3;

impl Transform {
    fn base(&self, cx: &mut GenerateContext<'_>) -> Option<(Select, Scope, bool)> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (from, scope) = generator.from_clause(rng);
        if scope.columns.is_empty() {
            return None;
        }
        let selection = rng
            .random_bool(0.75)
            .then(|| generator.predicate(rng, &scope));
        let mut select = Select {
            from: Some(from),
            selection,
            ..Select::default()
        };
        let columns = some_columns(rng, &scope, 3);
        let exact = match rng.random_range(0..100) {
            0..65 => {
                let exact = rng.random_bool(0.3);
                let mut items = columns;
                if rng.random_bool(0.3) {
                    items.push(generator.expression(rng, &scope));
                }
                select.items = items
                    .into_iter()
                    .map(|e| {
                        item(if exact {
                            generator.with_exact_equality(e)
                        } else {
                            e
                        })
                    })
                    .collect();
                exact
            }
            65..80 => {
                select.distinct = true;
                select.items = columns
                    .into_iter()
                    .map(|c| item(generator.with_exact_equality(c)))
                    .collect();
                true
            }
            _ => {
                (select.items, select.group_by) = exact_groups(rng, generator, &scope, columns)?;
                true
            }
        };
        Some((select, scope, exact))
    }

    /// A step that may apply to `s` (its own check decides), drawn with
    /// what it needs.
    fn draw_step(&self, cx: &mut GenerateContext<'_>, s: &Select, scope: &Scope) -> Option<Step> {
        let rng = &mut *cx.rng;
        let joins = s.from.as_ref().map_or(0, |f| f.joins.len());
        let any_join = |rng: &mut lancet_core::Rng| (joins > 0).then(|| rng.random_range(0..joins));
        Some(match rng.random_range(0..17) {
            0 => Step::SwapJoinOperands,
            1 => Step::OnToWhere {
                join: any_join(rng)?,
                comma: rng.random_bool(0.5),
            },
            2 => Step::SplitOn {
                join: any_join(rng)?,
            },
            3 if cx.dialect.rules().supports_straight_join() => Step::StraightJoin {
                join: any_join(rng)?,
            },
            4 => self.self_join(cx, s)?,
            5 if cx.dialect.rules().integer_columns_hold_integers() => {
                let ints: Vec<&ScopeColumn> = scope
                    .columns
                    .iter()
                    .filter(|c| matches!(c.expr, Expr::Column(_)) && is_integer(c))
                    .collect();
                Step::AddZero {
                    column: ints.choose(rng)?.expr.clone(),
                }
            }
            6 | 7 => {
                let nodes = truth_nodes(s.selection.as_ref()?).len();
                let node = (nodes > 0).then(|| rng.random_range(0..nodes))?;
                Step::Rewrite {
                    node,
                    rewrite: *Rewrite::ALL.choose(rng)?,
                }
            }
            8 => Step::AddConjunct {
                predicate: cx.generator.predicate(rng, scope),
            },
            9 => {
                let table = cx.schema.relations.choose(rng)?;
                let mut inner = Scope::of_relation(table, EXISTS_ALIAS);
                if rng.random_bool(0.7) {
                    inner.columns.extend(scope.columns.iter().cloned());
                }
                Step::AddExists {
                    table: table.name.clone(),
                    predicate: cx.generator.predicate(rng, &inner),
                }
            }
            10 => Step::OuterToInner {
                join: any_join(rng)?,
            },
            11 | 12 => {
                // RIGHT only where the FROM clause proves the DBMS has it
                // (SQLite before 3.39 has none).
                let has_right = s
                    .from
                    .as_ref()
                    .is_some_and(|f| f.joins.iter().any(|j| j.kind == JoinKind::Right));
                Step::InnerToOuter {
                    join: any_join(rng)?,
                    right: has_right && rng.random_bool(0.3),
                }
            }
            13 => Step::DropConjunct {
                conjunct: rng.random_range(0..conjuncts(s.selection.as_ref()?).len()),
            },
            14 => Step::AddDisjunct {
                predicate: cx.generator.predicate(rng, scope),
            },
            // A cross product only over few tables.
            15 if joins <= 2 => Step::DropJoinCondition {
                join: any_join(rng)?,
            },
            _ => return None,
        })
    }

    fn self_join(&self, cx: &mut GenerateContext<'_>, s: &Select) -> Option<Step> {
        let from = s.from.as_ref()?;
        let factors: Vec<(usize, &str)> = std::iter::once(&from.first)
            .chain(from.joins.iter().map(|j| &j.factor))
            .enumerate()
            .filter_map(|(i, f)| match f {
                TableFactor::Table { name, .. } => Some((i, name.as_str())),
                TableFactor::Derived { .. } => None,
            })
            .collect();
        let (factor, name) = *factors.choose(cx.rng)?;
        let table = cx
            .schema
            .relations
            .iter()
            .find(|r| r.name == name && r.kind == RelationKind::Table)?;
        let keys: Vec<_> = table
            .columns
            .iter()
            // `unique` alone: a column of a composite primary key is not.
            .filter(|c| c.unique)
            .collect();
        let key = keys.choose(cx.rng)?;
        Some(Step::SelfJoin {
            factor,
            column: key.name.clone(),
            inner: key.not_null && cx.rng.random_bool(0.6),
        })
    }

    /// The wrappers that end a chain: a set operation of the query with
    /// itself, renamed aliases, a derived table or CTE around it.
    fn wrappers(&self, cx: &mut GenerateContext<'_>, scope: &Scope, exact: bool) -> Vec<Step> {
        let rng = &mut *cx.rng;
        let mut out = Vec::new();
        if rng.random_bool(0.2) {
            out.push(if rng.random_bool(0.25) {
                Step::ExceptFiltered {
                    predicate: cx.generator.predicate(rng, scope),
                }
            } else {
                Step::SelfSetOperation {
                    op: *[
                        SetOperator::UnionAll,
                        SetOperator::Union,
                        SetOperator::Intersect,
                    ]
                    .choose(rng)
                    .unwrap_or(&SetOperator::Union),
                    exact,
                }
            });
        }
        if rng.random_bool(0.2) {
            out.push(Step::RenameAliases);
        }
        if rng.random_bool(0.3) {
            out.push(Step::Wrap {
                cte: rng.random_bool(0.5),
            });
        }
        out
    }
}

/// Whether `c` is declared with an integer type (`INT`, `BIGINT`, ...):
/// where the dialect says such columns hold only integers, `c + 0` is `c`.
pub(crate) fn is_integer(c: &ScopeColumn) -> bool {
    let Some(ty) = &c.ty else { return false };
    let lower = ty.0.to_ascii_lowercase();
    let word = lower
        .split(|ch: char| ch == '(' || ch.is_whitespace())
        .next()
        .unwrap_or("");
    matches!(
        word,
        "int"
            | "integer"
            | "int2"
            | "int4"
            | "int8"
            | "smallint"
            | "bigint"
            | "tinyint"
            | "mediumint"
    )
}

/// A finding's diff under `relation`: only the rows that break it (for ⊆,
/// rows of the transformed query the original lacks; for ⊇, the reverse).
fn violations(relation: Relation, original: &[Row], transformed: &[Row]) -> RowDiff {
    let diff = if relation.sets_only {
        set_diff(original, transformed)
    } else {
        multiset_diff(original, transformed)
    };
    match relation.containment {
        Containment::Equal => diff,
        Containment::Subset => RowDiff {
            only_in_first: vec![],
            only_in_second: diff.only_in_second,
            ..RowDiff::default()
        },
        Containment::Superset => RowDiff {
            only_in_first: diff.only_in_first,
            only_in_second: vec![],
            ..RowDiff::default()
        },
    }
}

impl Oracle for Transform {
    fn name(&self) -> &'static str {
        "transform"
    }

    fn description(&self) -> &'static str {
        "equivalence and containment transformations: a query and a chain of rewrites of it (join swaps, ON/WHERE moves, self-joins, added or dropped conditions, outer/inner joins, derived tables, CTEs, set operations, predicate equivalences) stand in the chain's relation (=, ⊆, ⊇)"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let (base, scope, exact) = self.base(cx)?;
        let mut steps: Vec<Step> = Vec::new();
        let want = cx.rng.random_range(1..=MAX_CORE_STEPS);
        let mut relation = Relation::EQUAL;
        let mut current = Query::select(base.clone());
        for _ in 0..want * 4 {
            if steps.len() == want {
                break;
            }
            let Ok(s) = top_select(&mut current) else {
                break;
            };
            let s = s.clone();
            let Some(step) = self.draw_step(cx, &s, &scope) else {
                continue;
            };
            let Some(next) = relation.then(step.relation()) else {
                continue;
            };
            let mut candidate = current.clone();
            if step.apply(&mut candidate, &mut Default::default()).is_ok() {
                current = candidate;
                relation = next;
                steps.push(step);
            }
        }
        for step in self.wrappers(cx, &scope, exact) {
            if relation.then(step.relation()).is_some() {
                let mut trial = steps.clone();
                trial.push(step);
                if apply_chain(&base, &trial).is_ok() {
                    steps = trial;
                }
            }
        }
        if steps.is_empty() {
            return None;
        }
        Some(Case::new(self.name(), base).and_inputs(Chain { steps }))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let chain = case.inputs::<Chain>()?;
        let steps = &chain.steps;
        let (transformed, _) = apply_chain(&case.query, steps).map_err(|e| case.unfit(e))?;
        let names: Vec<&str> = steps.iter().map(Step::name).collect();
        Ok(vec![
            OracleQuery::new("original", Query::select(case.query.clone())),
            OracleQuery::new(&format!("transformed: {}", names.join(", ")), transformed),
        ])
    }

    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        // queries() applied the chain already; the relation follows from
        // the steps alone.
        let relation = chain_relation(&case.inputs::<Chain>()?.steps)
            .ok_or_else(|| case.unfit("the chain mixes ⊆ and ⊇"))?;
        let [original, transformed, ..] = results else {
            return Err(case.unfit("fewer than two results"));
        };
        let diff = violations(relation, original, transformed);
        Ok(if diff.is_empty() {
            Verdict::Agree {
                nonempty: !original.is_empty(),
            }
        } else {
            Verdict::Disagree(Disagreement {
                relation: relation.describe(),
                row_counts: vec![original.len(), transformed.len()],
                diff,
                timing: None,
            })
        })
    }

    /// The base query shrinks like TLP's (its select list only where it
    /// is plain rows); the chain shrinks by dropping a step. Every
    /// candidate is rebuilt by applying its chain, whose steps check
    /// their own preconditions, so it stands in its relation by
    /// construction.
    fn shrink(&self, case: &Case) -> Vec<Case> {
        let items = if is_monotone(&case.query) && !case.query.distinct {
            ItemPolicy::Free
        } else {
            ItemPolicy::Fixed
        };
        let policy = CasePolicy {
            predicate: false,
            ..CasePolicy::with_items(items)
        };
        let mut out = lancet_core::shrink::case_variants(case, &policy);
        if let Ok(chain) = case.inputs::<Chain>() {
            let steps = &chain.steps;
            if steps.len() > 1 {
                for i in 0..steps.len() {
                    let mut fewer = steps.to_vec();
                    fewer.remove(i);
                    out.push(case.with_inputs(Chain { steps: fewer }));
                }
            }
        }
        out
    }

    /// Self-joins rest on UNIQUE and NOT NULL, and `c + 0` on a column's
    /// integer type: the tables a case reads keep their CREATE TABLE.
    fn case_depends_on_schema(&self) -> bool {
        true
    }

    fn planted_fault(&self) -> Fault {
        std::sync::Arc::new(DropRowInDerived { period: 3 })
    }

    fn faults(&self) -> Vec<Fault> {
        vec![
            self.planted_fault(),
            std::sync::Arc::new(DuplicateRowInCrossJoins { period: 2 }),
        ]
    }
}

/// Drops the first row of one query in `period` among those that read a
/// derived table or a CTE: a fault of one way of writing a query, which an
/// oracle comparing it with the query written plainly sees (transform,
/// stepwise).
#[derive(Debug)]
pub struct DropRowInDerived {
    pub period: u64,
}

impl PlantedFault for DropRowInDerived {
    fn name(&self) -> &'static str {
        "drop-row-in-derived"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        if !r.rows.is_empty() && q.query.query.reads_derived() && q.hit(self.period) {
            r.rows.remove(0);
        }
    }
}

/// Duplicates the first row of one query in `period` among those that
/// join with CROSS JOIN or a comma: a fault of joins written one way,
/// which the same join written with ON does not have.
#[derive(Debug)]
pub struct DuplicateRowInCrossJoins {
    pub period: u64,
}

impl PlantedFault for DuplicateRowInCrossJoins {
    fn name(&self) -> &'static str {
        "duplicate-row-in-cross-joins"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        let mut cross = false;
        q.query.query.for_each_from(&mut |from| {
            cross |= from
                .joins
                .iter()
                .any(|j| matches!(j.kind, JoinKind::Cross | JoinKind::Comma));
        });
        if cross && q.hit(self.period) {
            if let Some(first) = r.rows.first().cloned() {
                r.rows.push(first);
            }
        }
    }
}
