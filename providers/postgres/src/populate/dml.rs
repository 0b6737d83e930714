//! Rows: INSERT (with ON CONFLICT, and INSERT ... SELECT between tables),
//! UPDATE and DELETE, each only where the table's placement takes it.

use super::*;

/// A text literal cut to the length of a `char(n)` or `varchar(n)` column:
/// a longer one fails the whole INSERT (22001), and half of the inserts
/// did, leaving tables empty.
fn fitted(literal: Expr, ty: &PgType) -> Expr {
    let Some(limit) = ty
        .name
        .split_once('(')
        .and_then(|(_, rest)| rest.trim_end_matches(')').parse::<usize>().ok())
    else {
        return literal;
    };
    match literal {
        Expr::Literal(lancet_core::Value::Text(t)) if t.chars().count() > limit => {
            Expr::Literal(lancet_core::Value::Text(t.chars().take(limit).collect()))
        }
        other => other,
    }
}

/// The columns an INSERT may name (not GENERATED ones), with their types.
fn insertable_columns(t: &PgTable) -> Vec<&(String, PgType)> {
    t.columns
        .iter()
        .filter(|(c, _)| t.insertable.contains(c))
        .collect()
}

pub(super) fn insert(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &PgSchema,
) -> Result<(), ExecError> {
    let Some(t) = random_table(rng, schema) else {
        return Ok(());
    };
    let cols = insertable_columns(t);
    if cols.is_empty() {
        return Ok(());
    }
    let rows = rng.random_range(1..=4);
    let key = t.placement.column();
    let values: Vec<String> = (0..rows)
        .map(|_| {
            let vs: Vec<String> = cols
                .iter()
                .map(|(c, ty)| {
                    if key == Some(c.as_str()) {
                        // Citus refuses a row without a distribution value.
                        sql(&fitted(non_null_literal(rng, ty.category), ty))
                    } else if rng.random_bool(0.05) {
                        "DEFAULT".to_string()
                    } else {
                        sql(&fitted(literal(rng, ty.category), ty))
                    }
                })
                .collect();
            format!("({})", vs.join(", "))
        })
        .collect();
    let names: Vec<&str> = cols.iter().map(|(c, _)| c.as_str()).collect();
    let mut stmt = format!(
        "INSERT INTO {} ({}) VALUES {}",
        t.name,
        names.join(", "),
        values.join(", ")
    );
    match (rng.random_range(0..4), &t.primary_key) {
        (0, _) => stmt.push_str(" ON CONFLICT DO NOTHING"),
        (1, Some(pk)) => {
            if let Some((c, _)) = cols.iter().find(|(c, _)| c != pk) {
                stmt.push_str(&format!(
                    " ON CONFLICT ({pk}) DO UPDATE SET {c} = EXCLUDED.{c}"
                ));
            }
        }
        _ => {}
    }
    out.run(StatementKind::Insert, stmt)?;
    Ok(())
}

pub(super) fn update(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &PgSchema,
) -> Result<(), ExecError> {
    let Some(t) = random_table(rng, schema) else {
        return Ok(());
    };
    // Citus does not move rows between shards: the distribution column stays.
    let targets: Vec<&String> = t
        .insertable
        .iter()
        .filter(|c| Some(c.as_str()) != t.placement.column())
        .collect();
    let Some(target) = targets.choose(rng).map(|c| (*c).clone()) else {
        return Ok(());
    };
    let Some((_, ty)) = t.columns.iter().find(|(c, _)| *c == target) else {
        return Ok(());
    };
    let cols = t.bare_columns();
    let mut g = ExprGen::new(schema, schema.modifications_may_have_subqueries(t));
    let value = g.expr(rng, &cols, ty.category, 2);
    let mut stmt = format!("UPDATE {} SET {target} = {}", t.name, sql(&value));
    if rng.random_bool(0.8) {
        stmt.push_str(&format!(" WHERE {}", sql(&g.predicate(rng, &cols, 2))));
    }
    out.run(StatementKind::Update, stmt)?;
    Ok(())
}

/// `INSERT INTO t (...) SELECT ... FROM s AS a0 [WHERE p]`: rows copied
/// between tables and views (Citus: between placements, pushed down,
/// repartitioned or pulled through the coordinator). Each target column
/// takes a source column of its category or a literal; a distribution
/// column never gets NULL. No ON CONFLICT: with it, which of two source
/// rows with one key survives would depend on their order, and a table and
/// its twin could differ. A duplicate key fails the whole statement.
pub(super) fn insert_select(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &PgSchema,
) -> Result<(), ExecError> {
    let Some(t) = random_table(rng, schema) else {
        return Ok(());
    };
    let Some(source) = schema.relations.choose(rng) else {
        return Ok(());
    };
    let cols = insertable_columns(t);
    if cols.is_empty() {
        return Ok(());
    }
    let from = source.typed_columns("a0");
    let key = t.placement.column();
    let items: Vec<String> = cols
        .iter()
        .map(|(c, ty)| {
            let candidates: Vec<&TypedColumn> =
                from.iter().filter(|f| f.category == ty.category).collect();
            let value = match candidates.choose(rng) {
                Some(f) if rng.random_bool(0.8) => sql(&f.expr),
                _ => sql(&fitted(literal(rng, ty.category), ty)),
            };
            if key == Some(c.as_str()) {
                // Citus refuses a row without a distribution value.
                format!(
                    "COALESCE({value}, {})",
                    sql(&fitted(non_null_literal(rng, ty.category), ty))
                )
            } else {
                value
            }
        })
        .collect();
    let names: Vec<&str> = cols.iter().map(|(c, _)| c.as_str()).collect();
    let mut stmt = format!(
        "INSERT INTO {} ({}) SELECT {} FROM {} AS a0",
        t.name,
        names.join(", "),
        items.join(", "),
        source.name
    );
    if rng.random_bool(0.5) {
        let mut g = ExprGen::new(schema, schema.modifications_may_have_subqueries(t));
        stmt.push_str(&format!(" WHERE {}", sql(&g.predicate(rng, &from, 2))));
    }
    out.run(StatementKind::Insert, stmt)?;
    Ok(())
}

pub(super) fn delete(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &PgSchema,
) -> Result<(), ExecError> {
    let Some(t) = random_table(rng, schema) else {
        return Ok(());
    };
    let cols = t.bare_columns();
    let mut g = ExprGen::new(schema, schema.modifications_may_have_subqueries(t));
    let stmt = format!(
        "DELETE FROM {} WHERE {}",
        t.name,
        sql(&g.predicate(rng, &cols, 2))
    );
    out.run(StatementKind::Delete, stmt)?;
    Ok(())
}
