//! Checking the core printer's SQL with sqlparser, in the style of
//! sqlparser-rs's own tests: build the tree, assert the exact text, and have
//! sqlparser parse it with the matching dialect wherever it supports the
//! construct. Precedence-sensitive trees are also compared structurally
//! with what sqlparser parsed.
//!
//! [`suite`] holds the cases every dialect runs (through
//! [`crate::printer_suite`]), with each dialect's expected text side by
//! side; [`trees`] builds their trees. Each dialect runs them in the crate
//! that supplies it, and core runs them for a test dialect with MySQL's
//! rules, which overrides every default.

pub mod suite;
pub mod trees;

use lancet_core::ast::*;
use lancet_core::value::Value;
use lancet_core::{Dialect, ToSql};
use sqlparser::ast as sp;
use sqlparser::dialect::Dialect as SpDialect;
use sqlparser::parser::{Parser, ParserError};

/// A dialect under test, with the sqlparser dialect that reads its SQL.
pub struct Tested {
    dialect: Dialect,
    parser: Box<dyn SpDialect>,
}

impl Tested {
    pub fn new(dialect: Dialect, parser: impl SpDialect) -> Tested {
        Tested {
            dialect,
            parser: Box::new(parser),
        }
    }

    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether this is the dialect named `name`, for cases only some
    /// dialects have.
    pub fn is(&self, name: &str) -> bool {
        self.dialect.name() == name
    }

