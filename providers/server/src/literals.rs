//! Literal values on the edges of the types server providers generate,
//! shared so that every DBMS meets the same boundaries: the limits of
//! each integer width, decimals with trailing zeros, blobs with a NUL
//! and a high byte. A provider's `LITERAL` draws from these and spells
//! each as its dialect reads it.

use lancet_core::{Expr, Rng, Value};
use rand::seq::IndexedRandom;

/// Integers at the limits of TINYINT, SMALLINT, INT and BIGINT.
pub const INTEGERS: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    7,
    10,
    100,
    127,
    -128,
    255,
    256,
    65535,
    2147483647,
    -2147483648,
    i64::MAX,
    i64::MIN,
];

/// Decimals, as text: trailing zeros, signs, scales up to three.
pub const DECIMALS: &[&str] = &[
    "0.0",
    "1.5",
    "-1.5",
    "0.01",
    "2.50",
    "99.99",
    "-0.5",
    "10.000",
    "123456.789",
];

/// Blobs: empty, a letter in both cases, NUL, a high byte.
pub const BLOBS: &[&[u8]] = &[b"", b"a", b"\x00", b"\xff", b"ab", b"A"];

/// An integer literal drawn from [`INTEGERS`].
pub fn integer(rng: &mut Rng) -> Expr {
    Expr::Literal(Value::Integer(*INTEGERS.choose(rng).unwrap_or(&0)))
}

/// A decimal literal drawn from [`DECIMALS`].
pub fn decimal(rng: &mut Rng) -> Expr {
    Expr::Literal(Value::Decimal(
        DECIMALS.choose(rng).unwrap_or(&"0.0").to_string(),
    ))
}

/// A blob literal drawn from [`BLOBS`].
pub fn blob(rng: &mut Rng) -> Expr {
    Expr::Literal(Value::Blob(
        BLOBS.choose(rng).unwrap_or(&&b"a"[..]).to_vec(),
    ))
}
