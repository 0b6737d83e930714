//! Which findings are one bug. A signature ([`crate::signature`])
//! tells findings apart by the whole shape of their case and by oracle, so
//! one bug reached through two oracles, two table engines or two query
//! shapes is several signatures. A bug is what stays the same among them
//! once the case is reduced: its *core*, the reduced query and predicate
//! with the oracle, every table, column and alias, every literal but NULL,
//! and the direction of every comparison abstracted; plus, where lancet
//! knows them, the knob whose change alone hides it and the release that
//! fixed it. Findings whose cores are equal are grouped as one bug in the
//! findings index, `lancet findings`, the store and the report.
//!
//! The core is only as good as the reduction: an unreduced case keeps
//! everything its generator drew, so it is usually a bug of its own until
//! it is reduced.

use crate::findings::{Finding, FindingKind};
use lancet_core::print::ToSql;
use lancet_core::{BinaryOp, Dialect, Expr};
use lancet_engine::Catalog;
use serde_json::Value as Json;
use std::collections::BTreeSet;

/// What a finding is an instance of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BugCore {
    /// Equal for findings of one bug: a hash of the abstracted case.
    pub key: String,
    /// The SQL constructs of a logic finding's case (see [`core_of`]);
    /// empty for other findings.
    pub constructs: Vec<String>,
    /// For people: the constructs the key is made of, and the finding's
    /// own reduced query with its predicate in place (`SELECT * FROM t0
    /// WHERE (c0 >= ALL (SELECT ...)) IS NULL`); the error (and the shape
    /// of the statement that raised it first); or how the DBMS died.
    pub text: String,
}

/// The core of `f`, which `signature` (its signature, as
/// [`crate::signature`] computed it) stands for where the case says
/// nothing more (crashes and hangs are known by how the DBMS died).
pub fn core_of(f: &Finding, signature: &str, dialect: Dialect, catalog: &Catalog) -> BugCore {
    match (&f.case, f.kind) {
        (Some(case), kind) if kind.is_relation() => {
            let inputs = serde_json::to_value(case)
                .ok()
                .and_then(|c| c.get("inputs").cloned())
                .unwrap_or(Json::Null);
            let constructs = case_key(&case.query, case.predicate.as_ref(), &inputs);
            let key = format!("{}|{constructs}", kind.name());
            let mut shown = case.query.clone();
            if shown.items.is_empty() {
                // The oracle selects what it compares; shown alone, `*`.
                shown.items.push(lancet_core::SelectItem::Wildcard);
            }
            if let Some(p) = &case.predicate {
                shown.selection = Some(match shown.selection.take() {
                    Some(w) => Expr::Binary {
                        op: BinaryOp::And,
                        left: Box::new(w),
                        right: Box::new(p.clone()),
                    },
                    None => p.clone(),
                });
            }
            BugCore {
                key: hash(&key),
                constructs: constructs.split_whitespace().map(str::to_string).collect(),
                text: format!(
                    "-- constructs: {}\n{}",
                    if constructs.is_empty() {
                        "none"
                    } else {
                        &constructs
                    },
                    shown.to_sql(dialect)
                ),
            }
        }
        (_, FindingKind::Crash | FindingKind::Hang) => BugCore {
            key: signature.to_string(),
            constructs: Vec::new(),
            text: format!(
                "{}: {}",
                f.kind.name(),
                f.error
                    .as_ref()
                    // Its first line: DuckDB and PostgreSQL add the query's
                    // text and a caret after it.
                    .map(|e| {
                        lancet_core::connection::message_shape(
                            e.message.lines().next().unwrap_or(""),
                        )
                    })
                    .unwrap_or_default()
            ),
        },
        // An error is known by what it says, not by the statement that
        // raised it: one refusal ("Cannot copy BoundSubqueryExpression")
        // reached through five query shapes is one bug (seen with lancet
        // on DuckDB 1.5.6: five findings, five bugs, before).
        _ => {
            let code = f
                .error
                .as_ref()
                .and_then(|e| e.code.clone())
                .unwrap_or_default();
            let message = f
                .error
                .as_ref()
                // Its first line: DuckDB and PostgreSQL add the query's
                // text and a caret after it.
                .map(|e| {
                    lancet_core::connection::message_shape(e.message.lines().next().unwrap_or(""))
                })
                .unwrap_or_default();
            let shape = f
                .queries
                .first()
                .map(|q| crate::signature::statement_shape(&q.sql, dialect, catalog))
                .unwrap_or_default();
            BugCore {
                key: hash(&format!("{}|{code}|{message}", f.kind.name())),
                constructs: Vec::new(),
                text: format!("{} {code}: {message} (in: {shape})", f.kind.name()),
            }
        }
    }
}

/// What grouping needs to know of one signature.
pub struct Member<'a> {
    pub signature: &'a str,
    /// `None` for a signature indexed before bugs were grouped: a bug of
    /// its own.
    pub core_key: Option<&'a str>,
    pub constructs: &'a [String],
    /// Whether its smallest reproducer is reduced.
    pub reduced: bool,
    pub hiding_knob: Option<&'a str>,
    pub fixed_in: Option<&'a str>,
}

