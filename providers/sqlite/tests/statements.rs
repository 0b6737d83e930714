//! SQLite's own statements (DDL, DML, maintenance, PRAGMAs) as its
//! generator builds them (`lancet_sqlite::statements`), printed and checked
//! with sqlparser's SQLite dialect. These cases ran for every dialect while
//! the statements lived in core; the branches for other dialects are kept
//! where they show what SQLite does differently.

use lancet_core::*;
use lancet_sqlite::dialect::DIALECT;
use lancet_sqlite::statements::*;
use lancet_testkit::printer::trees::*;
use lancet_testkit::printer::Tested;
use sqlparser::dialect::SQLiteDialect;

fn sqlite() -> Tested {
    Tested::new(DIALECT, SQLiteDialect {})
}

/// This dialect's text among (SQLite, PostgreSQL, MySQL).
fn pick<'a>(t: &Tested, sqlite: &'a str, postgres: &'a str, mysql: &'a str) -> &'a str {
    t.of(&[("sqlite", sqlite), ("postgres", postgres), ("mysql", mysql)])
}

fn create_table_with_every_constraint(t: &Tested) {
    let create = Statement::CreateTable(CreateTable {
        name: "t0".into(),
        columns: vec![
            ColumnDef::new(
                "c0",
                Some("INT"),
                vec![ColumnConstraint::PrimaryKey { descending: false }],
            ),
            ColumnDef::new(
                "c1",
                Some("TEXT"),
                vec![
                    ColumnConstraint::NotNull,
                    ColumnConstraint::Unique,
                    ColumnConstraint::Check(bin(BinaryOp::NotEq, col("c1"), text(""))),
                    ColumnConstraint::Default(text("x")),
                    ColumnConstraint::Collate("NOCASE".into()),
                ],
            ),
            ColumnDef::new(
                "c2",
                Some("INT"),
                vec![ColumnConstraint::Generated {
                    expr: bin(BinaryOp::Add, col("c0"), int(1)),
                    stored: true,
                }],
            ),
            ColumnDef::new(
                "c3",
                Some("INT"),
                vec![ColumnConstraint::Generated {
                    expr: bin(BinaryOp::Mul, col("c0"), int(-2)),
                    stored: false,
                }],
            ),
        ],
        constraints: vec![
            TableConstraint::PrimaryKey(strings(&["c0", "c1"])),
            TableConstraint::Unique(strings(&["c1"])),
            TableConstraint::Check(bin(BinaryOp::Gt, col("c0"), int(0))),
        ],
        without_rowid: false,
    });
    let body = "c0 INT PRIMARY KEY, c1 TEXT NOT NULL UNIQUE CHECK (c1 <> '') DEFAULT ('x') \
                COLLATE {coll}, c2 INT GENERATED ALWAYS AS (c0 + 1) STORED, \
                c3 INT GENERATED ALWAYS AS (c0 * (-2)) VIRTUAL, PRIMARY KEY (c0, c1), \
                UNIQUE (c1), CHECK (c0 > 0)";
    let text = |coll: &str| format!("CREATE TABLE t0 ({})", body.replace("{coll}", coll));
    // PostgreSQL needs the collation quoted, as in expressions.
    let expected = text(pick(t, "NOCASE", "\"NOCASE\"", "NOCASE"));
    if t.is("postgres") {
        // sqlparser knows only STORED generated columns for PostgreSQL
        // (VIRTUAL came with PostgreSQL 18), so the parse is of the table
        // without c3.
        t.printed(&create, &expected);
        let without_virtual =
            expected.replace("c3 INT GENERATED ALWAYS AS (c0 * (-2)) VIRTUAL, ", "");
        assert_ne!(without_virtual, expected);
        t.parse_one(&without_virtual);
    } else {
        t.verified(&create, &expected);
    }
    assert_eq!(create.kind(), StatementKind::CreateTable);
}

