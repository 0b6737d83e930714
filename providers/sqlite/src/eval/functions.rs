//! The scalar functions the evaluator reproduces, each ported from SQLite's
//! `func.c`. [`SUPPORTED`] lists them with the argument counts handled;
//! any other call is declined.

use super::compare::mem_compare;
use super::fp;
use super::pattern;
use super::value::{
    apply_numeric_affinity, bool_value, bytes_of, int_value, real_value, text_from_bytes, text_of,
    Val,
};
use super::{decline, Evaluator, Result};
use lancet_core::{Expr, Value};
use std::cmp::Ordering;

/// Functions the evaluator implements, and the argument counts it accepts
/// (`max` of `None`: any number from `min`).
pub const SUPPORTED: &[(&str, usize, Option<usize>)] = &[
    ("abs", 1, Some(1)),
    ("coalesce", 2, None),
    ("ifnull", 2, Some(2)),
    ("nullif", 2, Some(2)),
    ("iif", 3, Some(3)),
    ("length", 1, Some(1)),
    ("octet_length", 1, Some(1)),
    ("lower", 1, Some(1)),
    ("upper", 1, Some(1)),
    ("substr", 2, Some(3)),
    ("substring", 2, Some(3)),
    ("trim", 1, Some(2)),
    ("ltrim", 1, Some(2)),
    ("rtrim", 1, Some(2)),
    ("replace", 3, Some(3)),
    ("instr", 2, Some(2)),
    ("hex", 1, Some(1)),
    ("quote", 1, Some(1)),
    ("typeof", 1, Some(1)),
    ("unicode", 1, Some(1)),
    ("char", 0, None),
    ("round", 1, Some(2)),
    ("min", 2, None),
    ("max", 2, None),
    ("likely", 1, Some(1)),
    ("unlikely", 1, Some(1)),
    ("likelihood", 2, Some(2)),
    ("sign", 1, Some(1)),
    ("concat", 1, None),
    ("concat_ws", 2, None),
    ("glob", 2, Some(2)),
    ("like", 2, Some(3)),
];

/// Whether the evaluator implements `name` with `n` arguments.
pub fn is_supported(name: &str, n: usize) -> bool {
    SUPPORTED.iter().any(|(f, min, max)| {
        f.eq_ignore_ascii_case(name) && n >= *min && max.is_none_or(|m| n <= m)
    })
}

/// The longest LIKE or GLOB pattern SQLite accepts by default.
const LIKE_PATTERN_LIMIT: usize = 50_000;

/// `subject LIKE pattern [ESCAPE escape]` (`likeFunc`).
pub fn like(pattern: &Val, subject: &Val, escape: Option<&Val>) -> Result<Val> {
    if bytes_of(pattern).len() > LIKE_PATTERN_LIMIT {
        return decline("LIKE pattern too long");
    }
    let escape = match escape {
        None => None,
        Some(e) => match text_of(e)? {
            None => return Ok(Val::Null),
            Some(e) => {
                let mut chars = e.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Some(c),
                    // SQLite raises an error.
                    _ => return decline("ESCAPE of more than one character"),
                }
            }
        },
    };
    let (Some(p), Some(s)) = (text_of(pattern)?, text_of(subject)?) else {
        return Ok(Val::Null);
    };
    match pattern::like(&p, &s, escape) {
        Some(m) => Ok(Val::Int(i64::from(m))),
        None => decline("LIKE result depends on case_sensitive_like"),
    }
}

/// `subject GLOB pattern`.
pub fn glob(pattern: &Val, subject: &Val) -> Result<Val> {
    if bytes_of(pattern).len() > LIKE_PATTERN_LIMIT {
        return decline("GLOB pattern too long");
    }
    let (Some(p), Some(s)) = (text_of(pattern)?, text_of(subject)?) else {
        return Ok(Val::Null);
    };
    Ok(Val::Int(i64::from(pattern::glob(&p, &s))))
}

