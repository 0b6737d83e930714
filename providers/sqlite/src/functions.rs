//! The scalar functions the generator calls, with their arities and the
//! first SQLite version that has them.
//!
//! Only deterministic functions are listed: the oracles compare results of
//! queries that must agree under any plan, and SQLite rejects
//! non-deterministic functions in CHECK constraints and index expressions
//! anyway. Functions that raise errors on ordinary input (the JSON family,
//! `unistr`) or can build huge values (`zeroblob`, printf widths) are left
//! out. Which functions exist depends on the library in use, so the
//! generator filters this table by the version it reads at run time.

/// How a function's arguments are formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `min..=max` arbitrary arguments.
    Args(u8, u8),
    /// `f(predicate)`: likely, unlikely.
    Hint,
    /// `likelihood(predicate, p)` with `p` a literal in [0, 1] (else a prepare-time error).
    Likelihood,
    /// `iif(predicate, x, y)`.
    Iif,
    /// `printf(format, args...)` with one of a few safe formats.
    Printf,
    /// `like(pattern, x [, escape])`, escape a one-character literal.
    Like,
    /// `glob(pattern, x)`.
    Glob,
}

#[derive(Clone, Copy, Debug)]
pub struct Function {
    pub name: &'static str,
    /// `sqlite3_libversion_number()` of the first release with the function.
    pub since: i32,
    pub shape: Shape,
}

const fn f(name: &'static str, since: i32, shape: Shape) -> Function {
    Function { name, since, shape }
}

use Shape::*;

/// Every scalar function the generator may call.
pub const FUNCTIONS: &[Function] = &[
    f("abs", 3_000_000, Args(1, 1)),
    f("coalesce", 3_000_000, Args(2, 4)),
    f("ifnull", 3_000_000, Args(2, 2)),
    f("nullif", 3_000_000, Args(2, 2)),
    f("iif", 3_032_000, Iif),
    f("length", 3_000_000, Args(1, 1)),
    f("octet_length", 3_043_000, Args(1, 1)),
    f("lower", 3_000_000, Args(1, 1)),
    f("upper", 3_000_000, Args(1, 1)),
    f("substr", 3_000_000, Args(2, 3)),
    f("substring", 3_034_000, Args(2, 3)),
    f("trim", 3_000_000, Args(1, 2)),
    f("ltrim", 3_000_000, Args(1, 2)),
    f("rtrim", 3_000_000, Args(1, 2)),
    f("replace", 3_000_000, Args(3, 3)),
    f("instr", 3_007_015, Args(2, 2)),
    f("hex", 3_000_000, Args(1, 1)),
    f("unhex", 3_041_000, Args(1, 2)),
    f("quote", 3_000_000, Args(1, 1)),
    f("typeof", 3_000_000, Args(1, 1)),
    f("unicode", 3_007_016, Args(1, 1)),
    f("char", 3_007_016, Args(1, 3)),
    f("round", 3_000_000, Args(1, 2)),
    // Scalar min/max need two or more arguments; with one they aggregate.
    f("min", 3_000_000, Args(2, 3)),
    f("max", 3_000_000, Args(2, 3)),
    f("likely", 3_008_001, Hint),
    f("unlikely", 3_008_000, Hint),
    f("likelihood", 3_008_000, Likelihood),
    f("sign", 3_035_000, Args(1, 1)),
    f("printf", 3_008_003, Printf),
    f("format", 3_038_000, Printf),
    f("glob", 3_000_000, Glob),
    f("like", 3_000_000, Like),
    f("concat", 3_044_000, Args(1, 3)),
    f("concat_ws", 3_044_000, Args(2, 4)),
];

/// printf formats and how many arguments each consumes. No `*` widths and
/// only small explicit widths: nothing can produce a huge string.
pub const PRINTF_FORMATS: &[(&str, u8)] = &[
    ("%d", 1),
    ("%s", 1),
    ("%.2f", 1),
    ("%x", 1),
    ("%c", 1),
    ("%q", 1),
    ("%Q", 1),
    ("%e", 1),
    ("%g", 1),
    ("%i", 1),
    ("%5.1f", 1),
    ("%-4s|", 1),
    ("%.3s", 1),
    ("%o", 1),
    ("%s-%d", 2),
    ("%d%%", 1),
    ("x", 0),
];

/// Aggregate functions (SQLite core and the percentile extension).
const AGGREGATES: &[&str] = &[
    "count",
    "min",
    "max",
    "sum",
    "avg",
    "total",
    "group_concat",
    "string_agg",
    "median",
    "percentile",
    "percentile_cont",
    "percentile_disc",
    "json_group_array",
    "json_group_object",
    "jsonb_group_array",
    "jsonb_group_object",
];

pub fn is_aggregate(name: &str) -> bool {
    AGGREGATES.iter().any(|a| a.eq_ignore_ascii_case(name))
}

/// The functions available in SQLite `version` (as `sqlite3_libversion_number()`).
pub fn available(version: i32) -> Vec<&'static Function> {
    FUNCTIONS.iter().filter(|f| f.since <= version).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_filter_the_table() {
        let old = available(3_031_000);
        assert!(!old.iter().any(|f| f.name == "iif"));
        assert!(old.iter().any(|f| f.name == "abs"));
        let new = available(3_050_002);
        assert_eq!(new.len(), FUNCTIONS.len());
        assert!(new.len() >= 25);
    }

    #[test]
    fn aggregates_are_known_case_insensitively() {
        for name in [
            "count",
            "MIN",
            "Max",
            "sum",
            "avg",
            "total",
            "group_concat",
            "string_agg",
        ] {
            assert!(is_aggregate(name), "{name}");
        }
        assert!(!is_aggregate("abs"));
    }
}
