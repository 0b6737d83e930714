//! Stepwise materialization (after Deopt): a query built in steps, each a
//! SELECT over base tables and earlier steps, returns the same multiset
//! of rows written as one statement (a WITH chain, or nested derived
//! tables, which the optimizer may flatten, push predicates into, inline
//! or eliminate) as when every step is evaluated alone into a temporary
//! table first, so that no optimization can cross a step.
//!
//! Steps are kept per database ([`lancet_core::OracleMemo`]) and built
//! on: a check adds one step over earlier ones, so queries deepen as the
//! database's checks go on. A step is kept only if it runs and returns
//! rows (a tenth of empty ones are kept on purpose). A session
//! materializes each step once, under a name derived from its text, and
//! later checks read the same temporary table.
//!
//! Every select list is in the generator's exact form: a temporary table
//! made by `CREATE TABLE AS` forgets a column's collation (SQLite), and
//! DISTINCT, GROUP BY, MIN and MAX may return any one of equal values.

mod inline;

use crate::partition::{item, multiset_verdict};
use inline::{inline_query, needed_steps};
use lancet_core::RenameTables;
use lancet_core::{
    Case, CaseError, CasePolicy, DerivedForm, Expr, FromClause, GenerateContext, ItemPolicy, Join,
    JoinConstraint, JoinKind, Oracle, OracleQuery, Query, Row, Scope, ScopeColumn, Select,
    SelectItem, SetExpr, TableFactor, Verdict,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;
use std::collections::BTreeMap;

pub struct Stepwise;

/// What the stepwise oracle draws beside the last step (the case's query):
/// the earlier steps, in order, each reading base tables and earlier
/// steps. `cte`: the one-statement form writes them as a WITH chain, else
/// as nested derived tables.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Steps {
    pub steps: Vec<NamedStep>,
    pub cte: bool,
}

impl lancet_core::OracleInputs for Steps {
    const KIND: &'static str = "steps";
}

/// One step of a stepwise query.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct NamedStep {
    /// Later steps read it as the table `lancet_step<id>`.
    pub id: usize,
    pub query: Query,
}

impl NamedStep {
    /// The name later steps read it by.
    pub fn table_name(id: usize) -> String {
        format!("lancet_step{id}")
    }
}

const RELATION: &str = "RS(the query in one statement) = RS(the query with each step materialized alone), as multisets of whole rows";

/// Steps kept per database.
const MAX_POOL: usize = 24;
/// Steps this deep are not read by new ones.
const MAX_DEPTH: usize = 6;
/// The share of empty steps kept.
const EMPTY_KEPT: f64 = 0.1;
/// Steps with more rows are not read by new ones.
const MAX_ROWS: u64 = 4_000;
/// A join to a step is drawn only if the product of the rows of both
/// sides stays within this: a join of two large steps would make every
/// later step slow.
const MAX_PRODUCT: u64 = 10_000;
/// The rows assumed for a FROM clause over base tables (the generator
/// bounds its products; the count is not known before the step runs).
const BASE_ROWS: u64 = 100;

/// A step of this database that later checks may build on.
#[derive(Clone, Debug)]
struct PoolStep {
    query: Query,
    /// Its columns as a step that reads it names them.
    columns: Vec<ScopeColumn>,
    /// The pool steps it reads directly.
    reads: Vec<usize>,
    depth: usize,
    nonempty: bool,
    /// Its row count, as the probe saw it.
    rows: u64,
}

/// What a database keeps between checks.
#[derive(Default)]
struct Pool {
    steps: Vec<PoolStep>,
}

/// What a test can learn about a database's steps.
#[derive(Clone, Copy, Debug, Default)]
pub struct PoolFigures {
    pub steps: usize,
    pub nonempty: usize,
    pub depth_sum: usize,
    pub max_depth: usize,
}

