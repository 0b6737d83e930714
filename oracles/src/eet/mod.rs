//! Equivalent expression transformation (after EET, OSDI'24): a query
//! and the same query with one to three of its expressions, at any
//! position (select list, ON, WHERE, GROUP BY, HAVING, aggregate
//! arguments, CASE arms, subqueries and derived tables, and the ORDER BY
//! of a grouped query's first rows, [`order`]), each replaced by an
//! equivalent one ([`transformation`]). Both must return the same multiset of rows.
//! Where a transformation may go and what it may read is worked out per
//! position ([`sites`]) and per dialect ([`draw`]); docs/oracles.md
//! (*eet*) states each transformation's precondition.

mod draw;
pub mod order;
pub mod sites;
pub mod transformation;

use self::draw::{draw, Position};
use self::order::{as_query, Top};
use self::sites::{replace_at, sites, walk, Phase, Visit};
use self::transformation::Transformation;
use crate::partition::{base_where, exact_groups, item, multiset_verdict, some_columns};
use lancet_core::fault::{Fault, FaultedQuery, FaultedResult, PlantedFault};
use lancet_core::{
    BinaryOp, Case, CaseError, Expr, GenerateContext, Oracle, OracleQuery, Row, Scope, Select,
    SetExpr, Verdict,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

pub struct Eet;

/// One transformation at one expression position (its number in
/// [`sites::walk`]'s order, in the query as the earlier edits left it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Edit {
    pub at: usize,
    pub transformation: Transformation,
}

/// What eet draws beside its base query: the edits, applied in order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Edits {
    pub edits: Vec<Edit>,
    /// A grouped base query's first rows in a total order, if drawn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<Top>,
}

impl lancet_core::OracleInputs for Edits {
    const KIND: &'static str = "expression-transformations";
    const WHAT: &'static str = "expression transformations";
}

const RELATION: &str = "RS(transformed) = RS(original), as multisets of whole rows";

/// At most this many edits per case.
const MAX_EDITS: usize = 3;

/// `base` with `edits` applied in order, or why one does not apply.
pub fn apply_edits(base: &Select, edits: &[Edit]) -> Result<Select, String> {
    let mut s = base.clone();
    for edit in edits {
        replace_at(&mut s, edit.at, &mut |e| edit.transformation.apply(e))?;
    }
    Ok(s)
}

impl Eet {
    /// A base query over a generated FROM clause: plain rows with
    /// generated expressions, DISTINCT rows, or groups in exact forms
    /// with counts (of rows and of a generated expression), MIN or MAX
    /// and a HAVING on the count.
    fn base(&self, cx: &mut GenerateContext<'_>) -> Option<(Select, Scope)> {
        let rng = &mut *cx.rng;
        let generator = &mut *cx.generator;
        let (from, scope) = generator.from_clause(rng);
        if scope.columns.is_empty() {
            return None;
        }
        let mut select = Select {
            selection: base_where(rng, generator, &scope).or_else(|| {
                rng.random_bool(0.6)
                    .then(|| generator.predicate(rng, &scope))
            }),
            from: Some(from),
            ..Select::default()
        };
        let columns = some_columns(rng, &scope, 3);
        match rng.random_range(0..100) {
            0..60 => {
                let mut items = columns;
                for _ in 0..rng.random_range(1..=2) {
                    items.push(generator.expression(rng, &scope));
                }
                select.items = items.into_iter().map(item).collect();
            }
            60..75 => {
                select.distinct = true;
                let mut items = columns;
                if rng.random_bool(0.5) {
                    items.push(generator.expression(rng, &scope));
                }
                select.items = items
                    .into_iter()
                    .map(|e| item(generator.with_exact_equality(e)))
                    .collect();
            }
            _ => {
                (select.items, select.group_by) = exact_groups(rng, generator, &scope, columns)?;
                if rng.random_bool(0.5) {
                    let e = generator.expression(rng, &scope);
                    select.items.push(item(Expr::func("COUNT", vec![e])));
                }
                if rng.random_bool(0.4) {
                    let op = *BinaryOp::COMPARISONS[..6].choose(rng)?;
                    let count = Expr::int(rng.random_range(0..3));
                    select.having = Some(Expr::binary(op, Expr::CountStar, count));
                }
            }
        }
        Some((select, scope))
    }
}

