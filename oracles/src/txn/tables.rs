//! The tables a schedule runs on: made once per database and shape,
//! emptied and filled for each schedule, and read together at its end.

use super::schedule::Schedule;
use super::sessions::Sessions;
use lancet_core::txn::Transactions;
use lancet_core::Connection;

/// Makes (or empties) the schedule's tables and fills them, through
/// `setup`.
pub(crate) fn set_up_tables(
    tx: &dyn Transactions,
    schedule: &Schedule,
    setup: &mut dyn Connection,
    sessions: &Sessions,
) -> anyhow::Result<()> {
    // A table is made once per database and shape (its index and
    // placement), then emptied for each schedule: a CREATE (and
    // Citus's distribution) costs more than the schedule.
    let mut made = sessions.tables.lock().unwrap_or_else(|e| e.into_inner());
    let mut statements = Vec::new();
    let mut names = Vec::new();
    for t in 0..schedule.table_count() {
        let name = schedule.table_name(t);
        let (index, placement) = schedule.shape(t);
        let shape = (index, placement.map(str::to_string));
        if made.get(&name) == Some(&shape) {
            statements.push(format!("DELETE FROM {name}"));
        } else {
            statements.push(format!("DROP TABLE IF EXISTS {name}"));
            statements.extend(tx.create_table(&name, index, placement));
            made.insert(name.clone(), shape);
        }
        statements.extend(schedule.fill_sql(t));
        names.push(name);
    }
    drop(made);
    for sql in &statements {
        setup.execute(sql).map_err(|e| {
            // Made again next time, whatever state they are in.
            let mut made = sessions.tables.lock().unwrap_or_else(|e| e.into_inner());
            for name in &names {
                made.remove(name);
            }
            anyhow::anyhow!("setting up the schedule's tables: `{sql}` failed: {e}")
        })?;
    }
    Ok(())
}

/// The query that reads every table's rows after the schedule, by key
/// (keys name their table).
pub(crate) fn final_rows_sql(schedule: &Schedule) -> String {
    let reads: Vec<String> = (0..schedule.table_count())
        .map(|t| format!("SELECT k, v FROM {}", schedule.table_name(t)))
        .collect();
    format!("{} ORDER BY k", reads.join(" UNION ALL "))
}
