//! MySQL's and MariaDB's twin recipes (the twins oracle): copies of a
//! table with the same rows in another physical design, in the same
//! database (so that a column without a collation of its own takes the
//! same default), named `lancet_twin_<table>_<recipe>`, built from the
//! table's declaration as it ran ([`Declared`]) and filled by
//! `INSERT INTO twin (stored columns) SELECT them FROM table`.
//!
//! Why a twin holds exactly the table's values: each column keeps its
//! type with its character set and collation (FLOAT stays FLOAT, BIT(n)
//! BIT(n), the ENUM its members), so the copy converts nothing (the
//! session is not strict, and an ENUM's error value `''` is stored as
//! `''` again); a generated column keeps its expression and storage, so
//! it computes the same value of the same stored values; the generator
//! declares no AUTO_INCREMENT and no CHECK. A copy that fails (a key the
//! engine twin keeps refuses rows the table's engine took) skips the
//! check.
//!
//! - `no-indexes`: the columns alone, in the table's engine: no PRIMARY
//!   KEY, UNIQUE, NOT NULL, DEFAULT, secondary index or partitioning.
//!   Offered for a table with a key, an index or partitions.
//! - `engine`: the table as declared (columns, their constraints, its
//!   primary key; no secondary index, no partitions) in another engine:
//!   an InnoDB table's twin in Aria or MyISAM (by the table's position;
//!   MyISAM on MySQL), any other's in InnoDB.
//! - `partitioned`: the columns alone, in the table's engine, partitioned
//!   on the first stored column that can be (an integer by HASH or KEY,
//!   else a decimal, date or short text by KEY), three partitions; no key,
//!   so MariaDB's rule that each unique key holds the partitioning column
//!   does not apply. A partitioned table's twin is the plain copy; a
//!   table of no such column has none, nor, on MySQL 8 (which partitions
//!   InnoDB tables only), a table of another engine.

use crate::schema::{Declared, MySchema, MyTable};
use crate::types::Category;
use crate::ServerKind;
use lancet_core::TwinBuild;

pub const NO_INDEXES: &str = "no-indexes";
pub const ENGINE: &str = "engine";
pub const PARTITIONED: &str = "partitioned";

/// The recipes a database offers: all three, where it has tables.
pub fn recipes(schema: &MySchema) -> Vec<String> {
    if !schema.relations.iter().any(|t| t.declared.is_some()) {
        return Vec::new();
    }
    [NO_INDEXES, ENGINE, PARTITIONED].map(String::from).to_vec()
}

/// The twin of `table` by `recipe`; `None` for a view, an unknown recipe,
/// or a table the recipe would leave as it is.
pub fn build(schema: &MySchema, recipe: &str, table: &str) -> Option<TwinBuild> {
    let (position, t) = schema
        .relations
        .iter()
        .enumerate()
        .find(|(_, t)| t.name == table)?;
    let d = t.declared.as_ref()?;
    let twin = TwinBuild::name_beside(table, recipe);
    let plain = d.columns.join(", ");
    let create = match recipe {
        NO_INDEXES => {
            let indexed = schema.indexes.iter().any(|i| i.table == table);
            let keyed =
                d.primary_key.is_some() || d.constraints.iter().any(|c| c.contains("UNIQUE"));
            if !(indexed || keyed || d.partitioned) {
                return None;
            }
            format!("CREATE TABLE {twin} ({plain}) ENGINE={}", d.engine)
        }
        ENGINE => {
            let engine = other_engine(d.engine, position, schema.server);
            format!(
                "CREATE TABLE {twin} ({}) ENGINE={engine}",
                declared_columns(d)
            )
        }
        PARTITIONED => {
            let mut create = format!("CREATE TABLE {twin} ({plain}) ENGINE={}", d.engine);
            if !d.partitioned {
                // MySQL 8 partitions InnoDB tables only.
                if d.engine != "InnoDB" && schema.server != Some(ServerKind::MariaDb) {
                    return None;
                }
                create.push_str(&partitioning(t, position)?);
            }
            create
        }
        _ => return None,
    };
    let stored: Vec<&str> = t
        .columns
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !t.generated.iter().any(|g| g == name))
        .collect();
    Some(TwinBuild::copying(table, &twin, vec![create], &stored))
}

