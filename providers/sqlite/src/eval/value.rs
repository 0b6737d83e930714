//! SQLite's run-time values (one of five storage classes) and the
//! conversions its virtual machine applies to them, each named after the
//! SQLite routine it reproduces.
//!
//! Text is kept as Rust `String`: valid UTF-8 without NUL. Text that SQLite
//! could hold but a `String` cannot say exactly (invalid UTF-8 from a blob,
//! embedded NULs, which C string functions stop at) is declined where it
//! would arise.

use super::fp::{self, atof, atoi64};
use super::{decline, Result};
use lancet_core::{Truth, Value};

/// A value as SQLite's virtual machine holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Val {
    /// The value SQLite returned to lancet, or `None` if it may not be
    /// exactly what SQLite holds (text is fetched as lossy UTF-8: a U+FFFD
    /// may stand for invalid bytes; a NUL would end C string functions).
    pub fn from_value(v: &Value) -> Option<Val> {
        match v {
            Value::Null => Some(Val::Null),
            Value::Integer(i) => Some(Val::Int(*i)),
            Value::Real(r) if r.is_nan() => None,
            Value::Real(r) => Some(Val::Real(*r)),
            Value::Text(s) if s.contains(['\0', '\u{FFFD}']) => None,
            Value::Text(s) => Some(Val::Text(s.clone())),
            Value::Blob(b) => Some(Val::Blob(b.clone())),
            Value::Boolean(_) | Value::Decimal(_) => None,
        }
    }

    /// The value as lancet compares results.
    pub fn to_value(&self) -> Value {
        match self {
            Val::Null => Value::Null,
            Val::Int(i) => Value::Integer(*i),
            Val::Real(r) => Value::Real(*r),
            Val::Text(s) => Value::Text(s.clone()),
            Val::Blob(b) => Value::Blob(b.clone()),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Val::Null)
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Val::Int(_) | Val::Real(_))
    }

    /// `typeof()`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null",
            Val::Int(_) => "integer",
            Val::Real(_) => "real",
            Val::Text(_) => "text",
            Val::Blob(_) => "blob",
        }
    }
}

/// Text made from bytes (a blob read as text): only if `String` can hold
/// exactly what SQLite would.
pub fn text_from_bytes(bytes: Vec<u8>) -> Result<String> {
    if bytes.contains(&0) {
        return decline("text with a NUL byte");
    }
    String::from_utf8(bytes).or_else(|_| decline("text that is not UTF-8"))
}

/// A number as SQLite renders it as text (`vdbeMemRenderNum`).
pub fn render_number(v: &Val) -> Option<String> {
    match v {
        Val::Int(i) => Some(i.to_string()),
        Val::Real(r) => Some(fp::render_real(*r)),
        _ => None,
    }
}

/// `sqlite3_value_text`: `None` for NULL.
pub fn text_of(v: &Val) -> Result<Option<String>> {
    Ok(match v {
        Val::Null => None,
        Val::Int(_) | Val::Real(_) => render_number(v),
        Val::Text(s) => Some(s.clone()),
        Val::Blob(b) => Some(text_from_bytes(b.clone())?),
    })
}

/// `sqlite3_value_blob`: the bytes of a blob or text, or of a number's
/// text; none for NULL.
pub fn bytes_of(v: &Val) -> Vec<u8> {
    match v {
        Val::Null => vec![],
        Val::Int(_) | Val::Real(_) => render_number(v).unwrap_or_default().into_bytes(),
        Val::Text(s) => s.as_bytes().to_vec(),
        Val::Blob(b) => b.clone(),
    }
}

/// `sqlite3VdbeIntValue`: NULL is 0, reals are truncated (and clamped),
/// text and blobs give their integer prefix.
pub fn int_value(v: &Val) -> i64 {
    match v {
        Val::Null => 0,
        Val::Int(i) => *i,
        Val::Real(r) => real_to_i64(*r),
        Val::Text(s) => atoi64(s.as_bytes()).1,
        Val::Blob(b) => atoi64(b).1,
    }
}

/// `sqlite3VdbeRealValue`: NULL is 0.0, text and blobs give their numeric
/// prefix.
pub fn real_value(v: &Val) -> f64 {
    match v {
        Val::Null => 0.0,
        Val::Int(i) => *i as f64,
        Val::Real(r) => *r,
        Val::Text(s) => atof(s.as_bytes()).1,
        Val::Blob(b) => atof(b).1,
    }
}

/// `sqlite3RealToI64`.
pub fn real_to_i64(r: f64) -> i64 {
    if r < -9_223_372_036_854_774_784.0 {
        i64::MIN
    } else if r > 9_223_372_036_854_774_784.0 {
        i64::MAX
    } else {
        r as i64
    }
}

/// `sqlite3RealSameAsInt`.
fn real_same_as_int(r: f64, i: i64) -> bool {
    r == 0.0
        || (r.to_bits() == (i as f64).to_bits()
            && (-2_251_799_813_685_248..2_251_799_813_685_248).contains(&i))
}

