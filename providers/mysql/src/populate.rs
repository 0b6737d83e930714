//! Fills a fresh database: tables of every engine the server has (InnoDB,
//! MyISAM, MEMORY, MariaDB's Aria), with NOT NULL, UNIQUE, primary keys,
//! defaults and generated columns, some partitioned by hash; indexes
//! (multi-column, unique, prefix, descending, functional on MySQL);
//! views; rows through INSERT [IGNORE], REPLACE and ON DUPLICATE KEY
//! UPDATE; UPDATE, DELETE, ANALYZE and OPTIMIZE TABLE. The steps are the
//! server toolkit's pipeline ([`lancet_server::populate`]); here are
//! MySQL's tables and the forms of its statements. Every expression comes
//! from [`ExprGen`].

use crate::dialect::DIALECT;
use crate::expr::ExprGen;
use crate::schema::{Declared, MySchema, MyTable, Sampled, TypedColumn};
use crate::types::{literal, Category, MyType};
use crate::ServerKind;
use lancet_core::schema::{Index, RelationKind};
use lancet_core::{ExecError, Expr, Rng, Session, StatementKind, ToSql, Value};
use lancet_server::populate::Population;
use rand::seq::IndexedRandom;
use rand::Rng as _;

fn sql(e: &Expr) -> String {
    e.to_sql(DIALECT)
}

/// Fills the database behind `session` and returns the model of what it made.
pub fn populate(
    rng: &mut Rng,
    session: &mut Session,
    kind: ServerKind,
) -> Result<MySchema, ExecError> {
    let schema = MySchema {
        server: Some(kind),
        ..MySchema::default()
    };
    lancet_server::populate::populate(&MyPopulation { kind }, rng, session, schema)
}

/// MySQL's and MariaDB's part of the pipeline.
struct MyPopulation {
    kind: ServerKind,
}

impl Population for MyPopulation {
    type Schema = MySchema;
    const DIALECT: lancet_core::Dialect = DIALECT;
    const INDEXES: std::ops::RangeInclusive<i32> = 0..=3;
    /// ANALYZE or OPTIMIZE TABLE.
    const MAINTENANCE: i32 = 1;

    fn parts_mut(schema: &mut MySchema) -> (&mut Vec<MyTable>, &mut Vec<Index>, &mut Sampled) {
        (
            &mut schema.relations,
            &mut schema.indexes,
            &mut schema.sampled,
        )
    }

    fn create_table(
        &self,
        rng: &mut Rng,
        session: &mut Session,
        schema: &mut MySchema,
        t: usize,
    ) -> Result<(), ExecError> {
        create_table(rng, session, schema, self.kind, t)
    }

    /// Every column, generated ones too.
    fn index_columns(&self, table: &MyTable) -> Vec<(String, MyType)> {
        table.columns.clone()
    }

    fn index_part(&self, rng: &mut Rng, schema: &MySchema, c: &str, ty: &MyType) -> String {
        if self.kind == ServerKind::MySql && !ty.is_lob && rng.random_bool(0.15) {
            // A functional key part (MySQL 8.0.13 and later; MariaDB
            // has none): an expression over the column.
            let mut g = ExprGen::new(schema, false);
            let col = [TypedColumn {
                expr: Expr::column(None, c),
                category: ty.category,
            }];
            return format!("({})", sql(&g.expr(rng, &col, ty.category, 1)));
        }
        let prefix = if ty.is_lob
            || (ty.category == Category::Text && !ty.fixed_domain && rng.random_bool(0.3))
        {
            format!("({})", rng.random_range(1..=5))
        } else {
            String::new()
        };
        let desc = if rng.random_bool(0.2) { " DESC" } else { "" };
        format!("{c}{prefix}{desc}")
    }

    /// INSERT IGNORE, REPLACE, ON DUPLICATE KEY UPDATE of one column, or a
    /// plain INSERT.
    fn insert_form(
        &self,
        g: &mut ExprGen<'_>,
        rng: &mut Rng,
        table: &MyTable,
        cols: &[(String, MyType)],
    ) -> (&'static str, String) {
        match rng.random_range(0..6) {
            0 => ("INSERT IGNORE INTO", String::new()),
            1 => ("REPLACE INTO", String::new()),
            2 => {
                let (c, ty) = cols.choose(rng).cloned().unwrap_or_else(|| cols[0].clone());
                let typed = table.typed_columns(&table.name);
                let e = g.expr(rng, &typed, ty.category, 1);
                (
                    "INSERT INTO",
                    format!(" ON DUPLICATE KEY UPDATE {c} = {}", sql(&e)),
                )
            }
            _ => ("INSERT INTO", String::new()),
        }
    }

    fn maintenance(
        &self,
        rng: &mut Rng,
        session: &mut Session,
        table: &MyTable,
        _which: i32,
    ) -> Result<(), ExecError> {
        let what = if rng.random_bool(0.7) {
            "ANALYZE"
        } else {
            "OPTIMIZE"
        };
        session.execute_sql(
            StatementKind::Maintenance,
            format!("{what} TABLE {}", table.name),
        )?;
        Ok(())
    }

