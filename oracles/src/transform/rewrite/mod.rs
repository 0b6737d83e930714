//! Query transformations whose effect on the result is known in advance
//! (after queryFuzz and GraphGenie; docs/oracles.md, *Equivalence and
//! containment*): each [`Step`] rewrites a query into one whose rows are
//! equal to, a subset of or a superset of the original's, as multisets or
//! as sets. Written once against the core AST; a step that a dialect lacks
//! (`STRAIGHT_JOIN`) or that needs a dialect guarantee (integer columns
//! that hold only integers) is drawn only where the dialect declares it.
//!
//! Every step checks its own preconditions when it is applied, so a chain
//! applied to any query (a reduced one included) either fails or yields a
//! query that stands in the chain's relation by construction.

mod aliases;
mod exprs;
mod joins;

pub use aliases::rename_aliases;
pub use exprs::{truth_nodes, yields_truth, Rewrite};

use lancet_core::ast::{Expr, Query, Select, SelectItem, SetExpr, SetOperator, TableFactor};
use serde::{Deserialize, Serialize};

/// How the transformed query's rows relate to the original's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Containment {
    /// `RS(Q') = RS(Q)`
    Equal,
    /// `RS(Q') ⊆ RS(Q)`
    Subset,
    /// `RS(Q') ⊇ RS(Q)`
    Superset,
}

/// A relation between the results of a query and its transformation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Relation {
    pub containment: Containment,
    /// Whether it holds only for sets (duplicates do not count).
    pub sets_only: bool,
}

impl Relation {
    pub const EQUAL: Relation = Relation {
        containment: Containment::Equal,
        sets_only: false,
    };

    const fn of(containment: Containment, sets_only: bool) -> Relation {
        Relation {
            containment,
            sets_only,
        }
    }

    /// The relation of a chain: this one, then `next`. `None` where a
    /// subset meets a superset, which says nothing.
    pub fn then(self, next: Relation) -> Option<Relation> {
        use Containment::*;
        let containment = match (self.containment, next.containment) {
            (Equal, c) | (c, Equal) => c,
            (Subset, Subset) => Subset,
            (Superset, Superset) => Superset,
            _ => return None,
        };
        Some(Relation::of(containment, self.sets_only || next.sets_only))
    }

    /// As reports state it.
    pub fn describe(self) -> String {
        let op = match self.containment {
            Containment::Equal => "=",
            Containment::Subset => "⊆",
            Containment::Superset => "⊇",
        };
        let kind = if self.sets_only { "sets" } else { "multisets" };
        format!("RS(transformed) {op} RS(original), as {kind} of whole rows")
    }
}

/// One transformation, with what it needs to be applied again to the same
/// query (or a reduced one). Join indexes count the joins of the top-level
/// FROM clause; factor 0 is its first table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// `A JOIN B ON c ...` -> `B JOIN A ON c ...` (the first join, inner
    /// or cross; no NATURAL, USING or LATERAL). `=`.
    SwapJoinOperands,
    /// An inner join's ON condition moved to WHERE, the join written as a
    /// comma or CROSS JOIN; no RIGHT or FULL join after it. `=`.
    OnToWhere { join: usize, comma: bool },
    /// The last conjunct of an inner join's `ON a AND b` moved to WHERE. `=`.
    SplitOn { join: usize },
    /// An inner join written as MySQL's STRAIGHT_JOIN (join order fixed). `=`.
    StraightJoin { join: usize },
    /// A join of a base table to itself on a unique column, appended: LEFT
    /// (each row meets at most itself), or inner when the column is NOT
    /// NULL and the table's rows are never NULL-extended. `=`.
    SelfJoin {
        factor: usize,
        column: String,
        inner: bool,
    },
    /// Every top-level occurrence of an integer column `c` read as `c + 0`. `=`.
    AddZero { column: Expr },
    /// An equivalence under three-valued logic at the `node`-th truth
    /// position of WHERE (see [`truth_nodes`]). `=`.
    Rewrite { node: usize, rewrite: Rewrite },
    /// `WHERE w` -> `WHERE w AND p` (monotone queries). `⊆`.
    AddConjunct { predicate: Expr },
    /// `WHERE w` -> `WHERE w AND EXISTS (SELECT 1 FROM table AS lancet_e
    /// WHERE p)` (monotone queries). `⊆`.
    AddExists { table: String, predicate: Expr },
    /// A LEFT or RIGHT join made inner; no RIGHT or FULL join after it
    /// (monotone queries). `⊆`.
    OuterToInner { join: usize },
    /// An inner join made LEFT (or RIGHT); no RIGHT or FULL join after it
    /// (monotone queries). `⊇`.
    InnerToOuter { join: usize, right: bool },
    /// One conjunct of WHERE dropped (all of WHERE if it has one). `⊇`.
    DropConjunct { conjunct: usize },
    /// `WHERE w` -> `WHERE w OR p` (monotone queries). `⊇`.
    AddDisjunct { predicate: Expr },
    /// An inner join's ON condition dropped: a CROSS JOIN (monotone
    /// queries; no RIGHT or FULL join after it). `⊇`.
    DropJoinCondition { join: usize },
    /// Every alias (and every unaliased table's exposed name) renamed,
    /// everywhere in the query. `=`.
    RenameAliases,
    /// The query read through a derived table or a CTE. `=`.
    Wrap { cte: bool },
    /// `Q op Q`: UNION ALL (`⊇`), UNION and INTERSECT (`=` as sets when
    /// the select list is in exact form, else `⊆` as sets).
    SelfSetOperation { op: SetOperator, exact: bool },
    /// `Q EXCEPT (Q AND p)`. `⊆` as sets.
    ExceptFiltered { predicate: Expr },
}