/// The columns with their constraints and the primary key, as the table
/// declared them.
fn declared_columns(d: &Declared) -> String {
    let mut parts: Vec<String> = d
        .columns
        .iter()
        .zip(&d.constraints)
        .map(|(c, k)| format!("{c}{k}"))
        .collect();
    if let Some(k) = &d.primary_key {
        parts.push(format!("PRIMARY KEY ({k})"));
    }
    parts.join(", ")
}

/// The engine of an `engine` twin: InnoDB's counterpart without
/// transactions (Aria or MyISAM on MariaDB by the table's position,
/// MyISAM on MySQL), or InnoDB.
fn other_engine(engine: &str, position: usize, server: Option<ServerKind>) -> &'static str {
    match engine {
        "InnoDB" if server == Some(ServerKind::MariaDb) && position.is_multiple_of(2) => "Aria",
        "InnoDB" => "MyISAM",
        _ => "InnoDB",
    }
}

/// ` PARTITION BY ...` on the first stored column that can be a
/// partitioning column, or `None`: an integer (not BIT) by HASH at odd
/// positions, else by KEY; a decimal, date or short text by KEY.
fn partitioning(t: &MyTable, position: usize) -> Option<String> {
    let (name, ty) = t.columns.iter().find(|(name, ty)| {
        !t.generated.contains(name)
            && !ty.is_lob
            && !ty.is_bit()
            && matches!(
                ty.category,
                Category::Int | Category::Decimal | Category::Date | Category::Text
            )
    })?;
    let by = if ty.category == Category::Int && position % 2 == 1 {
        "HASH"
    } else {
        "KEY"
    };
    Some(format!(" PARTITION BY {by} ({name}) PARTITIONS 3"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::MyType;
    use lancet_core::schema::{Index, RelationKind};

    fn ty(sql: &str, category: Category) -> MyType {
        MyType {
            sql: sql.into(),
            category,
            is_lob: sql == "TEXT",
            fixed_domain: sql.starts_with("BIT("),
        }
    }

    /// `c0 BIT(3)`, `c1 VARCHAR(5) COLLATE utf8mb4_general_ci NOT NULL
    /// UNIQUE`, `c2 INT DEFAULT 1`, `c3` generated from `c2`, in `engine`.
    fn table(name: &str, engine: &'static str, primary_key: bool) -> MyTable {
        let columns = vec![
            ("c0".to_string(), ty("BIT(3)", Category::Int)),
            (
                "c1".to_string(),
                ty("VARCHAR(5) COLLATE utf8mb4_general_ci", Category::Text),
            ),
            ("c2".to_string(), ty("INT", Category::Int)),
            ("c3".to_string(), ty("INT", Category::Int)),
        ];
        MyTable {
            name: name.into(),
            kind: RelationKind::Table,
            columns,
            writable: true,
            generated: vec!["c3".into()],
            transactional: engine == "InnoDB",
            declared: Some(Declared {
                columns: vec![
                    "c0 BIT(3)".into(),
                    "c1 VARCHAR(5) COLLATE utf8mb4_general_ci".into(),
                    "c2 INT".into(),
                    "c3 INT AS ((c2 + 1)) STORED".into(),
                ],
                constraints: vec![
                    String::new(),
                    " NOT NULL UNIQUE".into(),
                    " DEFAULT 1".into(),
                    String::new(),
                ],
                primary_key: primary_key.then(|| "c2".to_string()),
                engine,
                partitioned: false,
            }),
        }
    }

    fn schema(server: ServerKind) -> MySchema {
        let mut plain = table("t2", "MEMORY", false);
        plain.declared.as_mut().unwrap().constraints = vec![String::new(); 4];
        MySchema {
            server: Some(server),
            relations: vec![
                table("t0", "InnoDB", true),
                table("t1", "InnoDB", false),
                plain,
            ],
            indexes: Vec::new(),
            ..MySchema::default()
        }
    }

    fn statements(s: &MySchema, recipe: &str, table: &str) -> Vec<String> {
        build(s, recipe, table).unwrap().statements
    }

    const COLUMNS: &str =
        "c0 BIT(3), c1 VARCHAR(5) COLLATE utf8mb4_general_ci, c2 INT, c3 INT AS ((c2 + 1)) STORED";

    /// The columns with their types, collations and generation, none of
    /// the constraints, in the table's engine; the stored columns copied.
    #[test]
    fn no_indexes_keeps_columns_and_engine_and_drops_every_key() {
        let s = schema(ServerKind::MariaDb);
        assert_eq!(
            statements(&s, NO_INDEXES, "t0"),
            [
                format!("CREATE TABLE lancet_twin_t0_no_indexes ({COLUMNS}) ENGINE=InnoDB"),
                "INSERT INTO lancet_twin_t0_no_indexes (c0, c1, c2) SELECT c0, c1, c2 FROM t0"
                    .to_string(),
            ]
        );
        // Nothing to drop: no twin; an index is something to drop.
        assert!(build(&s, NO_INDEXES, "t2").is_none());
        let mut indexed = s.clone();
        indexed.indexes.push(Index {
            name: "i0".into(),
            table: "t2".into(),
            unique: false,
        });
        assert!(build(&indexed, NO_INDEXES, "t2").is_some());
    }

    /// The table as declared, keys too, in another engine: InnoDB's twin
    /// in Aria or MyISAM by position (MyISAM on MySQL), others' in InnoDB.
    #[test]
    fn engine_keeps_the_declaration_in_another_engine() {
        let s = schema(ServerKind::MariaDb);
        assert_eq!(
            statements(&s, ENGINE, "t0")[0],
            "CREATE TABLE lancet_twin_t0_engine (c0 BIT(3), c1 VARCHAR(5) COLLATE utf8mb4_general_ci NOT NULL UNIQUE, c2 INT DEFAULT 1, c3 INT AS ((c2 + 1)) STORED, PRIMARY KEY (c2)) ENGINE=Aria"
        );
        assert!(statements(&s, ENGINE, "t1")[0].ends_with("ENGINE=MyISAM"));
        assert!(statements(&s, ENGINE, "t2")[0].ends_with("ENGINE=InnoDB"));
        let mysql = schema(ServerKind::MySql);
        assert!(statements(&mysql, ENGINE, "t0")[0].ends_with("ENGINE=MyISAM"));
    }

    /// Keyless columns partitioned on the first stored column that can
    /// be (not BIT): by KEY, or HASH for an integer at an odd position; a
    /// partitioned table's twin is plain.
    #[test]
    fn partitioned_partitions_a_keyless_copy() {
        let s = schema(ServerKind::MariaDb);
        assert_eq!(
            statements(&s, PARTITIONED, "t0")[0],
            format!("CREATE TABLE lancet_twin_t0_partitioned ({COLUMNS}) ENGINE=InnoDB PARTITION BY KEY (c1) PARTITIONS 3")
        );
        let mut odd = s.clone();
        odd.relations[1].declared.as_mut().unwrap().columns[1] = "c1 TEXT".into();
        odd.relations[1].columns[1].1 = ty("TEXT", Category::Text);
        assert!(
            statements(&odd, PARTITIONED, "t1")[0].ends_with("PARTITION BY HASH (c2) PARTITIONS 3")
        );
        let mut partitioned = s.clone();
        partitioned.relations[0]
            .declared
            .as_mut()
            .unwrap()
            .partitioned = true;
        assert!(statements(&partitioned, PARTITIONED, "t0")[0].ends_with("ENGINE=InnoDB"));
        // MySQL 8 partitions InnoDB tables only.
        assert!(build(&schema(ServerKind::MariaDb), PARTITIONED, "t2").is_some());
        assert!(build(&schema(ServerKind::MySql), PARTITIONED, "t2").is_none());
    }

    /// A view has no twin; a database of views only offers no recipe.
    #[test]
    fn views_have_no_twins() {
        let mut s = schema(ServerKind::MariaDb);
        s.relations.iter_mut().for_each(|t| t.declared = None);
        assert!(recipes(&s).is_empty());
        assert!(build(&s, NO_INDEXES, "t0").is_none());
        assert_eq!(recipes(&schema(ServerKind::MariaDb)).len(), 3);
    }
}
