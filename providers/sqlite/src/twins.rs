//! SQLite's twin recipes (the twins oracle): copies of a table with the
//! same rows in another physical design, built from its CREATE TABLE as it
//! ran ([`crate::database::TableDefinition`]) and filled by
//! `INSERT INTO twin (stored columns) SELECT them FROM table`.
//!
//! - `no-indexes`: none of the table's indexes, and no constraint that
//!   makes one or that the planner may rely on (PRIMARY KEY, UNIQUE, NOT
//!   NULL, CHECK; a WITHOUT ROWID table becomes a rowid table). Column
//!   types, collations, defaults and generated columns stay, so every
//!   value reads back as it was (affinity applied again is a no-op).
//! - `without-rowid`: a rowid table with a primary key as WITHOUT ROWID,
//!   or a WITHOUT ROWID table as a rowid table; same columns and
//!   constraints, none of the secondary indexes. A key that holds NULL
//!   (a rowid table allows it) fails the copy, and the check is skipped.

use crate::database::SqliteDatabase;
use crate::statements::{ColumnConstraint, CreateTable, Statement, TableConstraint};
use lancet_core::{ToSql, TwinBuild};

/// The recipe that drops indexes and constraints.
pub const NO_INDEXES: &str = "no-indexes";
/// The recipe that flips a table's storage between rowid and WITHOUT ROWID.
pub const WITHOUT_ROWID: &str = "without-rowid";

/// The recipes a database offers: both, where it has tables.
pub fn recipes(db: &SqliteDatabase) -> Vec<String> {
    if db.definitions.is_empty() {
        return Vec::new();
    }
    vec![NO_INDEXES.to_string(), WITHOUT_ROWID.to_string()]
}

/// The twin of `table` by `recipe`; `None` for a view, an unknown recipe,
/// or a table the recipe would leave as it is.
pub fn build(db: &SqliteDatabase, recipe: &str, table: &str) -> Option<TwinBuild> {
    let definition = db.definitions.get(table)?;
    let twin = TwinBuild::name_beside(table, recipe);
    let mut create = definition.create.clone();
    create.name = twin.clone();
    match recipe {
        NO_INDEXES => {
            let indexed = db.schema.indexes_on(table).next().is_some();
            if !strip_constraints(&mut create) && !indexed {
                return None;
            }
        }
        WITHOUT_ROWID => {
            if !create.without_rowid && !has_primary_key(&create) {
                return None;
            }
            create.without_rowid = !create.without_rowid;
        }
        _ => return None,
    }
    let stored: Vec<&str> = definition
        .stored_columns
        .iter()
        .map(String::as_str)
        .collect();
    let create = Statement::CreateTable(create).to_sql(crate::dialect::DIALECT);
    Some(TwinBuild::copying(table, &twin, vec![create], &stored))
}

fn has_primary_key(t: &CreateTable) -> bool {
    t.constraints
        .iter()
        .any(|c| matches!(c, TableConstraint::PrimaryKey(_)))
        || t.columns.iter().any(|c| {
            c.constraints
                .iter()
                .any(|k| matches!(k, ColumnConstraint::PrimaryKey { .. }))
        })
}

/// Drops every constraint but COLLATE, DEFAULT and GENERATED, and WITHOUT
/// ROWID (it needs a primary key); whether there was anything to drop.
fn strip_constraints(t: &mut CreateTable) -> bool {
    let before = t.constraints.len()
        + t.columns.iter().map(|c| c.constraints.len()).sum::<usize>()
        + usize::from(t.without_rowid);
    t.constraints.clear();
    for c in &mut t.columns {
        c.constraints.retain(|k| {
            matches!(
                k,
                ColumnConstraint::Collate(_)
                    | ColumnConstraint::Default(_)
                    | ColumnConstraint::Generated { .. }
            )
        });
    }
    t.without_rowid = false;
    let after = t.columns.iter().map(|c| c.constraints.len()).sum::<usize>();
    after < before
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::database::TableDefinition;
    use crate::statements::ColumnDef;
    use lancet_core::TypeName;

    fn db(without_rowid: bool) -> SqliteDatabase {
        let create = CreateTable {
            name: "t0".into(),
            columns: vec![
                ColumnDef {
                    name: "c0".into(),
                    ty: Some(TypeName("INTEGER".into())),
                    constraints: vec![
                        ColumnConstraint::PrimaryKey { descending: false },
                        ColumnConstraint::NotNull,
                    ],
                },
                ColumnDef {
                    name: "c1".into(),
                    ty: Some(TypeName("TEXT".into())),
                    constraints: vec![ColumnConstraint::Collate("NOCASE".into())],
                },
            ],
            constraints: vec![],
            without_rowid,
        };
        let mut db = SqliteDatabase::default();
        db.definitions.insert(
            "t0".into(),
            TableDefinition {
                create,
                stored_columns: vec!["c0".into(), "c1".into()],
            },
        );
        db
    }

    #[test]
    fn no_indexes_keeps_collations_and_drops_keys() {
        let b = build(&db(true), NO_INDEXES, "t0").unwrap();
        assert_eq!(
            b.statements,
            [
                "CREATE TABLE lancet_twin_t0_no_indexes (c0 INTEGER, c1 TEXT COLLATE NOCASE)",
                "INSERT INTO lancet_twin_t0_no_indexes (c0, c1) SELECT c0, c1 FROM t0",
            ]
        );
    }

    #[test]
    fn without_rowid_flips_the_storage() {
        let b = build(&db(false), WITHOUT_ROWID, "t0").unwrap();
        assert!(
            b.statements[0].ends_with(") WITHOUT ROWID"),
            "{}",
            b.statements[0]
        );
        let b = build(&db(true), WITHOUT_ROWID, "t0").unwrap();
        assert!(
            b.statements[0].ends_with("COLLATE NOCASE)"),
            "{}",
            b.statements[0]
        );
        assert!(build(&db(true), WITHOUT_ROWID, "v0").is_none());
    }
}
