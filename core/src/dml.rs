//! The data-changing statements an oracle may run inside a check (see
//! [`crate::OracleQuery::rolled_back`]): UPDATE and DELETE of one table
//! by a predicate, printed the same in every dialect (a provider's own
//! population DML has richer trees of its own).

use crate::ast::{Expr, StatementKind};
use crate::print::{Printer, ToSql};

/// An UPDATE or DELETE of one base table, unaliased, by an optional
/// predicate over its columns.
#[derive(Clone, Debug, PartialEq)]
pub enum Dml {
    /// `UPDATE table SET column = value, ... [WHERE selection]`.
    Update {
        table: String,
        set: Vec<(String, Expr)>,
        selection: Option<Expr>,
    },
    /// `DELETE FROM table [WHERE selection]`.
    Delete {
        table: String,
        selection: Option<Expr>,
    },
}

impl Dml {
    /// The statement's kind, as expected errors are listed by.
    pub fn kind(&self) -> StatementKind {
        match self {
            Dml::Update { .. } => StatementKind::Update,
            Dml::Delete { .. } => StatementKind::Delete,
        }
    }
}

impl ToSql for Dml {
    fn print(&self, p: &mut Printer) {
        let selection = match self {
            Dml::Update {
                table,
                set,
                selection,
            } => {
                p.push("UPDATE ");
                p.push(table);
                p.push(" SET ");
                p.list(set, ", ", |p, (column, value)| {
                    p.push(column);
                    p.push(" = ");
                    value.print(p);
                });
                selection
            }
            Dml::Delete { table, selection } => {
                p.push("DELETE FROM ");
                p.push(table);
                selection
            }
        };
        if let Some(w) = selection {
            p.push(" WHERE ");
            w.print(p);
        }
    }
}
