//! An oracle's inputs: what it drew for one check, stored with every
//! finding so that the reducer can simplify it and the oracle rebuild its
//! queries from it.
//!
//! A case is tagged with the oracle that drew it, and its oracle-specific
//! part is a variant ([`CaseInputs`]) rather than a set of optional fields:
//! an oracle asks for the part it needs and gets a [`CaseError`] (never a
//! panic) from a case that lacks it, such as an old or hand-edited record.

use crate::ast::{Expr, Select};
use crate::knobs::KnobSetting;
use crate::value::Row;
use serde::{Deserialize, Serialize};

/// One check's inputs. Stored with every finding.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "CaseRecord")]
pub struct Case {
    /// The oracle that drew this case (`--oracle` name). Queries are built
    /// only by that oracle.
    pub oracle: String,
    /// The base query (`SELECT c FROM f [WHERE w]` for TLP).
    pub query: Select,
    /// What else the oracle drew.
    pub inputs: CaseInputs,
}

/// The oracle-specific part of a case.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum CaseInputs {
    /// The base query is all there is.
    #[default]
    Query,
    /// A predicate the oracle partitions on or moves (TLP, NoREC).
    Predicate { predicate: Expr },
    /// PQS: the rectified predicate, TRUE on the pivot row that the base
    /// query's result must contain.
    Pivot { predicate: Expr, pivot: Row },
    /// Optimizer configurations to run the base query under, in order (the
    /// first is the reference).
    Settings { settings: Vec<KnobSetting> },
    /// Each table the query may read and its twin, a copy with the same
    /// rows in another placement (dist-vs-local runs the query over both).
    Twins { tables: Vec<(String, String)> },
    /// A chain of transformations of the base query (the transform
    /// oracle), applied in order.
    Transforms { steps: Vec<crate::transform::Step> },
    /// The earlier steps of a stepwise query, in order (each reads base
    /// tables and earlier steps, named `lancet_step<id>`); the base query
    /// is the last step. `cte`: the one-statement form writes them as a
    /// WITH chain, else as nested derived tables.
    Steps { steps: Vec<NamedStep>, cte: bool },
}

/// One step of a stepwise query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedStep {
    /// Later steps read it as the table `lancet_step<id>`.
    pub id: usize,
    pub query: crate::ast::Query,
}

impl NamedStep {
    /// The name later steps read it by.
    pub fn table_name(id: usize) -> String {
        format!("lancet_step{id}")
    }
}

/// Why an oracle cannot build its queries from a case.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CaseError {
    #[error("the case was drawn by oracle {found}, not {expected}")]
    OtherOracle { expected: String, found: String },
    #[error("the case of oracle {oracle} has no {missing}")]
    Missing {
        oracle: String,
        missing: &'static str,
    },
    #[error("the case of oracle {oracle} does not fit it: {why}")]
    Unfit { oracle: String, why: String },
}

impl Case {
    pub fn new(oracle: &str, query: Select, inputs: CaseInputs) -> Case {
        Case {
            oracle: oracle.to_string(),
            query,
            inputs,
        }
    }

    /// Checks that `oracle` drew this case. Cases read from records made
    /// before cases were tagged carry no oracle name; the finding's own
    /// `oracle` field fills it in when the record is loaded.
    pub fn check_oracle(&self, oracle: &str) -> Result<(), CaseError> {
        if self.oracle == oracle {
            Ok(())
        } else {
            Err(CaseError::OtherOracle {
                expected: oracle.to_string(),
                found: self.oracle.clone(),
            })
        }
    }

    /// The predicate of a TLP, NoREC or PQS case.
    pub fn predicate(&self) -> Result<&Expr, CaseError> {
        match &self.inputs {
            CaseInputs::Predicate { predicate } | CaseInputs::Pivot { predicate, .. } => {
                Ok(predicate)
            }
            _ => Err(self.missing("predicate")),
        }
    }

    /// The pivot row of a PQS case.
    pub fn pivot(&self) -> Result<&Row, CaseError> {
        match &self.inputs {
            CaseInputs::Pivot { pivot, .. } => Ok(pivot),
            _ => Err(self.missing("pivot row")),
        }
    }

    /// The optimizer configurations of a knob case.
    pub fn settings(&self) -> Result<&[KnobSetting], CaseError> {
        match &self.inputs {
            CaseInputs::Settings { settings } => Ok(settings),
            _ => Err(self.missing("optimizer settings")),
        }
    }

    /// The tables of a dist-vs-local case and their twins.
    pub fn twins(&self) -> Result<&[(String, String)], CaseError> {
        match &self.inputs {
            CaseInputs::Twins { tables } => Ok(tables),
            _ => Err(self.missing("twin tables")),
        }
    }

