//! PostgreSQL's twin recipes (the twins oracle): copies of a table with the
//! same rows in another physical design, in [`TWIN_SCHEMA`], made with
//! `CREATE TABLE twin (LIKE table INCLUDING DEFAULTS INCLUDING GENERATED)`
//! (column names, types, collations, NOT NULL, defaults and generated
//! expressions; no index, key, CHECK or statistics) and filled by
//! `INSERT INTO twin (stored columns) SELECT them FROM table`, which reads
//! the table's inheritance children and partitions as every query does.
//!
//! - `no-indexes`: that plain copy.
//! - `partitioned`: a plain table's twin is partitioned on its first
//!   stored integer or text column, by HASH (three partitions, every
//!   remainder: all values, NULL too) or by LIST (one partition for NULL
//!   and a DEFAULT one), by the table's position; a partitioned table's
//!   (or a partition's) twin is the plain copy.
//! - a recipe a campaign file declares for an extension
//!   ([`lancet_core::DeclaredRecipe`]: `USING columnar`, say).

use crate::schema::{PgSchema, PgTable};
use crate::types::Category;
use lancet_core::{TwinBuild, TWIN_SCHEMA};

pub const NO_INDEXES: &str = "no-indexes";
pub const PARTITIONED: &str = "partitioned";

/// The recipes a database offers, where it has tables: both, and the one
/// a campaign file declared.
pub fn recipes(schema: &PgSchema) -> Vec<String> {
    if !schema.relations.iter().any(|t| t.writable) {
        return Vec::new();
    }
    let mut out = vec![NO_INDEXES.to_string(), PARTITIONED.to_string()];
    if let Some(declared) = &schema.declared {
        if declared.alone {
            out.clear();
        }
        out.push(declared.name.clone());
    }
    out
}

/// The settings of a declared recipe, as knobs; none for the others.
pub fn knobs(schema: &PgSchema, recipe: &str) -> Vec<lancet_core::Knob> {
    schema
        .declared
        .iter()
        .filter(|r| r.name == recipe)
        .flat_map(|r| r.knobs())
        .collect()
}

/// The twin of `table` by `recipe`; `None` for a view or an unknown recipe.
pub fn build(schema: &PgSchema, recipe: &str, table: &str) -> Option<TwinBuild> {
    let (position, t) = schema
        .relations
        .iter()
        .enumerate()
        .find(|(_, t)| t.name == table && t.writable)?;
    let twin = TwinBuild::name_in_schema(table, recipe);
    let like = format!("(LIKE {table} INCLUDING DEFAULTS INCLUDING GENERATED)");
    let mut statements = vec![format!("CREATE SCHEMA IF NOT EXISTS {TWIN_SCHEMA}")];
    match recipe {
        NO_INDEXES => statements.push(format!("CREATE TABLE {twin} {like}")),
        PARTITIONED => statements.extend(partitioned(t, position, &twin, &like)),
        _ => {
            let declared = schema.declared.as_ref().filter(|r| r.name == recipe)?;
            statements.extend(declared.statements(table, &twin, &t.insertable));
            return Some(TwinBuild {
                table: table.to_string(),
                twin,
                statements,
            });
        }
    }
    let stored: Vec<&str> = t.insertable.iter().map(String::as_str).collect();
    Some(TwinBuild::copying(table, &twin, statements, &stored))
}

/// The statements that create a partitioned twin of `t` covering every
/// value, or a plain one where `t` is partitioned or a partition (it
/// takes no inheritance) or has no column to partition on.
fn partitioned(t: &PgTable, position: usize, twin: &str, like: &str) -> Vec<String> {
    let key = t.insertable.iter().find(|c| {
        t.columns
            .iter()
            .any(|(n, ty)| n == *c && matches!(ty.category, Category::Int | Category::Text))
    });
    let Some(key) = key.filter(|_| t.inheritable) else {
        return vec![format!("CREATE TABLE {twin} {like}")];
    };
    if position.is_multiple_of(2) {
        let mut out = vec![format!(
            "CREATE TABLE {twin} {like} PARTITION BY HASH ({key})"
        )];
        out.extend((0..3).map(|r| {
            format!(
                "CREATE TABLE {twin}_p{r} PARTITION OF {twin} FOR VALUES WITH (MODULUS 3, REMAINDER {r})"
            )
        }));
        out
    } else {
        vec![
            format!("CREATE TABLE {twin} {like} PARTITION BY LIST ({key})"),
            format!("CREATE TABLE {twin}_null PARTITION OF {twin} FOR VALUES IN (NULL)"),
            format!("CREATE TABLE {twin}_rest PARTITION OF {twin} DEFAULT"),
        ]
    }
}
