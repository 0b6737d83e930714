//! The column types the generator uses, grouped into categories that say
//! which expressions fit them, and literals of each.

use lancet_core::{Expr, Rng, Value};
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
    Date,
}

impl Category {
    pub const ALL: [Category; 6] = [
        Category::Int,
        Category::Decimal,
        Category::Float,
        Category::Text,
        Category::Blob,
        Category::Date,
    ];

    pub fn is_number(self) -> bool {
        matches!(self, Category::Int | Category::Decimal | Category::Float)
    }
}

impl ServerCategory for Category {
    const CATEGORIES: &'static [Category] = &Category::ALL;
    const LITERAL: fn(&mut Rng, Category) -> Expr = literal;

    /// A type name for a category, for scope columns.
    fn scope_type(self) -> &'static str {
        match self {
            Category::Int => "BIGINT",
            Category::Decimal => "DECIMAL",
            Category::Float => "DOUBLE",
            Category::Text => "TEXT",
            Category::Blob => "BLOB",
            Category::Date => "DATETIME",
        }
    }

    /// The category of a type name as a scope column carries it.
    fn of_type_name(ty: &str) -> Category {
        let t = ty.to_ascii_uppercase();
        if t.contains("INT") || t == "SIGNED" || t == "UNSIGNED" {
            Category::Int
        } else if t.starts_with("DECIMAL") {
            Category::Decimal
        } else if t == "DOUBLE" || t == "FLOAT" {
            Category::Float
        } else if t.contains("BLOB") || t.contains("BINARY") {
            Category::Blob
        } else if t.starts_with("DATE") {
            Category::Date
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
            Expr::Cast { ty, .. } => match ty.0.as_str() {
                "CHAR" => Some(Category::Text),
                "BINARY" => Some(Category::Blob),
                "SIGNED" | "UNSIGNED" => Some(Category::Int),
                "DOUBLE" => Some(Category::Float),
                "DATE" => Some(Category::Date),
                _ => Some(Category::Decimal),
            },
            _ => None,
        }
    }
}

impl ColumnType for MyType {
    type Category = Category;

    fn declared(&self) -> (&str, Category) {
        (&self.sql, self.category)
    }

    /// A BIT column as `(column + 0)`. MariaDB labels some results of BIT
    /// type (a BIT column read through a derived table, a UNION or MAX)
    /// yet sends them as decimal text instead of bits, so a bare BIT
    /// value in a result cannot be read back reliably, by lancet or by
    /// the `mariadb` client; as a number it always can.
    fn read(&self, column: Expr) -> Expr {
        if self.is_bit() {
            Expr::binary(lancet_core::BinaryOp::Add, column, Expr::int(0))
        } else {
            column
        }
    }
}

/// A column type as written in CREATE TABLE.
#[derive(Clone, Debug, PartialEq)]
pub struct MyType {
    pub sql: String,
    pub category: Category,
    /// Whether it is TEXT or BLOB, which MEMORY tables refuse and indexes
    /// take only with a prefix length.
    pub is_lob: bool,
    /// Whether it is BIT(n) or ENUM, which take only some values: a random
    /// literal default is refused, and a prefix index makes no sense.
    pub fixed_domain: bool,
}

impl MyType {
    fn new(sql: &str, category: Category) -> MyType {
        MyType {
            sql: sql.to_string(),
            category,
            is_lob: false,
            fixed_domain: false,
        }
    }

    pub fn is_bit(&self) -> bool {
        self.sql.starts_with("BIT(")
    }

