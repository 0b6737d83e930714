//! CREATE TABLE, CREATE INDEX and CREATE VIEW statements, and what the
//! schema looks like after each.
//!
//! Tables mix typed and untyped columns of every affinity, rowid aliases,
//! composite keys, WITHOUT ROWID, constraints and generated columns; indexes
//! cover multi-column, unique, partial, expression, COLLATE and DESC keys.
//! Expressions in DDL are unqualified (SQLite forbids `t.c` in index
//! expressions) and have no subqueries (forbidden in CHECK, indexes,
//! generated columns and partial-index predicates).

use crate::database::SqliteDatabase;
use crate::expr_gen::ExprGen;
use crate::literals;
use crate::query_gen::{Col, FromOptions, QueryBuilder};
use crate::statements::{
    ColumnConstraint, ColumnDef, CreateIndex, CreateTable, CreateView, IndexKey, TableConstraint,
};
use crate::types::{self, affinity, Affinity};
use lancet_core::schema::{Column, Index, Relation, RelationKind};
use lancet_core::{
    Expr, Query, Rng, Schema, ScopeColumn, Select, SetOperator, TableFactor, TypeName,
};
use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng as _;

/// What data generation must know about one column of a table.
#[derive(Clone, Debug)]
pub struct ColumnModel {
    pub name: String,
    pub ty: Option<TypeName>,
    pub affinity: Affinity,
    /// Generated columns take no values in INSERT or UPDATE.
    pub generated: bool,
    /// An INTEGER PRIMARY KEY (rowid alias): only integers or NULL fit.
    pub rowid_alias: bool,
    /// Part of a PRIMARY KEY or UNIQUE constraint: values should vary.
    pub keyed: bool,
    pub not_null: bool,
    pub has_default: bool,
}

/// A table as data generation sees it.
#[derive(Clone, Debug)]
pub struct TableModel {
    pub name: String,
    pub columns: Vec<ColumnModel>,
}

impl TableModel {
    /// Its columns, unqualified, for expressions inside DDL.
    pub fn bare_scope(&self) -> Vec<ScopeColumn> {
        self.scope(None)
    }

    /// Its columns qualified by the table name, for UPDATE and DELETE.
    pub fn scope(&self, qualifier: Option<&str>) -> Vec<ScopeColumn> {
        self.columns
            .iter()
            .map(|c| ScopeColumn {
                expr: Expr::column(qualifier, &c.name),
                ty: c.ty.clone(),
            })
            .collect()
    }
}

/// The name of index number `n`; partial indexes are named `i<n>p` so
/// that a reader of a reproducer sees which they are (the generator reads
/// [`crate::database::SqliteDatabase::partial_indexes`], not the name).
pub fn index_name(n: usize, partial: bool) -> String {
    if partial {
        format!("i{n}p")
    } else {
        format!("i{n}")
    }
}

/// A CREATE TABLE for table `name`, and its model. `like` says whether
/// LIKE is still SQLite's deterministic built-in (no `case_sensitive_like`).
pub fn create_table(
    rng: &mut Rng,
    schema: &Schema,
    version: i32,
    like: bool,
    name: &str,
) -> (CreateTable, TableModel) {
    let n = rng.random_range(2..=6);
    let mut draft = TableDraft::columns(rng, n);
    // Generated columns (3.31+) after the first: they read only ordinary columns.
    if version >= 3_031_000 {
        for m in draft.models.iter_mut().skip(1) {
            m.generated = rng.random_bool(0.08);
        }
    }
    let ordinary: Vec<usize> = (0..n).filter(|&i| !draft.models[i].generated).collect();
    let has_pk = draft.primary_key(rng, &ordinary);
    let without_rowid = has_pk && rng.random_bool(0.3);
    draft.key_facts(without_rowid);

    let model_so_far = TableModel {
        name: name.to_string(),
        columns: draft.models.clone(),
    };
    let bare: Vec<ScopeColumn> = model_so_far
        .bare_scope()
        .into_iter()
        .zip(&draft.models)
        .filter(|(_, m)| !m.generated)
        .map(|(s, _)| s)
        .collect();
    let mut exprs = ExprGen::new(schema, version);
    if !like {
        exprs = exprs.without_like();
    }
    for i in 0..n {
        draft.column_constraints(rng, &mut exprs, &bare, i);
    }
    draft.table_constraints(rng, &mut exprs, &bare, &ordinary);

    let stmt = CreateTable {
        name: name.to_string(),
        columns: draft.defs,
        constraints: draft.constraints,
        without_rowid,
    };
    (
        stmt,
        TableModel {
            name: name.to_string(),
            columns: draft.models,
        },
    )
}

