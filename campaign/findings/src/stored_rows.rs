//! What the tables of a reduced finding hold once its statements ran: an
//! engine may convert values on the way in (MySQL's non-strict modes clip
//! an out-of-range number and store a zero date for an invalid one;
//! SQLite applies column affinity), and a maintainer reading the INSERTs
//! would otherwise reason about values the table never held. The
//! reproducer shows, after the setup, a `SELECT * FROM t` per table the
//! queries read, with the rows lancet read as a comment.

use crate::findings::{Finding, StoredTable};
use lancet_core::Session;

/// Rows shown per table, at most.
const SHOWN_ROWS: usize = 20;

/// The rows of every table a logic finding's case reads, in `session`,
/// a fresh database its setup just ran in. A name that is not a table one
/// can select from (a CTE's) is left out.
pub fn read(finding: &Finding, session: &mut Session) -> Vec<StoredTable> {
    let Some(case) = finding.case.as_ref() else {
        return Vec::new();
    };
    let mut names = lancet_core::Query::select(case.query.clone()).table_names();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|table| {
            let rows = session
                .connection()
                .query(&format!("SELECT * FROM {table}"))
                .ok()?;
            Some(StoredTable {
                shown: rows
                    .iter()
                    .take(SHOWN_ROWS)
                    .map(|r| lancet_core::value::format_row(r))
                    .collect(),
                rows: rows.len(),
                table,
            })
        })
        .collect()
}
