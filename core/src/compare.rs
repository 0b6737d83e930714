//! Comparing results the way docs/oracles.md says: whole rows, as multisets (or
//! sets), NULL equal to NULL, NaN equal to NaN, -0.0 equal to 0.0, and an
//! INTEGER equal to a REAL of exactly the same value (SQLite's DISTINCT and
//! MIN/MAX may legitimately return either of two equal values).

use crate::value::{Row, Value};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};

/// A value reduced to what equality means for result comparison.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key<'a> {
    Null,
    Int(i64),
    /// A non-integral float, by its bits (NaN canonical).
    Real(u64),
    Text(&'a str),
    Blob(&'a [u8]),
    Bool(bool),
    Decimal(String),
}

fn real_key(r: f64) -> Key<'static> {
    if r.is_nan() {
        return Key::Real(f64::NAN.to_bits());
    }
    // Integral floats within i64 range (-2^63 inclusive to 2^63 exclusive;
    // both bounds are exact doubles) compare as the integer of the same value.
    let min = i64::MIN as f64;
    if r.fract() == 0.0 && (min..-min).contains(&r) {
        return Key::Int(r as i64);
    }
    Key::Real(r.to_bits())
}

/// `1.50` and `1.5` are the same decimal; which one a DBMS prints can depend
/// on which row it saw first.
fn decimal_key(text: &str) -> Key<'static> {
    let mut t = text.trim().to_string();
    if t.contains('.') && !t.contains(['e', 'E']) {
        while t.ends_with('0') {
            t.pop();
        }
        if t.ends_with('.') {
            t.pop();
        }
    }
    if t == "-0" {
        t = "0".to_string();
    }
    match t.parse::<i64>() {
        Ok(i) => Key::Int(i),
        Err(_) => Key::Decimal(t),
    }
}

fn key(v: &Value) -> Key<'_> {
    match v {
        Value::Null => Key::Null,
        Value::Integer(i) => Key::Int(*i),
        Value::Real(r) => real_key(*r),
        Value::Text(s) => Key::Text(s),
        Value::Blob(b) => Key::Blob(b),
        Value::Boolean(b) => Key::Bool(*b),
        Value::Decimal(d) => decimal_key(d),
    }
}

/// Whether two values are equal for result comparison.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    key(a) == key(b)
}

/// Whether two values are equal, allowing a relative difference of
/// `relative` between floats (for SUM/AVG of floats, whose rounding depends
/// on the order of summation). Non-float values must be equal exactly.
pub fn values_close(a: &Value, b: &Value, relative: f64) -> bool {
    if values_equal(a, b) {
        return true;
    }
    let as_f64 = |v: &Value| match v {
        Value::Real(r) => Some(*r),
        Value::Integer(i) => Some(*i as f64),
        Value::Decimal(d) => d.parse::<f64>().ok(),
        _ => None,
    };
    let involves_float = matches!(a, Value::Real(_)) || matches!(b, Value::Real(_));
    match (as_f64(a), as_f64(b)) {
        (Some(x), Some(y)) if involves_float => {
            if x.is_infinite() || y.is_infinite() || x.is_nan() || y.is_nan() {
                return false;
            }
            let scale = x.abs().max(y.abs());
            (x - y).abs() <= relative * scale
        }
        _ => false,
    }
}

/// How two results differ: rows (with how many more times they occur) on
/// one side and not the other.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RowDiff {
    pub only_in_first: Vec<(Row, usize)>,
    pub only_in_second: Vec<(Row, usize)>,
    /// What the two sides are, where they are not the first two queries
    /// of the check (a relation over more queries: dqe's sides combine
    /// several), so that a report names them rightly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sides: Option<[String; 2]>,
}

impl RowDiff {
    pub fn is_empty(&self) -> bool {
        self.only_in_first.is_empty() && self.only_in_second.is_empty()
    }
}

/// A row as a hash-map key under result equality, without copying it.
struct RowKey<'a>(&'a [Value]);

impl Hash for RowKey<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for v in self.0 {
            key(v).hash(state);
        }
    }
}

impl PartialEq for RowKey<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(other.0).all(|(a, b)| key(a) == key(b))
    }
}

impl Eq for RowKey<'_> {}

/// Per distinct row: how often it occurs in the first and the second result.
struct Tally<'a> {
    first: usize,
    second: usize,
    row: &'a Row,
}

fn diff(first: &[Row], second: &[Row], as_sets: bool) -> RowDiff {
    // Fx hashing: fast (SipHash was a tenth of lancet's time), fine for
    // results, which are not adversarial input, and unseeded, so nothing
    // here depends on a random seed.
    let mut map: FxHashMap<RowKey<'_>, Tally<'_>> =
        FxHashMap::with_capacity_and_hasher(first.len().max(second.len()), Default::default());
    for row in first {
        map.entry(RowKey(row))
            .or_insert(Tally {
                first: 0,
                second: 0,
                row,
            })
            .first += 1;
    }
    for row in second {
        map.entry(RowKey(row))
            .or_insert(Tally {
                first: 0,
                second: 0,
                row,
            })
            .second += 1;
    }
    let mut out = RowDiff::default();
    for t in map.values() {
        let (a, b) = if as_sets {
            (usize::from(t.first > 0), usize::from(t.second > 0))
        } else {
            (t.first, t.second)
        };
        if a > b {
            out.only_in_first.push((t.row.clone(), a - b));
        } else if b > a {
            out.only_in_second.push((t.row.clone(), b - a));
        }
    }
    // Deterministic order for reports. Two different rows can read the same
    // (REAL 1.5 and DECIMAL 1.5, or a REAL and a PostgreSQL numeric NaN), so
    // the kinds of their values break ties; text and kinds together tell
    // every pair of different rows apart.
    let report_order = |(r, _): &(Row, usize)| {
        let kinds: Vec<&'static str> = r.iter().map(Value::kind).collect();
        (crate::value::format_row(r), kinds)
    };
    out.only_in_first.sort_by_cached_key(report_order);
    out.only_in_second.sort_by_cached_key(report_order);
    out
}

/// Compares two results as multisets: every row must occur equally often.
pub fn multiset_diff(first: &[Row], second: &[Row]) -> RowDiff {
    diff(first, second, false)
}

/// Compares two results as sets: duplicates do not count.
pub fn set_diff(first: &[Row], second: &[Row]) -> RowDiff {
    diff(first, second, true)
}

/// Whether two diffs report the same rows the same number of times, with
/// values compared as results are (so a NaN matches a NaN).
pub fn same_diff(a: &RowDiff, b: &RowDiff) -> bool {
    fn side(x: &[(Row, usize)], y: &[(Row, usize)]) -> bool {
        let expand = |v: &[(Row, usize)]| -> Vec<Row> {
            v.iter()
                .flat_map(|(r, n)| std::iter::repeat_n(r.clone(), *n))
                .collect()
        };
        multiset_diff(&expand(x), &expand(y)).is_empty()
    }
    side(&a.only_in_first, &b.only_in_first) && side(&a.only_in_second, &b.only_in_second)
}
