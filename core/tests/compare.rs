//! Result comparison: multisets and sets of rows, and what equality of two
//! values means (docs/oracles.md): NULL = NULL, NaN = NaN, -0.0 = 0.0, an INTEGER
//! equals a REAL of exactly the same value, and nothing else crosses types.

use lancet_core::compare::{multiset_diff, set_diff, values_close, values_equal, RowDiff};
use lancet_core::value::{Row, Value};

use Value::{Blob, Boolean, Decimal, Integer, Null, Real, Text};

fn text(s: &str) -> Value {
    Text(s.to_string())
}

fn dec(s: &str) -> Value {
    Decimal(s.to_string())
}

fn empty_result() -> Vec<Row> {
    vec![]
}

fn rows(values: &[&[Value]]) -> Vec<Row> {
    values.iter().map(|r| r.to_vec()).collect()
}

/// One-column rows.
fn col(values: &[Value]) -> Vec<Row> {
    values.iter().map(|v| vec![v.clone()]).collect()
}

/// Exactly the same value, floats by their bits (Value's own `==` has
/// NaN != NaN and -0.0 == 0.0).
fn identical(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Real(x), Real(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

/// Asserts a reported side of a diff, rows exactly as given.
#[track_caller]
fn reported(actual: &[(Row, usize)], expected: &[(Row, usize)]) {
    let same = actual.len() == expected.len()
        && actual.iter().zip(expected).all(|((ra, ca), (re, ce))| {
            ca == ce && ra.len() == re.len() && ra.iter().zip(re).all(|(a, e)| identical(a, e))
        });
    assert!(same, "reported {actual:?}, expected {expected:?}");
}

#[track_caller]
fn equal(a: &Value, b: &Value) {
    assert!(values_equal(a, b), "{a:?} should equal {b:?}");
    assert!(values_equal(b, a), "{b:?} should equal {a:?}");
    // Equal values are equal as one-column results, both ways.
    let (a, b) = (std::slice::from_ref(a), std::slice::from_ref(b));
    assert!(multiset_diff(&col(a), &col(b)).is_empty());
    assert!(set_diff(&col(b), &col(a)).is_empty());
}

#[track_caller]
fn unequal(a: &Value, b: &Value) {
    assert!(!values_equal(a, b), "{a:?} should differ from {b:?}");
    assert!(!values_equal(b, a), "{b:?} should differ from {a:?}");
    let diff = multiset_diff(&col(std::slice::from_ref(a)), &col(std::slice::from_ref(b)));
    reported(&diff.only_in_first, &[(vec![a.clone()], 1)]);
    reported(&diff.only_in_second, &[(vec![b.clone()], 1)]);
}

// ---------------------------------------------------------------------------
// Value equality
// ---------------------------------------------------------------------------

#[test]
fn null_equals_null() {
    equal(&Null, &Null);
    unequal(&Null, &Integer(0));
    unequal(&Null, &text(""));
    unequal(&Null, &text("NULL"));
    unequal(&Null, &Real(f64::NAN));
    unequal(&Null, &Blob(vec![]));
    unequal(&Null, &Boolean(false));
}

#[test]
fn zeros_and_nans() {
    equal(&Real(-0.0), &Real(0.0));
    equal(&Real(-0.0), &Integer(0));
    equal(&Real(f64::NAN), &Real(f64::NAN));
    equal(&Real(f64::NAN), &Real(-f64::NAN));
    // A NaN with another payload is still NaN.
    equal(
        &Real(f64::NAN),
        &Real(f64::from_bits(0x7ff8_0000_0000_0001)),
    );
    unequal(&Real(f64::NAN), &Real(0.0));
    unequal(&Real(f64::NAN), &Real(f64::INFINITY));
    equal(&Real(f64::INFINITY), &Real(f64::INFINITY));
    // NaNs are duplicates of each other in a multiset.
    let diff = multiset_diff(
        &col(&[Real(f64::NAN), Real(-f64::NAN)]),
        &col(&[Real(f64::NAN)]),
    );
    reported(&diff.only_in_first, &[(vec![Real(f64::NAN)], 1)]);
    assert!(diff.only_in_second.is_empty());
    unequal(&Real(f64::INFINITY), &Real(f64::NEG_INFINITY));
    unequal(&Real(f64::INFINITY), &Real(f64::MAX));
}

#[test]
fn integers_equal_reals_of_exactly_the_same_value() {
    equal(&Integer(1), &Real(1.0));
    equal(&Integer(-3), &Real(-3.0));
    unequal(&Integer(1), &Real(1.5));
    unequal(&Integer(1), &Real(1.000_000_000_000_000_2));
    // 2^53 + 1 has no double; the nearest, 2^53, is another number.
    let two_53 = 1i64 << 53;
    unequal(&Integer(two_53 + 1), &Real(two_53 as f64));
    equal(&Integer(two_53), &Real(two_53 as f64));
    // Integral reals at the edge of the integer range.
    equal(&Integer(i64::MIN), &Real(i64::MIN as f64));
    // 2^63 is one more than i64::MAX, whose nearest double it is.
    let two_63 = -(i64::MIN as f64);
    unequal(&Integer(i64::MAX), &Real(two_63));
    unequal(&Integer(i64::MIN), &Real(two_63));
    // Just inside the range, on either side.
    equal(&Integer(i64::MAX - 1023), &Real((i64::MAX - 1023) as f64));
    equal(&Integer(i64::MIN + 1024), &Real((i64::MIN + 1024) as f64));
    unequal(&Integer(i64::MAX), &Real(i64::MAX as f64));
    // Beyond the range a real equals only itself.
    equal(&Real(1e300), &Real(1e300));
    unequal(&Real(1e300), &Real(-1e300));
    equal(&Real(2.5), &Real(2.5));
    unequal(&Real(2.5), &Real(-2.5));
}

#[test]
fn no_other_type_crosses() {
    unequal(&text("1"), &Integer(1));
    unequal(&text("1.0"), &Real(1.0));
    unequal(&text("abc"), &Blob(b"abc".to_vec()));
    unequal(&Blob(vec![1]), &Integer(1));
    unequal(&Boolean(true), &Integer(1));
    unequal(&Boolean(false), &Integer(0));
    unequal(&text("TRUE"), &Boolean(true));
    unequal(&text("1.5"), &dec("1.5"));
    equal(&Boolean(true), &Boolean(true));
    unequal(&Boolean(true), &Boolean(false));
    equal(&Blob(vec![0, 1]), &Blob(vec![0, 1]));
    unequal(&Blob(vec![0, 1]), &Blob(vec![0, 1, 0]));
    equal(&Blob(vec![]), &Blob(vec![]));
    // Text compares exactly: case and trailing spaces count.
    unequal(&text("a"), &text("A"));
    unequal(&text("a"), &text("a "));
    equal(&text("é"), &text("é"));
}

#[test]
fn decimals_compare_by_value() {
    equal(&dec("1.50"), &dec("1.5"));
    equal(&dec("1.500"), &dec("1.50"));
    equal(&dec("2.0"), &dec("2"));
    equal(&dec("100.00"), &dec("100"));
    equal(&dec("-0.0"), &dec("0"));
    equal(&dec("-0.50"), &dec("-0.5"));
    unequal(&dec("-0.5"), &dec("0.5"));
    unequal(&dec("1.5"), &dec("1.05"));
    // Trailing zeros of an integer are digits.
    unequal(&dec("10"), &dec("1"));
    unequal(&dec("100"), &dec("1"));
    // Integral decimals equal integers and integral reals.
    equal(&dec("2.00"), &Integer(2));
    equal(&dec("2.00"), &Real(2.0));
    equal(&dec("-7"), &Integer(-7));
    // Beyond i64 decimals still compare by their digits.
    equal(
        &dec("123456789012345678901234567890.10"),
        &dec("123456789012345678901234567890.1"),
    );
    unequal(
        &dec("123456789012345678901234567890"),
        &dec("123456789012345678901234567891"),
    );
}

// ---------------------------------------------------------------------------
// Multisets and sets of rows
// ---------------------------------------------------------------------------

#[test]
fn identical_and_reordered_results_agree() {
    let a = rows(&[
        &[Integer(1), text("a")],
        &[Integer(2), Null],
        &[Integer(1), text("a")],
    ]);
    let b = rows(&[
        &[Integer(2), Null],
        &[Integer(1), text("a")],
        &[Real(1.0), text("a")],
    ]);
    assert!(multiset_diff(&a, &b).is_empty());
    assert!(set_diff(&a, &b).is_empty());
    assert_eq!(multiset_diff(&a, &b), RowDiff::default());
}

#[test]
fn duplicates_count_in_multisets_not_in_sets() {
    let a = col(&[Integer(1), Integer(1), Integer(1), Integer(2)]);
    let b = col(&[Integer(1), Integer(2), Integer(2)]);
    let diff = multiset_diff(&a, &b);
    assert_eq!(diff.only_in_first, vec![(vec![Integer(1)], 2)]);
    assert_eq!(diff.only_in_second, vec![(vec![Integer(2)], 1)]);
    assert!(!diff.is_empty());
    let diff = set_diff(&a, &b);
    assert!(diff.is_empty(), "{diff:?}");
    // A set difference counts each row once, however often it occurs.
    let diff = set_diff(&col(&[Integer(3), Integer(3), Integer(3)]), &b);
    assert_eq!(diff.only_in_first, vec![(vec![Integer(3)], 1)]);
    assert_eq!(
        diff.only_in_second,
        vec![(vec![Integer(1)], 1), (vec![Integer(2)], 1)]
    );
}

#[test]
fn null_rows_match_as_duplicates() {
    let a = col(&[Null, Null]);
    let b = col(&[Null]);
    let diff = multiset_diff(&a, &b);
    assert_eq!(diff.only_in_first, vec![(vec![Null], 1)]);
    assert!(diff.only_in_second.is_empty());
    assert!(set_diff(&a, &b).is_empty());
}

#[test]
fn equal_values_of_different_forms_are_one_row() {
    // -0.0 and 0 and 0.0 are one row; so are NaNs; so are 1.50 and 1.5.
    let a = col(&[Real(-0.0), Real(f64::NAN), dec("1.50")]);
    let b = col(&[Integer(0), Real(f64::NAN), dec("1.5")]);
    assert!(multiset_diff(&a, &b).is_empty());
    let a = col(&[Real(0.0), Real(-0.0), Integer(0)]);
    let diff = multiset_diff(&a, &col(&[Real(0.0)]));
    // The row is reported as it first occurred, with the surplus count.
    reported(&diff.only_in_first, &[(vec![Real(0.0)], 2)]);
    let diff = multiset_diff(&col(&[Real(-0.0), Real(0.0)]), &empty_result());
    reported(&diff.only_in_first, &[(vec![Real(-0.0)], 2)]);
    assert!(set_diff(&a, &col(&[Integer(0)])).is_empty());
}

#[test]
fn multi_column_rows_compare_whole() {
    let a = rows(&[
        &[Integer(1), text("x"), Null],
        &[Integer(2), text("y"), Real(0.5)],
    ]);
    // Same values, regrouped across rows: not the same result.
    let b = rows(&[
        &[Integer(1), text("y"), Null],
        &[Integer(2), text("x"), Real(0.5)],
    ]);
    let diff = multiset_diff(&a, &b);
    assert_eq!(
        diff.only_in_first,
        vec![
            (vec![Integer(1), text("x"), Null], 1),
            (vec![Integer(2), text("y"), Real(0.5)], 1),
        ]
    );
    assert_eq!(
        diff.only_in_second,
        vec![
            (vec![Integer(1), text("y"), Null], 1),
            (vec![Integer(2), text("x"), Real(0.5)], 1),
        ]
    );
    assert_eq!(set_diff(&a, &b), diff);
    // A column that differs only in type.
    let c = rows(&[
        &[Integer(1), text("x"), Null],
        &[Integer(2), text("y"), text("0.5")],
    ]);
    let diff = multiset_diff(&a, &c);
    assert_eq!(
        diff.only_in_first,
        vec![(vec![Integer(2), text("y"), Real(0.5)], 1)]
    );
    assert_eq!(
        diff.only_in_second,
        vec![(vec![Integer(2), text("y"), text("0.5")], 1)]
    );
}

#[test]
fn empty_against_non_empty() {
    let empty: Vec<Row> = vec![];
    assert!(multiset_diff(&empty, &empty).is_empty());
    assert!(set_diff(&empty, &empty).is_empty());
    let some = col(&[Integer(1), Integer(1), Null]);
    let diff = multiset_diff(&empty, &some);
    assert!(diff.only_in_first.is_empty());
    assert_eq!(
        diff.only_in_second,
        vec![(vec![Integer(1)], 2), (vec![Null], 1)]
    );
    let diff = multiset_diff(&some, &empty);
    assert_eq!(
        diff.only_in_first,
        vec![(vec![Integer(1)], 2), (vec![Null], 1)]
    );
    assert!(diff.only_in_second.is_empty());
    let diff = set_diff(&some, &empty);
    assert_eq!(
        diff.only_in_first,
        vec![(vec![Integer(1)], 1), (vec![Null], 1)]
    );
    // An empty row (zero columns) is a row.
    let one_empty_row: Vec<Row> = vec![vec![]];
    let diff = multiset_diff(&one_empty_row, &empty);
    assert_eq!(diff.only_in_first, vec![(vec![], 1)]);
}

#[test]
fn reports_are_sorted_and_deterministic() {
    let a = col(&[text("c"), text("a"), text("b"), Integer(3), Integer(10)]);
    let empty: Vec<Row> = vec![];
    let first = multiset_diff(&a, &empty);
    // Sorted by the row's report text.
    let order: Vec<String> = first
        .only_in_first
        .iter()
        .map(|(r, _)| lancet_core::value::format_row(r))
        .collect();
    assert_eq!(order, ["('a')", "('b')", "('c')", "(10)", "(3)"]);
    for _ in 0..20 {
        assert_eq!(multiset_diff(&a, &empty), first);
    }
}

#[test]
fn rows_that_read_alike_are_still_reported_in_one_order() {
    // REAL 1.5 and DECIMAL 1.5 both read `1.5`; a REAL NaN and PostgreSQL's
    // numeric NaN both read `NaN`. They are different rows, and every
    // comparison (each with its own hash order) reports them alike.
    let a = col(&[dec("1.5"), Real(1.5), Real(f64::NAN), dec("NaN"), text("x")]);
    let b = col(&[text("x")]);
    let first = multiset_diff(&a, &b);
    assert_eq!(first.only_in_first.len(), 4);
    reported(
        &first.only_in_first,
        &[
            (vec![dec("1.5")], 1),
            (vec![Real(1.5)], 1),
            (vec![dec("NaN")], 1),
            (vec![Real(f64::NAN)], 1),
        ],
    );
    for _ in 0..50 {
        reported(&multiset_diff(&a, &b).only_in_first, &first.only_in_first);
        reported(&set_diff(&b, &a).only_in_second, &first.only_in_first);
    }
}

#[test]
fn integer_real_confusion_is_found_where_it_matters() {
    // 2^53 + 1 and 2^53 as a REAL: the classic lossy conversion.
    let two_53 = 1i64 << 53;
    let a = col(&[Integer(two_53 + 1)]);
    let b = col(&[Real(two_53 as f64)]);
    let diff = multiset_diff(&a, &b);
    assert_eq!(diff.only_in_first, vec![(vec![Integer(two_53 + 1)], 1)]);
    assert_eq!(diff.only_in_second, vec![(vec![Real(two_53 as f64)], 1)]);
    // 1 and 1.0 are the same row.
    assert!(set_diff(&col(&[Integer(1)]), &col(&[Real(1.0)])).is_empty());
    // 1 and 1.5 are not.
    assert!(!set_diff(&col(&[Integer(1)]), &col(&[Real(1.5)])).is_empty());
}

// ---------------------------------------------------------------------------
// Tolerance
// ---------------------------------------------------------------------------

#[test]
fn values_close_tolerates_floats_only() {
    let rel = 1e-9;
    // Floats within the relative tolerance.
    assert!(values_close(&Real(1.0), &Real(1.0 + 1e-12), rel));
    assert!(values_close(&Real(1e20), &Real(1e20 * (1.0 + 1e-10)), rel));
    assert!(values_close(&Real(-3.0), &Real(-3.0 * (1.0 + 1e-10)), rel));
    assert!(!values_close(&Real(1.0), &Real(1.0 + 1e-6), rel));
    assert!(!values_close(&Real(1.0), &Real(-1.0), rel));
    // The tolerance is relative, not absolute.
    assert!(!values_close(&Real(1e-20), &Real(2e-20), rel));
    assert!(values_close(
        &Real(1e-20),
        &Real(1e-20 * (1.0 + 1e-12)),
        rel
    ));
    // A float against an integer of nearly the same value.
    assert!(values_close(
        &Integer(1_000_000),
        &Real(1_000_000.000_000_1),
        rel
    ));
    assert!(values_close(
        &Real(1_000_000.000_000_1),
        &Integer(1_000_000),
        rel
    ));
    assert!(!values_close(&Integer(1), &Real(1.5), rel));
    // Integers must be exact, however large the tolerance.
    assert!(!values_close(
        &Integer(1_000_000_000),
        &Integer(1_000_000_001),
        0.5
    ));
    assert!(!values_close(&Integer(1), &Integer(2), 10.0));
    assert!(values_close(&Integer(7), &Integer(7), 0.0));
    // So must decimals against decimals.
    assert!(!values_close(&dec("1.0000000001"), &dec("1"), 0.5));
    assert!(values_close(&dec("1.50"), &dec("1.5"), 0.0));
    // A decimal against a float is a float comparison.
    assert!(values_close(&dec("0.3"), &Real(0.1 + 0.2), rel));
    // Infinities and NaN: only themselves.
    assert!(values_close(
        &Real(f64::INFINITY),
        &Real(f64::INFINITY),
        rel
    ));
    assert!(!values_close(&Real(f64::INFINITY), &Real(f64::MAX), 1.0));
    assert!(values_close(&Real(f64::NAN), &Real(f64::NAN), rel));
    assert!(!values_close(&Real(f64::NAN), &Real(1.0), 1.0));
    // Other types are never close, only equal.
    assert!(!values_close(&text("1"), &Real(1.0), 1.0));
    assert!(!values_close(&Null, &Real(0.0), 1.0));
    assert!(values_close(&Null, &Null, 0.0));
    assert!(!values_close(&Boolean(true), &Real(1.0), 1.0));
    assert!(values_close(&text("a"), &text("a"), 0.0));
    // Zero against zero and a tiny value.
    assert!(values_close(&Real(0.0), &Real(-0.0), 0.0));
    assert!(!values_close(&Real(0.0), &Real(1e-300), rel));
}
