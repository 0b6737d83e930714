//! DuckDB's column types as the generator uses them, grouped into
//! categories that say which expressions fit them, and literals of each.
//! Typed literals are casts of text (`CAST('2000-01-01' AS DATE)`), so
//! that DuckDB reads each as its category whatever the context.

use lancet_core::{Expr, Rng, TypeName, Value};
use lancet_server::{ColumnType, ServerCategory};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// What an expression is, for the generator: which operators and
/// functions fit it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    Int,
    Decimal,
    Float,
    Text,
    Blob,
    Bool,
    Date,
    Timestamp,
    Time,
    Interval,
    /// Lists of integers (`INTEGER[]`, `BIGINT[]`): their values print
    /// alike when equal, and DuckDB orders and compares them element by
    /// element (see [`crate::lists`]).
    List,
    /// Structs of two integer fields, [`crate::nested::STRUCT`]: compared,
    /// ordered and printed field by field, like lists.
    Struct,
    /// Maps from integers to integers, [`crate::nested::MAP`]: compared,
    /// ordered and printed as the list of their entries.
    Map,
}

impl Category {
    pub const ALL: [Category; 13] = [
        Category::Int,
        Category::Decimal,
        Category::Float,
        Category::Text,
        Category::Blob,
        Category::Bool,
        Category::Date,
        Category::Timestamp,
        Category::Time,
        Category::Interval,
        Category::List,
        Category::Struct,
        Category::Map,
    ];

    /// Whether a column of the category may be a key: DuckDB indexes no
    /// INTERVAL, list, struct or map ("Invalid type for index key"), neither in
    /// PRIMARY KEY and UNIQUE nor in CREATE INDEX.
    pub fn keyable(self) -> bool {
        !self.is_nested() && self != Category::Interval
    }

    /// Lists, structs and maps: compared only by (in)equality, never
    /// with BETWEEN (see `crate::expr`).
    pub fn is_nested(self) -> bool {
        matches!(self, Category::List | Category::Struct | Category::Map)
    }

    pub fn is_number(self) -> bool {
        matches!(self, Category::Int | Category::Decimal | Category::Float)
    }

    /// The type a literal of the category is cast to.
    fn cast_name(self) -> &'static str {
        match self {
            Category::Int => "BIGINT",
            Category::Decimal => "DECIMAL(18,3)",
            Category::Float => "DOUBLE",
            Category::Text => "VARCHAR",
            Category::Blob => "BLOB",
            Category::Bool => "BOOLEAN",
            Category::Date => "DATE",
            Category::Timestamp => "TIMESTAMP",
            Category::Time => "TIME",
            Category::Interval => "INTERVAL",
            Category::List => "INTEGER[]",
            Category::Struct => crate::nested::STRUCT,
            Category::Map => crate::nested::MAP,
        }
    }
}

impl ServerCategory for Category {
    const CATEGORIES: &'static [Category] = &Category::ALL;
    const LITERAL: fn(&mut Rng, Category) -> Expr = literal;