/// A table being drawn: its column definitions and table constraints as
/// CREATE TABLE will say them, and the column models data generation will
/// read, kept in step.
struct TableDraft {
    defs: Vec<ColumnDef>,
    models: Vec<ColumnModel>,
    constraints: Vec<TableConstraint>,
}

impl TableDraft {
    /// `n` columns `c0`, `c1`, ... of random types, without constraints.
    fn columns(rng: &mut Rng, n: usize) -> TableDraft {
        let defs: Vec<ColumnDef> = (0..n)
            .map(|i| ColumnDef {
                name: format!("c{i}"),
                ty: types::column_type(rng),
                constraints: vec![],
            })
            .collect();
        let models: Vec<ColumnModel> = defs
            .iter()
            .map(|d| ColumnModel {
                name: d.name.clone(),
                ty: d.ty.clone(),
                affinity: affinity(d.ty.as_ref()),
                generated: false,
                rowid_alias: false,
                keyed: false,
                not_null: false,
                has_default: false,
            })
            .collect();
        TableDraft {
            defs,
            models,
            constraints: vec![],
        }
    }

    /// Draws a PRIMARY KEY among the `ordinary` (not generated) columns:
    /// a column's own, two columns' as a table constraint, or none;
    /// whether there is one.
    fn primary_key(&mut self, rng: &mut Rng, ordinary: &[usize]) -> bool {
        let (defs, models) = (&mut self.defs, &mut self.models);
        match rng.random_range(0..100) {
            0..30 => {
                // A column PRIMARY KEY; on an INTEGER column it aliases the rowid.
                let i = *ordinary.choose(rng).unwrap_or(&0);
                if rng.random_bool(0.5) {
                    defs[i].ty = Some(TypeName("INTEGER".into()));
                    models[i].ty = defs[i].ty.clone();
                    models[i].affinity = Affinity::Integer;
                }
                defs[i].constraints.push(ColumnConstraint::PrimaryKey {
                    descending: rng.random_bool(0.15),
                });
                models[i].keyed = true;
                true
            }
            30..45 if ordinary.len() >= 2 => {
                let mut cols: Vec<usize> = ordinary.choose_multiple(rng, 2).copied().collect();
                cols.sort_unstable();
                for &i in &cols {
                    models[i].keyed = true;
                }
                self.constraints.push(TableConstraint::PrimaryKey(
                    cols.iter().map(|&i| defs[i].name.clone()).collect(),
                ));
                true
            }
            _ => false,
        }
    }

    /// What the primary key makes of its columns: the rowid itself, or,
    /// in a WITHOUT ROWID table, NOT NULL.
    fn key_facts(&mut self, without_rowid: bool) {
        let models = &mut self.models;
        // A single-column key of type exactly INTEGER in a rowid table is the
        // rowid (DESC aside; treated alike, it only narrows the values used).
        if !without_rowid {
            let key: Vec<usize> = (0..models.len()).filter(|&i| models[i].keyed).collect();
            if let [i] = key[..] {
                let is_integer = self.defs[i]
                    .ty
                    .as_ref()
                    .is_some_and(|t| t.0.eq_ignore_ascii_case("INTEGER"));
                models[i].rowid_alias = is_integer;
            }
        }
        if without_rowid {
            // WITHOUT ROWID primary keys are NOT NULL.
            for m in models.iter_mut().filter(|m| m.keyed) {
                m.not_null = true;
            }
        }
    }

    /// Draws the constraints of column `i`: the expression of a generated
    /// column; else NOT NULL, UNIQUE, CHECK, DEFAULT and COLLATE, each
    /// maybe. `bare` is the ordinary columns, unqualified.
    fn column_constraints(
        &mut self,
        rng: &mut Rng,
        exprs: &mut ExprGen,
        bare: &[ScopeColumn],
        i: usize,
    ) {
        let def = &mut self.defs[i];
        let model = &mut self.models[i];
        if model.generated {
            def.constraints.push(ColumnConstraint::Generated {
                expr: exprs.expression(rng, bare, 2, 0),
                stored: rng.random_bool(0.5),
            });
            return;
        }
        if rng.random_bool(0.12) {
            def.constraints.push(ColumnConstraint::NotNull);
            model.not_null = true;
        }
        if !model.keyed && rng.random_bool(0.1) {
            def.constraints.push(ColumnConstraint::Unique);
            model.keyed = true;
        }
        if rng.random_bool(0.08) {
            def.constraints
                .push(ColumnConstraint::Check(lenient_check(rng, exprs, bare)));
        }
        if rng.random_bool(0.15) {
            let value = if rng.random_bool(0.8) {
                Expr::Literal(literals::literal(rng, Some(model.affinity)))
            } else {
                exprs.expression(rng, &[], 1, 0)
            };
            def.constraints.push(ColumnConstraint::Default(value));
            model.has_default = true;
        }
        if rng.random_bool(0.2) {
            def.constraints
                .push(ColumnConstraint::Collate(types::collation(rng)));
        }
    }

