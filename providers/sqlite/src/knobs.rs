//! SQLite's optimizer knobs: the bits of
//! `sqlite3_test_control(SQLITE_TESTCTRL_OPTIMIZATIONS, db, mask)`, each of
//! which disables one query-planner optimization on one connection. A
//! disabled optimization may change the plan, never the result, so the
//! same query under two masks must return the same rows.
//!
//! The bits are internal to SQLite (`SQLITE_QueryFlattener` and so on in
//! `sqliteInt.h`) and change between releases: some are added, a few are
//! retired and their bits left free, and before 3.25 the whole layout was
//! different. Each knob therefore carries the range of releases whose
//! source was checked to define it at that bit, and only knobs of the
//! library in use are offered. The table was checked against `sqliteInt.h`
//! of the releases 3.20.1 to 3.49.2 (SQLCipher's history of SQLite's
//! source, which follows every upstream release), 3.40.1 (Debian's
//! source), 3.50.2 and 3.54.1 (the amalgamations of libsqlite3-sys 0.35
//! and 0.39): `since` is the first checked release with the bit and
//! `until` the last one where a retired bit still had that meaning.
//! Releases between two checked ones that differ get the conservative
//! answer (a knob is not listed), so a listed knob always exists.
//!
//! The sqlite3 shell applies the same mask with `.testctrl optimizations
//! MASK`, which is how a reproducer replays a setting.

use lancet_core::{Knob, KnobSetting};

/// `SQLITE_TESTCTRL_OPTIMIZATIONS`, the same in every release.
pub const SQLITE_TESTCTRL_OPTIMIZATIONS: i32 = 15;

/// The first release with the bit layout of this table (3.20.1 still had
/// the old one, with `SQLITE_ColumnCache` at 0x2 and others moved).
pub const FIRST_VERSION: i32 = 3_025_000;

/// One optimization that can be disabled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SqliteKnob {
    /// lancet's name for it, as in [`Knob::name`]: `query-flattener`.
    pub name: &'static str,
    /// The name in SQLite's source and in the shell's `.testctrl
    /// optimizations` labels: `QueryFlattener` (for `SQLITE_QueryFlattener`).
    pub sqlite_name: &'static str,
    /// The bit in the disable mask.
    pub bit: u32,
    /// `sqlite3_libversion_number()` of the first release with this bit.
    pub since: i32,
    /// The last release with this bit, for bits SQLite has retired.
    pub until: Option<i32>,
    pub description: &'static str,
}

impl SqliteKnob {
    /// Whether the library with `sqlite3_libversion_number()` `version` has this knob.
    pub fn exists_in(&self, version: i32) -> bool {
        version >= self.since.max(FIRST_VERSION) && self.until.is_none_or(|u| version <= u)
    }
}

const fn k(
    name: &'static str,
    sqlite_name: &'static str,
    bit: u32,
    since: i32,
    description: &'static str,
) -> SqliteKnob {
    SqliteKnob {
        name,
        sqlite_name,
        bit,
        since,
        until: None,
        description,
    }
}

const fn retired(knob: SqliteKnob, until: i32) -> SqliteKnob {
    SqliteKnob {
        until: Some(until),
        ..knob
    }
}

