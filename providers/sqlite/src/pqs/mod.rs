//! Pivoted query synthesis for SQLite: the FROM clause of pivot tables and
//! the predicates whose truth value on the pivot row lancet computes itself
//! ([`crate::eval`]).
//!
//! Only base tables are pivot tables: the evaluator needs each column's
//! declared type and collation, which views and derived tables blur.

pub mod gen;

use crate::database::SqliteDatabase;
use crate::eval::collation::Collation;
use crate::eval::typing::Aff;
use crate::eval::value::Val;
use crate::eval::{ColumnInfo, Evaluator, SUPPORTED_VERSIONS};
use crate::expr_gen::relation_columns;
use crate::types;
use gen::{GenColumn, PqsGen};
use lancet_core::schema::Relation;
use lancet_core::{
    Expr, FromClause, Join, JoinConstraint, JoinKind, Rng, Scope, TableFactor, Truth, Value,
};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// What a predicate over pivot tables must know about their columns, in
/// scope order.
#[derive(Clone, Debug)]
pub struct PivotTables {
    pub scope: Scope,
    columns: Vec<PivotColumn>,
}

#[derive(Clone, Debug)]
struct PivotColumn {
    alias: String,
    name: String,
    affinity: types::Affinity,
    /// `None` for a collation the evaluator does not know.
    collation: Option<Collation>,
}

impl PivotTables {
    /// The evaluator's view of the columns with the pivot row's values.
    pub fn column_infos(&self, pivot: &[Value]) -> Vec<ColumnInfo> {
        self.columns
            .iter()
            .zip(pivot)
            .map(|(c, v)| ColumnInfo {
                table: c.alias.clone(),
                name: c.name.clone(),
                affinity: Aff::of(c.affinity),
                collation: c.collation.unwrap_or(Collation::Binary),
                // A column whose collation is unknown can be used in no
                // comparison: make every reference to it decline.
                value: c.collation.and_then(|_| Val::from_value(v)),
            })
            .collect()
    }

    fn gen_columns(&self, pivot: &[Value]) -> Vec<GenColumn> {
        self.scope
            .columns
            .iter()
            .zip(&self.columns)
            .zip(pivot)
            .map(|((s, c), v)| GenColumn {
                expr: s.expr.clone(),
                affinity: c.affinity,
                pivot: v.clone(),
            })
            .collect()
    }
}

/// One to three base tables joined by commas, aliased `p0`, `p1`, ...,
/// sometimes with `INDEXED BY` a full index or `NOT INDEXED`.
pub fn pivot_tables(rng: &mut Rng, db: &SqliteDatabase) -> Option<(FromClause, PivotTables)> {
    let schema = &db.schema;
    let tables: Vec<&Relation> = schema.tables().collect();
    if tables.is_empty() {
        return None;
    }
    let n = match rng.random_range(0..100) {
        0..45 => 1,
        45..85 => 2,
        _ => 3,
    };
    let mut factors = Vec::with_capacity(n);
    let mut scope = Scope::default();
    let mut columns = vec![];
    for i in 0..n {
        let rel = *tables.choose(rng)?;
        let alias = format!("p{i}");
        factors.push(TableFactor::Table {
            name: rel.name.clone(),
            alias: Some(alias.clone()),
            indexed_by: index_hint(rng, db, rel),
        });
        scope.columns.extend(relation_columns(rel, &alias));
        columns.extend(rel.columns.iter().map(|c| PivotColumn {
            alias: alias.clone(),
            name: c.name.clone(),
            affinity: types::affinity(c.ty.as_ref()),
            collation: Collation::from_name(c.collation.as_deref().unwrap_or("BINARY")),
        }));
    }
    let mut factors = factors.into_iter();
    let first = factors.next()?;
    let joins = factors
        .map(|factor| Join {
            kind: JoinKind::Comma,
            factor,
            constraint: JoinConstraint::None,
        })
        .collect();
    Some((FromClause { first, joins }, PivotTables { scope, columns }))
}

/// `INDEXED BY` a full index of `table` (a partial one could leave the
/// query without a plan), or `NOT INDEXED`; mostly neither.
fn index_hint(rng: &mut Rng, db: &SqliteDatabase, table: &Relation) -> Option<Option<String>> {
    if !rng.random_bool(0.15) {
        return None;
    }
    let usable: Vec<&str> = db
        .schema
        .indexes_on(&table.name)
        .filter(|i| db.is_full_index(&i.name))
        .map(|i| i.name.as_str())
        .collect();
    match usable.choose(rng) {
        Some(name) if rng.random_bool(0.75) => Some(Some((*name).to_string())),
        _ => Some(None),
    }
}

