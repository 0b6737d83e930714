//! Statements that fill and change a generated database, where server
//! providers write them alike: DELETE and UPDATE with a generated
//! predicate, and the constants sampled from the data once it is filled.

use crate::{ColumnType, ExprGen, Sampled, ServerSchema, ServerTable};
use lancet_core::{Dialect, ExecError, Expr, Rng, Session, StatementKind, ToSql, Value};

/// Rows read per table for [`Sampled`].
const SAMPLED_ROWS: usize = 6;

/// `DELETE FROM t WHERE p`, with `p` of depth 1 over the table's columns.
pub fn delete<S: ServerSchema>(
    rng: &mut Rng,
    session: &mut Session,
    schema: &S,
    table: &S::Table,
    dialect: Dialect,
) -> Result<(), ExecError> {
    let typed = table.typed_columns(table.name());
    let p = ExprGen::new(schema, false).predicate(rng, &typed, 1);
    session.execute_sql(
        StatementKind::Delete,
        format!("DELETE FROM {} WHERE {}", table.name(), p.to_sql(dialect)),
    )?;
    Ok(())
}

/// `UPDATE t SET column = value WHERE p`: `value` the provider's, or
/// (`None`) an expression of the column's category over the table's
/// columns; `p` of depth 1.
pub fn update<S: ServerSchema>(
    rng: &mut Rng,
    session: &mut Session,
    (schema, table): (&S, &S::Table),
    (column, value): (&str, Option<Expr>),
    dialect: Dialect,
) -> Result<(), ExecError> {
    let typed = table.typed_columns(table.name());
    let mut g = ExprGen::new(schema, false);
    let value = match value {
        Some(v) => v,
        None => {
            let category = table
                .columns()
                .iter()
                .find(|(c, _)| c == column)
                .map(|(_, ty)| ty.declared().1);
            match category {
                Some(c) => g.expr(rng, &typed, c, 1),
                None => return Ok(()),
            }
        }
    };
    let p = g.predicate(rng, &typed, 1);
    session.execute_sql(
        StatementKind::Update,
        format!(
            "UPDATE {} SET {column} = {} WHERE {}",
            table.name(),
            value.to_sql(dialect),
            p.to_sql(dialect)
        ),
    )?;
    Ok(())
}

/// One table's sample: the columns to read (as the select list writes
/// them, with how ORDER BY sorts each, so that a database regenerated on
/// the same DBMS samples the same values) and their categories.
pub struct SampleOf<'a, C> {
    pub table: &'a str,
    pub columns: Vec<(String, String, C)>,
}

/// Constants from every table's first rows: integers, decimals and short
/// texts, by category.
pub fn sample<C: PartialEq + Copy>(
    session: &mut Session,
    tables: Vec<SampleOf<'_, C>>,
) -> Result<Sampled<C>, ExecError> {
    let mut sampled = Sampled::default();
    for t in tables.into_iter().filter(|t| !t.columns.is_empty()) {
        let names: Vec<&str> = t.columns.iter().map(|(c, _, _)| c.as_str()).collect();
        let order: Vec<&str> = t.columns.iter().map(|(_, o, _)| o.as_str()).collect();
        let text = format!(
            "SELECT {} FROM {} ORDER BY {} LIMIT {SAMPLED_ROWS}",
            names.join(", "),
            t.table,
            order.join(", ")
        );
        let rows = match session.query_sql(&text) {
            Ok(rows) => rows,
            Err(ExecError::Expected(_)) => continue,
            Err(e) => return Err(e),
        };
        for row in rows {
            for (value, (_, _, category)) in row.into_iter().zip(&t.columns) {
                let keep = match &value {
                    Value::Integer(_) | Value::Decimal(_) => true,
                    Value::Text(t) => t.chars().count() <= 12,
                    _ => false,
                };
                if keep {
                    sampled.add_new(*category, Expr::Literal(value));
                }
            }
        }
    }
    Ok(sampled)
}