impl Stepwise {
    /// The figures of the steps a database's checks kept.
    pub fn figures(memo: &mut lancet_core::OracleMemo) -> PoolFigures {
        let pool = memo.of::<Pool>("stepwise");
        PoolFigures {
            steps: pool.steps.len(),
            nonempty: pool.steps.iter().filter(|s| s.nonempty).count(),
            depth_sum: pool.steps.iter().map(|s| s.depth).sum(),
            max_depth: pool.steps.iter().map(|s| s.depth).max().unwrap_or(0),
        }
    }
}

/// The scope a step's output gives to one that reads it. Where
/// materializing changes how a column compares (SQLite's affinity), every
/// column is read as `+c`, which compares the same in both forms.
fn step_scope(cx: &GenerateContext<'_>, id: usize, columns: &[ScopeColumn]) -> Vec<ScopeColumn> {
    let table = NamedStep::table_name(id);
    let plain = !cx.dialect.rules().materialized_columns_lose_affinity();
    columns
        .iter()
        .enumerate()
        .map(|(j, c)| {
            let column = Expr::column(Some(&table), &format!("c{j}"));
            ScopeColumn {
                expr: if plain {
                    column
                } else {
                    Expr::unary(lancet_core::UnaryOp::Plus, column)
                },
                ty: c.ty.clone(),
            }
        })
        .collect()
}

/// Joins step `id` to `from`: on equal columns of one type where there
/// are some, else on a predicate, or as a comma join.
fn join_step(
    cx: &mut GenerateContext<'_>,
    from: &mut FromClause,
    scope: &mut Scope,
    id: usize,
    step: &PoolStep,
) {
    let right = step_scope(cx, id, &step.columns);
    let pairs: Vec<(&ScopeColumn, &ScopeColumn)> = scope
        .columns
        .iter()
        .flat_map(|l| right.iter().map(move |r| (l, r)))
        .filter(|(l, r)| l.ty.is_some() && l.ty == r.ty)
        .collect();
    let kind = *[
        JoinKind::Inner,
        JoinKind::Inner,
        JoinKind::Left,
        JoinKind::Comma,
    ]
    .choose(cx.rng)
    .unwrap_or(&JoinKind::Inner);
    let mut all = scope.clone();
    all.columns.extend(right.iter().cloned());
    let constraint = match kind {
        JoinKind::Comma => JoinConstraint::None,
        _ => JoinConstraint::On(match pairs.choose(cx.rng) {
            Some((l, r)) if cx.rng.random_bool(0.7) => {
                Expr::binary(lancet_core::BinaryOp::Eq, l.expr.clone(), r.expr.clone())
            }
            _ => cx.generator.predicate(cx.rng, &all),
        }),
    };
    from.joins.push(Join {
        kind,
        factor: TableFactor::Table {
            name: NamedStep::table_name(id),
            alias: None,
            indexed_by: None,
        },
        constraint,
    });
    *scope = all;
}

impl Stepwise {
    /// A new step over base tables and pool steps: its query, the pool
    /// steps it reads, and its columns.
    fn build_step(
        &self,
        cx: &mut GenerateContext<'_>,
        pool: &[PoolStep],
    ) -> Option<(Select, Vec<usize>, Vec<ScopeColumn>)> {
        let readable: Vec<usize> = (0..pool.len())
            .filter(|&i| {
                pool[i].depth < MAX_DEPTH
                    && pool[i].rows <= MAX_ROWS
                    && (pool[i].nonempty || cx.rng.random_bool(0.2))
            })
            .collect();
        let (from, scope, mut reads) = step_from(cx, pool, &readable)?;
        let selection = cx
            .rng
            .random_bool(0.6)
            .then(|| cx.generator.predicate(cx.rng, &scope));
        let n = cx.rng.random_range(1..=scope.columns.len().min(4));
        let chosen: Vec<ScopeColumn> = scope.columns.choose_multiple(cx.rng, n).cloned().collect();
        let mut select = Select {
            from: Some(from),
            selection,
            ..Select::default()
        };
        let columns = match cx.rng.random_range(0..100) {
            0..75 => plain_items(cx, &mut select, chosen, &scope),
            _ => group_items(cx, &mut select, chosen, &scope)?,
        };
        name_items(cx, &mut select);
        reads.sort_unstable();
        Some((select, reads, columns))
    }
}