/// Constructs that join predicates or compare values: a reduced case may
/// need them around the construct a bug is in.
pub const CONNECTIVES: &[&str] = &[
    "Or",
    "Xor",
    "Not",
    "cmp",
    "IsNull",
    "IsBool",
    "IsDistinctFrom",
    "IsNotDistinctFrom",
];

/// The bug of each member, in order. Members with equal cores (and
/// equal knob and release, where known) are one bug. A member also joins
/// the bug whose reduced constructs are all among its own, if exactly one
/// bug is such (counting only the smallest sets: `LIKE` and not also
/// `LIKE OR`), when its own extra constructs may be incidental: an
/// unreduced member's constructs are mostly what its generator drew; a
/// reduced member's extra constructs may only be connectives
/// ([`CONNECTIVES`]), which reduction often must keep for the data to
/// show the bug (`(c LIKE 'a') OR (c = 2)`). A reduced member with
/// another extra construct (a function, a subquery, a join) stays a bug
/// of its own: that construct may be another bug.
pub fn assign_bugs(members: &[Member<'_>]) -> Vec<String> {
    let own: Vec<String> = members
        .iter()
        .map(|m| match m.core_key {
            Some(key) => bug_id(key, m.hiding_knob, m.fixed_in),
            None => m.signature.to_string(),
        })
        .collect();
    // One reduced member per bug: members of one bug share constructs,
    // knob and release, and an index is regrouped on every finding.
    let mut seen = std::collections::HashSet::new();
    let reduced: Vec<usize> = (0..members.len())
        .filter(|&i| members[i].reduced && !members[i].constructs.is_empty())
        .filter(|&i| seen.insert(own[i].as_str()))
        .collect();
    members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            if m.constructs.is_empty() || m.core_key.is_none() {
                return own[i].clone();
            }
            let within = |j: &usize| {
                let r = &members[*j];
                let extra_may_join = |c: &String| {
                    r.constructs.contains(c) || !m.reduced || CONNECTIVES.contains(&c.as_str())
                };
                *j != i
                    && r.hiding_knob == m.hiding_knob
                    && r.fixed_in == m.fixed_in
                    && r.constructs.len() < m.constructs.len()
                    && r.constructs.iter().all(|c| m.constructs.contains(c))
                    && m.constructs.iter().all(extra_may_join)
            };
            let candidates: Vec<usize> = reduced.iter().copied().filter(within).collect();
            let subset = |a: usize, b: usize| {
                let (a, b) = (&members[a].constructs, &members[b].constructs);
                a.len() < b.len() && a.iter().all(|c| b.contains(c))
            };
            let mut bugs: Vec<&String> = candidates
                .iter()
                .filter(|&&j| !candidates.iter().any(|&k| subset(k, j)))
                .map(|&j| &own[j])
                .collect();
            bugs.sort();
            bugs.dedup();
            match bugs.as_slice() {
                [one] => (*one).clone(),
                _ => own[i].clone(),
            }
        })
        .collect()
}

/// The bug of a core, given what else lancet learnt about it: the knob
/// whose change alone hides it and the release that fixed it (either may
/// be unknown). Two findings are one bug when all three agree.
pub fn bug_id(core_key: &str, hiding_knob: Option<&str>, fixed_in: Option<&str>) -> String {
    hash(&format!(
        "{core_key}|{}|{}",
        hiding_knob.unwrap_or(""),
        fixed_in.unwrap_or("")
    ))
}

fn hash(text: &str) -> String {
    format!("{:016x}", crate::signature::fnv(text))
}

/// The key of a relation finding's case: the set of SQL constructs its
/// predicate (and the query's own WHERE) is made of, and the outer and
/// ASOF joins of the FROM clause it ranges over. A set, not a tree: the reducer stops at a local
/// minimum, so one bug reduces to `c LIKE 'B'` in one finding and to
/// `(NULL LIKE NULL) AND NULL` in another; both are the construct LIKE.
/// Only when the predicate holds no construct (a constant or a bare
/// column: the bug is not in it) do the select list, DISTINCT, GROUP BY,
/// HAVING and every join and derived table count; otherwise they are what
/// the oracle built (TLP's aggregate and DISTINCT variants) or what the
/// reducer could not take away.
fn case_key(query: &lancet_core::Select, predicate: Option<&Expr>, inputs: &Json) -> String {
    let json = |v: serde_json::Result<Json>| v.unwrap_or(Json::Null);
    let mut set = BTreeSet::new();
    let filter = [
        json(serde_json::to_value(&query.selection)),
        json(serde_json::to_value(predicate)),
        // What the oracle drew beside the query (transform's added
        // predicates and rewrites): the construct may be there.
        inputs.clone(),
    ];
    for part in &filter {
        constructs(part, Scope::Filter, &mut set);
    }
    // Of the FROM clause only its outer, ASOF and POSITIONAL joins: the derived tables and ON
    // conditions are what the generator drew around the predicate, and
    // the reducer keeps more of them than of the predicate.
    for join in query.from.iter().flat_map(|f| &f.joins) {
        let outer = match join.kind {
            lancet_core::JoinKind::Left => "Left",
            lancet_core::JoinKind::Right => "Right",
            lancet_core::JoinKind::Full => "Full",
            lancet_core::JoinKind::AsOf => "AsOf",
            lancet_core::JoinKind::AsOfLeft => "AsOfLeft",
            lancet_core::JoinKind::Positional => "Positional",
            _ => continue,
        };
        set.insert(format!("join:{outer}"));
    }
    if set.iter().all(|c| c.starts_with("join:")) {
        let rest = [
            json(serde_json::to_value(&query.items)),
            json(serde_json::to_value(&query.group_by)),
            json(serde_json::to_value(&query.having)),
            json(serde_json::to_value(&query.from)),
        ];
        for part in &rest {
            constructs(part, Scope::Whole, &mut set);
        }
        if query.distinct {
            set.insert("distinct".into());
        }
        if !query.group_by.is_empty() {
            set.insert("group-by".into());
        }
    }
    set.into_iter().collect::<Vec<_>>().join(" ")
}

