//! Literal values of every storage class, drawn from small pools.
//!
//! Data and query literals come from the same small domains so that
//! comparisons and joins match often (a predicate that is always false
//! tests little), with the edge cases that break comparison and affinity
//! code mixed in: integer extremes, `-0.0`, huge and tiny reals, numbers
//! written as text, mixed case and trailing spaces for NOCASE and RTRIM.

use crate::types::Affinity;
use lancet_core::{Rng, Value};
use rand::seq::IndexedRandom;
use rand::Rng as _;

const SPECIAL_INTEGERS: &[i64] = &[
    0,
    1,
    -1,
    2,
    10,
    100,
    255,
    i64::MAX,
    i64::MIN,
    i64::MAX - 1,
    i64::MIN + 1,
    2_147_483_647,
    -2_147_483_648,
    9_007_199_254_740_993,
];

/// Every real here (and every one [`real`] makes) reads back from its
/// shortest printed form as exactly the same double. SQLite's text-to-float
/// conversion is not correctly rounded everywhere: `1e-300` reads as
/// 9.999999999999999e-301, which would puzzle anyone comparing a literal
/// with the value SQLite stored.
const SPECIAL_REALS: &[f64] = &[
    0.0,
    -0.0,
    0.5,
    1.5,
    -2.5,
    0.1,
    1.0,
    2.0,
    3.0,
    -1.0,
    1e308,
    -1e308,
    1e-5,
    1e-30,
    1e20,
    9.223372036854776e18,
    -9.223372036854776e18,
    123.456,
];

/// Short texts that look like numbers, differ only in case or spaces, or
/// contain LIKE/GLOB wildcards.
const TEXTS: &[&str] = &[
    "", "a", "A", "b", "B", "ab", "abc", "ABC", "aBc", "a ", " a", "1", "12", " 1 ", "0", "-1",
    "0.5", "1.0", "1e3", "0x10", "10", "2", "x%", "a_c", "%", "_", "é", "É", "zz", "NULL",
];

const BLOBS: &[&[u8]] = &[
    b"",
    b"\x00",
    b"a",
    b"A",
    b"ab",
    b"\xff",
    b"1",
    b"\x00\x01",
    b"abc",
];

/// Characters of random short texts.
const ALPHABET: &[u8] = b"aAbBcC01 %_.";

/// A small integer, the common case for data and literals.
pub fn small_int(rng: &mut Rng) -> i64 {
    rng.random_range(-3..=10)
}

pub fn integer(rng: &mut Rng) -> i64 {
    if rng.random_bool(0.85) {
        small_int(rng)
    } else {
        *SPECIAL_INTEGERS.choose(rng).unwrap_or(&0)
    }
}

pub fn real(rng: &mut Rng) -> f64 {
    match rng.random_range(0..4) {
        0 => *SPECIAL_REALS.choose(rng).unwrap_or(&0.0),
        // Halves are exact in binary: no surprises from decimal printing.
        1 => f64::from(rng.random_range(-8i32..=20)) / 2.0,
        2 => f64::from(rng.random_range(-3i32..=10)),
        _ => f64::from(rng.random_range(-100i32..=100)) / 10.0,
    }
}

pub fn text(rng: &mut Rng) -> String {
    if rng.random_bool(0.75) {
        (*TEXTS.choose(rng).unwrap_or(&"")).to_string()
    } else {
        let len = rng.random_range(0..=4);
        (0..len)
            .map(|_| char::from(*ALPHABET.choose(rng).unwrap_or(&b'a')))
            .collect()
    }
}

pub fn blob(rng: &mut Rng) -> Vec<u8> {
    if rng.random_bool(0.7) {
        BLOBS.choose(rng).unwrap_or(&&b""[..]).to_vec()
    } else {
        let len = rng.random_range(0..=3);
        (0..len).map(|_| rng.random_range(0..=255u8)).collect()
    }
}

/// A LIKE pattern: texts with `%` and `_` in various places.
pub fn like_pattern(rng: &mut Rng) -> String {
    const PATTERNS: &[&str] = &[
        "%", "a%", "%a", "%a%", "A%", "_", "__", "a_", "%1%", "1%", "", "abc", "%b%", "a\\%",
        "%\\_%", " %", "%.%",
    ];
    if rng.random_bool(0.7) {
        (*PATTERNS.choose(rng).unwrap_or(&"%")).to_string()
    } else {
        let mut t = text(rng);
        if rng.random_bool(0.5) {
            t.push('%');
        }
        t
    }
}

/// A GLOB pattern: `*`, `?` and character classes.
pub fn glob_pattern(rng: &mut Rng) -> String {
    const PATTERNS: &[&str] = &[
        "*", "a*", "*a", "*a*", "A*", "?", "??", "[a-c]*", "[^a]*", "*[0-9]*", "1*", "", "abc",
        "[ab]", "*.*",
    ];
    (*PATTERNS.choose(rng).unwrap_or(&"*")).to_string()
}

/// A one-character ESCAPE text (SQLite rejects anything longer at run time).
pub fn escape_char(rng: &mut Rng) -> String {
    (*["\\", "a", "%", "_", "x", "!"].choose(rng).unwrap_or(&"\\")).to_string()
}

/// A literal of any storage class, biased towards the values a column of
/// affinity `hint` holds (so that comparisons with it are often true).
pub fn literal(rng: &mut Rng, hint: Option<Affinity>) -> Value {
    if rng.random_bool(0.06) {
        return Value::Null;
    }
    // Weights: integer, real, text, blob, boolean.
    let weights: [u32; 5] = match hint {
        Some(Affinity::Integer) | Some(Affinity::Numeric) => [60, 15, 17, 4, 4],
        Some(Affinity::Real) => [30, 50, 12, 4, 4],
        Some(Affinity::Text) => [15, 8, 70, 5, 2],
        Some(Affinity::Blob) | None => [35, 18, 32, 12, 3],
    };
    let total: u32 = weights.iter().sum();
    let mut pick = rng.random_range(0..total);
    let mut kind = 0;
    for (i, w) in weights.iter().enumerate() {
        if pick < *w {
            kind = i;
            break;
        }
        pick -= w;
    }
    match kind {
        0 => Value::Integer(integer(rng)),
        1 => Value::Real(real(rng)),
        2 => Value::Text(text(rng)),
        3 => Value::Blob(blob(rng)),
        _ => Value::Boolean(rng.random_bool(0.5)),
    }
}

/// `expr LIKE pattern [ESCAPE c]` or `expr GLOB pattern`, perhaps negated.
/// GLOB takes no ESCAPE (it parses, then fails: glob() has two arguments).
pub fn like(
    rng: &mut Rng,
    glob: bool,
    expr: lancet_core::Expr,
    pattern: lancet_core::Expr,
) -> lancet_core::Expr {
    let escape = (!glob && rng.random_bool(0.2))
        .then(|| Box::new(lancet_core::Expr::Literal(Value::Text(escape_char(rng)))));
    lancet_core::Expr::Like {
        kind: if glob {
            lancet_core::LikeKind::Glob
        } else {
            lancet_core::LikeKind::Like
        },
        expr: Box::new(expr),
        pattern: Box::new(pattern),
        escape,
        negated: rng.random_bool(0.3),
    }
}