    /// The transformation chain of a transform case.
    pub fn steps(&self) -> Result<&[crate::transform::Step], CaseError> {
        match &self.inputs {
            CaseInputs::Transforms { steps } => Ok(steps),
            _ => Err(self.missing("transformation steps")),
        }
    }

    /// The earlier steps of a stepwise case, and whether they are written
    /// as CTEs.
    pub fn named_steps(&self) -> Result<(&[NamedStep], bool), CaseError> {
        match &self.inputs {
            CaseInputs::Steps { steps, cte } => Ok((steps, *cte)),
            _ => Err(self.missing("steps")),
        }
    }

    /// The same case with another predicate (where it has one).
    pub fn with_predicate(&self, p: Expr) -> Case {
        let mut c = self.clone();
        match &mut c.inputs {
            CaseInputs::Predicate { predicate } | CaseInputs::Pivot { predicate, .. } => {
                *predicate = p
            }
            _ => {}
        }
        c
    }

    /// The error for a case that does not fit its oracle.
    pub fn unfit(&self, why: impl Into<String>) -> CaseError {
        CaseError::Unfit {
            oracle: self.oracle.clone(),
            why: why.into(),
        }
    }

    fn missing(&self, missing: &'static str) -> CaseError {
        CaseError::Missing {
            oracle: self.oracle.clone(),
            missing,
        }
    }
}

/// A case as records store it, in either form: the tagged one, or the
/// untagged one of records written before (`predicate` and `pivot` beside
/// `query`, the oracle named only by the finding).
#[derive(Deserialize)]
struct CaseRecord {
    #[serde(default)]
    oracle: String,
    query: Select,
    #[serde(default)]
    inputs: Option<CaseInputs>,
    #[serde(default)]
    predicate: Option<Expr>,
    #[serde(default)]
    pivot: Option<Row>,
}

impl From<CaseRecord> for Case {
    fn from(r: CaseRecord) -> Case {
        let inputs = match (r.inputs, r.predicate, r.pivot) {
            (Some(inputs), _, _) => inputs,
            (None, Some(predicate), Some(pivot)) => CaseInputs::Pivot { predicate, pivot },
            (None, Some(predicate), None) => CaseInputs::Predicate { predicate },
            (None, None, _) => CaseInputs::Query,
        };
        Case {
            oracle: r.oracle,
            query: r.query,
            inputs,
        }
    }
}

/// What a reducer may simplify in one oracle's case (see [`crate::shrink`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CasePolicy {
    /// Simplify the case's predicate.
    pub predicate: bool,
    /// Simplify or drop the base query's WHERE.
    pub selection: bool,
    /// Drop joins and simplify their ON conditions.
    pub joins: bool,
    pub items: ItemPolicy,
}

impl CasePolicy {
    /// Everything may be simplified: predicate, WHERE, joins, select items.
    pub const ALL: CasePolicy = CasePolicy {
        predicate: true,
        selection: true,
        joins: true,
        items: ItemPolicy::Free,
    };

    /// [`CasePolicy::ALL`] but with the select list under `items`.
    pub const fn with_items(items: ItemPolicy) -> CasePolicy {
        CasePolicy {
            items,
            ..CasePolicy::ALL
        }
    }
}

/// What may happen to the base query's select list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemPolicy {
    /// Items may be dropped (one is kept) and simplified.
    Free,
    /// Only the arguments of function-call items may be simplified (the
    /// items themselves are the oracle's, as TLP-aggregate's aggregate).
    ArgumentsOnly,
    /// The select list stays as generated.
    Fixed,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_of_both_forms_load() {
        let query = serde_json::to_value(Select::default()).expect("serializes");
        let predicate = serde_json::to_value(Expr::int(1)).expect("serializes");
        let old = serde_json::json!({"query": query, "predicate": predicate, "pivot": null});
        let case: Case = serde_json::from_value(old).expect("an untagged record loads");
        assert_eq!(case.predicate(), Ok(&Expr::int(1)));
        assert!(case.pivot().is_err());
        assert_eq!(case.oracle, "");
        let row = serde_json::to_value(vec![crate::value::Value::Integer(1)]).expect("serializes");
        let old = serde_json::json!({"query": query, "predicate": predicate, "pivot": row});
        let case: Case = serde_json::from_value(old).expect("an untagged PQS record loads");
        assert_eq!(case.pivot(), Ok(&vec![crate::value::Value::Integer(1)]));
        let c = Case::new(
            "norec",
            Select::default(),
            CaseInputs::Predicate {
                predicate: Expr::int(1),
            },
        );
        let text = serde_json::to_string(&c).expect("serializes");
        let back: Case = serde_json::from_str(&text).expect("round trip");
        assert_eq!(back, c);
        assert!(back.check_oracle("norec").is_ok());
        assert!(matches!(
            back.check_oracle("pqs"),
            Err(CaseError::OtherOracle { .. })
        ));
    }
}
