//! The planted fault coddtest must catch: a wrong result of a query that
//! holds a scalar subquery, which the same query with the subquery's
//! value folded to a literal does not have.

use lancet_core::fault::{FaultedQuery, FaultedResult, PlantedFault};
use lancet_core::{Expr, SetExpr};

/// Drops the first row of one query in `period` among those over a FROM
/// clause whose select list or WHERE holds a scalar subquery or an
/// operator or function over no column (an auxiliary query, over no
/// table, is never hit).
#[derive(Debug)]
pub struct DropRowBesideScalarSubquery {
    pub period: u64,
}

impl PlantedFault for DropRowBesideScalarSubquery {
    fn name(&self) -> &'static str {
        "drop-row-beside-scalar-subquery"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        let SetExpr::Select(s) = &q.query.query.body else {
            return;
        };
        // A scalar subquery, or an operator or function over no column
        // (what coddtest folds where it folds no subquery: MySQL).
        let subquery = |e: &Expr| {
            e.any(&|n| {
                matches!(n, Expr::Subquery(_))
                    || (matches!(n, Expr::Binary { .. } | Expr::Function { .. })
                        && !n.may_read_columns())
            })
        };
        let holds = s.items.iter().flat_map(|i| i.exprs()).any(subquery)
            || s.selection.as_ref().is_some_and(subquery);
        if s.from.is_some() && holds && !r.rows.is_empty() && q.hit(self.period) {
            r.rows.remove(0);
        }
    }
}