    /// A random column type.
    pub fn random(rng: &mut Rng) -> MyType {
        let unsigned = if rng.random_bool(0.2) {
            " UNSIGNED"
        } else {
            ""
        };
        match rng.random_range(0..18) {
            0 => MyType::new(&format!("TINYINT{unsigned}"), Category::Int),
            1 => MyType::new(&format!("SMALLINT{unsigned}"), Category::Int),
            2..=4 => MyType::new(&format!("INT{unsigned}"), Category::Int),
            5 => MyType::new(&format!("BIGINT{unsigned}"), Category::Int),
            6 => {
                let p = rng.random_range(1..=20);
                let s = rng.random_range(0..=p.min(6));
                MyType::new(&format!("DECIMAL({p},{s}){unsigned}"), Category::Decimal)
            }
            7 => MyType::new("DOUBLE", Category::Float),
            8 => MyType::new("FLOAT", Category::Float),
            9 => MyType::new(
                &format!("CHAR({}){}", rng.random_range(1..=10), collation(rng)),
                Category::Text,
            ),
            10 | 11 => MyType::new(
                &format!("VARCHAR({}){}", rng.random_range(1..=40), collation(rng)),
                Category::Text,
            ),
            12 => MyType {
                is_lob: true,
                ..MyType::new(&format!("TEXT{}", collation(rng)), Category::Text)
            },
            13 => {
                if rng.random_bool(0.5) {
                    MyType::new(
                        &format!("VARBINARY({})", rng.random_range(1..=20)),
                        Category::Blob,
                    )
                } else {
                    MyType {
                        is_lob: true,
                        ..MyType::new("BLOB", Category::Blob)
                    }
                }
            }
            14 => MyType::new("DATE", Category::Date),
            // Read back as integers; in expressions a number.
            15 => MyType {
                fixed_domain: true,
                ..MyType::new(&format!("BIT({})", rng.random_range(1..=64)), Category::Int)
            },
            // Members in byte order, so that their order by index (ORDER
            // BY, MIN/MAX on the column) agrees with their order as text
            // in every collation the generator uses; '' (index 0) is what
            // an invalid value becomes in a non-strict SQL mode.
            16 => MyType {
                fixed_domain: true,
                ..MyType::new(
                    &format!("ENUM('0', '1', 'a', 'ab', 'abc', 'b'){}", collation(rng)),
                    Category::Text,
                )
            },
            _ => MyType::new("DATETIME", Category::Date),
        }
    }

    /// The type an expression of `category` is cast to, as CAST spells it.
    pub fn cast_target(category: Category, rng: &mut Rng) -> &'static str {
        match category {
            Category::Int => ["SIGNED", "UNSIGNED"].choose(rng).unwrap_or(&"SIGNED"),
            Category::Decimal => "DECIMAL(10,2)",
            Category::Float => "DOUBLE",
            Category::Text => "CHAR",
            Category::Blob => "BINARY",
            Category::Date => "DATE",
        }
    }
}

/// A column collation clause: mostly the server's default, sometimes a
/// case-insensitive, binary or accent-sensitive one.
fn collation(rng: &mut Rng) -> &'static str {
    [
        "",
        "",
        " COLLATE utf8mb4_general_ci",
        " COLLATE utf8mb4_bin",
        " COLLATE utf8mb4_unicode_ci",
    ]
    .choose(rng)
    .unwrap_or(&"")
}

/// Strings that sit on the edges: empty, case, trailing blanks, digits
/// that compare as numbers, a backslash and a quote.
const TEXTS: &[&str] = &[
    "", "a", "A", "b", "ab", "a ", " a", "0", "1", "-1", "1e2", "0.5", "abc", "B", "x\\y", "it's",
    "%", "_", "é", "E",
];

const DATES: &[&str] = &[
    "2000-01-01",
    "1999-12-31",
    "2024-02-29",
    "1970-01-01 00:00:01",
    "2038-01-19 03:14:07",
    "0001-01-01",
    "9999-12-31 23:59:59",
];

/// A literal of `category`.
pub fn literal(rng: &mut Rng, category: Category) -> Expr {
    if rng.random_bool(0.08) {
        return Expr::Literal(Value::Null);
    }
    match category {
        Category::Int => lancet_server::literals::integer(rng),
        Category::Decimal => lancet_server::literals::decimal(rng),
        Category::Float => Expr::Literal(Value::Real(
            *[0.0, 1.0, -1.0, 0.5, 1.5, 1e10, -2.25, 3.0, 1e-3]
                .choose(rng)
                .unwrap_or(&0.0),
        )),
        Category::Text => Expr::Literal(Value::Text(TEXTS.choose(rng).unwrap_or(&"a").to_string())),
        Category::Blob => lancet_server::literals::blob(rng),
        Category::Date => Expr::Literal(Value::Text(
            DATES.choose(rng).unwrap_or(&"2000-01-01").to_string(),
        )),
    }
}
