//! DQE's planted fault: a DML statement that touches one row too many.

use lancet_core::fault::{FaultedQuery, FaultedResult, PlantedFault};

/// Drops the first row read after the rolled-back statements of one
/// query in `period` among those that have some: as an engine whose
/// DELETE removed a row its predicate does not match (or whose UPDATE
/// lost one), which only a relation between a query and DML sees.
#[derive(Debug)]
pub struct DmlTouchesExtraRow {
    pub period: u64,
}

impl PlantedFault for DmlTouchesExtraRow {
    fn name(&self) -> &'static str {
        "dml-touches-extra-row"
    }
    fn perturb(&self, q: &FaultedQuery<'_>, r: &mut FaultedResult<'_>) {
        if !r.rows.is_empty() && !q.query.rolled_back.is_empty() && q.hit(self.period) {
            r.rows.remove(0);
        }
    }
}