    /// This dialect's entry of `(dialect name, text)` pairs. A case that
    /// lists texts per dialect must list every dialect that runs it.
    #[track_caller]
    pub fn of<'a>(&self, texts: &[(&str, &'a str)]) -> &'a str {
        let name = self.dialect.name();
        match texts.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => text,
            None => panic!("no text for the dialect {name} in {texts:?}"),
        }
    }

    pub fn sql(&self, node: &impl ToSql) -> String {
        node.to_sql(self.dialect)
    }

    pub fn parse(&self, sql: &str) -> Result<Vec<sp::Statement>, ParserError> {
        Parser::parse_sql(&*self.parser, sql)
    }

    #[track_caller]
    pub fn parse_one(&self, sql: &str) -> sp::Statement {
        let d = self.dialect;
        let mut statements = self
            .parse(sql)
            .unwrap_or_else(|e| panic!("sqlparser ({d:?}) rejects {sql}: {e}"));
        assert_eq!(statements.len(), 1, "{sql}");
        statements.remove(0)
    }

    /// Asserts the printed text without parsing it (for syntax sqlparser
    /// lacks).
    #[track_caller]
    pub fn printed(&self, node: &impl ToSql, expected: &str) {
        assert_eq!(self.sql(node), expected, "{:?}", self.dialect);
    }

    /// Asserts the printed text and that sqlparser parses it in this
    /// dialect.
    #[track_caller]
    pub fn verified(&self, node: &impl ToSql, expected: &str) -> sp::Statement {
        self.printed(node, expected);
        self.parse_one(expected)
    }

    /// Asserts an expression's text and parses it as `SELECT text`,
    /// returning what sqlparser made of it.
    #[track_caller]
    pub fn verified_expr(&self, e: &Expr, expected: &str) -> sp::Expr {
        self.printed(e, expected);
        first_projection(self.parse_one(&format!("SELECT {expected}")))
    }

    /// Asserts that sqlparser parsed the printed expression into the same
    /// tree as ours, parentheses aside: our precedence survived its parser.
    #[track_caller]
    pub fn same_shape(&self, e: &Expr) {
        let sql = self.sql(e);
        let parsed = first_projection(self.parse_one(&format!("SELECT {sql}")));
        assert_eq!(
            sp_shape(&parsed),
            self.our_shape(e),
            "{:?}: {sql}",
            self.dialect
        );
    }

    /// Our tree in the form of [`sp_shape`]. Leaves other than columns and
    /// integers are printed, which matches sqlparser's display for the
    /// leaves used with it (casts, functions, text without quotes).
    pub fn our_shape(&self, e: &Expr) -> String {
        let s = |e: &Expr| self.our_shape(e);
        let not = |negated: bool| if negated { "NOT " } else { "" };
        match e {
            Expr::Literal(Value::Integer(i)) if *i < 0 => format!("(- {})", i.unsigned_abs()),
            Expr::Literal(Value::Integer(i)) => i.to_string(),
            Expr::Column(_) => self.sql(e),
            Expr::Unary { op, expr } => {
                let op = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    UnaryOp::BitNot => "~",
                    UnaryOp::Not => "NOT",
                };
                format!("({op} {})", s(expr))
            }
            Expr::Binary { op, left, right } => {
                let (l, r) = (s(left), s(right));
                use BinaryOp::*;
                let mysql = self.is("mysql");
                let op = match op {
                    Concat if mysql => return format!("(CONCAT {l} {r})"),
                    IsDistinctFrom if mysql => return format!("(NOT (<=> {l} {r}))"),
                    IsNotDistinctFrom if mysql => "<=>",
                    IsNotDistinctFrom => return format!("(IS NOT DISTINCT FROM {l} {r})"),
                    IsDistinctFrom => return format!("(IS DISTINCT FROM {l} {r})"),
                    Add => "+",
                    Sub => "-",
                    Mul => "*",
                    Div => "/",
                    Mod => "%",
                    Concat => "||",
                    BitAnd => "&",
                    BitOr => "|",
                    ShiftLeft => "<<",
                    ShiftRight => ">>",
                    Eq => "=",
                    NotEq => "<>",
                    Lt => "<",
                    LtEq => "<=",
                    Gt => ">",
                    GtEq => ">=",
                    And => "AND",
                    Or => "OR",
                    RegexMatch | IntDiv | BitXor | Xor => unreachable!("not generated here"),
                };
                format!("({op} {l} {r})")
            }
            Expr::IsNull { expr, negated } => format!("(IS {}NULL {})", not(*negated), s(expr)),
            Expr::IsBool {
                expr,
                value,
                negated,
            } => format!(
                "(IS {}{} {})",
                not(*negated),
                if *value { "TRUE" } else { "FALSE" },
                s(expr)
            ),
            Expr::Like {
                kind,
                expr,
                pattern,
                escape,
                negated,
            } => {
                let kind = match kind {
                    LikeKind::Like => "LIKE",
                    LikeKind::ILike => "ILIKE",
                    LikeKind::SimilarTo => "SIMILAR TO",
                    LikeKind::Glob => "GLOB",
                };
                let not = not(*negated);
                match escape {
                    Some(x) => format!(
                        "({not}{kind} {} {} ESCAPE {})",
                        s(expr),
                        s(pattern),
                        self.sql(&**x)
                    ),
                    None => format!("({not}{kind} {} {})", s(expr), s(pattern)),
                }
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
                symmetric: false,
            } => format!(
                "({}BETWEEN {} {} {})",
                not(*negated),
                s(expr),
                s(low),
                s(high)
            ),
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                let items: Vec<String> = list.iter().map(s).collect();
                format!("({}IN {} {})", not(*negated), s(expr), items.join(" "))
            }
            Expr::Collate { expr, .. } => {
                // The printed collation, as sqlparser displays it.
                let printed = self.sql(e);
                let name = printed.rsplit(" COLLATE ").next().unwrap_or_default();
                format!("(COLLATE {} {name})", s(expr))
            }
            Expr::Function {
                name,
                args,
                distinct: false,
            } if !args.is_empty() => {
                let args: Vec<String> = args.iter().map(s).collect();
                format!("({name} {})", args.join(" "))
            }
            _ => self.sql(e),
        }
    }
}

/// The first select item of `SELECT ...`.
#[track_caller]
pub fn first_projection(statement: sp::Statement) -> sp::Expr {
    let sp::Statement::Query(q) = statement else {
        panic!("not a query: {statement}")
    };
    let sp::SetExpr::Select(s) = *q.body else {
        panic!("not a plain select")
    };
    match s.projection.into_iter().next() {
        Some(sp::SelectItem::UnnamedExpr(e)) => e,
        other => panic!("unexpected select item {other:?}"),
    }
}

