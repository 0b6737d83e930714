//! DQE, differential query execution (after Song et al., ICSE'23): a
//! predicate over one table selects, updates and deletes the same rows.
//! `SELECT` the rows `p` matches; in a transaction rolled back after it,
//! `DELETE` the rows `p` matches and read the rows left; in another,
//! `UPDATE` a marker column of the rows `p` matches to NULL and read that
//! column. No row identity is needed: the rows are compared as multisets
//! of whole rows (see [`relation`]), which sees a row too many or too few
//! in any of the three as surely as row ids would, and needs no key
//! column the generated tables may lack.
//!
//! An error of the UPDATE or DELETE skips the check (see
//! [`lancet_core::OracleQuery::rolled_back`]): DML fails where the same
//! predicate in a query does not by documented rules (MySQL's strict
//! mode turns a SELECT's conversion warnings into UPDATE errors, a
//! subquery may not read the table a MySQL UPDATE changes, a NOT NULL or
//! generated marker column). Multi-table forms (`UPDATE ... FROM`,
//! MySQL's multi-table DELETE) are not drawn.

mod fault;
mod relation;

use crate::partition::item;
use lancet_core::{
    Case, CaseError, CasePolicy, Dml, Expr, FromClause, GenerateContext, ItemPolicy, Oracle,
    OracleQuery, Query, Row, Scope, Select, SelectItem, TableFactor, Value, Verdict,
};
use rand::seq::IndexedRandom;

pub use fault::DmlTouchesExtraRow;

pub struct Dqe;

/// What DQE draws beside its query (every column of one table) and
/// predicate: the column its UPDATE sets to NULL, if the table has one
/// that holds a NULL (none: the UPDATE is not run).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Marker {
    pub column: Option<String>,
}

impl lancet_core::OracleInputs for Marker {
    const KIND: &'static str = "dqe-marker";
    const WHAT: &'static str = "marker column";
}

/// The roles of the queries, in order.
const EVERY: &str = "every row (SELECT ... without WHERE)";
const MATCHED: &str = "rows p matches (SELECT ... WHERE p)";
const AFTER_DELETE: &str = "rows left after DELETE ... WHERE p (rolled back)";
const AFTER_UPDATE: &str = "marker column after UPDATE ... SET marker = NULL WHERE p (rolled back)";

/// The table a case reads, its columns as the select list names them,
/// and the marker's position among them.
struct Parts<'a> {
    table: &'a str,
    marker: Option<(usize, String)>,
}

fn parts<'a>(case: &'a Case, marker: &Marker) -> Result<Parts<'a>, CaseError> {
    let TableFactor::Table {
        name, alias: None, ..
    } = &case
        .query
        .from
        .as_ref()
        .ok_or_else(|| case.unfit("no FROM clause"))?
        .first
    else {
        return Err(case.unfit("its FROM clause is not one unaliased table"));
    };
    let marker = match &marker.column {
        None => None,
        Some(column) => {
            let position = case.query.items.iter().position(|it| {
                matches!(it, SelectItem::Expr { expr: Expr::Column(c), .. } if c.column == *column)
            });
            Some((
                position
                    .ok_or_else(|| case.unfit("its marker column is not in its select list"))?,
                column.clone(),
            ))
        }
    };
    Ok(Parts {
        table: name,
        marker,
    })
}

/// For each column of `table` (as `scope` reads them), whether it holds a
/// NULL now: proof that it may be set to NULL, which the schema's NOT
/// NULL flag is not (a provider may not record it, and MySQL outside
/// strict mode stores 0 or '' where an UPDATE sets a NOT NULL column to
/// NULL). One query per table, which the session keeps while the data
/// stays; all false if it fails.
fn columns_holding_null(cx: &mut GenerateContext<'_>, table: &str, scope: &Scope) -> Vec<bool> {
    let mut items: Vec<SelectItem> = scope
        .columns
        .iter()
        .map(|c| item(Expr::func("COUNT", vec![c.expr.clone()])))
        .collect();
    items.push(item(Expr::CountStar));
    let counts = Query::select(Select {
        items,
        from: Some(FromClause::table(table, None)),
        ..Select::default()
    });
    let row = cx
        .data
        .fetch(&counts)
        .ok()
        .and_then(|rows| rows.into_iter().next());
    let Some((all, columns)) = row.as_ref().and_then(|r| r.split_last()) else {
        return vec![false; scope.columns.len()];
    };
    columns.iter().map(|n| n != all).collect()
}

