//! DQE's relation on the rows its queries read, as multisets of whole
//! rows (no row identity needed):
//! - DELETE: `RS(every row) = RS(WHERE p) ⊎ RS(left after DELETE WHERE p)`;
//! - UPDATE of marker column `m` to NULL: `RS(m after UPDATE) ⊎
//!   RS(m of WHERE p) = RS(m of every row) ⊎ NULL × |RS(WHERE p)|`, which
//!   holds exactly whatever `m` held before (a row whose `m` was NULL
//!   stays the same on both sides).

use lancet_core::compare::{multiset_diff, RowDiff};
use lancet_core::{Case, CaseError, Disagreement, Row, Value, Verdict};

/// The DELETE relation, as reports state it.
pub const DELETE_RELATION: &str = "RS(every row) = RS(SELECT WHERE p) ⊎ RS(rows left after DELETE WHERE p), as multisets of whole rows (rows only in the second side: in the matched or the left ones)";
/// The UPDATE relation, as reports state it.
pub const UPDATE_RELATION: &str = "RS(m after UPDATE SET m = NULL WHERE p) ⊎ RS(m of SELECT WHERE p) = RS(m of every row) ⊎ (NULL × |SELECT WHERE p|), as multisets (first side: the left one of this equation)";

/// The verdict on DQE's results (every row, matched, left after DELETE,
/// and the marker after UPDATE where `marker` is its column's position):
/// the DELETE relation first, then the UPDATE one. Non-empty when the
/// predicate matched rows.
pub fn verdict(
    case: &Case,
    results: &[Vec<Row>],
    marker: Option<usize>,
) -> Result<Verdict, CaseError> {
    let [every, matched, left, rest @ ..] = results else {
        return Err(case.unfit("fewer than three results"));
    };
    let deleted: Vec<Row> = matched.iter().chain(left).cloned().collect();
    let diff = multiset_diff(every, &deleted);
    if !diff.is_empty() {
        let sides = [
            "every row (query 1)",
            "the rows SELECT WHERE p matched and those left after DELETE WHERE p (queries 2 and 3)",
        ];
        return Ok(disagree(DELETE_RELATION, results, diff, sides));
    }
    let agree = Verdict::Agree {
        nonempty: !matched.is_empty(),
    };
    let Some(m) = marker else {
        return Ok(agree);
    };
    let [marked, ..] = rest else {
        return Err(case.unfit("no result of the UPDATE"));
    };
    let column = |rows: &[Row]| -> Result<Vec<Row>, CaseError> {
        rows.iter()
            .map(|r| {
                r.get(m)
                    .map(|v| vec![v.clone()])
                    .ok_or_else(|| case.unfit("a row without its marker column"))
            })
            .collect()
    };
    let mut seen = marked.clone();
    seen.extend(column(matched)?);
    let mut expected = column(every)?;
    expected.extend(std::iter::repeat_n(vec![Value::Null], matched.len()));
    let diff = multiset_diff(&seen, &expected);
    Ok(if diff.is_empty() {
        agree
    } else {
        let sides = [
            "m after UPDATE ... SET m = NULL WHERE p (query 4) and m of the rows SELECT WHERE p matched (query 2)",
            "m of every row (query 1) and a NULL for each matched row",
        ];
        disagree(UPDATE_RELATION, results, diff, sides)
    })
}

/// The verdict with its two sides named: each combines several of the
/// check's queries, so a report may not call them query 1 and query 2.
fn disagree(relation: &str, results: &[Vec<Row>], diff: RowDiff, sides: [&str; 2]) -> Verdict {
    Verdict::Disagree(Disagreement {
        relation: relation.to_string(),
        row_counts: results.iter().map(Vec::len).collect(),
        diff: RowDiff {
            sides: Some(sides.map(str::to_string)),
            ..diff
        },
        timing: None,
    })
}