impl Evaluator<'_> {
    pub(super) fn function(&self, name: &str, args: &[Expr]) -> Result<Val> {
        if !is_supported(name, args.len()) {
            return decline("function");
        }
        let name = name.to_ascii_lowercase();
        let name = name.as_str();
        // Arguments are all evaluated, so that one the evaluator cannot do
        // declines the call even where SQLite would not look at it.
        let v = args
            .iter()
            .map(|a| self.eval(a))
            .collect::<Result<Vec<Val>>>()?;
        match name {
            "abs" => abs(&v[0]),
            "coalesce" | "ifnull" => Ok(v.into_iter().find(|x| !x.is_null()).unwrap_or(Val::Null)),
            "nullif" => {
                let coll = self.function_collation(args)?;
                Ok(if mem_compare(&v[0], &v[1], coll) != Ordering::Equal {
                    v[0].clone()
                } else {
                    Val::Null
                })
            }
            "iif" => Ok(if bool_value(&v[0]) == Some(true) {
                v[1].clone()
            } else {
                v[2].clone()
            }),
            "length" => Ok(match &v[0] {
                Val::Null => Val::Null,
                Val::Text(s) => Val::Int(s.chars().count() as i64),
                other => Val::Int(bytes_of(other).len() as i64),
            }),
            "octet_length" => Ok(match &v[0] {
                Val::Null => Val::Null,
                other => Val::Int(bytes_of(other).len() as i64),
            }),
            "lower" => map_text(&v[0], |s| s.to_ascii_lowercase()),
            "upper" => map_text(&v[0], |s| s.to_ascii_uppercase()),
            "substr" | "substring" => substr(&v, args),
            "trim" => trim(&v, true, true),
            "ltrim" => trim(&v, true, false),
            "rtrim" => trim(&v, false, true),
            "replace" => replace(&v),
            "instr" => instr(&v[0], &v[1]),
            "hex" => Ok(Val::Text(
                bytes_of(&v[0]).iter().map(|b| format!("{b:02X}")).collect(),
            )),
            "quote" => Ok(Val::Text(quote(&v[0]))),
            "typeof" => Ok(Val::Text(v[0].type_name().to_string())),
            "unicode" => Ok(match text_of(&v[0])?.and_then(|s| s.chars().next()) {
                Some(c) => Val::Int(i64::from(u32::from(c))),
                None => Val::Null,
            }),
            "char" => char_fn(&v),
            "round" => Ok(round(&v)),
            "min" | "max" => {
                let coll = self.function_collation(args)?;
                Ok(min_max(&v, name == "max", coll))
            }
            "likely" | "unlikely" => Ok(v[0].clone()),
            "likelihood" => {
                // SQLite insists on a constant probability at prepare time.
                match &args[1] {
                    Expr::Literal(Value::Real(p)) if p.is_sign_positive() && *p <= 1.0 => {
                        Ok(v[0].clone())
                    }
                    _ => decline("likelihood() probability"),
                }
            }
            "sign" => Ok(sign(&v[0])),
            "concat" => concat(&v, ""),
            "concat_ws" => match text_of(&v[0])? {
                None => Ok(Val::Null),
                Some(sep) => concat(&v[1..], &sep),
            },
            "glob" => glob(&v[0], &v[1]),
            "like" => like(&v[0], &v[1], v.get(2)),
            _ => decline("function"),
        }
    }
}

/// `absFunc`: integers stay integers (the most negative one is an error),
/// anything else becomes a REAL.
fn abs(v: &Val) -> Result<Val> {
    match v {
        Val::Null => Ok(Val::Null),
        Val::Int(i64::MIN) => decline("abs() integer overflow"),
        Val::Int(i) => Ok(Val::Int(i.abs())),
        other => {
            let r = real_value(other);
            Ok(Val::Real(if r < 0.0 { -r } else { r }))
        }
    }
}

/// A function from text to text: NULL stays NULL.
fn map_text(v: &Val, f: impl Fn(&str) -> String) -> Result<Val> {
    Ok(match text_of(v)? {
        None => Val::Null,
        Some(s) => Val::Text(f(&s)),
    })
}