impl Step {
    /// The step's name in reports and statistics.
    pub fn name(&self) -> &'static str {
        match self {
            Step::SwapJoinOperands => "swap-join-operands",
            Step::OnToWhere { comma: true, .. } => "on-to-where-comma",
            Step::OnToWhere { comma: false, .. } => "on-to-where-cross",
            Step::SplitOn { .. } => "split-on",
            Step::StraightJoin { .. } => "straight-join",
            Step::SelfJoin { inner: true, .. } => "self-join-inner",
            Step::SelfJoin { inner: false, .. } => "self-join-left",
            Step::AddZero { .. } => "add-zero",
            Step::Rewrite { rewrite, .. } => rewrite.name(),
            Step::AddConjunct { .. } => "add-conjunct",
            Step::AddExists { .. } => "add-exists",
            Step::OuterToInner { .. } => "outer-to-inner",
            Step::InnerToOuter { right: false, .. } => "inner-to-left",
            Step::InnerToOuter { right: true, .. } => "inner-to-right",
            Step::DropConjunct { .. } => "drop-conjunct",
            Step::AddDisjunct { .. } => "add-disjunct",
            Step::DropJoinCondition { .. } => "drop-join-condition",
            Step::RenameAliases => "rename-aliases",
            Step::Wrap { cte: false } => "wrap-derived",
            Step::Wrap { cte: true } => "wrap-cte",
            Step::SelfSetOperation { op, .. } => match op {
                SetOperator::UnionAll => "self-union-all",
                SetOperator::Union => "self-union",
                SetOperator::Intersect => "self-intersect",
                SetOperator::Except => "self-except",
            },
            Step::ExceptFiltered { .. } => "except-filtered",
        }
    }

    /// The relation this step alone establishes.
    pub fn relation(&self) -> Relation {
        use Containment::*;
        match self {
            Step::AddConjunct { .. } | Step::AddExists { .. } | Step::OuterToInner { .. } => {
                Relation::of(Subset, false)
            }
            Step::InnerToOuter { .. }
            | Step::DropConjunct { .. }
            | Step::AddDisjunct { .. }
            | Step::DropJoinCondition { .. } => Relation::of(Superset, false),
            Step::SelfSetOperation { op, exact } => match op {
                SetOperator::UnionAll => Relation::of(Superset, false),
                _ if *exact => Relation::of(Equal, true),
                _ => Relation::of(Subset, true),
            },
            Step::ExceptFiltered { .. } => Relation::of(Subset, true),
            _ => Relation::EQUAL,
        }
    }

    /// Whether the step needs a monotone query (rows only added by more
    /// input rows: no aggregates, GROUP BY or HAVING).
    pub fn needs_monotone(&self) -> bool {
        self.relation().containment != Containment::Equal
            && !matches!(
                self,
                Step::SelfSetOperation { .. } | Step::ExceptFiltered { .. }
            )
    }

    /// Applies the step to `query`; `Err` says why it does not apply.
    pub fn apply(&self, query: &mut Query, state: &mut ChainState) -> Result<(), String> {
        match self {
            Step::RenameAliases => {
                rename_aliases(query);
                Ok(())
            }
            Step::Wrap { cte } => {
                wrap(query, *cte, state);
                Ok(())
            }
            Step::SelfSetOperation { op, .. } => self_set_operation(query, *op, None),
            Step::ExceptFiltered { predicate } => {
                self_set_operation(query, SetOperator::Except, Some(predicate))
            }
            _ => {
                let select = top_select(query)?;
                if self.needs_monotone() && !is_monotone(select) {
                    return Err("the query is not monotone".into());
                }
                self.apply_to_select(select)
            }
        }
    }

    fn apply_to_select(&self, s: &mut Select) -> Result<(), String> {
        match self {
            Step::SwapJoinOperands => joins::swap_first(s),
            Step::OnToWhere { join, comma } => joins::on_to_where(s, *join, *comma),
            Step::SplitOn { join } => joins::split_on(s, *join),
            Step::StraightJoin { join } => joins::straight(s, *join),
            Step::SelfJoin {
                factor,
                column,
                inner,
            } => joins::self_join(s, *factor, column, *inner),
            Step::AddZero { column } => exprs::add_zero(s, column),
            Step::Rewrite { node, rewrite } => exprs::rewrite_where(s, *node, *rewrite),
            Step::AddConjunct { predicate } => {
                add_conjunct(s, predicate.clone());
                Ok(())
            }
            Step::AddExists { table, predicate } => {
                let query = Query::select(Select {
                    items: vec![SelectItem::Expr {
                        expr: Expr::int(1),
                        alias: None,
                    }],
                    from: Some(lancet_core::ast::FromClause::table(
                        table,
                        Some(EXISTS_ALIAS),
                    )),
                    selection: Some(predicate.clone()),
                    ..Select::default()
                });
                add_conjunct(
                    s,
                    Expr::Exists {
                        query: Box::new(query),
                        negated: false,
                    },
                );
                Ok(())
            }
            Step::OuterToInner { join } => joins::outer_to_inner(s, *join),
            Step::InnerToOuter { join, right } => joins::inner_to_outer(s, *join, *right),
            Step::DropConjunct { conjunct } => drop_conjunct(s, *conjunct),
            Step::AddDisjunct { predicate } => {
                let w = s.selection.take().ok_or("no WHERE to widen")?;
                s.selection = Some(Expr::binary(
                    lancet_core::ast::BinaryOp::Or,
                    w,
                    predicate.clone(),
                ));
                Ok(())
            }
            Step::DropJoinCondition { join } => joins::drop_condition(s, *join),
            Step::RenameAliases
            | Step::Wrap { .. }
            | Step::SelfSetOperation { .. }
            | Step::ExceptFiltered { .. } => unreachable!("applied to the whole query"),
        }
    }
}

