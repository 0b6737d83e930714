//! The core printer's SQLite output: the cases every dialect runs (from
//! lancet-testkit, checked with sqlparser's SQLite dialect), SQLite's own
//! constructs, and the constructs this provider relies on checked by
//! running them, through rusqlite and the `sqlite3` CLI: what the tree
//! means must be what SQLite reads.

use lancet_core::*;
use lancet_sqlite::dialect::DIALECT;
use lancet_sqlite::statements::*;
use lancet_sqlite::SqliteConnection;
use lancet_testkit::printer::trees::{
    arm, between, bin, body_query, compound, int, real, select, select_star, text, un,
};
use lancet_testkit::printer::Tested;
use sqlparser::dialect::SQLiteDialect;

fn sqlite() -> Tested {
    Tested::new(DIALECT, SQLiteDialect {})
}

lancet_testkit::printer_suite!(sqlite());

fn eval(conn: &mut SqliteConnection, e: &Expr) -> Value {
    let sql = format!("SELECT {}", e.to_sql(DIALECT));
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
    assert_eq!(is.to_sql(DIALECT), "NULL IS NULL");
    assert_eq!(eval(&mut c, &is), Value::Integer(1));
    let is_not = Expr::binary(BinaryOp::IsDistinctFrom, Expr::int(1), null());
    assert_eq!(eval(&mut c, &is_not), Value::Integer(1));
    // Negating a negative literal must not print `--` (a comment).
    let neg = Expr::unary(UnaryOp::Neg, Expr::int(-1));
    assert!(!neg.to_sql(DIALECT).contains("--"));
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
    assert_eq!(glob.to_sql(DIALECT), "'abc' NOT GLOB 'a*'");
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

// Long because: a table of statements and the text SQLite must accept for each.
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
                    from: Some(FromClause::table("t0", Some("a0"))),
                    ..Select::default()
                };
                2
            ],
        ),
    });
    for stmt in [&table, &index, &insert, &view] {
        let sql = stmt.to_sql(DIALECT);
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
                from: Some(FromClause::table("v0", Some("s0"))),
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
    let sql = query.to_sql(DIALECT);
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
    assert_eq!(pragma.to_sql(DIALECT), "PRAGMA automatic_index = 0");
    c.execute(&pragma.to_sql(DIALECT)).unwrap();
}

// ---------------------------------------------------------------------------
// SQLite's own constructs, which sqlparser cannot parse or has no other
// dialect for
// ---------------------------------------------------------------------------

#[test]
fn indexed_by() {
    // SQLite only; sqlparser cannot parse either form.
    for (indexed_by, expected) in [
        (
            Some(Some("i0".to_string())),
            "SELECT * FROM t0 AS a INDEXED BY i0",
        ),
        (Some(None), "SELECT * FROM t0 AS a NOT INDEXED"),
    ] {
        let q = select_star(FromClause {
            first: TableFactor::Table {
                name: "t0".into(),
                alias: Some("a".into()),
                indexed_by,
            },
            joins: vec![],
        });
        sqlite().printed(&q, expected);
    }
}

#[test]
fn create_table_sqlite_forms() {
    let create = Statement::CreateTable(CreateTable {
        name: "t0".into(),
        columns: vec![
            ColumnDef::new(
                "c0",
                Some("INT"),
                vec![ColumnConstraint::PrimaryKey { descending: true }],
            ),
            // SQLite allows a column without a type.
            ColumnDef::new("c1", None, vec![]),
            ColumnDef::new("c2", None, vec![ColumnConstraint::NotNull]),
        ],
        constraints: vec![],
        without_rowid: true,
    });
    sqlite().verified(
        &create,
        "CREATE TABLE t0 (c0 INT PRIMARY KEY DESC, c1, c2 NOT NULL) WITHOUT ROWID",
    );
}

// ---------------------------------------------------------------------------
// Semantics, with the sqlite3 CLI
// ---------------------------------------------------------------------------

