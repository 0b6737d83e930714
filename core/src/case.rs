//! An oracle's inputs: what it drew for one check, stored with every
//! finding so that the reducer can simplify it and the oracle rebuild its
//! queries from it.
//!
//! A case is tagged with the oracle that drew it. Core knows only what
//! every reducer works on: the base query and, for the oracles that have
//! one (TLP, NoREC, PQS), a predicate. Whatever else an oracle draws
//! (pivot rows, knob settings, twin tables, transformation chains, steps)
//! is a type the oracle defines in its own file ([`OracleInputs`]); it
//! travels through cases and records as that type and is stored under its
//! `kind`, so a new kind of oracle adds no variant here. An oracle asks for
//! its inputs and gets a [`CaseError`] (never a panic) from a case that
//! lacks them, such as an old or hand-edited record.

use crate::ast::{Expr, Select};
use crate::value::Row;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::any::Any;
use std::borrow::Cow;
use std::fmt::Debug;
use std::sync::Arc;

/// One check's inputs. Stored with every finding.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(from = "CaseRecord", into = "CaseRecord")]
pub struct Case {
    /// The oracle that drew this case (`--oracle` name). Queries are built
    /// only by that oracle.
    pub oracle: String,
    /// The base query (`SELECT c FROM f [WHERE w]` for TLP).
    pub query: Select,
    /// The predicate the oracle partitions on, moves or rectified (TLP,
    /// NoREC, PQS); the reducer simplifies it like the query.
    pub predicate: Option<Expr>,
    /// What else the oracle drew.
    pub inputs: Inputs,
}

/// The inputs an oracle draws beyond the base query and predicate, of a
/// type it defines. `KIND` names them in records (`"kind": "pivot"`); the
/// type's fields are stored beside it.
pub trait OracleInputs:
    Serialize + DeserializeOwned + Clone + Debug + PartialEq + Send + Sync + 'static
{
    const KIND: &'static str;
    /// What they are, for messages about a case that lacks them.
    const WHAT: &'static str = Self::KIND;
}

/// An oracle's own inputs: the value it drew, or the fields a record
/// stored, read as the oracle's type when it asks for them.
#[derive(Clone, Debug, Default)]
pub struct Inputs(Repr);

#[derive(Clone, Debug, Default)]
enum Repr {
    #[default]
    None,
    Drawn(Arc<dyn DrawnInputs>),
    Stored {
        kind: String,
        fields: serde_json::Map<String, serde_json::Value>,
    },
}

/// [`OracleInputs`] with their type erased, so that a case carries any.
trait DrawnInputs: Debug + Send + Sync {
    fn kind(&self) -> &'static str;
    fn fields(&self) -> serde_json::Map<String, serde_json::Value>;
    fn as_any(&self) -> &dyn Any;
}

impl<T: OracleInputs> DrawnInputs for T {
    fn kind(&self) -> &'static str {
        T::KIND
    }
    fn fields(&self) -> serde_json::Map<String, serde_json::Value> {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(fields)) => fields,
            Ok(other) => [("value".to_string(), other)].into_iter().collect(),
            Err(e) => [("unserializable".to_string(), e.to_string().into())]
                .into_iter()
                .collect(),
        }
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Inputs {
    /// No inputs beyond the query and predicate.
    pub fn none() -> Inputs {
        Inputs(Repr::None)
    }

    /// An oracle's drawn inputs.
    pub fn of<I: OracleInputs>(inputs: I) -> Inputs {
        Inputs(Repr::Drawn(Arc::new(inputs)))
    }

    /// The kind of the inputs, if there are any.
    pub fn kind(&self) -> Option<&str> {
        match &self.0 {
            Repr::None => None,
            Repr::Drawn(d) => Some(d.kind()),
            Repr::Stored { kind, .. } => Some(kind),
        }
    }

    fn fields(&self) -> serde_json::Map<String, serde_json::Value> {
        match &self.0 {
            Repr::None => serde_json::Map::new(),
            Repr::Drawn(d) => d.fields(),
            Repr::Stored { fields, .. } => fields.clone(),
        }
    }
}