/// The FROM clause of a new step: base tables or one of the `readable`
/// pool steps, maybe joined to another; with its scope and the pool steps
/// it reads (in the order drawn). `None` if it has no columns.
fn step_from(
    cx: &mut GenerateContext<'_>,
    pool: &[PoolStep],
    readable: &[usize],
) -> Option<(FromClause, Scope, Vec<usize>)> {
    let mut reads = Vec::new();
    let (mut from, mut scope) = if readable.is_empty() || cx.rng.random_bool(0.3) {
        cx.generator.from_clause(cx.rng)
    } else {
        let id = *readable.choose(cx.rng)?;
        reads.push(id);
        (
            FromClause::table(&NamedStep::table_name(id), None),
            Scope {
                columns: step_scope(cx, id, &pool[id].columns),
            },
        )
    };
    if scope.columns.is_empty() {
        return None;
    }
    let source_rows = reads.first().map_or(BASE_ROWS, |&i| pool[i].rows.max(1));
    let joinable: Vec<usize> = readable
        .iter()
        .copied()
        .filter(|&i| !reads.contains(&i) && source_rows * pool[i].rows.max(1) <= MAX_PRODUCT)
        .collect();
    if !joinable.is_empty() && cx.rng.random_bool(0.5) {
        let id = *joinable.choose(cx.rng)?;
        reads.push(id);
        join_step(cx, &mut from, &mut scope, id, &pool[id]);
    }
    Some((from, scope, reads))
}

/// The select list of a step of plain rows: the `chosen` columns, maybe
/// an expression; returns the step's columns. DISTINCT goes over the
/// exact group keys, so that of equal values that differ (SQLite's 1 and
/// 1.0, PostgreSQL's 1.0 and 1.00) it keeps all, not an arbitrary one
/// that a later step could tell apart (typeof, text).
fn plain_items(
    cx: &mut GenerateContext<'_>,
    select: &mut Select,
    chosen: Vec<ScopeColumn>,
    scope: &Scope,
) -> Vec<ScopeColumn> {
    let mut exprs: Vec<(Expr, Option<lancet_core::TypeName>)> =
        chosen.into_iter().map(|c| (c.expr, c.ty)).collect();
    if cx.rng.random_bool(0.25) {
        exprs.push((cx.generator.expression(cx.rng, scope), None));
    }
    select.distinct = cx.rng.random_bool(0.2);
    let mut columns = Vec::new();
    for (e, ty) in exprs {
        let forms = if select.distinct {
            cx.generator.exact_group_keys(e)
        } else {
            vec![cx.generator.with_exact_equality(e)]
        };
        for (k, form) in forms.into_iter().enumerate() {
            columns.push(ScopeColumn {
                expr: Expr::int(0),
                ty: if k == 0 { ty.clone() } else { None },
            });
            select.items.push(item(form));
        }
    }
    columns
}

/// The select list and GROUP BY of a step of groups: exact keys of up to
/// two `chosen` columns, a count, and MIN or MAX of a column whose equal
/// values are identical (of others, MIN and MAX return an arbitrary one);
/// returns the step's columns.
fn group_items(
    cx: &mut GenerateContext<'_>,
    select: &mut Select,
    chosen: Vec<ScopeColumn>,
    scope: &Scope,
) -> Option<Vec<ScopeColumn>> {
    let keys: Vec<ScopeColumn> = chosen.into_iter().take(2).collect();
    let mut items = Vec::new();
    for k in &keys {
        for (n, form) in cx
            .generator
            .exact_group_keys(k.expr.clone())
            .into_iter()
            .enumerate()
        {
            items.push((form, if n == 0 { k.ty.clone() } else { None }));
        }
    }
    select.group_by = items.iter().map(|(e, _)| e.clone()).collect();
    items.push((Expr::CountStar, None));
    if let Some(c) = scope.columns.choose(cx.rng) {
        let name = *["MIN", "MAX"].choose(cx.rng)?;
        let arg = cx
            .generator
            .aggregate_argument(cx.rng, scope, name, c.expr.clone());
        if cx.generator.exact_group_keys(arg.clone()).len() == 1 {
            let exact = cx.generator.with_exact_equality(arg);
            items.push((Expr::func(name, vec![exact]), None));
        }
    }
    let columns = items
        .iter()
        .map(|(_, ty)| ScopeColumn {
            expr: Expr::int(0),
            ty: ty.clone(),
        })
        .collect();
    select.items = items.into_iter().map(|(e, _)| item(e)).collect();
    Some(columns)
}

