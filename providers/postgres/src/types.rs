//! PostgreSQL column types, grouped by what expressions may do with them,
//! and random literals of each.

use lancet_core::{BinaryOp, Expr, Rng, TypeName, UnaryOp, Value};
use lancet_server::{ColumnType, ServerCategory};
use rand::seq::IndexedRandom;
use rand::Rng as _;

/// What an expression's value is, for choosing operators and functions
/// that accept it (PostgreSQL is strictly typed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// smallint, integer, bigint
    Int,
    /// numeric(p,s)
    Numeric,
    /// real, double precision
    Float,
    /// text, varchar(n), char(n)
    Text,
    Bool,
    Bytea,
    Date,
}

impl Category {
    pub const ALL: [Category; 7] = [
        Category::Int,
        Category::Numeric,
        Category::Float,
        Category::Text,
        Category::Bool,
        Category::Bytea,
        Category::Date,
    ];

    /// Categories PostgreSQL compares with each other without a cast.
    pub fn comparable(self, other: Category) -> bool {
        self == other || (self.is_number() && other.is_number())
    }

    pub fn is_number(self) -> bool {
        matches!(self, Category::Int | Category::Numeric | Category::Float)
    }
}

/// A column type as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PgType {
    pub name: String,
    pub category: Category,
}

impl PgType {
    pub fn random(rng: &mut Rng) -> PgType {
        let (name, category) = match rng.random_range(0..14) {
            0 => ("smallint".to_string(), Category::Int),
            1 | 2 => ("integer".to_string(), Category::Int),
            3 => ("bigint".to_string(), Category::Int),
            4 | 5 => {
                let p = rng.random_range(4..=12);
                let s = rng.random_range(0..=3.min(p - 1));
                (format!("numeric({p},{s})"), Category::Numeric)
            }
            6 => ("real".to_string(), Category::Float),
            7 => ("double precision".to_string(), Category::Float),
            8 | 9 => ("text".to_string(), Category::Text),
            10 => (
                format!("varchar({})", rng.random_range(1..=8)),
                Category::Text,
            ),
            11 => (format!("char({})", rng.random_range(1..=4)), Category::Text),
            12 => ("boolean".to_string(), Category::Bool),
            _ => {
                if rng.random_bool(0.5) {
                    ("bytea".to_string(), Category::Bytea)
                } else {
                    ("date".to_string(), Category::Date)
                }
            }
        };
        PgType { name, category }
    }

    pub fn type_name(&self) -> TypeName {
        TypeName(self.name.clone())
    }

    /// Reads back a type this module declared.
    pub fn from_name(name: &str) -> PgType {
        let category = if name.starts_with("numeric") {
            Category::Numeric
        } else if name.starts_with("varchar") || name.starts_with("char") || name == "text" {
            Category::Text
        } else {
            match name {
                "smallint" | "integer" | "bigint" => Category::Int,
                "real" | "double precision" => Category::Float,
                "boolean" => Category::Bool,
                "bytea" => Category::Bytea,
                "date" => Category::Date,
                _ => Category::Text,
            }
        };
        PgType {
            name: name.to_string(),
            category,
        }
    }
}

/// The type a cast to `category` names.
pub fn cast_target(rng: &mut Rng, category: Category) -> TypeName {
    let name = match category {
        Category::Int => *["smallint", "integer", "bigint"]
            .choose(rng)
            .unwrap_or(&"integer"),
        Category::Numeric => *["numeric", "numeric(10,2)"]
            .choose(rng)
            .unwrap_or(&"numeric"),
        Category::Float => *["real", "double precision"].choose(rng).unwrap_or(&"real"),
        Category::Text => *["text", "varchar(4)", "char(3)"]
            .choose(rng)
            .unwrap_or(&"text"),
        Category::Bool => "boolean",
        Category::Bytea => "bytea",
        Category::Date => "date",
    };
    TypeName(name.to_string())
}

const STRINGS: &[&str] = &[
    "", "a", "A", "b", "ab", "aB", "abc", " a", "a ", "%", "_", "a%", "1", "0", "-1", "10", "1.5",
    "t", "f", "x1", "zz", "É", "é", "a_c", "B10",
];