/// Which constructs count: those of a filter, or of the whole query.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Every construct of an expression (the FROM clause's outer joins
    /// are added apart).
    Filter,
    /// Also inner and cross joins and derived tables; not the wrapping
    /// that makes equal values identical for DISTINCT and GROUP BY
    /// (`COLLATE BINARY`, `typeof`), which the oracle adds.
    Whole,
}

/// Adds the constructs of a serialized query part to `out`, by name:
/// enum variants are objects with one capitalized key (`{"Between": ...}`).
fn constructs(v: &Json, scope: Scope, out: &mut BTreeSet<String>) {
    match v {
        Json::Object(map) => {
            if let (1, Some((tag, inner))) = (map.len(), map.iter().next()) {
                if matches!(tag.as_str(), "Literal" | "Column") {
                    return;
                }
                if tag.starts_with(|c: char| c.is_ascii_uppercase()) {
                    if let Some(name) = construct(tag, inner, scope) {
                        out.insert(name);
                    }
                }
            }
            for (key, x) in map {
                if key == "kind" {
                    if let Some(join) = x.as_str().and_then(|k| join_construct(k, scope)) {
                        out.insert(join);
                    }
                }
                constructs(x, scope, out);
            }
        }
        Json::Array(items) => items.iter().for_each(|x| constructs(x, scope, out)),
        Json::String(s) if s == "CountStar" => {
            out.insert("COUNT(*)".into());
        }
        _ => {}
    }
}

/// The name of the construct an enum variant is, if it is one a bug can
/// be in (not a column, a literal, an AND, a sign).
fn construct(tag: &str, inner: &Json, scope: Scope) -> Option<String> {
    let field = |k: &str| inner.get(k).and_then(Json::as_str).unwrap_or("");
    Some(match tag {
        "Literal" | "Column" | "Table" | "Expr" | "On" | "Using" | "Select" => return None,
        // Values (a pivot row's, in PQS's inputs) are data, not constructs.
        "Integer" | "Real" | "Text" | "Blob" | "Boolean" | "Decimal" => return None,
        "Binary" => match field("op") {
            "And" => return None,
            "Eq" | "NotEq" | "Lt" | "LtEq" | "Gt" | "GtEq" => "cmp".into(),
            op => op.into(),
        },
        "Unary" => match field("op") {
            "Neg" | "Plus" => return None,
            // `~0`, `NOT 1`: a way to write a constant, not a construct.
            _ if inner
                .get("expr")
                .is_some_and(|e| e.get("Literal").is_some()) =>
            {
                return None
            }
            op => op.into(),
        },
        "Function" => {
            let name = field("name").to_ascii_lowercase();
            if scope == Scope::Whole && name == "typeof" {
                return None;
            }
            format!("{name}()")
        }
        "Collate" => {
            let name = field("collation").to_ascii_uppercase();
            if scope == Scope::Whole && name == "BINARY" {
                return None;
            }
            format!("COLLATE:{name}")
        }
        "Cast" => {
            let ty = field("ty").split('(').next().unwrap_or("").trim();
            format!("CAST:{}", ty.to_ascii_uppercase())
        }
        "Like" => field("kind").to_ascii_uppercase(),
        "Quantified" | "QuantifiedSubquery" => {
            let all = inner.get("all").and_then(Json::as_bool).unwrap_or(false);
            format!("{tag}:{}", if all { "ALL" } else { "ANY" })
        }
        "Derived" if scope == Scope::Whole => format!("derived:{}", field("form")),
        "Derived" => return None,
        other => other.into(),
    })
}

/// A join kind as a construct, for the whole query.
fn join_construct(kind: &str, scope: Scope) -> Option<String> {
    match kind {
        "Left" | "Right" | "Full" | "Comma" | "Inner" | "Cross" | "Straight"
            if scope == Scope::Whole =>
        {
            Some(format!("join:{kind}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests;