const SQLITE3: &str = "/usr/bin/sqlite3";

/// Runs SQL in an in-memory SQLite database and returns its output, or None
/// (with a note) when the CLI is not installed.
fn sqlite3(sql: &str) -> Option<String> {
    if !std::path::Path::new(SQLITE3).exists() {
        eprintln!("note: {SQLITE3} is missing; skipping the SQLite semantic check");
        return None;
    }
    let out = std::process::Command::new(SQLITE3)
        .args(["-batch", ":memory:", sql])
        .output()
        .expect("run sqlite3");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.is_empty(), "{sql}: {stderr}");
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .trim_end()
            .to_string(),
    )
}

/// `SELECT e1, e2, ...` as SQLite prints it (`|`-separated).
fn sqlite_eval(exprs: &[Expr]) -> Option<String> {
    let printed: Vec<String> = exprs.iter().map(|e| e.to_sql(DIALECT)).collect();
    sqlite3(&format!("SELECT {}", printed.join(", ")))
}

#[test]
fn sqlite_evaluates_printed_precedence_as_the_tree_means() {
    use BinaryOp::*;
    // (tree, what it means)
    let cases: Vec<(Expr, &str)> = vec![
        (un(UnaryOp::Not, bin(Eq, int(1), int(2))), "1"),
        (un(UnaryOp::Neg, int(-1)), "1"),
        (un(UnaryOp::Neg, un(UnaryOp::Neg, int(1))), "1"),
        (bin(Sub, int(1), bin(Sub, int(2), int(3))), "2"),
        (bin(Sub, bin(Sub, int(1), int(2)), int(3)), "-4"),
        (bin(Sub, int(1), int(-1)), "2"),
        (bin(And, bin(Or, int(1), int(0)), int(0)), "0"),
        (bin(Or, int(1), bin(And, int(0), int(0))), "1"),
        (bin(Mul, int(2), bin(Add, int(3), int(4))), "14"),
        (bin(Add, bin(Mul, int(2), int(3)), int(4)), "10"),
        (bin(ShiftLeft, int(1), bin(Add, int(2), int(1))), "8"),
        (bin(Add, bin(ShiftLeft, int(1), int(2)), int(1)), "5"),
        (un(UnaryOp::BitNot, int(-1)), "0"),
        (bin(Eq, bin(Eq, int(1), int(1)), int(0)), "0"),
        (bin(Eq, int(0), bin(Eq, int(1), int(2))), "1"),
        // NOT binds looser than = in SQLite: `NOT 0 = 1` would be NOT (0 = 1).
        (bin(Eq, un(UnaryOp::Not, int(0)), int(1)), "1"),
        (
            between(int(1), bin(And, int(0), int(1)), int(2), false, false),
            "1",
        ),
        (
            bin(
                IsNotDistinctFrom,
                Expr::lit(Value::Null),
                Expr::lit(Value::Null),
            ),
            "1",
        ),
        (bin(IsDistinctFrom, int(1), Expr::lit(Value::Null)), "1"),
        (Expr::is_null(bin(Eq, int(1), Expr::lit(Value::Null))), "1"),
        (
            Expr::IsBool {
                expr: Box::new(bin(Eq, int(1), int(2))),
                value: false,
                negated: false,
            },
            "1",
        ),
        (
            bin(
                Eq,
                Expr::Collate {
                    expr: Box::new(text("a")),
                    collation: "NOCASE".into(),
                },
                text("A"),
            ),
            "1",
        ),
        (
            bin(Concat, text("x"), bin(Concat, text("it's"), text(r"\"))),
            r"xit's\",
        ),
    ];
    let exprs: Vec<Expr> = cases.iter().map(|(e, _)| e.clone()).collect();
    let Some(out) = sqlite_eval(&exprs) else {
        return;
    };
    let expected: Vec<&str> = cases.iter().map(|(_, v)| *v).collect();
    assert_eq!(out, expected.join("|"));
}

#[test]
fn sqlite_reads_printed_literals_as_the_tree_means() {
    let lit = Expr::lit;
    let typeof_ = |e: Expr| Expr::func("typeof", vec![e]);
    let exprs = vec![
        int(i64::MIN),
        typeof_(int(i64::MIN)),
        int(i64::MAX),
        typeof_(int(i64::MAX)),
        typeof_(real(-0.0)),
        bin(BinaryOp::Eq, real(-0.0), real(0.0)),
        typeof_(real(1.0)),
        real(1e308),
        real(f64::INFINITY),
        real(f64::NEG_INFINITY),
        typeof_(real(f64::NAN)),
        bin(
            BinaryOp::Eq,
            real(0.1 + 0.2),
            bin(BinaryOp::Add, real(0.1), real(0.2)),
        ),
        typeof_(lit(Value::Blob(vec![0, 0xff]))),
        Expr::func("hex", vec![lit(Value::Blob(vec![0, 0xff]))]),
        Expr::func("length", vec![lit(Value::Blob(vec![]))]),
        Expr::func("length", vec![text("it's")]),
        lit(Value::Boolean(true)),
        lit(Value::Decimal("-3.25".into())),
    ];
    let Some(out) = sqlite_eval(&exprs) else {
        return;
    };
    assert_eq!(
        out,
        "-9223372036854775808|integer|9223372036854775807|integer|real|1|real|1.0e+308|Inf|-Inf|null|1|blob|00FF|0|4|1|-3.25"
    );
    // The sign of -0.0 survives, where math functions show it.
    if sqlite3("SELECT atan2(0.0, -1.0)").is_some_and(|o| !o.is_empty()) {
        let e = Expr::func("atan2", vec![real(-0.0), real(-1.0)]);
        let out = sqlite_eval(&[bin(BinaryOp::Lt, e, int(0))]).unwrap();
        assert_eq!(out, "1");
    }
}

#[test]
fn sqlite_evaluates_printed_compounds_and_limits_as_the_tree_means() {
    // Three UNION ALL arms, flat: three rows.
    let q = Query::set_operation(
        SetOperator::UnionAll,
        vec![
            select(vec![int(1)]),
            select(vec![int(1)]),
            select(vec![int(2)]),
        ],
    );
    let Some(out) = sqlite3(&format!("SELECT count(*) FROM ({})", q.to_sql(DIALECT))) else {
        return;
    };
    assert_eq!(out, "3");
    // 3 EXCEPT (3 UNION 4) is empty; (3 EXCEPT 3) UNION 4 is not.
    let q = body_query(compound(
        SetOperator::Except,
        arm(3),
        compound(SetOperator::Union, arm(3), arm(4)),
    ));
    let out = sqlite3(&format!("SELECT count(*) FROM ({})", q.to_sql(DIALECT))).unwrap();
    assert_eq!(out, "0");
    // (1 UNION 2) INTERSECT 1 is {1}; 1 UNION (2 INTERSECT 1) would be {1, 2}.
    let mut s1 = select(vec![]);
    s1.items = vec![SelectItem::Expr {
        expr: int(1),
        alias: Some("x".into()),
    }];
    let q = body_query(compound(
        SetOperator::Intersect,
        compound(SetOperator::Union, SetExpr::Select(Box::new(s1)), arm(2)),
        arm(1),
    ));
    let out = sqlite3(&format!(
        "SELECT group_concat(x) FROM ({})",
        q.to_sql(DIALECT)
    ))
    .unwrap();
    assert_eq!(out, "1");
    // OFFSET without LIMIT skips rows and keeps the rest.
    let mut q = Query::set_operation(
        SetOperator::UnionAll,
        vec![
            select(vec![int(1)]),
            select(vec![int(2)]),
            select(vec![int(3)]),
        ],
    );
    q.offset = Some(int(1));
    let out = sqlite3(&q.to_sql(DIALECT)).unwrap();
    assert_eq!(out, "2\n3");
}