    fn scope_type(self) -> &'static str {
        self.cast_name()
    }

    fn of_type_name(ty: &str) -> Category {
        let t = ty.to_ascii_uppercase();
        // Lists, structs, maps and INTERVAL before the integers, whose
        // names they contain.
        if t.ends_with("[]") {
            Category::List
        } else if t.starts_with("STRUCT") {
            Category::Struct
        } else if t.starts_with("MAP") {
            Category::Map
        } else if t == "INTERVAL" {
            Category::Interval
        } else if t.starts_with("DECIMAL") || t.starts_with("NUMERIC") {
            Category::Decimal
        } else if t.contains("INT") {
            Category::Int
        } else if t == "DOUBLE" || t == "REAL" || t == "FLOAT" {
            Category::Float
        } else if t == "BLOB" {
            Category::Blob
        } else if t == "BOOLEAN" {
            Category::Bool
        } else if t == "DATE" {
            Category::Date
        } else if t.starts_with("TIMESTAMP") {
            Category::Timestamp
        } else if t == "TIME" {
            Category::Time
        } else {
            Category::Text
        }
    }

    /// Literals by their value, casts by their target.
    fn of_shape(expr: &Expr, _known: &dyn Fn(&Expr) -> Option<Category>) -> Option<Category> {
        match expr {
            Expr::Literal(Value::Text(_)) => Some(Category::Text),
            Expr::Literal(Value::Integer(_)) => Some(Category::Int),
            Expr::Literal(Value::Decimal(_)) => Some(Category::Decimal),
            Expr::Literal(Value::Real(_)) => Some(Category::Float),
            Expr::Literal(Value::Blob(_)) => Some(Category::Blob),
            Expr::Literal(Value::Boolean(_)) => Some(Category::Bool),
            Expr::Cast { ty, .. } => Some(Category::of_type_name(&ty.0)),
            _ => None,
        }
    }

    /// Every category but INTERVAL in IN and ANY/ALL subqueries: DuckDB's
    /// mark join has no INTERVAL ("Unimplemented type for mark join").
    fn comparable(self) -> bool {
        self != Category::Interval
    }
}

/// A column type as written in CREATE TABLE.
#[derive(Clone, Debug, PartialEq)]
pub struct DuckType {
    pub sql: String,
    pub category: Category,
    /// ENUM: only its members may be stored.
    pub fixed_domain: bool,
    /// The collation of a text column, if not the default (binary).
    pub collation: Option<&'static str>,
}

impl ColumnType for DuckType {
    type Category = Category;

    fn declared(&self) -> (&str, Category) {
        (&self.sql, self.category)
    }
}

/// The members of every ENUM column, in byte order, so that their order
/// by index (ORDER BY, MIN, MAX) agrees with their order as text.
pub const ENUM_MEMBERS: &str = "ENUM('0', '1', 'a', 'ab', 'b')";

impl DuckType {
    pub fn new(sql: &str, category: Category) -> DuckType {
        DuckType {
            sql: sql.to_string(),
            category,
            fixed_domain: false,
            collation: None,
        }
    }

    /// An ENUM of [`ENUM_MEMBERS`], read as VARCHAR.
    pub fn enumeration() -> DuckType {
        DuckType {
            fixed_domain: true,
            ..DuckType::new(ENUM_MEMBERS, Category::Text)
        }
    }

    pub fn is_unsigned(&self) -> bool {
        self.sql.starts_with('U')
    }

    /// A random column type.
    pub fn random(rng: &mut Rng) -> DuckType {
        let int = |name: &str| DuckType::new(name, Category::Int);
        match rng.random_range(0..28) {
            0 => int("TINYINT"),
            1 => int("SMALLINT"),
            2..=4 => int("INTEGER"),
            5 | 6 => int("BIGINT"),
            7 => int("HUGEINT"),
            8 => int(["UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT"]
                .choose(rng)
                .unwrap_or(&"UINTEGER")),
            9 | 10 => {
                let p = rng.random_range(1..=18);
                let s = rng.random_range(0..=p.min(4));
                DuckType::new(&format!("DECIMAL({p},{s})"), Category::Decimal)
            }
            11 => DuckType::new("DOUBLE", Category::Float),
            12 => DuckType::new("REAL", Category::Float),
            13..=15 => DuckType::new("VARCHAR", Category::Text),
            16 | 17 => {
                let c = *["nocase", "noaccent", "nocase.noaccent"]
                    .choose(rng)
                    .unwrap_or(&"nocase");
                DuckType {
                    collation: Some(c),
                    ..DuckType::new(&format!("VARCHAR COLLATE {c}"), Category::Text)
                }
            }
            18 => DuckType::enumeration(),
            19 => DuckType::new("BLOB", Category::Blob),
            20 => DuckType::new("BOOLEAN", Category::Bool),
            21 => DuckType::new("DATE", Category::Date),
            22 => {
                let (name, category) = *[
                    ("TIMESTAMP", Category::Timestamp),
                    ("TIME", Category::Time),
                    ("INTERVAL", Category::Interval),
                ]
                .choose(rng)
                .unwrap_or(&("TIMESTAMP", Category::Timestamp));
                DuckType::new(name, category)
            }
            23 | 24 => {
                let name = *["INTEGER[]", "INTEGER[]", "BIGINT[]"]
                    .choose(rng)
                    .unwrap_or(&"INTEGER[]");
                DuckType::new(name, Category::List)
            }
            25 => DuckType::new(crate::nested::STRUCT, Category::Struct),
            26 => DuckType::new(crate::nested::MAP, Category::Map),
            _ => DuckType::new("BOOLEAN", Category::Bool),
        }
    }

