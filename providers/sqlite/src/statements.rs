//! The statements SQLite's generator builds as syntax trees: DDL, DML,
//! maintenance and PRAGMAs. They are SQLite's, not core's: lancet's rule is
//! that queries are core AST (oracles transform them) and DDL/DML belong to
//! the provider, which runs them through `Session::execute_sql` with their
//! [`StatementKind`]. They print through core's [`Printer`], so expressions
//! and queries inside them print exactly as everywhere else.

use lancet_core::ast::{Expr, Query, StatementKind, TypeName};
use lancet_core::print::{Printer, ToSql};
use lancet_core::{ExecError, Session};

/// A constraint on one column in CREATE TABLE.
#[derive(Clone, Debug, PartialEq)]
pub enum ColumnConstraint {
    PrimaryKey {
        descending: bool,
    },
    NotNull,
    Unique,
    Check(Expr),
    Default(Expr),
    Collate(String),
    /// `GENERATED ALWAYS AS (expr) [STORED|VIRTUAL]`
    Generated {
        expr: Expr,
        stored: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    /// SQLite allows columns without a declared type.
    pub ty: Option<TypeName>,
    pub constraints: Vec<ColumnConstraint>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TableConstraint {
    PrimaryKey(Vec<String>),
    Unique(Vec<String>),
    Check(Expr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateTable {
    pub name: String,
    pub columns: Vec<ColumnDef>,
    pub constraints: Vec<TableConstraint>,
    /// SQLite `WITHOUT ROWID`.
    pub without_rowid: bool,
}

/// An indexed column or expression.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexKey {
    pub expr: Expr,
    pub collation: Option<String>,
    pub descending: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateIndex {
    pub name: String,
    pub table: String,
    pub unique: bool,
    pub keys: Vec<IndexKey>,
    /// A partial index's predicate.
    pub predicate: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CreateView {
    pub name: String,
    pub columns: Vec<String>,
    pub query: Query,
}

/// SQLite's conflict clause (`INSERT OR IGNORE`, `UPDATE OR REPLACE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnConflict {
    Abort,
    Ignore,
    Replace,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    pub table: String,
    pub or: Option<OnConflict>,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Expr>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    pub table: String,
    pub or: Option<OnConflict>,
    pub assignments: Vec<(String, Expr)>,
    pub selection: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    pub table: String,
    pub selection: Option<Expr>,
}

/// A statement that a generator can emit.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    CreateTable(CreateTable),
    CreateIndex(CreateIndex),
    CreateView(CreateView),
    Insert(Insert),
    Update(Update),
    Delete(Delete),
    Query(Query),
    /// `ANALYZE [name]`
    Analyze(Option<String>),
    /// `VACUUM`
    Vacuum,
    /// `REINDEX [name]`
    Reindex(Option<String>),
    /// SQLite `PRAGMA name = value`.
    Pragma {
        name: String,
        value: String,
    },
}

impl ColumnDef {
    pub fn new(name: &str, ty: Option<&str>, constraints: Vec<ColumnConstraint>) -> ColumnDef {
        ColumnDef {
            name: name.into(),
            ty: ty.map(|t| TypeName(t.into())),
            constraints,
        }
    }
}

impl Statement {
    pub fn kind(&self) -> StatementKind {
        match self {
            Statement::CreateTable(_) => StatementKind::CreateTable,
            Statement::CreateIndex(_) => StatementKind::CreateIndex,
            Statement::CreateView(_) => StatementKind::CreateView,
            Statement::Insert(_) => StatementKind::Insert,
            Statement::Update(_) => StatementKind::Update,
            Statement::Delete(_) => StatementKind::Delete,
            Statement::Query(_) => StatementKind::Query,
            Statement::Analyze(_) | Statement::Vacuum | Statement::Reindex(_) => {
                StatementKind::Maintenance
            }
            Statement::Pragma { .. } => StatementKind::Setting,
        }
    }
}

impl ToSql for Statement {
    fn print(&self, p: &mut Printer) {
        match self {
            Statement::CreateTable(t) => create_table(p, t),
            Statement::CreateIndex(i) => create_index(p, i),
            Statement::CreateView(v) => {
                p.push("CREATE VIEW ");
                p.push(&v.name);
                if !v.columns.is_empty() {
                    p.push(" (");
                    p.list(&v.columns, ", ", |p, c| p.push(c));
                    p.push(")");
                }
                p.push(" AS ");
                v.query.print(p);
            }
            Statement::Insert(i) => {
                p.push("INSERT");
                conflict(p, i.or);
                p.push(" INTO ");
                p.push(&i.table);
                if !i.columns.is_empty() {
                    p.push(" (");
                    p.list(&i.columns, ", ", |p, c| p.push(c));
                    p.push(")");
                }
                if i.rows.is_empty() {
                    p.push(" DEFAULT VALUES");
                } else {
                    p.push(" VALUES ");
                    p.list(&i.rows, ", ", |p, row| {
                        p.push("(");
                        p.list(row, ", ", |p, e| e.print(p));
                        p.push(")");
                    });
                }
            }
            Statement::Update(u) => {
                p.push("UPDATE");
                conflict(p, u.or);
                p.push(" ");
                p.push(&u.table);
                p.push(" SET ");
                p.list(&u.assignments, ", ", |p, (c, e)| {
                    p.push(c);
                    p.push(" = ");
                    e.print(p);
                });
                if let Some(w) = &u.selection {
                    p.push(" WHERE ");
                    w.print(p);
                }
            }
            Statement::Delete(d) => {
                p.push("DELETE FROM ");
                p.push(&d.table);
                if let Some(w) = &d.selection {
                    p.push(" WHERE ");
                    w.print(p);
                }
            }
            Statement::Query(q) => q.print(p),
            Statement::Analyze(name) => {
                p.push("ANALYZE");
                if let Some(n) = name {
                    p.push(" ");
                    p.push(n);
                }
            }
            Statement::Vacuum => p.push("VACUUM"),
            Statement::Reindex(name) => {
                p.push("REINDEX");
                if let Some(n) = name {
                    p.push(" ");
                    p.push(n);
                }
            }
            Statement::Pragma { name, value } => {
                p.push(&format!("PRAGMA {name} = {value}"));
            }
        }
    }
}

/// `CREATE TABLE name (columns, constraints) [WITHOUT ROWID]`.
fn create_table(p: &mut Printer, t: &CreateTable) {
    p.push("CREATE TABLE ");
    p.push(&t.name);
    p.push(" (");
    p.list(&t.columns, ", ", |p, c| {
        p.push(&c.name);
        if let Some(ty) = &c.ty {
            p.push(" ");
            p.push(&ty.0);
        }
        for con in &c.constraints {
            p.push(" ");
            column_constraint(p, con);
        }
    });
    for con in &t.constraints {
        p.push(", ");
        table_constraint(p, con);
    }
    p.push(")");
    if t.without_rowid {
        p.push(" WITHOUT ROWID");
    }
}

/// A table constraint as CREATE TABLE lists it after the columns.
fn table_constraint(p: &mut Printer, con: &TableConstraint) {
    match con {
        TableConstraint::PrimaryKey(cols) => {
            p.push("PRIMARY KEY (");
            p.list(cols, ", ", |p, c| p.push(c));
            p.push(")");
        }
        TableConstraint::Unique(cols) => {
            p.push("UNIQUE (");
            p.list(cols, ", ", |p, c| p.push(c));
            p.push(")");
        }
        TableConstraint::Check(e) => {
            p.push("CHECK (");
            e.print(p);
            p.push(")");
        }
    }
}

/// `CREATE [UNIQUE] INDEX name ON table (keys) [WHERE predicate]`, each
/// key that is not a plain column in parentheses.
fn create_index(p: &mut Printer, i: &CreateIndex) {
    p.push(if i.unique {
        "CREATE UNIQUE INDEX "
    } else {
        "CREATE INDEX "
    });
    p.push(&i.name);
    p.push(" ON ");
    p.push(&i.table);
    p.push(" (");
    p.list(&i.keys, ", ", |p, k| {
        if matches!(k.expr, Expr::Column(_)) {
            k.expr.print(p);
        } else {
            p.push("(");
            k.expr.print(p);
            p.push(")");
        }
        if let Some(c) = &k.collation {
            p.push(" COLLATE ");
            p.collation(c);
        }
        if k.descending {
            p.push(" DESC");
        }
    });
    p.push(")");
    if let Some(w) = &i.predicate {
        p.push(" WHERE ");
        w.print(p);
    }
}

fn column_constraint(p: &mut Printer, c: &ColumnConstraint) {
    match c {
        ColumnConstraint::PrimaryKey { descending } => {
            p.push("PRIMARY KEY");
            if *descending {
                p.push(" DESC");
            }
        }
        ColumnConstraint::NotNull => p.push("NOT NULL"),
        ColumnConstraint::Unique => p.push("UNIQUE"),
        ColumnConstraint::Check(e) => {
            p.push("CHECK (");
            e.print(p);
            p.push(")");
        }
        ColumnConstraint::Default(e) => {
            p.push("DEFAULT (");
            e.print(p);
            p.push(")");
        }
        ColumnConstraint::Collate(c) => {
            p.push("COLLATE ");
            p.collation(c);
        }
        ColumnConstraint::Generated { expr, stored } => {
            p.push("GENERATED ALWAYS AS (");
            expr.print(p);
            p.push(if *stored { ") STORED" } else { ") VIRTUAL" });
        }
    }
}

fn conflict(p: &mut Printer, or: Option<OnConflict>) {
    match or {
        None => {}
        Some(OnConflict::Abort) => p.push(" OR ABORT"),
        Some(OnConflict::Ignore) => p.push(" OR IGNORE"),
        Some(OnConflict::Replace) => p.push(" OR REPLACE"),
    }
}

/// Runs `stmt` on `session`: `Ok(true)` if it succeeded (it becomes part of
/// the setup), `Ok(false)` if it failed with an expected error.
pub fn run(session: &mut Session, stmt: &Statement) -> Result<bool, ExecError> {
    let sql = stmt.to_sql(session.dialect());
    session.execute_sql(stmt.kind(), sql)
}
