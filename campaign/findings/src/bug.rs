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
mod tests {
    use super::*;
    use lancet_core::{ColumnRef, FromClause, Select, SelectItem, Value};

    fn col(t: &str, c: &str) -> Expr {
        Expr::Column(ColumnRef {
            table: Some(t.into()),
            column: c.into(),
        })
    }

    fn cmp(op: BinaryOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(l),
            right: Box::new(r),
        }
    }

    fn select(from: &str, items: Vec<Expr>) -> Select {
        Select {
            distinct: false,
            items: items
                .into_iter()
                .map(|expr| SelectItem::Expr { expr, alias: None })
                .collect(),
            from: Some(FromClause::table(from, Some("a0"))),
            ..Select::default()
        }
    }

    fn key(s: &Select, p: &Expr) -> String {
        case_key(s, Some(p), &Json::Null)
    }

    #[test]
    fn names_literals_and_comparison_direction_are_abstracted() {
        let a = key(
            &select("t3", vec![col("a0", "c1"), col("a0", "c2")]),
            &cmp(
                BinaryOp::Lt,
                col("a0", "c1"),
                Expr::Literal(Value::Integer(5)),
            ),
        );
        let b = key(
            &select("t12", vec![col("a0", "c7")]),
            &cmp(
                BinaryOp::GtEq,
                Expr::Literal(Value::Integer(-3)),
                col("a0", "c0"),
            ),
        );
        assert_eq!(a, b);
        assert_eq!(a, "cmp");
    }

    #[test]
    fn constructs_are_kept_and_and_is_glue() {
        let like = |e: Expr, p: Expr| Expr::Like {
            kind: lancet_core::LikeKind::Like,
            expr: Box::new(e),
            pattern: Box::new(p),
            escape: None,
            negated: false,
        };
        let plain = select("t0", vec![col("a0", "c0")]);
        let a = key(
            &plain,
            &like(col("a0", "c2"), Expr::Literal(Value::Text("B".into()))),
        );
        let b = key(
            &plain,
            &cmp(
                BinaryOp::And,
                like(Expr::Literal(Value::Null), Expr::Literal(Value::Null)),
                Expr::Literal(Value::Null),
            ),
        );
        assert_eq!(a, b);
        assert_eq!(a, "LIKE");
        let added = key(
            &plain,
            &cmp(
                BinaryOp::Add,
                col("a0", "c0"),
                Expr::Literal(Value::Integer(1)),
            ),
        );
        assert_ne!(a, added);
    }

    #[test]
    fn the_select_list_counts_only_when_the_predicate_has_no_construct() {
        let min = || {
            select(
                "t0",
                vec![Expr::Function {
                    name: "MIN".into(),
                    args: vec![col("a0", "c0")],
                    distinct: false,
                }],
            )
        };
        let live = cmp(
            BinaryOp::Eq,
            col("a0", "c0"),
            Expr::Literal(Value::Integer(1)),
        );
        let bare = col("a0", "c0");
        let plain = select("t0", vec![col("a0", "c0")]);
        assert_eq!(key(&min(), &live), key(&plain, &live));
        assert_ne!(key(&min(), &bare), key(&plain, &bare));
        assert_eq!(
            key(&plain, &bare),
            key(&plain, &Expr::Literal(Value::Integer(0)))
        );
    }

    fn member<'a>(sig: &'a str, constructs: &'a [String], reduced: bool) -> Member<'a> {
        Member {
            signature: sig,
            core_key: Some(sig),
            constructs,
            reduced,
            hiding_knob: None,
            fixed_in: None,
        }
    }

    #[test]
    fn an_unreduced_finding_joins_the_one_bug_it_contains() {
        let set = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let (between, like, between_or) = (set("Between"), set("LIKE"), set("Between Or"));
        let (big, both) = (set("Between Case Or cmp"), set("Between LIKE cmp"));
        let with_function = set("Between quote()");
        let members = [
            member("a", &between, true),
            member("b", &like, true),
            member("c", &between_or, true),
            member("d", &big, false),
            member("e", &both, false),
            Member {
                core_key: Some("c"),
                ..member("f", &between_or, true)
            },
            member("g", &with_function, true),
        ];
        let bugs = assign_bugs(&members);
        assert_eq!(bugs[3], bugs[0], "joins Between, the smallest set it holds");
        assert_ne!(bugs[4], bugs[0], "holds two bugs: joins neither");
        assert_ne!(bugs[4], bugs[1]);
        assert_eq!(
            bugs[2], bugs[0],
            "a reduced finding's extra OR is a connective"
        );
        assert_eq!(bugs[5], bugs[0]);
        assert_ne!(bugs[6], bugs[0], "a function may be another bug");
    }

    /// An error finding as a record: `sql` failed with `message`.
    fn error_finding(sql: &str, message: &str) -> Finding {
        serde_json::from_value(serde_json::json!({
            "kind": "unexpected-error", "lancet_version": "0", "dbms": "duckdb",
            "dbms_version": "1.5.6", "oracle": "tlp-aggregate",
            "origin": {"seed": 1, "thread": 0, "database": 0, "check": 0},
            "relation": null, "setup": [], "diff": null, "case": null,
            "confirmed": true, "fault": null,
            "queries": [{"role": "failing statement", "sql": sql, "row_count": null}],
            "error": {"kind": "statement", "code": "SERIALIZATION", "message": message},
        }))
        .unwrap()
    }

    #[test]
    fn an_error_is_one_bug_by_its_message_whatever_statement_raised_it() {
        let d = lancet_sqlite::dialect::DIALECT;
        let copy = "Serialization Error: Cannot copy BoundSubqueryExpression";
        let a = error_finding(
            "SELECT MIN(CASE WHEN EXISTS (SELECT 1) THEN 1 END) FROM t0",
            copy,
        );
        let b = error_finding(
            "SELECT MAX(CAST(x AS VARCHAR)) FROM v0 WHERE c1 IN (1, 2)",
            copy,
        );
        let other = error_finding(
            "SELECT 1",
            "Serialization Error: Cannot copy BoundColumnRef",
        );
        // The first line only: the query's text and caret below it differ.
        let lined = error_finding("SELECT 2", &format!("{copy}\n\nLINE 1: SELECT 2\n       ^"));
        let key = |f: &Finding| core_of(f, "sig", d, &crate::fixture::CATALOG).key;
        assert_eq!(key(&a), key(&b));
        assert_eq!(key(&a), key(&lined));
        assert_ne!(key(&a), key(&other));
    }
}
