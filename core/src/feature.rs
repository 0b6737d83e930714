//! What a provider's databases offer that an oracle may require: below
//! both, so that each names it without the other.

/// What a provider's databases offer beyond tables and queries. An oracle
/// that needs a feature ([`crate::Oracle::requires`]) runs only where its
/// provider offers it, so that a run says up front what it will check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Pivot rows with predicates evaluated by the provider's own model of
    /// the DBMS ([`crate::provider::QueryGenerator::pivot_tables`]).
    PivotRows,
    /// Plain copies of distributed tables ([`crate::provider::QueryGenerator::twin_tables`]).
    TwinTables,
}

impl Feature {
    /// What the feature is, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Feature::PivotRows => "pivot rows evaluated by lancet's model of this DBMS build",
            Feature::TwinTables => "local twins of distributed tables",
        }
    }
}