impl Oracle for Dqe {
    fn name(&self) -> &'static str {
        "dqe"
    }

    fn description(&self) -> &'static str {
        "differential query execution: SELECT, UPDATE and DELETE with one predicate over a table touch the same rows (the DML rolled back)"
    }

    fn generate(&self, cx: &mut GenerateContext<'_>) -> Option<Case> {
        let tables: Vec<_> = cx
            .schema
            .tables()
            .filter(|t| !t.columns.is_empty() && cx.generator.rolls_back_dml(&t.name))
            .collect();
        let table = *tables.choose(cx.rng)?;
        let scope = Scope::of_relation(table, &table.name);
        let predicate = cx
            .generator
            .modification_predicate(cx.rng, &scope, &table.name);
        let nullable = columns_holding_null(cx, &table.name, &scope);
        let markable: Vec<&String> = table
            .columns
            .iter()
            .zip(&nullable)
            .filter(|(c, holds_null)| **holds_null && !c.primary_key && !c.generated)
            .map(|(c, _)| &c.name)
            .collect();
        let marker = Marker {
            column: markable.choose(cx.rng).map(|c| (*c).clone()),
        };
        let select = Select {
            items: scope.columns.iter().map(|c| item(c.expr.clone())).collect(),
            from: Some(FromClause::table(&table.name, None)),
            ..Select::default()
        };
        Some(Case::with_predicate_of(self.name(), select, predicate).and_inputs(marker))
    }

    fn queries(&self, case: &Case) -> Result<Vec<OracleQuery>, CaseError> {
        case.check_oracle(self.name())?;
        let inputs = case.inputs::<Marker>()?;
        let p = case.predicate()?.clone();
        let parts = parts(case, &inputs)?;
        let every = Query::select(case.query.clone());
        let matched = Query::select(Select {
            selection: Some(p.clone()),
            ..case.query.clone()
        });
        let delete = Dml::Delete {
            table: parts.table.to_string(),
            selection: Some(p.clone()),
        };
        // Every row first: reports name the sides of a diff by the first
        // two queries, and the DELETE relation's sides are every row and
        // the rows matched with those left.
        let mut out = vec![
            OracleQuery::new(EVERY, every.clone()),
            OracleQuery::new(MATCHED, matched),
            OracleQuery::after_rolled_back(AFTER_DELETE, vec![delete], every),
        ];
        if let Some((position, column)) = parts.marker {
            let update = Dml::Update {
                table: parts.table.to_string(),
                set: vec![(column, Expr::Literal(Value::Null))],
                selection: Some(p),
            };
            let marked = Query::select(Select {
                items: vec![case.query.items[position].clone()],
                ..case.query.clone()
            });
            out.push(OracleQuery::after_rolled_back(
                AFTER_UPDATE,
                vec![update],
                marked,
            ));
        }
        Ok(out)
    }

    fn compare(&self, case: &Case, results: &[Vec<Row>]) -> Result<Verdict, CaseError> {
        let inputs = case.inputs::<Marker>()?;
        let marker = parts(case, &inputs)?.marker.map(|(position, _)| position);
        relation::verdict(case, results, marker)
    }

    /// The predicate shrinks (any predicate keeps the relation); the
    /// table, its select list and the marker stay.
    fn shrink_policy(&self) -> Option<CasePolicy> {
        Some(CasePolicy {
            predicate: true,
            selection: false,
            joins: false,
            items: ItemPolicy::Fixed,
        })
    }

    fn planted_fault(&self) -> lancet_core::fault::Fault {
        std::sync::Arc::new(DmlTouchesExtraRow { period: 3 })
    }
}

#[cfg(test)]
mod tests;