/// A random predicate over the pivot tables for SQLite `version`, drawing
/// literals from `pivot` (`pivot[i]` is the value of
/// `tables.scope.columns[i]`).
pub fn predicate(rng: &mut Rng, tables: &PivotTables, pivot: &[Value], version: i32) -> Expr {
    let cols = tables.gen_columns(pivot);
    let depth = rng.random_range(1..=3);
    PqsGen::new(&cols, version).predicate(rng, depth)
}

/// `QueryGenerator::pivot_predicate`: a predicate and its truth value on
/// the pivot, or `None` if the scope is not that of `tables`, the library
/// is one the evaluator was not validated against
/// ([`SUPPORTED_VERSIONS`]), or the evaluator declines the predicate.
pub fn pivot_predicate(
    rng: &mut Rng,
    tables: &PivotTables,
    scope: &Scope,
    pivot: &[Value],
    version: i32,
) -> Option<(Expr, Truth)> {
    if *scope != tables.scope
        || pivot.len() != scope.columns.len()
        || !SUPPORTED_VERSIONS.contains(&version)
    {
        return None;
    }
    let expr = predicate(rng, tables, pivot, version);
    let infos = tables.column_infos(pivot);
    let truth = Evaluator::new(&infos).truth(&expr).ok()?;
    Some((expr, truth))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::rng::database_rng;
    use lancet_core::schema::{Column, Index, RelationKind};
    use lancet_core::{Schema, TypeName};

    fn schema() -> SqliteDatabase {
        let column = |name: &str, ty: Option<&str>, collation: Option<&str>| Column {
            name: name.into(),
            ty: ty.map(|t| TypeName(t.into())),
            not_null: false,
            primary_key: false,
            unique: false,
            collation: collation.map(str::to_string),
            generated: false,
        };
        let table = |name: &str, columns| Relation {
            name: name.into(),
            kind: RelationKind::Table,
            columns,
        };
        let schema = Schema {
            relations: vec![
                table(
                    "t0",
                    vec![
                        column("c0", Some("INT"), None),
                        column("c1", None, Some("NOCASE")),
                    ],
                ),
                table("t1", vec![column("c0", Some("TEXT"), Some("RTRIM"))]),
                Relation {
                    kind: RelationKind::View,
                    ..table("v0", vec![column("c0", None, None)])
                },
            ],
            indexes: vec![Index {
                name: "i0".into(),
                table: "t0".into(),
                unique: false,
            }],
        };
        SqliteDatabase {
            schema,
            ..SqliteDatabase::default()
        }
    }

    #[test]
    fn pivot_tables_are_comma_joined_base_tables_with_every_column() {
        let schema = schema();
        let mut rng = database_rng(1, 0, 0);
        for _ in 0..200 {
            let (from, tables) = pivot_tables(&mut rng, &schema).unwrap();
            let mut factors = vec![&from.first];
            factors.extend(from.joins.iter().map(|j| &j.factor));
            assert!((1..=3).contains(&factors.len()));
            assert!(from
                .joins
                .iter()
                .all(|j| j.kind == JoinKind::Comma && j.constraint == JoinConstraint::None));
            let mut expected = vec![];
            for (i, f) in factors.iter().enumerate() {
                let TableFactor::Table { name, alias, .. } = f else {
                    panic!("a derived table");
                };
                assert_ne!(name, "v0", "views are not pivot tables");
                let alias = alias.clone().unwrap();
                assert_eq!(alias, format!("p{i}"));
                let rel = schema.schema.relation(name).unwrap();
                expected.extend(
                    rel.columns
                        .iter()
                        .map(|c| Expr::column(Some(&alias), &c.name)),
                );
            }
            let got: Vec<Expr> = tables
                .scope
                .columns
                .iter()
                .map(|c| c.expr.clone())
                .collect();
            assert_eq!(got, expected);
        }
        assert!(pivot_tables(&mut rng, &SqliteDatabase::default()).is_none());
    }

    #[test]
    fn pivot_predicate_needs_its_scope_and_a_validated_library() {
        let schema = schema();
        let mut rng = database_rng(2, 0, 0);
        let (_, tables) = pivot_tables(&mut rng, &schema).unwrap();
        let pivot: Vec<Value> = tables
            .scope
            .columns
            .iter()
            .map(|_| Value::Integer(1))
            .collect();
        let supported = SUPPORTED_VERSIONS.start;
        assert!((0..50).any(|_| pivot_predicate(
            &mut rng,
            &tables,
            &tables.scope,
            &pivot,
            supported
        )
        .is_some()));
        assert!(pivot_predicate(&mut rng, &tables, &tables.scope, &pivot, 3_040_001).is_none());
        assert!(pivot_predicate(&mut rng, &tables, &Scope::default(), &[], supported).is_none());
    }
}
