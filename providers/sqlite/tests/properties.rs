//! Properties of generated SQL that the oracles' soundness rests on,
//! checked on the syntax trees of many generated queries.

use lancet_core::rng::database_rng;
use lancet_core::schema::{Relation, RelationKind};
use lancet_core::*;
use lancet_sqlite::database::SqliteDatabase;
use lancet_sqlite::dialect::DIALECT;
use lancet_sqlite::functions::{FUNCTIONS, PRINTF_FORMATS};
use lancet_sqlite::query_gen::SqliteQueryGenerator;
use lancet_sqlite::types::{affinity, is_binary, Affinity};
use lancet_sqlite::SqliteProvider;

/// Every expression in a query, subqueries included.
fn query_exprs<'a>(q: &'a Query, out: &mut Vec<&'a Expr>) {
    fn body<'a>(b: &'a SetExpr, out: &mut Vec<&'a Expr>) {
        match b {
            SetExpr::Select(s) => select_exprs(s, out),
            SetExpr::SetOp { left, right, .. } => {
                body(left, out);
                body(right, out);
            }
        }
    }
    body(&q.body, out);
}

fn select_exprs<'a>(s: &'a Select, out: &mut Vec<&'a Expr>) {
    for item in &s.items {
        if let SelectItem::Expr { expr, .. } = item {
            expr_tree(expr, out);
        }
    }
    if let Some(w) = &s.selection {
        expr_tree(w, out);
    }
    if let Some(from) = &s.from {
        for factor in std::iter::once(&from.first).chain(from.joins.iter().map(|j| &j.factor)) {
            if let TableFactor::Derived { query, .. } = factor {
                query_exprs(query, out);
            }
        }
        for j in &from.joins {
            if let JoinConstraint::On(e) = &j.constraint {
                expr_tree(e, out);
            }
        }
    }
}

fn expr_tree<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    out.push(e);
    match e {
        Expr::Subquery(q) | Expr::Exists { query: q, .. } => query_exprs(q, out),
        Expr::InSubquery { query, .. } => query_exprs(query, out),
        _ => {}
    }
    for c in e.children() {
        expr_tree(c, out);
    }
}

fn depth(e: &Expr) -> usize {
    1 + e.children().into_iter().map(depth).max().unwrap_or(0)
}

/// The select of a one-select query.
fn only_select(q: &Query) -> &Select {
    match &q.body {
        SetExpr::Select(s) => s,
        other => panic!("expected one SELECT, got {other:?}"),
    }
}

fn check_scalar_subquery(q: &Query, schema: &Schema) {
    assert!(q.order_by.is_empty() && q.limit.is_none() && q.offset.is_none());
    let s = only_select(q);
    assert!(!s.distinct && s.group_by.is_empty() && s.having.is_none());
    let [SelectItem::Expr { expr, .. }] = &s.items[..] else {
        panic!("scalar subquery with {} items", s.items.len())
    };
    match expr {
        Expr::CountStar => {}
        Expr::Function { name, args, .. } if name.eq_ignore_ascii_case("count") => {
            assert_eq!(args.len(), 1)
        }
        Expr::Function { name, args, .. }
            if name.eq_ignore_ascii_case("min") || name.eq_ignore_ascii_case("max") =>
        {
            // MIN/MAX of a base-table column whose equal values are identical.
            let [Expr::Column(c)] = &args[..] else {
                panic!("MIN/MAX of {args:?}")
            };
            let Some(TableFactor::Table { name: table, .. }) = s.from.as_ref().map(|f| &f.first)
            else {
                panic!("MIN/MAX over a non-table")
            };
            let rel: &Relation = schema.relation(table).unwrap();
            assert_eq!(rel.kind, RelationKind::Table);
            let col = rel.columns.iter().find(|x| x.name == c.column).unwrap();
            assert!(matches!(
                affinity(col.ty.as_ref()),
                Affinity::Integer | Affinity::Numeric
            ));
            assert!(is_binary(col.collation.as_deref()));
        }
        other => panic!("scalar subquery selects {other:?}"),
    }
}

