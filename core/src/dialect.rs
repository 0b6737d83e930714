//! The rules by which one DBMS's SQL is spelled differently from another's.
//!
//! The printer asks a [`SqlDialect`] wherever dialects differ, and each
//! provider supplies one, as sqlparser-rs's dialects do: a new DBMS adds a
//! file to its provider crate, not match arms here. Default methods give the
//! spelling SQLite and PostgreSQL share; the methods without a default are
//! those on which they differ, which every dialect must decide.

use std::fmt;
use std::hash::{Hash, Hasher};

/// What the printer needs to know about one dialect.
pub trait SqlDialect: Send + Sync + 'static {
    /// The dialect's name (`sqlite`, `postgres`): what makes two handles the
    /// same dialect, and what tools that read the SQL back look it up by.
    fn name(&self) -> &'static str;

    /// Writes a BLOB literal of upper-case hex digits. The standard `X'..'`
    /// is unknown to PostgreSQL, which reads `bytea` from escaped text.
    fn blob_literal(&self, hex: &str, out: &mut String);

    /// Writes a floating-point literal. Dialects spell infinities and NaN
    /// differently (or have none), some read plain digits as another type
    /// (MySQL reads `1.5` as DECIMAL), and a negative number must not leave
    /// its sign next to an operator (`- -1` is a comment).
    fn real_literal(&self, r: f64, out: &mut String);

    /// Whether a backslash in a string literal escapes the next character,
    /// so that the printer doubles it (MySQL does; the standard does not).
    fn backslash_escapes(&self) -> bool {
        false
    }

    /// Whether collation names are quoted: PostgreSQL folds unquoted names
    /// to lower case, so `"C"` and `"POSIX"` must be quoted; others take
    /// the names as written.
    fn quotes_collation_names(&self) -> bool;

    /// The function that concatenates strings where `||` means something
    /// else (MySQL reads it as OR: `CONCAT`); None prints `a || b`.
    fn concat_function(&self) -> Option<&'static str> {
        None
    }

    /// The null-safe equality operator: the standard's `IS NOT DISTINCT
    /// FROM`, SQLite's `IS`, MySQL's `<=>`.
    fn null_safe_equal(&self) -> &'static str;

    /// The null-safe inequality operator (`IS DISTINCT FROM`, SQLite's
    /// `IS NOT`), or None where there is none (MySQL): the printer then
    /// negates the null-safe equality, `NOT (a <=> b)`.
    fn null_safe_not_equal(&self) -> Option<&'static str>;

    /// The regular-expression match operator: PostgreSQL's `~`, `REGEXP`
    /// in SQLite and MySQL.
    fn regex_match(&self) -> &'static str;

    /// Whether INTERSECT binds tighter than UNION and EXCEPT, as the
    /// standard says (PostgreSQL, MySQL): the printer then wraps a UNION or
    /// EXCEPT that is the left arm of an INTERSECT. SQLite reads all
    /// compound operators left to right with one precedence.
    fn intersect_binds_tighter(&self) -> bool;

    /// Whether a comma in FROM binds looser than JOIN (PostgreSQL, MySQL):
    /// there `a, b JOIN c ON a.x = c.x` cannot see `a`, so the printer
    /// writes CROSS JOIN, which keeps the left-deep tree. In SQLite a comma
    /// is a join like any other.
    fn comma_binds_looser_than_join(&self) -> bool;

    /// The LIMIT that means "no limit", printed before an OFFSET that has
    /// no LIMIT where OFFSET may only follow one (SQLite's `-1`, MySQL's
    /// `18446744073709551615`); None where OFFSET stands alone.
    fn unlimited_limit(&self) -> Option<&'static str>;

    /// Whether MySQL's `STRAIGHT_JOIN` (an inner join in a fixed order) exists.
    fn supports_straight_join(&self) -> bool {
        false
    }

    /// Whether a column of an integer type holds only integers (PostgreSQL,
    /// MySQL), so that `c + 0` equals `c`; not in SQLite, where a column
    /// declared INT may hold text.
    fn integer_columns_hold_integers(&self) -> bool {
        false
    }

    /// Whether a column of a table made by `CREATE TABLE AS` may compare
    /// differently from the expression it was made of (SQLite: an
    /// expression has no affinity, the column it becomes has BLOB
    /// affinity, and comparisons convert operands by affinity). Readers
    /// of materialized results then read columns as `+c`, which has no
    /// affinity in either form.
    fn materialized_columns_lose_affinity(&self) -> bool {
        false
    }

    /// Whether an expression keeps what it means to its context when it
    /// is wrapped in a CASE or a scalar subquery (eet's wrappers): its
    /// type, and with it how comparisons, arithmetic and collations read
    /// it. Not in SQLite, where a wrapper drops a column's affinity and
    /// collation, nor in MySQL, where it turns an ENUM or SET into its
    /// text and a FLOAT into a DOUBLE: there only computed numbers and
    /// truth values are wrapped.
    fn wrapping_keeps_type(&self) -> bool {
        true
    }

    /// What goes before a query to get its plan as rows whose last column
    /// describes a step, without costs or row estimates (SQLite's `EXPLAIN
    /// QUERY PLAN `, PostgreSQL's `EXPLAIN (COSTS OFF) `); None where plans
    /// are not read. The knob differential runs only configurations whose
    /// plan differs.
    fn explain_prefix(&self) -> Option<&'static str> {
        None
    }

    /// The keyword of a wildcard without some columns, `* EXCLUDE (a)`
    /// (DuckDB's and Snowflake's `EXCLUDE`; BigQuery would say `EXCEPT`);
    /// None where the dialect has none, and no generator makes one.
    fn wildcard_exclude(&self) -> Option<&'static str> {
        None
    }
}

/// The handle to a provider's dialect rules that everybody passes around:
/// small and `Copy`, like the enum it replaces. Two handles are equal when
/// their dialects have the same name.
#[derive(Clone, Copy)]
pub struct Dialect(&'static dyn SqlDialect);

impl Dialect {
    /// A handle to `rules`; `const`, so a provider can keep its dialect in a
    /// constant.
    pub const fn new(rules: &'static dyn SqlDialect) -> Dialect {
        Dialect(rules)
    }

    /// The dialect's name, as [`SqlDialect::name`] gives it.
    pub fn name(self) -> &'static str {
        self.0.name()
    }

    /// The rules themselves, for the printer.
    pub fn rules(self) -> &'static dyn SqlDialect {
        self.0
    }
}

impl fmt::Debug for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Dialect").field(&self.name()).finish()
    }
}

impl PartialEq for Dialect {
    fn eq(&self, other: &Dialect) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Dialect {}

impl Hash for Dialect {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name().hash(state);
    }
}