/// The alias of the table an [`Step::AddExists`] subquery reads: the
/// predicate refers to its columns by it.
pub const EXISTS_ALIAS: &str = "lancet_e";
/// The alias prefix of [`Step::SelfJoin`]'s second copy of a table.
pub const SELF_JOIN_ALIAS: &str = "lancet_s";

/// What a chain's steps share while they are applied: how many wrappers
/// came before (each gets a name of its own).
#[derive(Clone, Debug, Default)]
pub struct ChainState {
    wraps: usize,
}

/// The relation of a chain, from its steps' relations alone (no query
/// needed); `None` where a subset meets a superset.
pub fn chain_relation(steps: &[Step]) -> Option<Relation> {
    steps
        .iter()
        .try_fold(Relation::EQUAL, |r, s| r.then(s.relation()))
}

/// Applies `steps` in order to `base`: the transformed query and the
/// chain's relation to `base`.
pub fn apply_chain(base: &Select, steps: &[Step]) -> Result<(Query, Relation), String> {
    let mut query = Query::select(base.clone());
    let mut state = ChainState::default();
    let mut relation = Relation::EQUAL;
    for step in steps {
        step.apply(&mut query, &mut state)
            .map_err(|e| format!("{}: {e}", step.name()))?;
        relation = relation
            .then(step.relation())
            .ok_or_else(|| format!("{} mixes ⊆ and ⊇", step.name()))?;
    }
    Ok((query, relation))
}

/// The query's top-level SELECT, if it is one (no set operation, ORDER
/// BY or LIMIT around it).
pub fn top_select(query: &mut Query) -> Result<&mut Select, String> {
    if !query.order_by.is_empty() || query.limit.is_some() || query.offset.is_some() {
        return Err("the query has ORDER BY or LIMIT".into());
    }
    match &mut query.body {
        SetExpr::Select(s) => Ok(s),
        SetExpr::SetOp { .. } => Err("the query is a set operation".into()),
    }
}

/// Aggregate functions of every dialect lancet knows, for telling a
/// monotone query without asking the provider.
const AGGREGATES: &[&str] = &[
    "COUNT",
    "SUM",
    "AVG",
    "MIN",
    "MAX",
    "TOTAL",
    "GROUP_CONCAT",
    "STRING_AGG",
    "ARRAY_AGG",
    "BOOL_AND",
    "BOOL_OR",
    "EVERY",
    "BIT_AND",
    "BIT_OR",
    "BIT_XOR",
    "STDDEV",
    "VARIANCE",
    "JSON_GROUP_ARRAY",
    "JSON_ARRAYAGG",
];