fn create_index(t: &Tested) {
    let i = Statement::CreateIndex(CreateIndex {
        name: "i0".into(),
        table: "t0".into(),
        unique: true,
        keys: vec![
            IndexKey {
                expr: col("c0"),
                collation: Some("NOCASE".into()),
                descending: true,
            },
            IndexKey {
                expr: bin(BinaryOp::Add, col("c1"), int(1)),
                collation: None,
                descending: false,
            },
            IndexKey {
                expr: col("c2"),
                collation: None,
                descending: false,
            },
        ],
        predicate: Some(bin(BinaryOp::Gt, col("c0"), int(1))),
    });
    if t.is("sqlite") {
        t.verified(
            &i,
            "CREATE UNIQUE INDEX i0 ON t0 (c0 COLLATE NOCASE DESC, (c1 + 1), c2) WHERE c0 > 1",
        );
    }
    if t.is("postgres") {
        t.verified(
            &i,
            "CREATE UNIQUE INDEX i0 ON t0 (c0 COLLATE \"NOCASE\" DESC, (c1 + 1), c2) WHERE c0 > 1",
        );
    }
    assert_eq!(i.kind(), StatementKind::CreateIndex);

    // An expression key is parenthesized even when atomic (MySQL requires
    // `((expr))` for functional keys).
    let i = Statement::CreateIndex(CreateIndex {
        name: "i1".into(),
        table: "t0".into(),
        unique: false,
        keys: vec![IndexKey {
            expr: Expr::func("abs", vec![col("c0")]),
            collation: None,
            descending: true,
        }],
        predicate: None,
    });
    t.verified(&i, "CREATE INDEX i1 ON t0 ((abs(c0)) DESC)");
}

fn create_view(t: &Tested) {
    let q = Query::select(Select {
        selection: Some(Expr::is_null(col("c1"))),
        ..select_from(vec![col("c0"), bin(BinaryOp::Add, col("c1"), int(1))], "t0")
    });
    let v = Statement::CreateView(CreateView {
        name: "v0".into(),
        columns: strings(&["a", "b"]),
        query: q.clone(),
    });
    t.verified(
        &v,
        "CREATE VIEW v0 (a, b) AS SELECT c0, c1 + 1 FROM t0 WHERE c1 IS NULL",
    );
    let v = Statement::CreateView(CreateView {
        name: "v1".into(),
        columns: vec![],
        query: q,
    });
    t.verified(
        &v,
        "CREATE VIEW v1 AS SELECT c0, c1 + 1 FROM t0 WHERE c1 IS NULL",
    );
    assert_eq!(v.kind(), StatementKind::CreateView);
}

fn insert(t: &Tested) {
    let multi = Statement::Insert(Insert {
        table: "t0".into(),
        or: None,
        columns: strings(&["c0", "c1"]),
        rows: vec![
            vec![int(1), text("a")],
            vec![int(-2), Expr::lit(Value::Null)],
            vec![bin(BinaryOp::Add, int(1), int(2)), text("it's")],
        ],
    });
    t.verified(
        &multi,
        "INSERT INTO t0 (c0, c1) VALUES (1, 'a'), ((-2), NULL), (1 + 2, 'it''s')",
    );
    assert_eq!(multi.kind(), StatementKind::Insert);
    let i = Statement::Insert(Insert {
        table: "t0".into(),
        or: None,
        columns: vec![],
        rows: vec![],
    });
    if t.is("sqlite") || t.is("postgres") {
        t.verified(&i, "INSERT INTO t0 DEFAULT VALUES");
    }
    if t.is("sqlite") {
        sqlite_insert_or(t);
    }
}

/// SQLite's conflict clauses on INSERT.
fn sqlite_insert_or(t: &Tested) {
    for (or, expected) in [
        (OnConflict::Ignore, "INSERT OR IGNORE INTO t0 VALUES (1)"),
        (OnConflict::Replace, "INSERT OR REPLACE INTO t0 VALUES (1)"),
        (OnConflict::Abort, "INSERT OR ABORT INTO t0 VALUES (1)"),
    ] {
        let i = Statement::Insert(Insert {
            table: "t0".into(),
            or: Some(or),
            columns: vec![],
            rows: vec![vec![int(1)]],
        });
        t.verified(&i, expected);
    }
    let i = Statement::Insert(Insert {
        table: "t0".into(),
        or: Some(OnConflict::Ignore),
        columns: strings(&["c0"]),
        rows: vec![vec![int(1)], vec![int(2)]],
    });
    t.verified(&i, "INSERT OR IGNORE INTO t0 (c0) VALUES (1), (2)");
}