/// Names a step's items `c0`, `c1`, ..., as later steps read them. Where
/// materializing changes values (SQLite: a column made of an expression
/// with NUMERIC affinity stores the REAL 0.0 as the INTEGER 0), items are
/// written `+x`: no affinity, so the column made of them has none and
/// stores values as they are.
fn name_items(cx: &GenerateContext<'_>, select: &mut Select) {
    let without_affinity = cx.dialect.rules().materialized_columns_lose_affinity();
    for (i, it) in select.items.iter_mut().enumerate() {
        if let SelectItem::Expr { expr, alias } = it {
            *alias = Some(format!("c{i}"));
            if without_affinity {
                let e = std::mem::replace(expr, Expr::int(0));
                *expr = Expr::unary(lancet_core::UnaryOp::Plus, e);
            }
        }
    }
}

impl Oracle for Stepwise {
    fn name(&self) -> &'static str {
        "stepwise"
    }

    fn description(&self) -> &'static str {
        "stepwise materialization: a query built in steps over earlier steps returns the same rows in one statement (WITH chain or nested derived tables) as with each step materialized alone into a temporary table"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let pool = cx.memo.of::<Pool>(self.name()).steps.clone();
        let (select, reads, columns) = self.build_step(cx, &pool)?;
        // The steps it needs, all the way down, in order.
        let mut needed: Vec<usize> = Vec::new();
        let mut todo = reads.clone();
        while let Some(i) = todo.pop() {
            if !needed.contains(&i) {
                needed.push(i);
                todo.extend(pool[i].reads.iter().copied());
            }
        }
        needed.sort_unstable();
        let steps: Vec<NamedStep> = needed
            .iter()
            .map(|&id| NamedStep {
                id,
                query: pool[id].query.clone(),
            })
            .collect();
        // Does it run, and return rows? Asked of the derived-table form.
        let defs: BTreeMap<String, Query> = steps
            .iter()
            .map(|s| (NamedStep::table_name(s.id), s.query.clone()))
            .collect();
        let mut probe = Query::select(select.clone());
        inline_query(&mut probe, &defs, DerivedForm::Subquery);
        let count = Query::select(Select {
            items: vec![item(Expr::CountStar)],
            from: Some(FromClause {
                first: TableFactor::Derived {
                    query: Box::new(probe),
                    alias: "lancet_probe".into(),
                    lateral: false,
                    form: DerivedForm::Subquery,
                },
                joins: vec![],
            }),
            ..Select::default()
        });
        let rows = cx.data.fetch(&count).ok()?;
        let count = match rows.first().and_then(|r| r.first()) {
            Some(lancet_core::Value::Integer(n)) => u64::try_from(*n).unwrap_or(0),
            _ => 0,
        };
        let nonempty = count > 0;
        let memo = cx.memo.of::<Pool>(self.name());
        if !nonempty && !cx.rng.random_bool(EMPTY_KEPT) {
            return None;
        }
        if memo.steps.len() < MAX_POOL {
            memo.steps.push(PoolStep {
                query: Query::select(select.clone()),
                columns,
                depth: 1 + reads.iter().map(|&i| pool[i].depth).max().unwrap_or(0),
                reads,
                nonempty,
                rows: count,
            });
        }
        let cte = cx.rng.random_bool(0.5);
        Some(Case::new(self.name(), select).and_inputs(Steps { steps, cte }))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let inputs = case.inputs::<Steps>()?;
        let (all_steps, cte) = (&inputs.steps, inputs.cte);
        // Only the steps the last one reads, all the way down (a reduced
        // case may read fewer than it was drawn with).
        let steps = needed_steps(&case.query, all_steps);
        let steps = &steps[..];
        let mut temp: BTreeMap<String, String> = BTreeMap::new();
        let mut out = Vec::new();
        for s in steps {
            let mut q = s.query.clone();
            q.rename_tables(&|n| temp.get(n).cloned());
            // Named by its text (its inputs' names included), so that a
            // session's table of that name holds exactly these rows.
            let name = format!(
                "lancet_m{:016x}",
                lancet_core::fault::stable_hash(&format!("{q:?}"))
            );
            // Two steps of the same text are one table.
            if !temp.values().any(|n| *n == name) {
                out.push(OracleQuery::materialized(&name, q));
            }
            temp.insert(NamedStep::table_name(s.id), name);
        }
        let mut reference = Query::select(case.query.clone());
        reference.rename_tables(&|n| temp.get(n).cloned());
        out.push(OracleQuery::new("steps materialized", reference));
        let defs: BTreeMap<String, Query> = steps
            .iter()
            .map(|s| (NamedStep::table_name(s.id), s.query.clone()))
            .collect();
        let mut optimized = Query::select(case.query.clone());
        let (form, role) = if cte {
            (DerivedForm::Cte, "one statement, WITH chain")
        } else {
            (
                DerivedForm::Subquery,
                "one statement, nested derived tables",
            )
        };
        inline_query(&mut optimized, &defs, form);
        out.push(OracleQuery::new(role, optimized));
        Ok(out)
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        multiset_verdict(RELATION, results)
    }

    /// The last step shrinks like a TLP query (its select list only where
    /// it is plain rows), earlier steps likewise but keeping their select
    /// lists, and steps no longer read drop out. Every candidate is
    /// rebuilt into both forms, which stay equal by construction.
    fn shrink(&self, case: &Case) -> Vec<Case> {
        let items = if case.query.distinct || !case.query.group_by.is_empty() {
            ItemPolicy::Fixed
        } else {
            ItemPolicy::Free
        };
        let policy = CasePolicy {
            predicate: false,
            ..CasePolicy::with_items(items)
        };
        let mut out = lancet_core::shrink::case_variants(case, &policy);
        let Ok(inputs) = case.inputs::<Steps>() else {
            return out;
        };
        let (steps, cte) = (&inputs.steps, inputs.cte);
        // Steps the last one no longer reads go; every step shrinks like
        // the last (joins dropped, WHERE simplified), but keeps its select
        // list, which later steps read by position.
        let steps = needed_steps(&case.query, steps);
        let step_policy = CasePolicy {
            predicate: false,
            ..CasePolicy::with_items(ItemPolicy::Fixed)
        };
        for (i, s) in steps.iter().enumerate() {
            let SetExpr::Select(select) = &s.query.body else {
                continue;
            };
            let alone = Case::new(self.name(), (**select).clone());
            for variant in lancet_core::shrink::case_variants(&alone, &step_policy) {
                let mut simpler = steps.clone();
                simpler[i].query = Query::select(variant.query);
                out.push(case.with_inputs(Steps {
                    steps: simpler,
                    cte,
                }));
            }
        }
        out
    }

    fn planted_fault(&self) -> lancet_core::fault::Fault {
        std::sync::Arc::new(crate::transform::DropRowInDerived { period: 3 })
    }

    fn all_off_is_no_witness(&self) -> Option<&'static str> {
        Some(
            "with every optimization off the one statement is evaluated step by step, as the \
             materialized steps are, so the relation holds there even when both sides are wrong",
        )
    }
}
