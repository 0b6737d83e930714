//! lancet's own SQL syntax tree.
//!
//! Generators build these trees and oracles transform them; the printer in
//! [`crate::print`] turns them into text for one dialect. The tree is our own
//! (not sqlparser's) because it must represent constructs that a general
//! parser does not, such as SQLite's `a IS b` on any operands, `INDEXED BY`
//! and `WITHOUT ROWID`. Identifiers are generated (`t0`, `c1`) and printed
//! unquoted. Every node is serializable so that a finding can store the
//! oracle's inputs and the reducer can rebuild them.
//!
//! These are query nodes, every provider's. DDL and DML are each
//! provider's own (see the crate docs for the rule); only their
//! [`StatementKind`], which expected-error rules are keyed by, is here.
//!
//! The node types are here; constructors and traversals of expressions are
//! in [`exprs`], renaming the tables a query reads in [`rename`].

use crate::value::Value;
use serde::{Deserialize, Serialize};

mod exprs;
mod rename;
mod walk;
pub use rename::RenameTables;

/// A type as written in DDL or a CAST, verbatim (`INTEGER`, `VARCHAR(10)`,
/// `numeric(10,2)`). Providers know what their type names mean.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TypeName(pub String);

/// A possibly qualified column reference: `c0` or `t0.c0`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnRef {
    pub table: Option<String>,
    pub column: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `+x`
    Plus,
    /// `~x`
    BitNot,
    /// `NOT x`
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    /// String concatenation (`||`).
    Concat,
    BitAnd,
    BitOr,
    ShiftLeft,
    ShiftRight,
    Eq,
    NotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    /// Null-safe equality: SQLite `IS`, PostgreSQL `IS NOT DISTINCT FROM`, MySQL `<=>`.
    IsNotDistinctFrom,
    /// Null-safe inequality: SQLite `IS NOT`, PostgreSQL `IS DISTINCT FROM`.
    IsDistinctFrom,
    And,
    Or,
    /// POSIX regular expression match: PostgreSQL `~`, MySQL `REGEXP`.
    RegexMatch,
    /// MySQL's integer division, `DIV`.
    IntDiv,
    /// MySQL's bitwise exclusive or, `^`.
    BitXor,
    /// MySQL's logical exclusive or, `XOR`.
    Xor,
}

impl BinaryOp {
    /// The comparison operators, for generators to draw from.
    pub const COMPARISONS: [BinaryOp; 8] = [
        BinaryOp::Eq,
        BinaryOp::NotEq,
        BinaryOp::Lt,
        BinaryOp::LtEq,
        BinaryOp::Gt,
        BinaryOp::GtEq,
        BinaryOp::IsDistinctFrom,
        BinaryOp::IsNotDistinctFrom,
    ];

    pub fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Eq | NotEq | Lt | LtEq | Gt | GtEq | IsNotDistinctFrom | IsDistinctFrom
        )
    }
}

/// The pattern-matching operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum LikeKind {
    Like,
    /// SQLite `GLOB`.
    Glob,
    /// PostgreSQL `ILIKE`.
    ILike,
    /// PostgreSQL `SIMILAR TO`.
    SimilarTo,
}