    /// Draws the table constraints after the primary key: maybe a
    /// two-column UNIQUE over `ordinary` columns, maybe a CHECK.
    fn table_constraints(
        &mut self,
        rng: &mut Rng,
        exprs: &mut ExprGen,
        bare: &[ScopeColumn],
        ordinary: &[usize],
    ) {
        if ordinary.len() >= 2 && rng.random_bool(0.1) {
            let cols: Vec<usize> = ordinary.choose_multiple(rng, 2).copied().collect();
            for &i in &cols {
                self.models[i].keyed = true;
            }
            self.constraints.push(TableConstraint::Unique(
                cols.iter().map(|&i| self.defs[i].name.clone()).collect(),
            ));
        }
        if rng.random_bool(0.1) {
            self.constraints
                .push(TableConstraint::Check(lenient_check(rng, exprs, bare)));
        }
    }
}

/// A CHECK predicate that rejects some rows but not most: `p OR q` fails
/// only where both are false (NULL passes a CHECK).
fn lenient_check(rng: &mut Rng, exprs: &mut ExprGen, scope: &[ScopeColumn]) -> Expr {
    let p = exprs.predicate(rng, scope, 1, 0);
    if rng.random_bool(0.2) {
        return p;
    }
    let q = exprs.predicate(rng, scope, 1, 0);
    Expr::binary(lancet_core::BinaryOp::Or, p, q)
}

/// The schema relation a successful CREATE TABLE adds.
pub fn table_relation(stmt: &CreateTable) -> Relation {
    let table_pk: Vec<&String> = stmt
        .constraints
        .iter()
        .flat_map(|c| match c {
            TableConstraint::PrimaryKey(cols) => cols.iter().collect(),
            _ => vec![],
        })
        .collect();
    let table_unique: Vec<&String> = stmt
        .constraints
        .iter()
        .flat_map(|c| match c {
            TableConstraint::Unique(cols) if cols.len() == 1 => cols.iter().collect(),
            _ => vec![],
        })
        .collect();
    let columns = stmt
        .columns
        .iter()
        .map(|d| {
            let has = |f: &dyn Fn(&ColumnConstraint) -> bool| d.constraints.iter().any(f);
            let primary_key = has(&|c| matches!(c, ColumnConstraint::PrimaryKey { .. }))
                || table_pk.contains(&&d.name);
            Column {
                name: d.name.clone(),
                ty: d.ty.clone(),
                not_null: has(&|c| matches!(c, ColumnConstraint::NotNull))
                    || (primary_key && stmt.without_rowid),
                primary_key,
                unique: has(&|c| matches!(c, ColumnConstraint::Unique))
                    || table_unique.contains(&&d.name)
                    || (primary_key && table_pk.len() <= 1),
                collation: d.constraints.iter().find_map(|c| match c {
                    ColumnConstraint::Collate(name) => Some(name.clone()),
                    _ => None,
                }),
                generated: has(&|c| matches!(c, ColumnConstraint::Generated { .. })),
            }
        })
        .collect();
    Relation {
        name: stmt.name.clone(),
        kind: RelationKind::Table,
        columns,
    }
}

