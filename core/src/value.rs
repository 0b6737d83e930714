//! Values as they come back from a DBMS, and rows of them.
//!
//! One value type serves every provider, so that oracles compare results
//! without knowing which DBMS produced them. Providers map their native
//! types onto these variants when they fetch rows.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A single value of a result row or a literal in a generated statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Value {
    Null,
    Integer(i64),
    /// JSON has no NaN or infinities: those are written as strings.
    #[serde(with = "real_json")]
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
    Boolean(bool),
    /// An exact decimal (PostgreSQL `numeric`, MySQL `DECIMAL`) in its canonical text form.
    Decimal(String),
}

/// One row of a result.
pub type Row = Vec<Value>;

/// A float in JSON (findings, messages from child processes): a number,
/// or `"NaN"`, `"inf"`, `"-inf"`, which JSON numbers cannot be (serde_json
/// would write `null` and fail to read it back).
mod real_json {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(r: &f64, s: S) -> Result<S::Ok, S::Error> {
        if r.is_finite() {
            s.serialize_f64(*r)
        } else if r.is_nan() {
            s.serialize_str("NaN")
        } else if *r > 0.0 {
            s.serialize_str("inf")
        } else {
            s.serialize_str("-inf")
        }
    }

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Real {
        Number(f64),
        Text(String),
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        match Real::deserialize(d)? {
            Real::Number(r) => Ok(r),
            Real::Text(t) => match t.as_str() {
                "NaN" => Ok(f64::NAN),
                "inf" => Ok(f64::INFINITY),
                "-inf" => Ok(f64::NEG_INFINITY),
                other => Err(serde::de::Error::custom(format!("not a float: {other}"))),
            },
        }
    }
}

impl Value {
    /// The storage class or type family, for messages and statistics.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Integer(_) => "integer",
            Value::Real(_) => "real",
            Value::Text(_) => "text",
            Value::Blob(_) => "blob",
            Value::Boolean(_) => "boolean",
            Value::Decimal(_) => "decimal",
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

/// Displays a value the way a person reads it in a report: SQL-literal-like,
/// unambiguous about its type (text is quoted, blobs are `X'..'`).
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "NULL"),
            Value::Integer(i) => write!(f, "{i}"),
            Value::Real(r) => write!(f, "{}", format_real(*r)),
            Value::Text(s) => write!(f, "'{}'", s.replace('\'', "''")),
            Value::Blob(b) => {
                write!(f, "X'")?;
                for byte in b {
                    write!(f, "{byte:02X}")?;
                }
                write!(f, "'")
            }
            Value::Boolean(b) => write!(f, "{}", if *b { "TRUE" } else { "FALSE" }),
            Value::Decimal(d) => write!(f, "{d}"),
        }
    }
}

/// Formats a float so that it reads back as exactly the same value and is
/// visibly a float (`1.0`, not `1`).
pub fn format_real(r: f64) -> String {
    if r.is_nan() {
        "NaN".to_string()
    } else if r.is_infinite() {
        if r > 0.0 { "Inf" } else { "-Inf" }.to_string()
    } else {
        // `{:?}` prints the shortest text that round-trips and keeps `.0`.
        format!("{r:?}")
    }
}

/// Formats a row for reports: `(1, 'a', NULL)`.
pub fn format_row(row: &[Value]) -> String {
    let parts: Vec<String> = row.iter().map(|v| v.to_string()).collect();
    format!("({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::Value;

    #[test]
    fn every_float_survives_json() {
        for r in [1.5, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e308] {
            let json = serde_json::to_string(&Value::Real(r)).unwrap();
            let Value::Real(back) = serde_json::from_str(&json).unwrap() else {
                panic!("{json}")
            };
            assert!(back == r || (back.is_nan() && r.is_nan()), "{json}");
            assert_eq!(back.is_sign_negative(), r.is_sign_negative(), "{json}");
        }
    }
}