fn update(t: &Tested) {
    let u = Statement::Update(Update {
        table: "t0".into(),
        or: Some(OnConflict::Replace),
        assignments: vec![
            ("c0".into(), int(-1)),
            ("c1".into(), bin(BinaryOp::Add, col("c1"), int(1))),
        ],
        selection: Some(Expr::is_null(col("c2"))),
    });
    if t.is("sqlite") {
        t.verified(
            &u,
            "UPDATE OR REPLACE t0 SET c0 = (-1), c1 = c1 + 1 WHERE c2 IS NULL",
        );
        let u = Statement::Update(Update {
            table: "t0".into(),
            or: Some(OnConflict::Ignore),
            assignments: vec![("c0".into(), int(1))],
            selection: None,
        });
        t.verified(&u, "UPDATE OR IGNORE t0 SET c0 = 1");
    }
    let u = Statement::Update(Update {
        table: "t0".into(),
        or: None,
        assignments: vec![("c0".into(), int(1)), ("c1".into(), text("x"))],
        selection: Some(bin(BinaryOp::Gt, col("c0"), int(1))),
    });
    t.verified(&u, "UPDATE t0 SET c0 = 1, c1 = 'x' WHERE c0 > 1");
    assert_eq!(u.kind(), StatementKind::Update);
}

fn delete(t: &Tested) {
    let d = Statement::Delete(Delete {
        table: "t0".into(),
        selection: Some(bin(BinaryOp::Eq, col("c0"), int(-1))),
    });
    t.verified(&d, "DELETE FROM t0 WHERE c0 = (-1)");
    let d = Statement::Delete(Delete {
        table: "t0".into(),
        selection: None,
    });
    t.verified(&d, "DELETE FROM t0");
    assert_eq!(d.kind(), StatementKind::Delete);
}

fn maintenance_statements(t: &Tested) {
    let analyze = Statement::Analyze(Some("t0".into()));
    // MySQL knows only ANALYZE TABLE.
    t.verified(
        &analyze,
        pick(t, "ANALYZE t0", "ANALYZE t0", "ANALYZE TABLE t0"),
    );
    // sqlparser needs a table name after ANALYZE and has no VACUUM or
    // REINDEX.
    if t.is("sqlite") || t.is("postgres") {
        t.printed(&Statement::Analyze(None), "ANALYZE");
        t.printed(&Statement::Vacuum, "VACUUM");
    }
    if t.is("sqlite") {
        t.printed(&Statement::Reindex(None), "REINDEX");
        t.printed(&Statement::Reindex(Some("i0".into())), "REINDEX i0");
    }
    for s in [
        Statement::Analyze(None),
        Statement::Analyze(Some("t0".into())),
        Statement::Vacuum,
        Statement::Reindex(None),
        Statement::Reindex(Some("t0".into())),
    ] {
        assert_eq!(s.kind(), StatementKind::Maintenance);
    }
}

fn settings(t: &Tested) {
    let pragma = |name: &str, value: &str| Statement::Pragma {
        name: name.into(),
        value: value.into(),
    };
    // (statement, dialect, text, whether sqlparser parses it)
    let cases = [
        (
            pragma("case_sensitive_like", "1"),
            "sqlite",
            "PRAGMA case_sensitive_like = 1",
            true,
        ),
        // sqlparser wants a literal value; SQLite also takes keywords.
        (
            pragma("reverse_unordered_selects", "ON"),
            "sqlite",
            "PRAGMA reverse_unordered_selects = ON",
            false,
        ),
    ];
    for (statement, dialect, expected, parses) in &cases {
        assert_eq!(statement.kind(), StatementKind::Setting);
        if !t.is(dialect) {
            continue;
        }
        if *parses {
            t.verified(statement, expected);
        } else {
            t.printed(statement, expected);
        }
    }
}

#[test]
fn create_table_with_every_constraint_in_sqlite() {
    create_table_with_every_constraint(&sqlite());
}

#[test]
fn create_index_in_sqlite() {
    create_index(&sqlite());
}

#[test]
fn create_view_in_sqlite() {
    create_view(&sqlite());
}

#[test]
fn insert_in_sqlite() {
    insert(&sqlite());
}

#[test]
fn update_in_sqlite() {
    update(&sqlite());
}

#[test]
fn delete_in_sqlite() {
    delete(&sqlite());
}

#[test]
fn maintenance_statements_in_sqlite() {
    maintenance_statements(&sqlite());
}

#[test]
fn settings_in_sqlite() {
    settings(&sqlite());
}