impl PartialEq for Inputs {
    fn eq(&self, other: &Inputs) -> bool {
        self.kind() == other.kind() && self.fields() == other.fields()
    }
}

impl PartialEq for Case {
    fn eq(&self, other: &Case) -> bool {
        self.oracle == other.oracle
            && self.query == other.query
            && self.predicate == other.predicate
            && self.inputs == other.inputs
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
    /// A case of just a base query.
    pub fn new(oracle: &str, query: Select) -> Case {
        Case {
            oracle: oracle.to_string(),
            query,
            predicate: None,
            inputs: Inputs::none(),
        }
    }

    /// A case of a base query and a predicate.
    pub fn with_predicate_of(oracle: &str, query: Select, predicate: Expr) -> Case {
        Case {
            predicate: Some(predicate),
            ..Case::new(oracle, query)
        }
    }

    /// This case with the oracle's own inputs.
    pub fn and_inputs<I: OracleInputs>(self, inputs: I) -> Case {
        Case {
            inputs: Inputs::of(inputs),
            ..self
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
        self.predicate
            .as_ref()
            .ok_or_else(|| self.missing("predicate"))
    }

    /// The oracle's own inputs: borrowed as drawn, or read from the
    /// fields a record stored.
    pub fn inputs<I: OracleInputs>(&self) -> Result<Cow<'_, I>, CaseError> {
        match &self.inputs.0 {
            Repr::Drawn(d) => d
                .as_any()
                .downcast_ref::<I>()
                .map(Cow::Borrowed)
                .ok_or_else(|| self.missing(I::WHAT)),
            Repr::Stored { kind, fields } if kind == I::KIND => {
                serde_json::from_value(serde_json::Value::Object(fields.clone()))
                    .map(Cow::Owned)
                    .map_err(|e| self.unfit(format!("its {} do not read: {e}", I::WHAT)))
            }
            _ => Err(self.missing(I::WHAT)),
        }
    }

    /// The same case with another predicate (where it has one).
    pub fn with_predicate(&self, p: Expr) -> Case {
        let mut c = self.clone();
        if c.predicate.is_some() {
            c.predicate = Some(p);
        }
        c
    }

    /// The same case with other inputs of the oracle.
    pub fn with_inputs<I: OracleInputs>(&self, inputs: I) -> Case {
        self.clone().and_inputs(inputs)
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

/// A case as records store it: `inputs` is an object tagged by `kind`
/// (`query`, `predicate`, or an oracle's own kind) holding the predicate
/// and the oracle's fields. Records written before cases were tagged
/// have `predicate` and `pivot` beside `query` and name the oracle only
/// in the finding; they still load.
#[derive(Serialize, Deserialize)]
struct CaseRecord {
    #[serde(default)]
    oracle: String,
    query: Select,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    inputs: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default, skip_serializing)]
    predicate: Option<Expr>,
    #[serde(default, skip_serializing)]
    pivot: Option<Row>,
}

/// The kind of a case with a predicate and no inputs of its oracle's own.
const PREDICATE_KIND: &str = "predicate";
/// The kind of a case of only a base query.
const QUERY_KIND: &str = "query";

impl From<CaseRecord> for Case {
    fn from(r: CaseRecord) -> Case {
        let mut case = Case::new(&r.oracle, r.query);
        match r.inputs {
            Some(mut fields) => {
                let kind = match fields.remove("kind") {
                    Some(serde_json::Value::String(k)) => k,
                    _ => QUERY_KIND.to_string(),
                };
                // A predicate that does not read stays in the fields, where
                // the oracle reports it as unfit rather than missing.
                if let Some(p) = fields.get("predicate") {
                    if let Ok(p) = serde_json::from_value::<Expr>(p.clone()) {
                        case.predicate = Some(p);
                        fields.remove("predicate");
                    }
                }
                if kind != QUERY_KIND && kind != PREDICATE_KIND {
                    case.inputs = Inputs(Repr::Stored { kind, fields });
                }
            }
            None => {
                case.predicate = r.predicate;
                if let Some(pivot) = r.pivot {
                    let fields = [("pivot".to_string(), serde_json::json!(pivot))];
                    case.inputs = Inputs(Repr::Stored {
                        kind: "pivot".to_string(),
                        fields: fields.into_iter().collect(),
                    });
                }
            }
        }
        case
    }
}

impl From<Case> for CaseRecord {
    fn from(c: Case) -> CaseRecord {
        let kind = match (c.inputs.kind(), &c.predicate) {
            (Some(kind), _) => kind.to_string(),
            (None, Some(_)) => PREDICATE_KIND.to_string(),
            (None, None) => QUERY_KIND.to_string(),
        };
        let mut fields = serde_json::Map::new();
        fields.insert("kind".to_string(), kind.into());
        if let Some(p) = &c.predicate {
            fields.insert("predicate".to_string(), serde_json::json!(p));
        }
        fields.extend(c.inputs.fields());
        CaseRecord {
            oracle: c.oracle,
            query: c.query,
            inputs: Some(fields),
            predicate: None,
            pivot: None,
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

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Pivot {
        pivot: Row,
    }
    impl OracleInputs for Pivot {
        const KIND: &'static str = "pivot";
    }

    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
    struct Other {
        n: u32,
    }
    impl OracleInputs for Other {
        const KIND: &'static str = "other";
    }

    #[test]
    fn records_of_every_form_load() {
        let query = serde_json::to_value(Select::default()).expect("serializes");
        let predicate = serde_json::to_value(Expr::int(1)).expect("serializes");
        let old = serde_json::json!({"query": query, "predicate": predicate, "pivot": null});
        let case: Case = serde_json::from_value(old).expect("an untagged record loads");
        assert_eq!(case.predicate(), Ok(&Expr::int(1)));
        assert!(case.inputs::<Pivot>().is_err());
        assert_eq!(case.oracle, "");
        let row = vec![crate::value::Value::Integer(1)];
        let old = serde_json::json!({"query": query, "predicate": predicate, "pivot": row});
        let case: Case = serde_json::from_value(old).expect("an untagged PQS record loads");
        assert_eq!(case.inputs::<Pivot>().expect("a pivot").pivot, row);
        // The tagged form written before inputs were the oracles' own types.
        let tagged = serde_json::json!({"oracle": "pqs", "query": query,
            "inputs": {"kind": "pivot", "predicate": predicate, "pivot": row}});
        let case: Case = serde_json::from_value(tagged.clone()).expect("a tagged record loads");
        assert_eq!(case.predicate(), Ok(&Expr::int(1)));
        assert_eq!(serde_json::to_value(&case).expect("serializes"), tagged);
        let c = Case::with_predicate_of("norec", Select::default(), Expr::int(1));
        let text = serde_json::to_string(&c).expect("serializes");
        assert!(text.contains(r#""kind":"predicate""#), "{text}");
        let back: Case = serde_json::from_str(&text).expect("round trip");
        assert_eq!(back, c);
        assert!(back.check_oracle("norec").is_ok());
        assert!(matches!(
            back.check_oracle("pqs"),
            Err(CaseError::OtherOracle { .. })
        ));
    }

    #[test]
    fn drawn_and_stored_inputs_read_alike() {
        let c = Case::new("x", Select::default()).and_inputs(Other { n: 7 });
        assert_eq!(c.inputs::<Other>().expect("drawn").n, 7);
        assert!(matches!(
            c.inputs::<Pivot>(),
            Err(CaseError::Missing { .. })
        ));
        let back: Case =
            serde_json::from_str(&serde_json::to_string(&c).expect("serializes")).expect("loads");
        assert_eq!(back.inputs::<Other>().expect("stored").n, 7);
        assert_eq!(back, c);
        let broken = serde_json::json!({"oracle": "x", "query": Select::default(),
            "inputs": {"kind": "other", "n": "seven"}});
        let case: Case = serde_json::from_value(broken).expect("loads");
        assert!(matches!(
            case.inputs::<Other>(),
            Err(CaseError::Unfit { .. })
        ));
    }
}
