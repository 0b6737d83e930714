//! Constants sampled from a populated database's rows, for the query
//! generator's comparisons (see [`PgSchema::sampled`]).

use crate::schema::PgSchema;
use crate::types::Category;
use lancet_core::schema::RelationKind;
use lancet_core::{ExecError, Expr, Session};
use lancet_server::folded::{unprefixed, TEXT_PREFIX};

/// Rows of each table read for [`PgSchema::sampled`].
const SAMPLED_ROWS: usize = 8;
/// The longest text sampled, in characters (literals stay short).
const MAX_SAMPLED_TEXT: usize = 12;

/// Samples constants from the first rows of every table, ordered by every
/// sampled column so that a database regenerated on the same server (or
/// on Citus, whose workers answer in any order) samples the same values.
/// Each value is read as text behind [`TEXT_PREFIX`] (the driver would
/// turn text that looks like a number into one), as constant folding reads
/// them and becomes a literal of its
/// column's category; booleans and bytea are left to the generator.
pub(super) fn sample_values(session: &mut Session, schema: &mut PgSchema) -> Result<(), ExecError> {
    let sampled_category = |c: Category| {
        matches!(
            c,
            Category::Int | Category::Numeric | Category::Float | Category::Text | Category::Date
        )
    };
    for table in &schema.relations {
        if table.kind == RelationKind::View {
            continue;
        }
        let columns: Vec<(&str, Category)> = table
            .columns
            .iter()
            .filter(|(_, ty)| sampled_category(ty.category))
            .map(|(name, ty)| (name.as_str(), ty.category))
            .collect();
        if columns.is_empty() {
            continue;
        }
        let select: Vec<String> = columns
            .iter()
            .map(|(name, _)| format!("'{TEXT_PREFIX}' || {name}::text"))
            .collect();
        let order: Vec<String> = (1..=columns.len()).map(|i| i.to_string()).collect();
        let sql = format!(
            "SELECT {} FROM {} ORDER BY {} LIMIT {SAMPLED_ROWS}",
            select.join(", "),
            table.name,
            order.join(", ")
        );
        let rows = match session.query_sql(&sql) {
            Ok(rows) => rows,
            Err(ExecError::Expected(_)) => continue,
            Err(e) => return Err(e),
        };
        for row in rows {
            for (value, &(_, category)) in row.iter().zip(&columns) {
                let Some(text) = unprefixed(value) else {
                    continue;
                };
                if let Some(literal) = sampled_literal(category, text) {
                    schema.sampled.add(category, literal);
                }
            }
        }
    }
    Ok(())
}

/// A literal of `category` for a value PostgreSQL printed as `text`.
fn sampled_literal(category: Category, text: &str) -> Option<Expr> {
    use lancet_core::Value;
    let finite = || text.parse::<f64>().ok().filter(|f| f.is_finite());
    match category {
        Category::Int => text.parse::<i64>().ok().map(Expr::int),
        Category::Numeric => finite().map(|_| Expr::Literal(Value::Decimal(text.to_string()))),
        Category::Float => finite().map(|f| Expr::Literal(Value::Real(f))),
        Category::Text => (text.chars().count() <= MAX_SAMPLED_TEXT)
            .then(|| Expr::Literal(Value::Text(text.to_string()))),
        Category::Date => Some(Expr::Cast {
            expr: Box::new(Expr::Literal(Value::Text(text.to_string()))),
            ty: lancet_core::TypeName("date".into()),
        }),
        Category::Bool | Category::Bytea => None,
    }
}
