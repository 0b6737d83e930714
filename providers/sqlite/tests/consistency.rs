//! A guard on the generator's determinism rules: over generated databases,
//! a query's rows equal the rows of its three partitions by a generated
//! predicate (`p`, `NOT p`, `p IS NULL`), and `COUNT(*) ... WHERE p` equals
//! the number of rows where `p IS TRUE`. Plan-dependent SQL (arbitrary
//! representatives, row-order dependence, non-deterministic functions)
//! breaks these relations, so they catch generator mistakes; a failure can
//! also be an SQLite bug, which the printed reproducer shows.

use lancet_core::compare::multiset_diff;
use lancet_core::rng::database_rng;
use lancet_core::*;
use lancet_sqlite::dialect::DIALECT;
use lancet_sqlite::SqliteProvider;
use rand::Rng as _;

#[test]
fn partitions_and_counts_agree() {
    let provider = SqliteProvider::new().unwrap();
    let (mut checked, mut failures) = (0, vec![]);
    for k in 0..60 {
        let id = DatabaseId {
            run: "c".into(),
            thread: 0,
            index: k,
        };
        let conn = provider.create_database(&id).unwrap().conn;
        let mut s = Session::new(conn, DIALECT, provider.expected_errors());
        let mut rng = database_rng(77, 0, k);
        let generated = provider.populate(&mut rng, &mut s).unwrap();
        let mut g = generated.query_generator();
        for _ in 0..60 {
            let (from, scope) = g.from_clause(&mut rng);
            let items: Vec<SelectItem> = (0..rng.random_range(1..=3))
                .map(|_| {
                    let expr = if rng.random_bool(0.5) {
                        let i = rng.random_range(0..scope.columns.len());
                        scope.columns[i].expr.clone()
                    } else {
                        g.expression(&mut rng, &scope)
                    };
                    SelectItem::Expr { expr, alias: None }
                })
                .collect();
            let p = g.predicate(&mut rng, &scope);
            let select = |items: Vec<SelectItem>, w: Option<Expr>| Select {
                items,
                from: Some(from.clone()),
                selection: w,
                ..Select::default()
            };
            let whole = Query::select(select(items.clone(), None));
            let parts = Query::set_operation(
                SetOperator::UnionAll,
                vec![
                    select(items.clone(), Some(p.clone())),
                    select(items.clone(), Some(Expr::not(p.clone()))),
                    select(items.clone(), Some(Expr::is_null(p.clone()))),
                ],
            );
            let count = Query::select(select(
                vec![SelectItem::Expr {
                    expr: Expr::CountStar,
                    alias: None,
                }],
                Some(p.clone()),
            ));
            let truth = Query::select(select(
                vec![SelectItem::Expr {
                    expr: Expr::IsBool {
                        expr: Box::new(p.clone()),
                        value: true,
                        negated: false,
                    },
                    alias: None,
                }],
                None,
            ));
            let results: Vec<_> = [&whole, &parts, &count, &truth]
                .iter()
                .map(|q| s.query(q))
                .collect();
            let [Ok(a), Ok(b), Ok(c), Ok(t)] = &results[..] else {
                for r in &results {
                    if let Err(e @ (ExecError::Unexpected { .. } | ExecError::Lost { .. })) = r {
                        panic!("database {k}: {e}");
                    }
                }
                continue;
            };
            checked += 1;
            let trues = t.iter().filter(|r| r[0] == Value::Integer(1)).count() as i64;
            if !multiset_diff(a, b).is_empty() || c[0][0] != Value::Integer(trues) {
                failures.push(format!(
                    "database {k}:\n{};\n{};\n{};\n{};\n{};",
                    s.setup().join(";\n"),
                    whole.to_sql(DIALECT),
                    parts.to_sql(DIALECT),
                    count.to_sql(DIALECT),
                    truth.to_sql(DIALECT)
                ));
            }
        }
    }
    assert!(checked > 3000, "only {checked} checks ran");
    assert!(
        failures.is_empty(),
        "{} disagreements; first:\n{}",
        failures.len(),
        failures[0]
    );
}
