//! Comparing two values the way SQLite's comparison opcodes do: affinity
//! applied to the operands first, then NULL < numbers < text < blobs, with
//! numbers compared exactly (integer against real included), text by a
//! collating sequence ([`super::collation`]) and blobs by `memcmp`.

use super::collation::Collation;
use super::typing::Aff;
use super::value::{apply_numeric_affinity, render_number, Val};
use std::cmp::Ordering;

/// `sqlite3IntFloatCompare`: an integer against a real, exactly.
fn int_float_compare(i: i64, r: f64) -> Ordering {
    if r < -9_223_372_036_854_775_808.0 {
        return Ordering::Greater;
    }
    if r >= 9_223_372_036_854_775_808.0 {
        return Ordering::Less;
    }
    let y = r as i64;
    match i.cmp(&y) {
        Ordering::Equal => (i as f64).partial_cmp(&r).unwrap_or(Ordering::Equal),
        other => other,
    }
}

/// `sqlite3MemCompare`: the total order SQLite sorts and compares by.
pub fn mem_compare(a: &Val, b: &Val, coll: Collation) -> Ordering {
    use Val::*;
    match (a, b) {
        (Null, Null) => Ordering::Equal,
        (Null, _) => Ordering::Less,
        (_, Null) => Ordering::Greater,
        (Int(x), Int(y)) => x.cmp(y),
        (Real(x), Real(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Int(x), Real(y)) => int_float_compare(*x, *y),
        (Real(x), Int(y)) => int_float_compare(*y, *x).reverse(),
        (Int(_) | Real(_), _) => Ordering::Less,
        (_, Int(_) | Real(_)) => Ordering::Greater,
        (Text(x), Text(y)) => coll.compare(x.as_bytes(), y.as_bytes()),
        (Text(_), Blob(_)) => Ordering::Less,
        (Blob(_), Text(_)) => Ordering::Greater,
        (Blob(x), Blob(y)) => x.cmp(y),
    }
}

/// What the comparison opcodes do to their operands first, given the
/// comparison's affinity: with a numeric affinity, text that looks like a
/// number becomes one; with TEXT affinity, numbers become text (only if
/// one operand is text). BLOB or no affinity converts nothing.
pub fn apply_comparison_affinity(aff: Aff, a: Val, b: Val) -> (Val, Val) {
    let has_text = matches!(a, Val::Text(_)) || matches!(b, Val::Text(_));
    if !has_text {
        return (a, b);
    }
    if aff.is_numeric() {
        (apply_numeric_affinity(a), apply_numeric_affinity(b))
    } else if aff == Aff::Text {
        let to_text = |v: Val| match render_number(&v) {
            Some(s) => Val::Text(s),
            None => v,
        };
        (to_text(a), to_text(b))
    } else {
        (a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_across_storage_classes() {
        let c = Collation::Binary;
        assert_eq!(
            mem_compare(&Val::Int(1), &Val::Real(1.0), c),
            Ordering::Equal
        );
        assert_eq!(
            mem_compare(&Val::Int(i64::MAX), &Val::Real(9.223_372_036_854_776e18), c),
            Ordering::Less
        );
        assert_eq!(
            mem_compare(&Val::Real(1e300), &Val::Text("".into()), c),
            Ordering::Less
        );
        assert_eq!(
            mem_compare(&Val::Text("z".into()), &Val::Blob(vec![]), c),
            Ordering::Less
        );
        assert_eq!(Collation::NoCase.compare(b"abc", b"ABD"), Ordering::Less);
        assert_eq!(Collation::Rtrim.compare(b"a  ", b"a"), Ordering::Equal);
    }
}
