//! The core printer's SQLite output for the constructs this provider relies
//! on, checked by running it: what the tree means must be what SQLite reads.

use lancet_core::*;
use lancet_sqlite::SqliteConnection;

fn eval(conn: &mut SqliteConnection, e: &Expr) -> Value {
    let sql = format!("SELECT {}", e.to_sql(Dialect::Sqlite));
    let rows = conn
        .query(&sql)
        .unwrap_or_else(|err| panic!("{sql}: {err}"));
    rows[0][0].clone()
}

fn lit(v: Value) -> Expr {
    Expr::Literal(v)
}

/// Reals whose shortest text SQLite does not read back exactly (`1e-300`
/// gives 9.999999999999999e-301) are kept out of the literal pools.
#[test]
fn literals_read_back_as_the_same_value() {
    let mut c = SqliteConnection::open_in_memory().unwrap();
    for v in [
        Value::Integer(i64::MIN),
        Value::Integer(i64::MAX),
        Value::Integer(-1),
        Value::Real(1e308),
        Value::Real(-1e308),
        Value::Real(1e-30),
        Value::Real(5e-324),
        Value::Real(f64::MAX),
        Value::Real(0.1),
        Value::Real(-2.5),
        Value::Real(9.223372036854776e18),
        Value::Real(f64::INFINITY),
        Value::Real(f64::NEG_INFINITY),
        Value::Text("it's".into()),
        Value::Text(String::new()),
        Value::Text(" 1 ".into()),
        Value::Blob(vec![0, 0xFF]),
        Value::Blob(vec![]),
        Value::Null,
    ] {
        assert_eq!(eval(&mut c, &lit(v.clone())), v, "{v}");
    }
    // i64::MIN is an integer, not the real -9.223372036854776e18.
    let t = Expr::func("typeof", vec![lit(Value::Integer(i64::MIN))]);
    assert_eq!(eval(&mut c, &t), Value::Text("integer".into()));
    // -0.0 prints as (-0.0) and compares equal to 0.
    let z = Expr::binary(BinaryOp::Eq, lit(Value::Real(-0.0)), Expr::int(0));
    assert_eq!(eval(&mut c, &z), Value::Integer(1));
    assert_eq!(eval(&mut c, &lit(Value::Boolean(true))), Value::Integer(1));
}

#[test]
fn operators_print_with_sqlite_meaning() {
    let mut c = SqliteConnection::open_in_memory().unwrap();
    let null = || lit(Value::Null);
    // IS / IS NOT: null-safe comparisons.
    let is = Expr::binary(BinaryOp::IsNotDistinctFrom, null(), null());
    assert_eq!(is.to_sql(Dialect::Sqlite), "NULL IS NULL");
    assert_eq!(eval(&mut c, &is), Value::Integer(1));
    let is_not = Expr::binary(BinaryOp::IsDistinctFrom, Expr::int(1), null());
    assert_eq!(eval(&mut c, &is_not), Value::Integer(1));
    // Negating a negative literal must not print `--` (a comment).
    let neg = Expr::unary(UnaryOp::Neg, Expr::int(-1));
    assert!(!neg.to_sql(Dialect::Sqlite).contains("--"));
    assert_eq!(eval(&mut c, &neg), Value::Integer(1));
    // NOT binds looser than comparison in SQLite; the printer parenthesizes.
    let not = Expr::not(Expr::binary(BinaryOp::Eq, Expr::int(1), Expr::int(2)));
    assert_eq!(eval(&mut c, &not), Value::Integer(1));
    // COLLATE applies to the whole operand.
    let coll = Expr::binary(
        BinaryOp::Eq,
        Expr::Collate {
            expr: Box::new(Expr::binary(
                BinaryOp::Concat,
                lit(Value::Text("a".into())),
                lit(Value::Text("B".into())),
            )),
            collation: "NOCASE".into(),
        },
        lit(Value::Text("Ab".into())),
    );
    assert_eq!(eval(&mut c, &coll), Value::Integer(1));
    // LIKE with ESCAPE; GLOB without.
    let like = Expr::Like {
        kind: LikeKind::Like,
        expr: Box::new(lit(Value::Text("a%".into()))),
        pattern: Box::new(lit(Value::Text("a\\%".into()))),
        escape: Some(Box::new(lit(Value::Text("\\".into())))),
        negated: false,
    };
    assert_eq!(eval(&mut c, &like), Value::Integer(1));
    let glob = Expr::Like {
        kind: LikeKind::Glob,
        expr: Box::new(lit(Value::Text("abc".into()))),
        pattern: Box::new(lit(Value::Text("a*".into()))),
        escape: None,
        negated: true,
    };
    assert_eq!(glob.to_sql(Dialect::Sqlite), "'abc' NOT GLOB 'a*'");
    assert_eq!(eval(&mut c, &glob), Value::Integer(0));
    let is_true = Expr::IsBool {
        expr: Box::new(Expr::int(2)),
        value: true,
        negated: false,
    };
    assert_eq!(eval(&mut c, &is_true), Value::Integer(1));
    let cast = Expr::Cast {
        expr: Box::new(lit(Value::Text(" 12 ".into()))),
        ty: TypeName("VARCHAR(5)".into()),
    };
    assert_eq!(eval(&mut c, &cast), Value::Text(" 12 ".into()));
}