/// Every knob, in bit order.
pub const KNOBS: &[SqliteKnob] = &[
    k(
        "query-flattener",
        "QueryFlattener",
        0x0000_0001,
        3_025_000,
        "query flattening: merge a subquery or view in FROM into the outer query",
    ),
    k(
        "window-func",
        "WindowFunc",
        0x0000_0002,
        3_028_000,
        "use the inverse step (xInverse) to compute window functions incrementally",
    ),
    k(
        "group-by-order",
        "GroupByOrder",
        0x0000_0004,
        3_025_000,
        "let the sort of GROUP BY also satisfy ORDER BY",
    ),
    retired(
        k(
            "factor-out-const",
            "FactorOutConst",
            0x0000_0008,
            3_025_000,
            "constant factoring: compute constant expressions once, before the loops",
        ),
        3_050_002,
    ),
    k(
        "distinct-opt",
        "DistinctOpt",
        0x0000_0010,
        3_025_000,
        "DISTINCT using indexes",
    ),
    k(
        "cover-idx-scan",
        "CoverIdxScan",
        0x0000_0020,
        3_025_000,
        "covering index scans (full scans of an index that has every needed column)",
    ),
    k(
        "order-by-idx-join",
        "OrderByIdxJoin",
        0x0000_0040,
        3_025_000,
        "ORDER BY of joins through an index",
    ),
    k(
        "transitive",
        "Transitive",
        0x0000_0080,
        3_025_000,
        "transitive constraints (a = b AND b = 5 implies a = 5)",
    ),
    k(
        "omit-noop-join",
        "OmitNoopJoin",
        0x0000_0100,
        3_025_000,
        "omit tables of a LEFT JOIN that cannot change the result",
    ),
    k(
        "count-of-view",
        "CountOfView",
        0x0000_0200,
        3_025_000,
        "the count-of-view optimization (count(*) over a compound view)",
    ),
    k(
        "cursor-hints",
        "CursorHints",
        0x0000_0400,
        3_025_000,
        "add OP_CursorHint opcodes (only in builds with SQLITE_ENABLE_CURSOR_HINTS)",
    ),
    k(
        "stat4",
        "Stat4",
        0x0000_0800,
        3_025_000,
        "use the sqlite_stat4 histograms written by ANALYZE (SQLITE_Stat34 before 3.30)",
    ),
    k(
        "push-down",
        "PushDown",
        0x0000_1000,
        3_025_000,
        "push WHERE terms down into subqueries",
    ),
    k(
        "simplify-join",
        "SimplifyJoin",
        0x0000_2000,
        3_025_000,
        "convert a LEFT JOIN to an inner join when the WHERE clause allows",
    ),
    k(
        "skip-scan",
        "SkipScan",
        0x0000_4000,
        3_025_000,
        "skip-scan: use an index whose leading column is not constrained",
    ),
    k(
        "propagate-const",
        "PropagateConst",
        0x0000_8000,
        3_025_000,
        "constant propagation (WHERE a = 5 AND b = a becomes b = 5)",
    ),
    k(
        "min-max-opt",
        "MinMaxOpt",
        0x0001_0000,
        3_036_000,
        "answer min() and max() from one index lookup",
    ),
    k(
        "seek-scan",
        "SeekScan",
        0x0002_0000,
        3_036_000,
        "the OP_SeekScan opcode: step ahead instead of seeking for IN on an index",
    ),
    k(
        "omit-order-by",
        "OmitOrderBy",
        0x0004_0000,
        3_037_002,
        "omit an ORDER BY in a subquery that cannot affect the result",
    ),
    k(
        "bloom-filter",
        "BloomFilter",
        0x0008_0000,
        3_038_002,
        "Bloom filters on searches in joins",
    ),
    retired(
        k(
            "bloom-pulldown",
            "BloomPulldown",
            0x0010_0000,
            3_038_002,
            "run Bloom filters early, in outer loops",
        ),
        3_050_002,
    ),
    k(
        "balanced-merge",
        "BalancedMerge",
        0x0020_0000,
        3_038_002,
        "balance multi-way merges of compound SELECTs",
    ),
    k(
        "release-reg",
        "ReleaseReg",
        0x0040_0000,
        3_039_002,
        "emit OP_ReleaseReg (a testing aid in debug builds)",
    ),
    k(
        "flttn-union-all",
        "FlttnUnionAll",
        0x0080_0000,
        3_039_002,
        "flatten UNION ALL subqueries in FROM",
    ),
    k(
        "indexed-expr",
        "IndexedExpr",
        0x0100_0000,
        3_040_001,
        "read the values of indexed expressions from the index instead of computing them",
    ),
    k(
        "coroutines",
        "Coroutines",
        0x0200_0000,
        3_041_000,
        "run subqueries in FROM as co-routines instead of materializing them",
    ),
    k(
        "null-unused-cols",
        "NullUnusedCols",
        0x0400_0000,
        3_042_000,
        "return NULL for columns of a subquery that the outer query does not use",
    ),
    k(
        "one-pass",
        "OnePass",
        0x0800_0000,
        3_043_000,
        "single-pass DELETE and UPDATE",
    ),
    k(
        "order-by-subq",
        "OrderBySubq",
        0x1000_0000,
        3_047_000,
        "let the ORDER BY of a subquery satisfy the ORDER BY of the outer query",
    ),
    k(
        "star-query",
        "StarQuery",
        0x2000_0000,
        3_049_000,
        "the join-order heuristics for star queries",
    ),
    k(
        "exists-to-join",
        "ExistsToJoin",
        0x4000_0000,
        3_054_001,
        "turn EXISTS subqueries in WHERE into joins",
    ),
    k(
        "union-limit",
        "UnionLimit",
        0x8000_0000,
        3_054_001,
        "the optimizations of compound SELECTs with LIMIT",
    ),
];

/// `3040001` as `3.40.1`.
pub fn version_text(version: i32) -> String {
    format!(
        "{}.{}.{}",
        version / 1_000_000,
        version / 1_000 % 1_000,
        version % 1_000
    )
}

/// The knobs of the library with `sqlite3_libversion_number()` `version`.
pub fn available(version: i32) -> impl Iterator<Item = &'static SqliteKnob> {
    KNOBS.iter().filter(move |k| k.exists_in(version))
}