/// An expression.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    Literal(Value),
    Column(ColumnRef),
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `x IS NULL` / `x IS NOT NULL`.
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    /// `x IS TRUE`, `x IS NOT FALSE`, ...
    IsBool {
        expr: Box<Expr>,
        value: bool,
        negated: bool,
    },
    Like {
        kind: LikeKind,
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
        symmetric: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    InSubquery {
        expr: Box<Expr>,
        query: Box<Query>,
        negated: bool,
    },
    Exists {
        query: Box<Query>,
        negated: bool,
    },
    /// A subquery that yields exactly one row and one column.
    Subquery(Box<Query>),
    /// `x op ANY (ARRAY[...])` / `x op ALL (ARRAY[...])` (PostgreSQL).
    Quantified {
        expr: Box<Expr>,
        op: BinaryOp,
        all: bool,
        list: Vec<Expr>,
    },
    /// `x op ANY (SELECT ...)` / `x op ALL (SELECT ...)` (not in SQLite).
    QuantifiedSubquery {
        expr: Box<Expr>,
        op: BinaryOp,
        all: bool,
        query: Box<Query>,
    },
    Case {
        operand: Option<Box<Expr>>,
        branches: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    Cast {
        expr: Box<Expr>,
        ty: TypeName,
    },
    Collate {
        expr: Box<Expr>,
        collation: String,
    },
    /// A scalar or aggregate function call. `COUNT(*)` is `CountStar`.
    Function {
        name: String,
        args: Vec<Expr>,
        distinct: bool,
    },
    CountStar,
    /// A window function call: `function OVER (PARTITION BY ... ORDER BY
    /// ...)`, with the default frame. `function` is a [`Expr::Function`]
    /// or [`Expr::CountStar`]. Generators use only calls whose value the
    /// window determines (aggregates of exact types, `rank`, `dense_rank`;
    /// no `row_number` without a total order), so that results do not
    /// depend on the order rows arrive in.
    Window {
        function: Box<Expr>,
        partition_by: Vec<Expr>,
        order_by: Vec<OrderBy>,
    },
}

/// One item of a select list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SelectItem {
    /// `*`
    Wildcard,
    /// `* EXCLUDE (a, b)`: every column of the FROM clause but these, by
    /// bare name. Only where the dialect spells it
    /// ([`crate::SqlDialect::wildcard_exclude`]): a derived table of every
    /// column of its relation but some.
    WildcardExcluding(Vec<String>),
    /// `* REPLACE (e AS a, ...)`: every column of the FROM clause, these
    /// (by bare name) replaced by expressions under their own names.
    /// Generators make one only for a dialect that has it (DuckDB): a
    /// derived table of every column of its relation, some computed.
    WildcardReplacing(Vec<(Expr, String)>),
    Expr {
        expr: Expr,
        alias: Option<String>,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum JoinKind {
    /// `a, b`
    Comma,
    Inner,
    Left,
    Right,
    Full,
    Cross,
    /// MySQL's `STRAIGHT_JOIN`: an inner join whose left side the optimizer
    /// must read first (join order fixed by the query text).
    Straight,
    /// DuckDB's `ASOF JOIN`: each left row with the one right row nearest
    /// it under the ON condition's inequality (among those its equalities
    /// match); left rows without one are dropped.
    AsOf,
    /// `ASOF LEFT JOIN`: as [`JoinKind::AsOf`], left rows without a match
    /// kept, NULL-extended.
    AsOfLeft,
    /// DuckDB's `POSITIONAL JOIN` (no constraint): the n-th row of the
    /// left side with the n-th of the right, the shorter side
    /// NULL-extended. Determined only where both sides' row order is (a
    /// single table's scan keeps its storage order).
    Positional,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum JoinConstraint {
    None,
    On(Expr),
    Using(Vec<String>),
    /// `NATURAL` joins name no constraint; the flag lives here so that a
    /// join has exactly one way of saying how rows match.
    Natural,
}

/// How a record keeps an index hint: plain JSON would write both `None`
/// and `Some(None)` (`NOT INDEXED`) as `null` and read back `None`. Here
/// `NOT INDEXED` is `""` (no index has an empty name); `null` stays "no
/// hint", as older records have it.
mod index_hint {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Option<String>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            None => s.serialize_none(),
            Some(None) => "".serialize(s),
            Some(Some(name)) => name.serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Option<String>>, D::Error> {
        Ok(match Option::<String>::deserialize(d)? {
            None => None,
            Some(name) if name.is_empty() => Some(None),
            Some(name) => Some(Some(name)),
        })
    }
}

/// A table, view or derived table in FROM.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum TableFactor {
    Table {
        name: String,
        alias: Option<String>,
        /// SQLite `INDEXED BY idx` / `NOT INDEXED` (`Some(None)`).
        #[serde(default, with = "index_hint")]
        indexed_by: Option<Option<String>>,
    },
    Derived {
        query: Box<Query>,
        alias: String,
        lateral: bool,
        /// How the query is written: in place, or as a common table
        /// expression named `alias` (`WITH alias AS (query)`, printed
        /// ahead of the query whose FROM names it). The rows are the same;
        /// the planner's path is not (a CTE may be inlined or
        /// materialized, and a distributed planner plans it on its own).
        #[serde(default)]
        form: DerivedForm,
    },
}

/// How a derived table is written (see [`TableFactor::Derived`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum DerivedForm {
    /// `(query) AS alias`
    #[default]
    Subquery,
    /// `WITH alias AS (query)`
    Cte,
    /// `WITH alias AS MATERIALIZED (query)`
    CteMaterialized,
    /// `WITH alias AS NOT MATERIALIZED (query)`
    CteNotMaterialized,
}

impl DerivedForm {
    /// Whether the derived table is written as a common table expression.
    pub fn is_cte(self) -> bool {
        self != DerivedForm::Subquery
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Join {
    pub kind: JoinKind,
    pub factor: TableFactor,
    pub constraint: JoinConstraint,
}

/// `FROM first JOIN ... JOIN ...`
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FromClause {
    pub first: TableFactor,
    pub joins: Vec<Join>,
}

impl FromClause {
    /// `FROM name [AS alias]`: the single-table FROM that tests and simple
    /// generators build most.
    pub fn table(name: &str, alias: Option<&str>) -> FromClause {
        FromClause {
            first: TableFactor::Table {
                name: name.into(),
                alias: alias.map(Into::into),
                indexed_by: None,
            },
            joins: vec![],
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderBy {
    pub expr: Expr,
    pub descending: bool,
    pub nulls_first: Option<bool>,
}

/// A single SELECT.
#[derive(Clone, Debug, PartialEq, Default, Serialize, Deserialize)]
pub struct Select {
    pub distinct: bool,
    pub items: Vec<SelectItem>,
    pub from: Option<FromClause>,
    pub selection: Option<Expr>,
    pub group_by: Vec<Expr>,
    /// `GROUP BY ALL`: grouped by every item without an aggregate
    /// (`group_by` then empty). Generators make one only for a dialect
    /// that has it (DuckDB).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group_by_all: bool,
    pub having: Option<Expr>,
    /// `QUALIFY p`: a filter over window calls, applied after them, as
    /// HAVING is after aggregates. Generators make one only for a
    /// dialect that has it (DuckDB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qualify: Option<Expr>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SetOperator {
    Union,
    UnionAll,
    Intersect,
    Except,
}

/// The body of a query: a SELECT or a set operation over two bodies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SetExpr {
    Select(Box<Select>),
    SetOp {
        op: SetOperator,
        left: Box<SetExpr>,
        right: Box<SetExpr>,
    },
}

/// A complete query, with ordering and limits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Query {
    pub body: SetExpr,
    pub order_by: Vec<OrderBy>,
    pub limit: Option<Expr>,
    pub offset: Option<Expr>,
}

impl Query {
    /// A query of one SELECT, without ORDER BY or LIMIT.
    pub fn select(select: Select) -> Query {
        Query {
            body: SetExpr::Select(Box::new(select)),
            order_by: vec![],
            limit: None,
            offset: None,
        }
    }

    /// `left op right op ...` over several selects, left-associative.
    pub fn set_operation(op: SetOperator, selects: Vec<Select>) -> Query {
        let mut iter = selects.into_iter();
        let first = iter
            .next()
            .expect("a set operation needs at least one select");
        let body = iter.fold(SetExpr::Select(Box::new(first)), |acc, s| SetExpr::SetOp {
            op,
            left: Box::new(acc),
            right: Box::new(SetExpr::Select(Box::new(s))),
        });
        Query {
            body,
            order_by: vec![],
            limit: None,
            offset: None,
        }
    }
}

/// What kind of statement a piece of SQL is: expected errors are declared per kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StatementKind {
    CreateTable,
    CreateIndex,
    CreateView,
    Insert,
    Update,
    Delete,
    /// ANALYZE, VACUUM, REINDEX.
    Maintenance,
    /// PRAGMA, SET.
    Setting,
    Query,
}

impl StatementKind {
    pub const ALL: [StatementKind; 9] = [
        StatementKind::CreateTable,
        StatementKind::CreateIndex,
        StatementKind::CreateView,
        StatementKind::Insert,
        StatementKind::Update,
        StatementKind::Delete,
        StatementKind::Maintenance,
        StatementKind::Setting,
        StatementKind::Query,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StatementKind::CreateTable => "create-table",
            StatementKind::CreateIndex => "create-index",
            StatementKind::CreateView => "create-view",
            StatementKind::Insert => "insert",
            StatementKind::Update => "update",
            StatementKind::Delete => "delete",
            StatementKind::Maintenance => "maintenance",
            StatementKind::Setting => "setting",
            StatementKind::Query => "query",
        }
    }
}

#[cfg(test)]
mod serde_tests {
    use super::TableFactor;

    #[test]
    fn index_hints_survive_a_json_round_trip() {
        for hint in [None, Some(None), Some(Some("i1".to_string()))] {
            let t = TableFactor::Table {
                name: "t0".into(),
                alias: None,
                indexed_by: hint,
            };
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(
                serde_json::from_str::<TableFactor>(&json).unwrap(),
                t,
                "{json}"
            );
        }
        // Older records wrote no hint as null.
        let old = r#"{"Table":{"name":"t0","alias":null,"indexed_by":null}}"#;
        assert!(matches!(
            serde_json::from_str::<TableFactor>(old).unwrap(),
            TableFactor::Table {
                indexed_by: None,
                ..
            }
        ));
    }
}