/// `substrFunc`, with its index rules: 1-based, 0 before the first
/// character, negative from the end, negative lengths to the left.
fn substr(v: &[Val], args: &[Expr]) -> Result<Val> {
    let x = &v[0];
    let mut p1 = int_value(&v[1]);
    let is_blob = matches!(x, Val::Blob(_));
    let chars: Vec<char>;
    let blob: &[u8];
    let len: i64;
    match x {
        // `sqlite3_value_blob` of an empty blob is a null pointer: NULL.
        Val::Blob(b) if b.is_empty() => return Ok(Val::Null),
        Val::Blob(b) => {
            blob = b;
            chars = vec![];
            len = b.len() as i64;
        }
        _ => {
            let Some(s) = text_of(x)? else {
                return Ok(Val::Null);
            };
            chars = s.chars().collect();
            blob = &[];
            len = chars.len() as i64;
        }
    }
    let mut p2 = if args.len() == 3 {
        let p2 = int_value(&v[2]);
        if p2 == 0 && v[2].is_null() {
            return Ok(Val::Null);
        }
        p2
    } else {
        i64::MAX
    };
    if p1 == 0 && v[1].is_null() {
        return Ok(Val::Null);
    }
    if p1 < 0 {
        p1 += len;
        if p1 < 0 {
            if p2 < 0 {
                p2 = 0;
            } else {
                p2 = p2.saturating_add(p1);
            }
            p1 = 0;
        }
    } else if p1 > 0 {
        p1 -= 1;
    } else if p2 > 0 {
        p2 -= 1;
    }
    if p2 < 0 {
        if p2 < -p1 {
            p2 = p1;
        } else {
            p2 = -p2;
        }
        p1 -= p2;
    }
    if is_blob {
        let (mut p1, mut p2) = (p1, p2);
        if p1 >= len {
            p1 = 0;
            p2 = 0;
        } else if p2 > len - p1 {
            p2 = len - p1;
        }
        Ok(Val::Blob(blob[p1 as usize..(p1 + p2) as usize].to_vec()))
    } else {
        let start = p1.min(len) as usize;
        let end = start + (p2.min(len - start as i64) as usize);
        Ok(Val::Text(chars[start..end].iter().collect()))
    }
}

/// `trimFunc`: strips any of the characters of the second argument
/// (default a space) from the chosen ends.
fn trim(v: &[Val], left: bool, right: bool) -> Result<Val> {
    let Some(s) = text_of(&v[0])? else {
        return Ok(Val::Null);
    };
    let set: Vec<char> = match v.get(1) {
        None => vec![' '],
        Some(y) => match text_of(y)? {
            None => return Ok(Val::Null),
            Some(y) => y.chars().collect(),
        },
    };
    let all: Vec<char> = s.chars().collect();
    let mut chars: &[char] = &all;
    if !set.is_empty() {
        if left {
            while let Some((first, rest)) = chars.split_first() {
                if !set.contains(first) {
                    break;
                }
                chars = rest;
            }
        }
        if right {
            while let Some((last, rest)) = chars.split_last() {
                if !set.contains(last) {
                    break;
                }
                chars = rest;
            }
        }
    }
    Ok(Val::Text(chars.iter().collect()))
}

/// `replaceFunc`: every occurrence, left to right; an empty pattern
/// leaves the text as it is.
fn replace(v: &[Val]) -> Result<Val> {
    let Some(s) = text_of(&v[0])? else {
        return Ok(Val::Null);
    };
    let Some(pattern) = text_of(&v[1])? else {
        return Ok(Val::Null);
    };
    if pattern.is_empty() {
        return Ok(Val::Text(s));
    }
    let Some(rep) = text_of(&v[2])? else {
        return Ok(Val::Null);
    };
    Ok(Val::Text(s.replace(&pattern, &rep)))
}