    /// A category of the base's columns, then mostly one of its columns
    /// of that category, else an expression of it.
    fn view_item(
        &self,
        g: &mut ExprGen<'_>,
        rng: &mut Rng,
        typed: &[TypedColumn],
    ) -> (Expr, Category) {
        let category = typed
            .choose(rng)
            .map(|c| c.category)
            .unwrap_or(Category::Int);
        let e = if rng.random_bool(0.6) {
            typed
                .iter()
                .filter(|c| c.category == category)
                .collect::<Vec<_>>()
                .choose(rng)
                .map(|c| c.expr.clone())
                .unwrap_or_else(|| g.expr(rng, typed, category, 1))
        } else {
            g.expr(rng, typed, category, 1)
        };
        (e, category)
    }

    fn view_column(&self, category: Category, _base: &MyTable) -> MyType {
        MyType {
            sql: format!("{category:?}"),
            category,
            is_lob: false,
            fixed_domain: false,
        }
    }

    /// Numbers and binary strings: text compares under a case-insensitive
    /// collation.
    fn exact(&self, category: Category) -> bool {
        category.is_number() || category == Category::Blob
    }

    fn view(&self, name: String, columns: Vec<(String, MyType)>) -> MyTable {
        MyTable {
            name,
            kind: RelationKind::View,
            columns,
            writable: false,
            generated: Vec::new(),
            transactional: false,
            declared: None,
        }
    }

    fn sampled(&self, category: Category) -> bool {
        matches!(category, Category::Int | Category::Decimal | Category::Text)
    }

    /// By position in the select list.
    fn sample_order(&self, position: usize, _name: &str, _ty: &MyType) -> String {
        position.to_string()
    }
}

/// Engines this kind of server has (a missing one would be an error).
fn engines(kind: ServerKind) -> &'static [&'static str] {
    match kind {
        ServerKind::MariaDb => &["InnoDB", "InnoDB", "MyISAM", "MEMORY", "Aria"],
        ServerKind::MySql => &["InnoDB", "InnoDB", "MyISAM", "MEMORY"],
    }
}

fn create_table(
    rng: &mut Rng,
    session: &mut Session,
    schema: &mut MySchema,
    kind: ServerKind,
    t: usize,
) -> Result<(), ExecError> {
    let name = format!("t{t}");
    let n = rng.random_range(1..=5);
    let engine = *engines(kind).choose(rng).unwrap_or(&"InnoDB");
    let mut columns: Vec<(String, MyType)> = Vec::new();
    let mut generated = Vec::new();
    let mut defs = Vec::new();
    let mut declared = Declared {
        engine,
        ..Declared::default()
    };
    for c in 0..n {
        let mut ty = MyType::random(rng);
        if engine == "MEMORY" && ty.is_lob {
            // MEMORY tables take no TEXT or BLOB.
            ty = MyType::random(rng);
        }
        let col = format!("c{c}");
        let mut def = format!("{col} {}", ty.sql);
        let ints: Vec<TypedColumn> = columns
            .iter()
            .filter(|(_, t)| t.category == Category::Int)
            .map(|(n, t)| TypedColumn {
                expr: Expr::column(None, n),
                category: t.category,
            })
            .collect();
        if !ints.is_empty() && ty.category == Category::Int && rng.random_bool(0.15) {
            // A generated column over earlier integer columns.
            let mut g = ExprGen::new(schema, false);
            let e = g.expr(rng, &ints, Category::Int, 1);
            let storage = if rng.random_bool(0.5) {
                "VIRTUAL"
            } else {
                "STORED"
            };
            def.push_str(&format!(" AS ({}) {storage}", sql(&e)));
            generated.push(col.clone());
            declared.columns.push(def.clone());
        } else {
            declared.columns.push(def.clone());
            // Never a NOT NULL DATE or DATETIME: MySQL and MariaDB read
            // `c IS NULL` on such a column as `c = '0000-00-00'` (documented
            // ODBC compatibility) in WHERE but not under NOT, so the
            // partitions of such a predicate overlap by design.
            if rng.random_bool(0.2) && ty.category != Category::Date {
                def.push_str(" NOT NULL");
            }
            if rng.random_bool(0.15) && !ty.is_lob {
                def.push_str(" UNIQUE");
            }
            if rng.random_bool(0.1) && !ty.is_lob && !ty.fixed_domain {
                let d = literal(rng, ty.category);
                if !matches!(d, Expr::Literal(Value::Null)) {
                    def.push_str(&format!(" DEFAULT {}", sql(&d)));
                }
            }
        }
        let plain = &declared.columns[declared.columns.len() - 1];
        declared.constraints.push(def[plain.len()..].to_string());
        defs.push(def);
        columns.push((col, ty));
    }
    let int_key = columns
        .iter()
        .position(|(_, t)| t.category == Category::Int && !t.sql.contains("UNSIGNED"));
    if let Some(k) = int_key {
        if rng.random_bool(0.3) && !generated.contains(&format!("c{k}")) {
            defs.push(format!("PRIMARY KEY (c{k})"));
            declared.primary_key = Some(format!("c{k}"));
        }
    }
    let mut sql_text = format!("CREATE TABLE {name} ({}) ENGINE={engine}", defs.join(", "));
    if let Some(k) = int_key {
        if engine != "MEMORY" && rng.random_bool(0.15) {
            sql_text.push_str(&format!(
                " PARTITION BY HASH(c{k}) PARTITIONS {}",
                rng.random_range(2..=4)
            ));
            declared.partitioned = true;
        }
    }
    if session.execute_sql(StatementKind::CreateTable, sql_text)? {
        schema.relations.push(MyTable {
            name,
            kind: RelationKind::Table,
            columns,
            writable: true,
            generated,
            transactional: engine == "InnoDB",
            declared: Some(declared),
        });
    }
    Ok(())
}