    /// The type an expression of `category` is cast to, as CAST spells it.
    pub fn cast_target(category: Category) -> TypeName {
        TypeName(category.cast_name().to_string())
    }
}

/// Strings on the edges: empty, case, blanks, digits, accents, a quote,
/// and LIKE's wildcards.
const TEXTS: &[&str] = &[
    "", "a", "A", "b", "ab", "a ", " a", "0", "1", "-1", "1e2", "0.5", "abc", "B", "it's", "%",
    "_", "é", "E", "É", "true",
];

const DATES: &[&str] = &[
    "2000-01-01",
    "1999-12-31",
    "2024-02-29",
    "1970-01-01",
    "0001-01-01",
    "9999-12-31",
];
const TIMESTAMPS: &[&str] = &[
    "2000-01-01 00:00:00",
    "1999-12-31 23:59:59.999999",
    "2024-02-29 12:30:00",
    "1970-01-01 00:00:01",
];
const TIMES: &[&str] = &["00:00:00", "12:30:00", "23:59:59.999999", "01:02:03"];
const INTERVALS: &[&str] = &[
    "1 day",
    "-1 day",
    "1 month",
    "30 days",
    "1 hour",
    "0 seconds",
    "1 year 2 months",
];

/// `CAST('text' AS ty)`.
fn typed(text: &str, ty: &str) -> Expr {
    Expr::Cast {
        expr: Box::new(Expr::Literal(Value::Text(text.to_string()))),
        ty: TypeName(ty.to_string()),
    }
}

/// A literal of `category`: NULL for 8%, typed (a bare NULL leaves
/// DuckDB to choose among overloads, `year(NULL)`, and it refuses).
pub fn literal(rng: &mut Rng, category: Category) -> Expr {
    if rng.random_bool(0.08) {
        return Expr::Cast {
            expr: Box::new(Expr::Literal(Value::Null)),
            ty: TypeName(category.cast_name().to_string()),
        };
    }
    let pick = |rng: &mut Rng, from: &[&'static str]| *from.choose(rng).unwrap_or(&"0");
    match category {
        Category::Int => lancet_server::literals::integer(rng),
        Category::Decimal => lancet_server::literals::decimal(rng),
        Category::Float => Expr::Literal(Value::Real(
            *[0.0, 1.0, -1.0, 0.5, 1.5, 1e10, -2.25, 3.0, 1e-3, -0.0]
                .choose(rng)
                .unwrap_or(&0.0),
        )),
        Category::Text => Expr::Literal(Value::Text(pick(rng, TEXTS).to_string())),
        Category::Blob => lancet_server::literals::blob(rng),
        Category::Bool => Expr::Literal(Value::Boolean(rng.random_bool(0.5))),
        Category::Date => typed(pick(rng, DATES), "DATE"),
        Category::Timestamp => typed(pick(rng, TIMESTAMPS), "TIMESTAMP"),
        Category::Time => typed(pick(rng, TIMES), "TIME"),
        Category::Interval => typed(pick(rng, INTERVALS), "INTERVAL"),
        Category::List => crate::nested::list_literal(rng),
        Category::Struct => crate::nested::struct_literal(rng),
        Category::Map => crate::nested::map_literal(rng),
    }
}