/// `instrFunc`: 1-based position of the needle, counted in characters
/// (in bytes if both are blobs); 0 if absent.
fn instr(hay: &Val, needle: &Val) -> Result<Val> {
    if hay.is_null() || needle.is_null() {
        return Ok(Val::Null);
    }
    if let (Val::Blob(h), Val::Blob(n)) = (hay, needle) {
        if n.is_empty() {
            return Ok(Val::Int(1));
        }
        let pos = h.windows(n.len()).position(|w| w == n.as_slice());
        return Ok(Val::Int(pos.map_or(0, |p| p as i64 + 1)));
    }
    let h = text_of(hay)?.unwrap_or_default();
    let n = text_of(needle)?.unwrap_or_default();
    if n.is_empty() {
        return Ok(Val::Int(1));
    }
    Ok(Val::Int(match h.find(&n) {
        Some(byte) => h[..byte].chars().count() as i64 + 1,
        None => 0,
    }))
}

/// `sqlite3QuoteValue`: the value as an SQL literal.
fn quote(v: &Val) -> String {
    match v {
        Val::Null => "NULL".to_string(),
        Val::Int(i) => i.to_string(),
        Val::Real(r) => fp::quote_real(*r),
        Val::Text(s) => format!("'{}'", s.replace('\'', "''")),
        Val::Blob(b) => {
            let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
            format!("X'{hex}'")
        }
    }
}

/// `charFunc`: code points to text. Declined where SQLite would build
/// text a `String` cannot hold (NUL, surrogates).
fn char_fn(v: &[Val]) -> Result<Val> {
    let mut out = String::new();
    for x in v {
        let mut i = int_value(x);
        if !(0..=0x10ffff).contains(&i) {
            i = 0xfffd;
        }
        match char::from_u32(i as u32) {
            Some(c) if c != '\0' => out.push(c),
            _ => return decline("char() of NUL or a surrogate"),
        }
    }
    Ok(Val::Text(out))
}

/// `roundFunc`.
fn round(v: &[Val]) -> Val {
    let mut n = 0i64;
    if let Some(digits) = v.get(1) {
        if digits.is_null() {
            return Val::Null;
        }
        n = int_value(digits).clamp(0, 30);
    }
    if v[0].is_null() {
        return Val::Null;
    }
    let r = real_value(&v[0]);
    let rounded = if !(-4_503_599_627_370_496.0..=4_503_599_627_370_496.0).contains(&r) {
        r
    } else if n == 0 {
        ((r + if r < 0.0 { -0.5 } else { 0.5 }) as i64) as f64
    } else {
        fp::round_digits(r, n as i32)
    };
    Val::Real(rounded)
}

/// Scalar `min()`/`max()` (`minmaxFunc`): NULL if any argument is; ties
/// keep the later argument for min and the earlier for max.
fn min_max(v: &[Val], max: bool, coll: super::collation::Collation) -> Val {
    if v.iter().any(Val::is_null) {
        return Val::Null;
    }
    let mut best = 0;
    for i in 1..v.len() {
        let ord = mem_compare(&v[best], &v[i], coll);
        let take = if max {
            ord == Ordering::Less
        } else {
            ord != Ordering::Less
        };
        if take {
            best = i;
        }
    }
    v[best].clone()
}

/// `signFunc`: -1, 0 or 1 for numbers and numeric text, else NULL.
fn sign(v: &Val) -> Val {
    let n = apply_numeric_affinity(v.clone());
    if !n.is_number() {
        return Val::Null;
    }
    let x = real_value(&n);
    Val::Int(if x < 0.0 {
        -1
    } else if x > 0.0 {
        1
    } else {
        0
    })
}

/// `concatFuncCore`: the non-NULL arguments' text, joined by `sep`.
fn concat(v: &[Val], sep: &str) -> Result<Val> {
    let mut out: Vec<u8> = vec![];
    let mut first = true;
    for x in v.iter().filter(|x| !x.is_null()) {
        if !first {
            out.extend_from_slice(sep.as_bytes());
        }
        first = false;
        out.extend(bytes_of(x));
    }
    Ok(Val::Text(text_from_bytes(out)?))
}
