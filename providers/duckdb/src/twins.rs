//! DuckDB's twin recipe (the twins oracle): a copy of a table with the
//! same rows in another physical design, in the same schema, named
//! `lancet_twin_<table>_<recipe>`.
//!
//! - `no-indexes`: ART indexes against none. The twin declares each
//!   column as the table did, without its constraints
//!   ([`crate::schema::DuckTable::shape`]: name, type with its collation,
//!   a generated column's expression), so no PRIMARY KEY or UNIQUE (the
//!   ART indexes DuckDB keeps for them), no NOT NULL, CHECK or DEFAULT,
//!   and none of the table's CREATE INDEX; it is filled by
//!   `INSERT INTO twin (stored columns) SELECT them FROM table`, which
//!   stores every value as it was (same type, and a generated column
//!   computes the same expression of the same values). Offered only for
//!   a table with a key or an index to drop: any other twin would be the
//!   table again.

use crate::schema::{DuckSchema, DuckTable};
use lancet_core::TwinBuild;

/// The recipe that drops ART indexes and the keys behind them.
pub const NO_INDEXES: &str = "no-indexes";

/// The recipes a database offers: `no-indexes` where a table has a key
/// or an index.
pub fn recipes(schema: &DuckSchema) -> Vec<String> {
    if schema.relations.iter().any(|t| indexed(schema, t)) {
        vec![NO_INDEXES.to_string()]
    } else {
        Vec::new()
    }
}

/// The twin of `table` by `recipe`; `None` for a view, an unknown recipe
/// or a table without a key or an index.
pub fn build(schema: &DuckSchema, recipe: &str, table: &str) -> Option<TwinBuild> {
    let t = schema.relations.iter().find(|t| t.name == table)?;
    if recipe != NO_INDEXES || !indexed(schema, t) {
        return None;
    }
    let twin = TwinBuild::name_beside(table, recipe);
    let stored: Vec<&str> = t
        .columns
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !t.generated.iter().any(|g| g == name))
        .collect();
    let create = format!("CREATE TABLE {twin} ({})", t.shape.join(", "));
    Some(TwinBuild::copying(table, &twin, vec![create], &stored))
}

/// Whether `t` is a table with a key or an index (a view has neither).
fn indexed(schema: &DuckSchema, t: &DuckTable) -> bool {
    t.writable
        && !t.shape.is_empty()
        && (t.keys > 0 || schema.indexes.iter().any(|i| i.table == t.name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Category, DuckType};
    use lancet_core::schema::{Index, RelationKind};

    fn table(name: &str, keys: usize) -> DuckTable {
        DuckTable {
            name: name.into(),
            kind: RelationKind::Table,
            columns: vec![
                ("c0".into(), DuckType::new("INTEGER", Category::Int)),
                (
                    "c1".into(),
                    DuckType::new("VARCHAR COLLATE nocase", Category::Text),
                ),
                ("c2".into(), DuckType::new("BIGINT", Category::Int)),
            ],
            writable: true,
            generated: vec!["c2".into()],
            keys,
            shape: vec![
                "c0 INTEGER".into(),
                "c1 VARCHAR COLLATE nocase".into(),
                "c2 BIGINT GENERATED ALWAYS AS ((c0 + 1)) VIRTUAL".into(),
            ],
        }
    }

    fn schema() -> DuckSchema {
        DuckSchema {
            relations: vec![table("t0", 1), table("t1", 0), table("t2", 0)],
            indexes: vec![Index {
                name: "i0".into(),
                table: "t2".into(),
                unique: false,
            }],
            ..DuckSchema::default()
        }
    }

    /// The twin declares the columns as the table did, without any
    /// constraint, keeps the generated column's expression, and copies
    /// the stored columns only.
    #[test]
    fn the_twin_has_the_columns_and_rows_without_keys() {
        let b = build(&schema(), NO_INDEXES, "t0").unwrap();
        assert_eq!(b.twin, "lancet_twin_t0_no_indexes");
        assert_eq!(
            b.statements,
            [
                "CREATE TABLE lancet_twin_t0_no_indexes (c0 INTEGER, c1 VARCHAR COLLATE nocase, c2 BIGINT GENERATED ALWAYS AS ((c0 + 1)) VIRTUAL)",
                "INSERT INTO lancet_twin_t0_no_indexes (c0, c1) SELECT c0, c1 FROM t0",
            ]
        );
        // An index alone is something to drop too.
        assert!(build(&schema(), NO_INDEXES, "t2").is_some());
    }

    /// A table without key or index has no twin, nor has a view; a
    /// database with neither offers no recipe.
    #[test]
    fn only_tables_with_something_to_drop_have_twins() {
        let s = schema();
        assert_eq!(recipes(&s), [NO_INDEXES]);
        assert!(build(&s, NO_INDEXES, "t1").is_none());
        assert!(build(&s, "partitioned", "t0").is_none());
        let plain = DuckSchema {
            relations: vec![table("t1", 0)],
            ..DuckSchema::default()
        };
        assert!(recipes(&plain).is_empty());
        let view = DuckSchema {
            relations: vec![DuckTable {
                writable: false,
                kind: RelationKind::View,
                shape: Vec::new(),
                ..table("v0", 1)
            }],
            ..DuckSchema::default()
        };
        assert!(recipes(&view).is_empty());
    }
}
