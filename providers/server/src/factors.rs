//! FROM clause factors as the generators write them: a table under an
//! alias, a FROM of one table, a derived table in place. Below every
//! generator module, so that those that build FROM clauses
//! ([`crate::QueryCore`]'s joins and derived tables, [`crate::ExprGen`]'s
//! subqueries) share them without importing each other.

use lancet_core::{DerivedForm, FromClause, Query, Select, TableFactor};

/// `name AS alias` in FROM.
pub fn table_factor(name: &str, alias: &str) -> TableFactor {
    TableFactor::Table {
        name: name.to_string(),
        alias: Some(alias.to_string()),
        indexed_by: None,
    }
}

/// `FROM name AS alias`, alone.
pub fn one_table_from(name: &str, alias: &str) -> FromClause {
    FromClause {
        first: table_factor(name, alias),
        joins: vec![],
    }
}

/// `(select) AS alias`, written in place (a provider's menu may make it a
/// common table expression).
pub(crate) fn derived_factor(select: Select, alias: &str) -> TableFactor {
    TableFactor::Derived {
        query: Box::new(Query::select(select)),
        alias: alias.to_string(),
        lateral: false,
        form: DerivedForm::Subquery,
    }
}