impl Oracle for Eet {
    fn name(&self) -> &'static str {
        "eet"
    }

    fn description(&self) -> &'static str {
        "equivalent expression transformation: a query and the same query with expressions anywhere in it (select list, ON, WHERE, GROUP BY, HAVING, ORDER BY, aggregate arguments, CASE arms, subqueries) replaced by equivalent ones (redundant CASE branches, scalar subqueries, AND TRUE, OR FALSE, NOT NOT, + 0, * 1) return the same multiset"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let (base, scope) = self.base(cx)?;
        let mut top = (!base.group_by.is_empty() && cx.rng.random_bool(0.4)).then(|| Top {
            limit: cx.rng.random_range(1..=4),
            descending: cx.rng.random_bool(0.5),
            by: Vec::new(),
        });
        let want = cx.rng.random_range(1..=MAX_EDITS);
        let mut edits: Vec<Edit> = Vec::new();
        let mut current = base.clone();
        for _ in 0..want * 4 {
            if edits.len() == want {
                break;
            }
            let is_aggregate = |n: &str| cx.generator.is_aggregate(n);
            let open: Vec<(usize, Expr, sites::Site)> = sites(&current, &is_aggregate)
                .into_iter()
                .enumerate()
                .filter(|(_, (_, site))| site.phase != Phase::Frozen)
                .map(|(k, (e, site))| (k, e, site))
                .collect();
            let Some((at, node, site)) = open.choose(cx.rng).cloned() else {
                break;
            };
            let pos = Position {
                node: &node,
                site,
                from: base.from.as_ref(),
                scope: &scope,
            };
            let Some(transformation) = draw(cx, &pos) else {
                continue;
            };
            let edit = Edit { at, transformation };
            if let Ok(next) = apply_edits(&current, std::slice::from_ref(&edit)) {
                current = next;
                edits.push(edit);
            }
        }
        if let Some(top) = top.as_mut().filter(|_| cx.rng.random_bool(0.5)) {
            top.by = order::draw_keys(cx, &current, &scope);
        }
        if edits.is_empty() && top.as_ref().is_none_or(|t| t.by.is_empty()) {
            return None;
        }
        Some(Case::new(self.name(), base).and_inputs(Edits { edits, top }))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let inputs = case.inputs::<Edits>()?;
        let edits = &inputs.edits;
        let transformed = apply_edits(&case.query, edits).map_err(|e| case.unfit(e))?;
        let top = inputs.top.as_ref();
        let original = as_query(case.query.clone(), top, false).map_err(|e| case.unfit(e))?;
        let transformed = as_query(transformed, top, true).map_err(|e| case.unfit(e))?;
        let names: Vec<String> = edits
            .iter()
            .map(|e| format!("{} at {}", e.transformation.name(), e.at))
            .chain(top.map(Top::names).unwrap_or_default())
            .collect();
        Ok(vec![
            OracleQuery::new("original", original),
            OracleQuery::new(&format!("transformed: {}", names.join(", ")), transformed),
        ])
    }

    fn compare(&self, _case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        multiset_verdict(RELATION, results)
    }

    /// Edits are numbered in the query as the earlier ones left it, and
    /// their preconditions were checked against the base query as drawn:
    /// the base stays as it is, and a case shrinks by dropping its last
    /// edit (any prefix of the edits keeps the relation) or its
    /// transformed sort keys (which only wrap items, as drawn or with
    /// fewer edits), as long as one transformation is left.
    fn shrink(&self, case: &Case) -> Vec<Case> {
        let Ok(e) = case.inputs::<Edits>() else {
            return Vec::new();
        };
        let sorted_by = e
            .top
            .as_ref()
            .is_some_and(|t| t.by.iter().any(Option::is_some));
        let mut smaller = Vec::new();
        if e.edits.len() > 1 || (!e.edits.is_empty() && sorted_by) {
            let mut fewer = e.edits.clone();
            fewer.pop();
            smaller.push(Edits {
                edits: fewer,
                top: e.top.clone(),
            });
        }
        if sorted_by && !e.edits.is_empty() {
            smaller.push(Edits {
                edits: e.edits.clone(),
                top: e.top.clone().map(|t| Top {
                    by: Vec::new(),
                    ..t
                }),
            });
        }
        smaller.into_iter().map(|i| case.with_inputs(i)).collect()
    }

    /// `+ 0` and `* 1` rest on a column's integer type: the tables a case
    /// reads keep their CREATE TABLE.
    fn case_depends_on_schema(&self) -> bool {
        true
    }

    fn planted_fault(&self) -> Fault {
        std::sync::Arc::new(DropRowWithRedundantCase { period: 2 })
    }
}

/// Drops the first row of one query in `period` among those holding
/// (in its select or its ORDER BY) a CASE with a redundant branch (its one result repeated, or NULL) or a
/// scalar subquery without FROM, as an engine that simplified such
/// expressions wrongly would: the original query has none of eet's.
#[derive(Debug)]
pub struct DropRowWithRedundantCase {
    pub period: u64,
}

impl PlantedFault for DropRowWithRedundantCase {
    fn name(&self) -> &'static str {
        "drop-row-with-redundant-case"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        let SetExpr::Select(s) = &q.query.query.body else {
            return;
        };
        let mut found = false;
        walk(&mut (**s).clone(), &|_| false, &mut |_, e, _| {
            found |= is_redundant(e);
            if found {
                Visit::Stop
            } else {
                Visit::Continue
            }
        });
        found |= q
            .query
            .query
            .order_by
            .iter()
            .any(|o| o.expr.any(&is_redundant));
        if found && !r.rows.is_empty() && q.hit(self.period) {
            r.rows.remove(0);
        }
    }
}

fn is_redundant(e: &Expr) -> bool {
    let null = Expr::lit(lancet_core::Value::Null);
    match e {
        Expr::Case {
            operand: None,
            branches,
            otherwise,
        } if branches.len() == 1 => {
            let then = &branches[0].1;
            match otherwise.as_deref() {
                None => true,
                Some(other) => other == then || *then == null,
            }
        }
        Expr::Subquery(q) => matches!(&q.body, SetExpr::Select(s) if s.from.is_none()),
        _ => false,
    }
}