fn check_expr(e: &Expr, schema: &Schema, version: i32) {
    match e {
        Expr::Subquery(q) => check_scalar_subquery(q, schema),
        Expr::CountStar => {} // only inside scalar subqueries, checked there
        Expr::Function {
            name,
            args,
            distinct,
        } => {
            assert!(!distinct);
            let lower = name.to_ascii_lowercase();
            if lower == "count" {
                return;
            }
            let f = FUNCTIONS
                .iter()
                .find(|f| f.name.eq_ignore_ascii_case(name))
                .unwrap_or_else(|| panic!("unknown function {name}"));
            assert!(f.since <= version, "{name} is newer than {version}");
            use lancet_sqlite::functions::Shape::*;
            let arity_ok = match f.shape {
                Args(min, max) => {
                    (lower == "min" || lower == "max") && args.len() == 1 // MIN/MAX aggregate: checked above
                        || (usize::from(min)..=usize::from(max)).contains(&args.len())
                }
                Hint => args.len() == 1,
                Likelihood => {
                    matches!(&args[1], Expr::Literal(Value::Real(p)) if (0.0..=1.0).contains(p))
                        && args.len() == 2
                }
                Iif => args.len() == 3,
                Printf => matches!(&args[0], Expr::Literal(Value::Text(fmt))
                    if PRINTF_FORMATS.iter().any(|(f, n)| f == fmt && usize::from(*n) + 1 == args.len())),
                Like => matches!(args.len(), 2 | 3)
                    && args.get(2).is_none_or(
                        |e| matches!(e, Expr::Literal(Value::Text(t)) if t.chars().count() == 1),
                    ),
                Glob => args.len() == 2,
            };
            assert!(arity_ok, "{}", e.to_sql(DIALECT));
        }
        Expr::Like {
            kind,
            escape: Some(esc),
            ..
        } => {
            assert_eq!(*kind, LikeKind::Like, "GLOB takes no ESCAPE");
            assert!(
                matches!(&**esc, Expr::Literal(Value::Text(t)) if t.chars().count() == 1),
                "ESCAPE {esc:?}"
            );
        }
        Expr::Literal(Value::Text(t)) => assert!(t.chars().count() <= 12, "{t}"),
        Expr::Collate { collation, .. } => {
            assert!(["BINARY", "NOCASE", "RTRIM"].contains(&collation.as_str()))
        }
        Expr::Between { symmetric, .. } => assert!(!symmetric),
        _ => {}
    }
}

fn check_from(from: &FromClause, db: &SqliteDatabase, version: i32) {
    let schema = &db.schema;
    let aliases: Vec<String> = std::iter::once(&from.first)
        .chain(from.joins.iter().map(|j| &j.factor))
        .map(|f| match f {
            TableFactor::Table {
                name,
                alias,
                indexed_by,
            } => {
                if let Some(Some(index)) = indexed_by {
                    let i = schema.indexes.iter().find(|i| &i.name == index).unwrap();
                    assert_eq!(&i.table, name);
                    assert!(
                        db.is_full_index(index),
                        "INDEXED BY the partial index {index}"
                    );
                }
                alias.clone().expect("every factor has an alias")
            }
            TableFactor::Derived {
                query,
                alias,
                lateral,
                ..
            } => {
                assert!(!lateral);
                // Select-project-filter, or UNION ALL of such: no DISTINCT,
                // GROUP BY or aggregates.
                fn plain(b: &SetExpr) {
                    match b {
                        SetExpr::Select(s) => {
                            assert!(!s.distinct && s.group_by.is_empty() && s.having.is_none())
                        }
                        SetExpr::SetOp { op, left, right } => {
                            assert_eq!(*op, SetOperator::UnionAll);
                            plain(left);
                            plain(right);
                        }
                    }
                }
                plain(&query.body);
                alias.clone()
            }
        })
        .collect();
    let mut unique = aliases.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), aliases.len(), "duplicate aliases {aliases:?}");
    for j in &from.joins {
        if version < 3_039_000 {
            assert!(!matches!(j.kind, JoinKind::Right | JoinKind::Full));
        }
    }
}

#[test]
fn generated_queries_keep_the_determinism_rules() {
    let provider = SqliteProvider::new().unwrap();
    for version in [provider.version_number(), 3_031_000, 3_038_000] {
        for k in 0..60 {
            let mut rng = database_rng(11, 0, k);
            let conn = provider
                .create_database(&DatabaseId {
                    run: "p".into(),
                    thread: 0,
                    index: k,
                })
                .unwrap()
                .conn;
            let mut session = Session::new(conn, DIALECT, provider.expected_errors());
            let db = lancet_sqlite::populate::populate(
                &mut rng,
                &mut session,
                provider.version_number(),
            )
            .unwrap();
            let schema = &db.schema;
            let mut generator = SqliteQueryGenerator::new(&db, version);
            for _ in 0..100 {
                let (from, scope) = generator.from_clause(&mut rng);
                assert!(!scope.columns.is_empty());
                for c in &scope.columns {
                    assert!(matches!(&c.expr, Expr::Column(r) if r.table.is_some()));
                }
                check_from(&from, &db, version);
                let p = generator.predicate(&mut rng, &scope);
                let e = generator.expression(&mut rng, &scope);
                for top in [&p, &e] {
                    assert!(depth(top) <= 12, "too deep: {}", top.to_sql(DIALECT));
                    // Outside scalar subqueries, the only "aggregate" names
                    // are scalar min/max of two or more arguments.
                    let mut all = vec![];
                    expr_tree(top, &mut all);
                    for x in all {
                        check_expr(x, schema, version);
                    }
                    let aggregate_free = |e: &Expr| match e {
                        Expr::Function { name, args, .. } if generator.is_aggregate(name) => {
                            args.len() >= 2
                        }
                        Expr::CountStar => false,
                        _ => true,
                    };
                    fn walk(e: &Expr, ok: &dyn Fn(&Expr) -> bool) {
                        assert!(ok(e), "aggregate outside a subquery: {e:?}");
                        for c in e.children() {
                            walk(c, ok);
                        }
                    }
                    walk(top, &aggregate_free);
                }
                let wrapper = Select {
                    from: Some(from),
                    ..Select::default()
                };
                let mut on = vec![];
                select_exprs(&wrapper, &mut on);
                for x in on {
                    check_expr(x, schema, version);
                }
            }
        }
    }
}