/// A CREATE INDEX numbered `n` on `table`; `like` as for [`create_table`].
pub fn create_index(
    rng: &mut Rng,
    schema: &Schema,
    version: i32,
    like: bool,
    table: &TableModel,
    n: usize,
) -> CreateIndex {
    let scope = table.bare_scope();
    let mut exprs = ExprGen::new(schema, version);
    if !like {
        exprs = exprs.without_like();
    }
    let k = rng.random_range(1..=3).min(scope.len());
    let mut columns: Vec<&ScopeColumn> = scope.iter().collect();
    columns.shuffle(rng);
    let keys = columns
        .into_iter()
        .take(k)
        .map(|c| IndexKey {
            expr: if rng.random_bool(0.8) {
                c.expr.clone()
            } else {
                index_expression(rng, &mut exprs, &scope, &c.expr)
            },
            collation: rng.random_bool(0.2).then(|| types::collation(rng)),
            descending: rng.random_bool(0.25),
        })
        .collect();
    let partial = rng.random_bool(0.2);
    CreateIndex {
        name: index_name(n, partial),
        table: table.name.clone(),
        unique: rng.random_bool(0.2),
        keys,
        predicate: partial.then(|| exprs.predicate(rng, &scope, 2, 0)),
    }
}

/// An expression key that reads a column. SQLite takes a key that is only
/// a string literal (`('a')`) for a column name, and a constant key is
/// pointless anyway.
fn index_expression(
    rng: &mut Rng,
    exprs: &mut ExprGen,
    scope: &[ScopeColumn],
    fallback: &Expr,
) -> Expr {
    for _ in 0..4 {
        let e = exprs.expression(rng, scope, 2, 0);
        if mentions_column(&e) {
            return e;
        }
    }
    fallback.clone()
}

fn mentions_column(e: &Expr) -> bool {
    matches!(e, Expr::Column(_)) || e.children().into_iter().any(mentions_column)
}

/// The schema entry a successful CREATE INDEX adds.
pub fn index_entry(stmt: &CreateIndex) -> Index {
    Index {
        name: stmt.name.clone(),
        table: stmt.table.clone(),
        unique: stmt.unique,
    }
}

/// A CREATE VIEW named `name` over the relations of `schema`, and the
/// relation it adds. Plain select-project-filter-join, or a UNION ALL of
/// two such with the same FROM and select list (so each column has one
/// affinity and collation); nothing that picks among equal values.
pub fn create_view(
    rng: &mut Rng,
    db: &SqliteDatabase,
    version: i32,
    name: &str,
) -> (CreateView, Relation) {
    let mut builder = QueryBuilder::new(db, version);
    // A view joins two base tables, or reads one relation (a table, a view
    // or a derived table): it never holds more than the product of two tables.
    let join = rng.random_bool(0.5);
    let (from, source) = builder.from_clause(
        rng,
        FromOptions {
            max_factors: if join { 2 } else { 1 },
            index_hints: false,
            derived_tables: !join,
            // A view with a RIGHT JOIN, flattened into a query with ON
            // clauses, trips the same pre-3.54 check as in query_gen.
            right_joins: builder.flattening_fixed(),
            views: !join,
            // Views are bounded by their shape (two tables at most).
            max_rows: u64::MAX,
        },
    );
    // UNION ALL doubles the rows: only over one base table.
    let one_table = from.joins.is_empty()
        && matches!(&from.first, TableFactor::Table { name, .. }
            if db.schema.relation(name).is_some_and(|r| r.kind == RelationKind::Table));
    // Select-list names are positional; the view's column list names them.
    let (items, cols) = builder.select_list(rng, &source, "v", 4);
    let scope: Vec<ScopeColumn> = source.iter().map(|c| c.scope.clone()).collect();
    let arm = |b: &mut QueryBuilder, rng: &mut Rng| Select {
        distinct: false,
        items: items.clone(),
        from: Some(from.clone()),
        selection: rng
            .random_bool(0.6)
            .then(|| b.exprs.predicate(rng, &scope, 2, 1)),
        group_by: vec![],
        group_by_all: false,
        having: None,
        qualify: None,
    };
    let first = arm(&mut builder, rng);
    let query = if one_table && rng.random_bool(0.2) {
        let second = arm(&mut builder, rng);
        Query::set_operation(SetOperator::UnionAll, vec![first, second])
    } else {
        Query::select(first)
    };
    let columns: Vec<String> = cols.iter().map(|c| c.name.clone()).collect();
    let relation = view_relation(name, &cols);
    (
        CreateView {
            name: name.to_string(),
            columns,
            query,
        },
        relation,
    )
}

fn view_relation(name: &str, cols: &[Col]) -> Relation {
    Relation {
        name: name.to_string(),
        kind: RelationKind::View,
        columns: cols
            .iter()
            .map(|c| Column {
                name: c.name.clone(),
                ty: c.scope.ty.clone(),
                not_null: false,
                primary_key: false,
                unique: false,
                collation: c.collation.clone(),
                generated: false,
            })
            .collect(),
    }
}