/// The knobs of `version` as the provider interface lists them.
pub fn list(version: i32) -> Vec<Knob> {
    available(version)
        .map(|k| Knob {
            name: k.name.to_string(),
            description: format!(
                "{} (SQLITE_{}, bit 0x{:08x})",
                k.description, k.sqlite_name, k.bit
            ),
            values: Vec::new(),
        })
        .collect()
}

/// `query-flattener`, `QueryFlattener`, `query_flattener` all name one knob.
fn normalize(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// The knob called `name` (lancet's name or SQLite's), if `version` has it.
pub fn find(name: &str, version: i32) -> Result<&'static SqliteKnob, String> {
    let wanted = normalize(name);
    let Some(knob) = KNOBS
        .iter()
        .find(|k| normalize(k.name) == wanted || normalize(k.sqlite_name) == wanted)
    else {
        let known: Vec<&str> = available(version).map(|k| k.name).collect();
        return Err(format!(
            "unknown SQLite optimizer knob '{name}'; SQLite {} has: {}",
            version_text(version),
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        ));
    };
    if knob.exists_in(version) {
        return Ok(knob);
    }
    let range = if version < FIRST_VERSION {
        format!(
            "lancet knows SQLite's optimizer knobs from {} on",
            version_text(FIRST_VERSION)
        )
    } else {
        match knob.until {
            Some(until) if version > until => {
                format!("it was retired after {}", version_text(until))
            }
            _ => format!("it exists from {} on", version_text(knob.since)),
        }
    };
    Err(format!(
        "SQLite {} has no optimizer knob '{}' (SQLITE_{}): {range}",
        version_text(version),
        knob.name,
        knob.sqlite_name
    ))
}

/// The disable mask for `setting`: the bits of every knob it turns off.
pub fn mask(setting: &KnobSetting, version: i32) -> Result<u32, String> {
    setting
        .changes
        .iter()
        .try_fold(0u32, |mask, name| Ok(mask | find(name, version)?.bit))
}

/// The sqlite3 shell line that applies a disable mask.
pub fn shell_command(mask: u32) -> String {
    format!(".testctrl optimizations 0x{mask:08x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_distinct_powers_of_two() {
        let mut seen = 0u32;
        for k in KNOBS {
            assert_eq!(k.bit.count_ones(), 1, "{}", k.name);
            assert_eq!(seen & k.bit, 0, "{}", k.name);
            seen |= k.bit;
            assert!(k.until.is_none_or(|u| u >= k.since));
        }
    }

    #[test]
    fn names_resolve_in_either_spelling() {
        let v = 3_050_002;
        assert_eq!(find("query-flattener", v).unwrap().bit, 1);
        assert_eq!(find("QueryFlattener", v).unwrap().bit, 1);
        assert_eq!(find("skip_scan", v).unwrap().bit, 0x4000);
        let e = find("no-such-knob", v).unwrap_err();
        assert!(
            e.contains("unknown SQLite optimizer knob 'no-such-knob'"),
            "{e}"
        );
        assert!(e.contains("query-flattener"), "{e}");
    }

    #[test]
    fn knobs_follow_the_library_version() {
        let names = |v| available(v).map(|k| k.name).collect::<Vec<_>>();
        // 3.40.1 (Debian 12): up to IndexedExpr, with FactorOutConst and BloomPulldown.
        let debian = names(3_040_001);
        assert_eq!(debian.len(), 25);
        assert!(debian.contains(&"indexed-expr") && debian.contains(&"bloom-pulldown"));
        assert!(!debian.contains(&"coroutines"));
        // 3.50.2: the 30 bits up to StarQuery.
        assert_eq!(names(3_050_002).len(), 30);
        // 3.54.1: FactorOutConst and BloomPulldown retired, two new bits.
        let new = names(3_054_001);
        assert_eq!(new.len(), 30);
        assert!(!new.contains(&"factor-out-const") && new.contains(&"union-limit"));
        assert!(names(3_020_001).is_empty());
        let e = find("coroutines", 3_040_001).unwrap_err();
        assert!(e.contains("exists from 3.41.0 on"), "{e}");
        let e = find("bloom-pulldown", 3_054_001).unwrap_err();
        assert!(e.contains("retired after 3.50.2"), "{e}");
    }

    #[test]
    fn masks_and_shell_lines() {
        let s = KnobSetting::with(&["query-flattener", "SkipScan"]);
        assert_eq!(mask(&s, 3_040_001).unwrap(), 0x4001);
        assert_eq!(mask(&KnobSetting::defaults(), 3_040_001).unwrap(), 0);
        assert!(mask(&KnobSetting::with(&["bogus"]), 3_040_001).is_err());
        assert_eq!(shell_command(0x4001), ".testctrl optimizations 0x00004001");
    }
}
