//! The operators the SQLite expression generators draw from, with their
//! weights (repeated entries). One table for the general generator and the
//! PQS one, so that both exercise the same operators.

use lancet_core::{BinaryOp, Rng, UnaryOp};
use rand::seq::IndexedRandom;

const COMPARISONS: &[BinaryOp] = &[
    BinaryOp::Eq,
    BinaryOp::Eq,
    BinaryOp::NotEq,
    BinaryOp::Lt,
    BinaryOp::LtEq,
    BinaryOp::Gt,
    BinaryOp::GtEq,
    BinaryOp::IsNotDistinctFrom,
    BinaryOp::IsDistinctFrom,
];

const ARITHMETIC: &[BinaryOp] = &[
    BinaryOp::Add,
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Mod,
    BinaryOp::Concat,
    BinaryOp::Concat,
    BinaryOp::BitAnd,
    BinaryOp::BitOr,
    BinaryOp::ShiftLeft,
    BinaryOp::ShiftRight,
];

const UNARY: &[UnaryOp] = &[UnaryOp::Neg, UnaryOp::Neg, UnaryOp::Plus, UnaryOp::BitNot];

/// A comparison: `= <> < <= > >= IS IS NOT`.
pub fn comparison(rng: &mut Rng) -> BinaryOp {
    *COMPARISONS.choose(rng).unwrap_or(&BinaryOp::Eq)
}

/// An arithmetic, bitwise or concatenation operator.
pub fn arithmetic(rng: &mut Rng) -> BinaryOp {
    *ARITHMETIC.choose(rng).unwrap_or(&BinaryOp::Add)
}

/// A unary operator other than NOT: `- + ~`.
pub fn unary(rng: &mut Rng) -> UnaryOp {
    *UNARY.choose(rng).unwrap_or(&UnaryOp::Neg)
}
