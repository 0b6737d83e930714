//! Patterns for LIKE and POSIX regular expressions that the server
//! generators share: anchors, wildcards, classes, an empty pattern and an
//! escaped wildcard, each meaningful in every dialect that has the operator.

/// LIKE patterns (`\` is the default escape character where it is one).
pub const LIKE: &[&str] = &["a%", "%b", "_", "%", "a_c", "%1%", "A%", "", "\\%"];

/// Regular expressions valid in PostgreSQL's and MySQL's syntax alike.
pub const REGEX: &[&str] = &[
    "^a",
    "b$",
    "[0-9]",
    "^.$",
    "a|b",
    "^$",
    "(ab)+",
    "[[:upper:]]",
];
