//! Twin recipes (the twins oracle): how one twin is built, and a recipe
//! that a campaign file declares for a DBMS extension (an access method,
//! say): how a twin is created, the SQL every generated database runs
//! first, and the extension's settings, drawn as knobs. The twins oracle
//! compares each table with its twin (see `docs/gate-your-extension.md`).

use serde::Deserialize;

/// The schema that holds twin tables
/// ([`crate::QueryGenerator::twin_tables`]), or the prefix of their names
/// where a DBMS keeps them beside the tables, so that a reproducer and a
/// planted fault can tell the two paths apart.
pub const TWIN_SCHEMA: &str = "lancet_twin";

/// How one twin is built ([`crate::QueryGenerator::twin_build`]): its name and
/// the statements, run in order once per session, that create it and copy
/// the table's rows into it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TwinBuild {
    pub table: String,
    pub twin: String,
    pub statements: Vec<String>,
}

impl TwinBuild {
    /// The build that runs `create` and then copies `table`'s stored
    /// `columns` (those an INSERT may set: no generated ones) into `twin`
    /// ([`copy_rows`]): what every provider's recipe does.
    pub fn copying(table: &str, twin: &str, create: Vec<String>, columns: &[&str]) -> TwinBuild {
        let mut statements = create;
        statements.push(copy_rows(table, twin, columns));
        TwinBuild {
            table: table.to_string(),
            twin: twin.to_string(),
            statements,
        }
    }

    /// The name of `table`'s twin by `recipe` where a DBMS keeps it beside
    /// the table (no schemas, or one database): `lancet_twin_<table>_<recipe>`,
    /// which [`TWIN_SCHEMA`] opens so that a planted fault and a
    /// reproducer tell it apart.
    pub fn name_beside(table: &str, recipe: &str) -> String {
        format!("{}_{table}_{}", TWIN_SCHEMA, recipe.replace('-', "_"))
    }

    /// The name of `table`'s twin by `recipe` in the schema
    /// [`TWIN_SCHEMA`]: `lancet_twin.<table>_<recipe>`.
    pub fn name_in_schema(table: &str, recipe: &str) -> String {
        format!("{}.{table}_{}", TWIN_SCHEMA, recipe.replace('-', "_"))
    }
}

/// `INSERT INTO twin (columns) SELECT columns FROM table`: a twin's rows.
pub fn copy_rows(table: &str, twin: &str, columns: &[&str]) -> String {
    let columns = columns.join(", ");
    format!("INSERT INTO {twin} ({columns}) SELECT {columns} FROM {table}")
}

/// `[twin_recipe]` of a campaign file.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredRecipe {
    /// The recipe's name, in findings and twin names (`columnar`).
    pub name: String,
    /// Run once in every generated database before its tables (e.g.
    /// `CREATE EXTENSION IF NOT EXISTS citus_columnar`); part of every
    /// reproducer's setup.
    #[serde(default)]
    pub setup: Vec<String>,
    /// The statements that create an empty twin, in order, with `{table}`
    /// (the table), `{twin}` (the twin's name) and `{columns}` (the
    /// table's stored columns, comma-separated) replaced. lancet then
    /// copies the rows: `INSERT INTO {twin} ({columns}) SELECT {columns}
    /// FROM {table}`, unless [`DeclaredRecipe::copy_rows`] is false.
    pub create: Vec<String>,
    /// Whether lancet copies the rows after `create` (false where those
    /// statements fill the twin themselves: `CREATE TABLE ... AS SELECT`,
    /// a function that converts a copy). Said, not guessed from the SQL:
    /// a copy made twice doubles every row.
    #[serde(default = "copy_rows_by_default")]
    pub copy_rows: bool,
    /// The extension's settings as knobs (`SET name = value`).
    #[serde(default)]
    pub knobs: Vec<DeclaredKnob>,
    /// Whether the twins oracle draws this recipe alone, not the DBMS's
    /// own ones too: a gate of the extension spends every check on it.
    #[serde(default)]
    pub alone: bool,
}

fn copy_rows_by_default() -> bool {
    true
}

/// One setting of a [`DeclaredRecipe`]: its name and the values other than
/// its default that a check may give it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredKnob {
    pub name: String,
    pub values: Vec<String>,
}

impl DeclaredRecipe {
    /// The statements that build `table`'s twin `twin` whose stored
    /// columns are `stored`: [`DeclaredRecipe::create`] filled in, then
    /// the copy of the rows unless the recipe copies them itself
    /// ([`DeclaredRecipe::copy_rows`]).
    pub fn statements(&self, table: &str, twin: &str, stored: &[String]) -> Vec<String> {
        let stored: Vec<&str> = stored.iter().map(String::as_str).collect();
        let columns = stored.join(", ");
        let fill = |s: &String| {
            s.replace("{table}", table)
                .replace("{twin}", twin)
                .replace("{columns}", &columns)
        };
        let mut out: Vec<String> = self.create.iter().map(fill).collect();
        if self.copy_rows {
            out.push(copy_rows(table, twin, &stored));
        }
        out
    }

    /// Its settings as knobs, each documented as the campaign file's.
    pub fn knobs(&self) -> Vec<crate::Knob> {
        self.knobs
            .iter()
            .map(|k| crate::Knob {
                name: k.name.clone(),
                description: format!("a setting of twin recipe {}", self.name),
                values: k.values.clone(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recipe(toml_text: &str) -> DeclaredRecipe {
        toml::from_str(toml_text).unwrap()
    }

    #[test]
    fn fills_the_placeholders_and_copies_the_rows() {
        let r = recipe(
            r#"name = "columnar"
            create = ["CREATE TABLE {twin} (LIKE {table}) USING columnar"]"#,
        );
        assert_eq!(
            r.statements("t0", "s.t0_columnar", &["c0".into(), "c1".into()]),
            [
                "CREATE TABLE s.t0_columnar (LIKE t0) USING columnar",
                "INSERT INTO s.t0_columnar (c0, c1) SELECT c0, c1 FROM t0",
            ]
        );
    }

    /// A recipe whose CREATE fills the twin says so; the rows are not
    /// copied twice (and a recipe naming INSERT elsewhere is not guessed
    /// to copy them).
    #[test]
    fn copies_the_rows_unless_the_recipe_says_it_does() {
        let r = recipe(
            r#"name = "ctas"
            create = ["CREATE TABLE {twin} USING columnar AS SELECT * FROM {table}"]
            copy_rows = false"#,
        );
        assert_eq!(r.statements("t0", "t0_c", &["c0".into()]).len(), 1);
        let r = recipe(
            r#"name = "hook"
            create = ["CREATE TABLE {twin} (LIKE {table})", "SELECT on_insert_hook('{twin}')"]"#,
        );
        assert_eq!(r.statements("t0", "t0_c", &["c0".into()]).len(), 3);
    }
}