/// A fully parenthesized prefix form of sqlparser's expression, ignoring
/// its `Nested` nodes. Leaves print as sqlparser prints them.
pub fn sp_shape(e: &sp::Expr) -> String {
    use sp::Expr as S;
    let s = |e: &sp::Expr| sp_shape(e);
    let not = |negated: bool| if negated { "NOT " } else { "" };
    match e {
        S::Nested(inner) => s(inner),
        S::UnaryOp { op, expr } => format!("({op} {})", s(expr)),
        S::BinaryOp { left, op, right } => format!("({op} {} {})", s(left), s(right)),
        S::IsNull(x) => format!("(IS NULL {})", s(x)),
        S::IsNotNull(x) => format!("(IS NOT NULL {})", s(x)),
        S::IsTrue(x) => format!("(IS TRUE {})", s(x)),
        S::IsNotTrue(x) => format!("(IS NOT TRUE {})", s(x)),
        S::IsFalse(x) => format!("(IS FALSE {})", s(x)),
        S::IsNotFalse(x) => format!("(IS NOT FALSE {})", s(x)),
        S::IsDistinctFrom(a, b) => format!("(IS DISTINCT FROM {} {})", s(a), s(b)),
        S::IsNotDistinctFrom(a, b) => format!("(IS NOT DISTINCT FROM {} {})", s(a), s(b)),
        S::Between {
            expr,
            negated,
            low,
            high,
        } => format!(
            "({}BETWEEN {} {} {})",
            not(*negated),
            s(expr),
            s(low),
            s(high)
        ),
        S::Like {
            negated,
            expr,
            pattern,
            escape_char,
            ..
        } => like_shape("LIKE", *negated, s(expr), s(pattern), escape_char),
        S::ILike {
            negated,
            expr,
            pattern,
            escape_char,
            ..
        } => like_shape("ILIKE", *negated, s(expr), s(pattern), escape_char),
        S::SimilarTo {
            negated,
            expr,
            pattern,
            escape_char,
        } => like_shape("SIMILAR TO", *negated, s(expr), s(pattern), escape_char),
        S::InList {
            expr,
            list,
            negated,
        } => {
            let items: Vec<String> = list.iter().map(s).collect();
            format!("({}IN {} {})", not(*negated), s(expr), items.join(" "))
        }
        S::Collate { expr, collation } => format!("(COLLATE {} {collation})", s(expr)),
        S::Function(f) => match &f.args {
            sp::FunctionArguments::List(list) if list.duplicate_treatment.is_none() => {
                let args: Vec<String> = list
                    .args
                    .iter()
                    .map(|a| match a {
                        sp::FunctionArg::Unnamed(sp::FunctionArgExpr::Expr(e)) => s(e),
                        other => other.to_string(),
                    })
                    .collect();
                format!("({} {})", f.name, args.join(" "))
            }
            _ => e.to_string(),
        },
        other => other.to_string(),
    }
}

fn like_shape(
    kind: &str,
    negated: bool,
    expr: String,
    pattern: String,
    escape: &Option<sp::Value>,
) -> String {
    let not = if negated { "NOT " } else { "" };
    match escape {
        Some(e) => format!("({not}{kind} {expr} {pattern} ESCAPE {e})"),
        None => format!("({not}{kind} {expr} {pattern})"),
    }
}

/// The string sqlparser decoded from a literal, through a PostgreSQL cast.
#[track_caller]
pub fn decoded_string(e: &sp::Expr) -> String {
    match e {
        sp::Expr::Value(v) => match &v.value {
            sp::Value::SingleQuotedString(s) | sp::Value::HexStringLiteral(s) => s.clone(),
            other => panic!("not a string: {other:?}"),
        },
        sp::Expr::Cast { expr, .. } => decoded_string(expr),
        sp::Expr::Nested(inner) => decoded_string(inner),
        other => panic!("not a string literal: {other:?}"),
    }
}
