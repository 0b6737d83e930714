//! A transaction finding as lancet's findings keep it
//! ([`lancet_core::SessionsFacts`]) and as files a maintainer reads
//! ([`lancet_core::FindingFiles`]): `ID.json` (the record, the single file
//! `lancet replay` runs again), `ID.sql` (the schedule as one script) and
//! the directory `ID/` with the schedule as a table (session × step), a
//! script per session and the setup for the DBMS's own client.

use super::record::TxnFinding;
use super::NAME;
use crate::maker::Maker;
use lancet_core::{FindingFiles, SessionsFacts};

/// A record handed back by the findings (JSON text): this oracle's.
pub(crate) fn parse(record: &str) -> anyhow::Result<TxnFinding> {
    Maker::parse(record, NAME, "transaction", |f: &TxnFinding| &f.made)
}

/// The findings' kind a sessions oracle's signature (`WHAT@...`) names:
/// a lost server a crash or hang, `error CODE` an error no level allows,
/// anything else a wrong result (a logic finding).
pub(crate) fn kind_of(signature: &str) -> &'static str {
    match signature.split('@').next().unwrap_or("") {
        "crash" => "crash",
        "hang" => "hang",
        w if w.starts_with("error") => "unexpected-error",
        _ => "logic",
    }
}

pub(crate) fn facts(finding: &TxnFinding) -> SessionsFacts {
    let what = finding.signature.split('@').next().unwrap_or("");
    let detail = finding
        .anomalies
        .first()
        .map(|a| a.detail.clone())
        .or_else(|| finding.error.clone())
        .unwrap_or_default();
    SessionsFacts {
        oracle: finding.made.oracle.clone(),
        dbms: finding.made.dbms.clone(),
        signature: finding.signature.clone(),
        fault: finding.fault.clone(),
        kind: kind_of(&finding.signature),
        relation: if finding.session_rules.is_empty() {
            format!("reads and rows as {} allows", finding.rules.label())
        } else {
            let labels: Vec<String> = finding.session_rules.iter().map(|r| r.label()).collect();
            format!("reads and rows as {} allow", labels.join(", "))
        },
        size: finding.schedule.size(),
        // One anomaly is one bug at every level that forbids it.
        bug_key: format!("txn|{what}"),
        bug_text: format!("{what}: {detail}"),
        origin: (
            finding.origin.seed,
            finding.origin.thread,
            finding.origin.database,
        ),
    }
}

pub(crate) fn files(finding: &TxnFinding, id: &str) -> anyhow::Result<FindingFiles> {
    let s = &finding.schedule;
    let mut directory = vec![("setup.sql".to_string(), finding.setup_script())];
    for session in 0..s.sessions {
        directory.push((
            format!("session-{}.sql", session + 1),
            finding.session_script(session),
        ));
    }
    let by_hand = format!(
        "\nBy hand: run setup.sql, then open {} sessions with `{}` (file: -) and type each \
         session's lines of session-N.sql in the step order above. Or: lancet replay ../{id}.json\n",
        s.sessions, finding.client_command
    );
    directory.push(("schedule.txt".to_string(), finding.table() + &by_hand));
    Ok(FindingFiles {
        record: serde_json::to_string_pretty(finding)?,
        script: finding.script(id),
        directory,
    })
}