/// Whether more input rows can only add output rows: no aggregate, GROUP
/// BY, HAVING or window function.
pub fn is_monotone(s: &Select) -> bool {
    let aggregate = |name: &str| AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name));
    s.group_by.is_empty()
        && !s.group_by_all
        && s.having.is_none()
        && s.qualify.is_none()
        && s.items
            .iter()
            .flat_map(SelectItem::exprs)
            .all(|expr| !expr.contains_aggregate(&aggregate) && !contains_window(expr))
}

fn contains_window(e: &Expr) -> bool {
    matches!(e, Expr::Window { .. }) || e.children().into_iter().any(contains_window)
}

fn add_conjunct(s: &mut Select, p: Expr) {
    s.selection = Some(match s.selection.take() {
        Some(w) => Expr::and(w, p),
        None => p,
    });
}

/// The conjuncts of `e`, flattening nested ANDs.
pub fn conjuncts(e: &Expr) -> Vec<&Expr> {
    match e {
        Expr::Binary {
            op: lancet_core::ast::BinaryOp::And,
            left,
            right,
        } => {
            let mut v = conjuncts(left);
            v.extend(conjuncts(right));
            v
        }
        other => vec![other],
    }
}

fn drop_conjunct(s: &mut Select, k: usize) -> Result<(), String> {
    let w = s.selection.as_ref().ok_or("no WHERE")?;
    let parts = conjuncts(w);
    if parts.len() == 1 {
        s.selection = None;
        return Ok(());
    }
    if k >= parts.len() {
        return Err(format!("WHERE has {} conjuncts", parts.len()));
    }
    let kept: Vec<Expr> = parts
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != k)
        .map(|(_, e)| (*e).clone())
        .collect();
    s.selection = kept.into_iter().reduce(Expr::and);
    Ok(())
}

/// The items aliased `c0`, `c1`, ...: the columns a derived table or a
/// set operation's result exposes.
fn alias_items(s: &mut Select) -> Result<usize, String> {
    for (i, item) in s.items.iter_mut().enumerate() {
        match item {
            SelectItem::Expr { alias, .. } => *alias = Some(format!("c{i}")),
            SelectItem::Wildcard
            | SelectItem::WildcardExcluding(_)
            | SelectItem::WildcardReplacing(_) => return Err("the select list has *".into()),
        }
    }
    Ok(s.items.len())
}

/// The number of columns `query` returns, named `c0`, `c1`, ... (aliases
/// given where the query is a plain SELECT).
fn exposed_columns(query: &mut Query) -> Result<usize, String> {
    match &mut query.body {
        SetExpr::Select(s) => alias_items(s),
        SetExpr::SetOp { .. } => {
            // Set operations are built by this module with aliased arms.
            let mut first = &query.body;
            while let SetExpr::SetOp { left, .. } = first {
                first = left;
            }
            match first {
                SetExpr::Select(s) => Ok(s.items.len()),
                SetExpr::SetOp { .. } => unreachable!("the loop went left to a SELECT"),
            }
        }
    }
}

fn wrap(query: &mut Query, cte: bool, state: &mut ChainState) {
    let alias = format!("lancet_w{}", state.wraps);
    state.wraps += 1;
    let n = exposed_columns(query).unwrap_or(0);
    let inner = std::mem::replace(query, Query::select(Select::default()));
    *query = Query::select(Select {
        items: (0..n)
            .map(|i| SelectItem::Expr {
                expr: Expr::column(Some(&alias), &format!("c{i}")),
                alias: None,
            })
            .collect(),
        from: Some(lancet_core::ast::FromClause {
            first: TableFactor::Derived {
                query: Box::new(inner),
                alias,
                lateral: false,
                form: if cte {
                    lancet_core::ast::DerivedForm::Cte
                } else {
                    lancet_core::ast::DerivedForm::Subquery
                },
            },
            joins: vec![],
        }),
        ..Select::default()
    });
}

fn self_set_operation(
    query: &mut Query,
    op: SetOperator,
    filter: Option<&Expr>,
) -> Result<(), String> {
    let s = top_select(query)?;
    alias_items(s)?;
    let left = s.clone();
    let mut right = s.clone();
    if let Some(p) = filter {
        add_conjunct(&mut right, p.clone());
    }
    *query = Query::set_operation(op, vec![left, right]);
    Ok(())
}