#[test]
fn ddl_and_from_clauses_print_as_sqlite_accepts() {
    let mut c = SqliteConnection::open_in_memory().unwrap();
    let col = |n: &str| Expr::column(None, n);
    let table = Statement::CreateTable(CreateTable {
        name: "t0".into(),
        columns: vec![
            ColumnDef {
                name: "c0".into(),
                ty: Some(TypeName("INTEGER".into())),
                constraints: vec![ColumnConstraint::PrimaryKey { descending: false }],
            },
            ColumnDef {
                name: "c1".into(),
                ty: None,
                constraints: vec![
                    ColumnConstraint::Collate("NOCASE".into()),
                    ColumnConstraint::Default(lit(Value::Text("a".into()))),
                ],
            },
            ColumnDef {
                name: "c2".into(),
                ty: Some(TypeName("INT".into())),
                constraints: vec![ColumnConstraint::Generated {
                    expr: Expr::binary(BinaryOp::Add, col("c0"), Expr::int(1)),
                    stored: false,
                }],
            },
        ],
        constraints: vec![TableConstraint::Check(Expr::binary(
            BinaryOp::Or,
            Expr::is_null(col("c1")),
            Expr::binary(BinaryOp::NotEq, col("c1"), lit(Value::Text("x".into()))),
        ))],
        without_rowid: false,
    });
    let index = Statement::CreateIndex(CreateIndex {
        name: "i0".into(),
        table: "t0".into(),
        unique: false,
        keys: vec![
            IndexKey {
                expr: Expr::func("lower", vec![col("c1")]),
                collation: Some("RTRIM".into()),
                descending: true,
            },
            IndexKey {
                expr: col("c0"),
                collation: None,
                descending: false,
            },
        ],
        predicate: None,
    });
    let insert = Statement::Insert(Insert {
        table: "t0".into(),
        or: Some(OnConflict::Ignore),
        columns: vec!["c0".into(), "c1".into()],
        rows: vec![
            vec![Expr::int(1), lit(Value::Text("A".into()))],
            vec![lit(Value::Null), lit(Value::Text("b".into()))],
        ],
    });
    let view = Statement::CreateView(CreateView {
        name: "v0".into(),
        columns: vec!["c0".into()],
        query: Query::set_operation(
            SetOperator::UnionAll,
            vec![
                Select {
                    items: vec![SelectItem::Expr {
                        expr: Expr::column(Some("a0"), "c1"),
                        alias: Some("c0".into()),
                    }],
                    from: Some(FromClause {
                        first: TableFactor::Table {
                            name: "t0".into(),
                            alias: Some("a0".into()),
                            indexed_by: None,
                        },
                        joins: vec![],
                    }),
                    ..Select::default()
                };
                2
            ],
        ),
    });
    for stmt in [&table, &index, &insert, &view] {
        let sql = stmt.to_sql(Dialect::Sqlite);
        c.execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    // Aliased factors with INDEXED BY / NOT INDEXED, joined with USING.
    let from = FromClause {
        first: TableFactor::Table {
            name: "t0".into(),
            alias: Some("a0".into()),
            indexed_by: Some(Some("i0".into())),
        },
        joins: vec![Join {
            kind: JoinKind::Full,
            factor: TableFactor::Table {
                name: "t0".into(),
                alias: Some("a1".into()),
                indexed_by: Some(None),
            },
            constraint: JoinConstraint::Using(vec!["c1".into()]),
        }],
    };
    let query = Query::select(Select {
        items: vec![SelectItem::Expr {
            expr: Expr::CountStar,
            alias: None,
        }],
        from: Some(from),
        selection: Some(Expr::Exists {
            query: Box::new(Query::select(Select {
                items: vec![SelectItem::Expr {
                    expr: Expr::int(1),
                    alias: None,
                }],
                from: Some(FromClause {
                    first: TableFactor::Table {
                        name: "v0".into(),
                        alias: Some("s0".into()),
                        indexed_by: None,
                    },
                    joins: vec![],
                }),
                selection: Some(Expr::binary(
                    BinaryOp::Eq,
                    Expr::column(Some("s0"), "c0"),
                    Expr::column(Some("a0"), "c1"),
                )),
                ..Select::default()
            })),
            negated: false,
        }),
        ..Select::default()
    });
    let sql = query.to_sql(Dialect::Sqlite);
    assert!(sql.contains("t0 AS a0 INDEXED BY i0 FULL JOIN t0 AS a1 NOT INDEXED USING (c1)"));
    assert_eq!(
        c.query(&sql).unwrap(),
        vec![vec![Value::Integer(2)]],
        "{sql}"
    );
    let pragma = Statement::Pragma {
        name: "automatic_index".into(),
        value: "0".into(),
    };
    assert_eq!(pragma.to_sql(Dialect::Sqlite), "PRAGMA automatic_index = 0");
    c.execute(&pragma.to_sql(Dialect::Sqlite)).unwrap();
}
