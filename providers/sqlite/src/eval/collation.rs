//! SQLite's built-in collating sequences: how two texts order. Both the
//! typing of expressions ([`super::typing`], which picks a comparison's
//! collation) and the comparison of values ([`super::compare`]) use them.

use std::cmp::Ordering;

/// The built-in collating sequences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collation {
    Binary,
    /// ASCII letters only fold.
    NoCase,
    /// Trailing spaces are ignored.
    Rtrim,
}

impl Collation {
    /// A collation by name, as SQLite looks it up (case-insensitively);
    /// `None` for any other collation.
    pub fn from_name(name: &str) -> Option<Collation> {
        if name.eq_ignore_ascii_case("BINARY") {
            Some(Collation::Binary)
        } else if name.eq_ignore_ascii_case("NOCASE") {
            Some(Collation::NoCase)
        } else if name.eq_ignore_ascii_case("RTRIM") {
            Some(Collation::Rtrim)
        } else {
            None
        }
    }

    /// Compares two texts (their UTF-8 bytes, without NULs).
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::Rtrim => trim_spaces(a).cmp(trim_spaces(b)),
            Collation::NoCase => {
                let n = a.len().min(b.len());
                for i in 0..n {
                    let (x, y) = (a[i].to_ascii_lowercase(), b[i].to_ascii_lowercase());
                    if x != y {
                        return x.cmp(&y);
                    }
                }
                a.len().cmp(&b.len())
            }
        }
    }
}

fn trim_spaces(s: &[u8]) -> &[u8] {
    let mut n = s.len();
    while n > 0 && s[n - 1] == b' ' {
        n -= 1;
    }
    &s[..n]
}