/// A random literal of `category`, typed so that PostgreSQL reads it as one
/// (a bare `1.5` is numeric; floats are written `'1.5'::float8`).
pub fn literal(rng: &mut Rng, category: Category) -> Expr {
    if rng.random_bool(0.08) {
        // A bare NULL has no type: `NULL + NULL` is ambiguous in PostgreSQL.
        return Expr::Cast {
            expr: Box::new(Expr::Literal(Value::Null)),
            ty: cast_target(rng, category),
        };
    }
    match category {
        Category::Int => {
            let v = *[
                0i64, 1, -1, 2, 3, 5, 7, 10, 100, -100, 32767, -32768, 2147483647, 255,
            ]
            .choose(rng)
            .unwrap_or(&0);
            if rng.random_bool(0.7) {
                Expr::int(rng.random_range(-10..=10))
            } else {
                Expr::int(v)
            }
        }
        Category::Numeric => {
            let text = *[
                "0", "1", "0.5", "1.25", "2.50", "10.001", "123.4", "0.1", "99.99", "3",
            ]
            .choose(rng)
            .unwrap_or(&"0");
            let v = Value::Decimal(if rng.random_bool(0.3) {
                format!("-{text}")
            } else {
                text.to_string()
            });
            Expr::Literal(v)
        }
        Category::Float => {
            let v = *[0.0, 1.0, -1.0, 0.5, 1.5, -2.25, 1e10, 3.0, 0.1, -0.0, 1e-5]
                .choose(rng)
                .unwrap_or(&0.0);
            Expr::Literal(Value::Real(v))
        }
        Category::Text => {
            Expr::Literal(Value::Text(STRINGS.choose(rng).unwrap_or(&"a").to_string()))
        }
        Category::Bool => Expr::Literal(Value::Boolean(rng.random_bool(0.5))),
        Category::Bytea => {
            let n = rng.random_range(0..3);
            Expr::Literal(Value::Blob(
                (0..n).map(|_| rng.random_range(0..=255u8)).collect(),
            ))
        }
        Category::Date => {
            let text = *[
                "2020-01-01",
                "2021-06-15",
                "1999-12-31",
                "2024-02-29",
                "2000-01-01",
            ]
            .choose(rng)
            .unwrap_or(&"2020-01-01");
            Expr::Cast {
                expr: Box::new(Expr::Literal(Value::Text(text.to_string()))),
                ty: TypeName("date".into()),
            }
        }
    }
}

/// A column (or expression) a generated expression may read, with its
/// category.
pub type TypedColumn = lancet_server::TypedColumn<Category>;

impl ServerCategory for Category {
    const CATEGORIES: &'static [Category] = &Category::ALL;
    const LITERAL: fn(&mut Rng, Category) -> Expr = literal;

    /// A type name for a category, for scope columns whose exact type is
    /// not known.
    fn scope_type(self) -> &'static str {
        match self {
            Category::Int => "bigint",
            Category::Numeric => "numeric",
            Category::Float => "double precision",
            Category::Text => "text",
            Category::Bool => "boolean",
            Category::Bytea => "bytea",
            Category::Date => "date",
        }
    }

    fn of_type_name(name: &str) -> Category {
        PgType::from_name(name).category
    }

    /// Shapes an oracle or a reducer may build from generated parts.
    fn of_shape(expr: &Expr, known: &dyn Fn(&Expr) -> Option<Category>) -> Option<Category> {
        match expr {
            Expr::Cast { ty, .. } => Some(PgType::from_name(&ty.0).category),
            Expr::Collate { .. }
            | Expr::Binary {
                op: BinaryOp::Concat,
                ..
            } => Some(Category::Text),
            Expr::Literal(v) => match v {
                Value::Text(_) => Some(Category::Text),
                Value::Integer(_) => Some(Category::Int),
                Value::Decimal(_) => Some(Category::Numeric),
                Value::Real(_) => Some(Category::Float),
                Value::Boolean(_) => Some(Category::Bool),
                Value::Blob(_) => Some(Category::Bytea),
                Value::Null => None,
            },
            Expr::Unary {
                op: UnaryOp::Neg,
                expr,
            } => known(expr),
            Expr::Function { name, args, .. } => match name.to_ascii_lowercase().as_str() {
                "coalesce" | "nullif" | "greatest" | "least" => {
                    common_category(args.iter().filter_map(known))
                }
                "lower" | "upper" | "substr" | "replace" | "btrim" | "ltrim" | "rtrim" | "left"
                | "right" | "md5" | "reverse" => Some(Category::Text),
                _ => None,
            },
            Expr::Case {
                branches,
                otherwise,
                ..
            } => common_category(
                branches
                    .iter()
                    .map(|(_, e)| e)
                    .chain(otherwise.as_deref())
                    .filter_map(known),
            ),
            _ => None,
        }
    }

    /// `=` does not compare bytea in IN subqueries' columns.
    fn comparable(self) -> bool {
        self != Category::Bytea
    }
}

/// The category PostgreSQL resolves CASE, COALESCE, GREATEST... to:
/// integers widen to numeric, numeric to float.
fn common_category(categories: impl Iterator<Item = Category>) -> Option<Category> {
    categories.reduce(|a, b| match (a, b) {
        _ if a == b => a,
        (Category::Float, _) | (_, Category::Float) if a.is_number() && b.is_number() => {
            Category::Float
        }
        _ if a.is_number() && b.is_number() => Category::Numeric,
        // Unlike categories would not type-check; keep the first.
        _ => a,
    })
}

impl ColumnType for PgType {
    type Category = Category;

    fn declared(&self) -> (&str, Category) {
        (&self.name, self.category)
    }
}
