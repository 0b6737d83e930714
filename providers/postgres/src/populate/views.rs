//! Views: SELECTs over the tables with DISTINCT (ON), GROUP BY and joins,
//! made so that their rows do not depend on the order rows arrive in.

use super::*;

pub(super) fn create_view(
    rng: &mut Rng,
    out: &mut Out<'_, '_>,
    schema: &mut PgSchema,
    i: usize,
) -> Result<(), ExecError> {
    let tables: Vec<PgTable> = schema
        .relations
        .iter()
        .filter(|t| t.writable)
        .cloned()
        .collect();
    let Some(t) = tables.choose(rng) else {
        return Ok(());
    };
    let cols = t.typed_columns("a0");
    let n = rng.random_range(1..=3);
    let mut g = ExprGen::new(schema, true);
    let mut items = Vec::new();
    let mut keys = Vec::new();
    let mut vcols = Vec::new();
    for k in 0..n {
        let cat = *[
            Category::Int,
            Category::Text,
            Category::Numeric,
            Category::Bool,
            Category::Float,
        ]
        .choose(rng)
        .unwrap_or(&Category::Int);
        let e = if rng.random_bool(0.6) {
            match cols
                .iter()
                .filter(|c| c.category == cat)
                .collect::<Vec<_>>()
                .choose(rng)
            {
                Some(c) => c.expr.clone(),
                None => g.expr(rng, &cols, cat, 1),
            }
        } else {
            g.expr(rng, &cols, cat, 2)
        };
        items.push(format!("{} AS c{k}", sql(&e)));
        // A constant separates no rows, and DISTINCT ON reads an integer
        // one (`-2147483647` too) as a column position.
        let constant = is_row_constant(&e);
        if !constant {
            keys.push(sql(&e));
        }
        if !constant && matches!(cat, Category::Numeric | Category::Float | Category::Text) {
            // Equal values that print differently (-0 and 0, 1.0 and 1.00,
            // 'a' and 'a  ' as bpchar) are distinct rows of the view.
            keys.push(sql(&Expr::Cast {
                expr: Box::new(e.clone()),
                ty: lancet_core::TypeName("text".into()),
            }));
        }
        let ty = match cat {
            Category::Int => "bigint",
            Category::Numeric => "numeric",
            Category::Float => "double precision",
            Category::Bool => "boolean",
            _ => "text",
        };
        vcols.push((format!("c{k}"), PgType::from_name(ty)));
    }
    // A DISTINCT view keeps an arbitrary one of several equal rows, and
    // PostgreSQL pushes a query's WHERE into the view below its DISTINCT:
    // a predicate that tells equal values apart (`CAST(c0 AS text) = '0'`
    // over -0 and 0) would then see another row than the view shows. So
    // the rows are made distinct by the values' text too (DISTINCT ON), and
    // every row the view keeps is determined.
    let mut stmt = format!(
        "CREATE VIEW v{i} AS SELECT {}{} FROM {} AS a0",
        if rng.random_bool(0.2) {
            if keys.is_empty() {
                // Only constants: every row is the same row.
                "DISTINCT ".to_string()
            } else {
                format!("DISTINCT ON ({}) ", keys.join(", "))
            }
        } else {
            String::new()
        },
        items.join(", "),
        t.name
    );
    if rng.random_bool(0.5) {
        stmt.push_str(&format!(" WHERE {}", sql(&g.predicate(rng, &cols, 2))));
    }
    if out.run(StatementKind::CreateView, stmt)? {
        schema.relations.push(PgTable {
            name: format!("v{i}"),
            columns: vcols,
            kind: RelationKind::View,
            insertable: vec![],
            primary_key: None,
            writable: false,
            inheritable: false,
            placement: Placement::Plain,
            twin: None,
            facts: Default::default(),
        });
    }
    Ok(())
}

/// Whether `e` has the same value on every row: no column, no subquery
/// (a correlated one reads the row).
pub(super) fn is_row_constant(e: &Expr) -> bool {
    match e {
        Expr::Column(_)
        | Expr::Exists { .. }
        | Expr::Subquery(_)
        | Expr::InSubquery { .. }
        | Expr::QuantifiedSubquery { .. } => false,
        other => other.children().into_iter().all(is_row_constant),
    }
}