/// `sqlite3VdbeBooleanValue`: a value's truth; `None` for NULL.
pub fn bool_value(v: &Val) -> Option<bool> {
    match v {
        Val::Null => None,
        Val::Int(i) => Some(*i != 0),
        _ => Some(real_value(v) != 0.0),
    }
}

/// A value's truth in three-valued logic.
pub fn truth(v: &Val) -> Truth {
    match bool_value(v) {
        None => Truth::Null,
        Some(true) => Truth::True,
        Some(false) => Truth::False,
    }
}

/// The integer a truth value becomes (`1`, `0` or NULL).
pub fn from_bool(b: Option<bool>) -> Val {
    match b {
        None => Val::Null,
        Some(b) => Val::Int(i64::from(b)),
    }
}

/// `computeNumericType`: the number arithmetic reads from text or a blob.
pub fn numeric_type(v: &Val) -> Val {
    let bytes = match v {
        Val::Text(s) => s.as_bytes(),
        Val::Blob(b) => b.as_slice(),
        other => return other.clone(),
    };
    let (rc, r) = atof(bytes);
    if rc <= 0 {
        let (irc, i) = atoi64(bytes);
        if rc & 2 == 0 && irc <= 1 {
            Val::Int(i)
        } else {
            Val::Real(r)
        }
    } else {
        let (irc, i) = atoi64(bytes);
        if rc & 2 == 0 && irc == 0 {
            Val::Int(i)
        } else {
            Val::Real(r)
        }
    }
}

/// `applyNumericAffinity(v, 0)`: text that is wholly a number becomes that
/// number (a REAL if written with a point or exponent); anything else is
/// unchanged.
pub fn apply_numeric_affinity(v: Val) -> Val {
    let Val::Text(s) = &v else {
        return v;
    };
    let (rc, r) = atof(s.as_bytes());
    if rc <= 0 {
        return v;
    }
    if rc & 2 == 0 {
        // alsoAnInt
        let i = real_to_i64(r);
        if real_same_as_int(r, i) {
            return Val::Int(i);
        }
        let (irc, i) = atoi64(s.as_bytes());
        if irc == 0 {
            return Val::Int(i);
        }
    }
    Val::Real(r)
}

/// `sqlite3VdbeMemNumerify`: CAST AS NUMERIC.
pub fn numerify(v: &Val) -> Val {
    let bytes = match v {
        Val::Text(s) => s.as_bytes(),
        Val::Blob(b) => b.as_slice(),
        other => return other.clone(),
    };
    let (rc, r) = atof(bytes);
    if rc & 2 == 0 {
        let (irc, i) = atoi64(bytes);
        if irc < 2 {
            return Val::Int(i);
        }
    }
    let i = real_to_i64(r);
    if real_same_as_int(r, i) {
        Val::Int(i)
    } else {
        Val::Real(r)
    }
}

/// The affinity a CAST converts to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CastTo {
    Blob,
    Text,
    Numeric,
    Integer,
    Real,
}

/// `sqlite3VdbeMemCast`.
pub fn cast(v: &Val, to: CastTo) -> Result<Val> {
    if v.is_null() {
        return Ok(Val::Null);
    }
    Ok(match to {
        CastTo::Blob => Val::Blob(bytes_of(v)),
        CastTo::Text => Val::Text(text_of(v)?.unwrap_or_default()),
        CastTo::Numeric => numerify(v),
        CastTo::Integer => Val::Int(int_value(v)),
        CastTo::Real => Val::Real(real_value(v)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Val {
        Val::Text(s.to_string())
    }

    #[test]
    fn conversions_follow_sqlite() {
        assert_eq!(numeric_type(&t(" 12 ")), Val::Int(12));
        assert_eq!(numeric_type(&t("1e3")), Val::Real(1000.0));
        assert_eq!(numeric_type(&t("0x10")), Val::Int(0));
        assert_eq!(numeric_type(&t("abc")), Val::Int(0));
        assert_eq!(numeric_type(&t("12abc")), Val::Int(12));
        assert_eq!(numeric_type(&t("1.5x")), Val::Real(1.5));
        assert_eq!(apply_numeric_affinity(t("1e3")), Val::Real(1000.0));
        assert_eq!(apply_numeric_affinity(t(" 7 ")), Val::Int(7));
        assert_eq!(apply_numeric_affinity(t("7x")), t("7x"));
        assert_eq!(numerify(&t("1e3")), Val::Int(1000));
        assert_eq!(numerify(&t("1.5")), Val::Real(1.5));
        assert_eq!(numerify(&t("x")), Val::Int(0));
        assert_eq!(int_value(&Val::Real(-2.7)), -2);
        assert_eq!(bool_value(&t("1abc")), Some(true));
        assert_eq!(bool_value(&t("abc")), Some(false));
        assert_eq!(bool_value(&Val::Real(0.5)), Some(true));
    }
}
