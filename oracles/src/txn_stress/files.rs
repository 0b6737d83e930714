//! A stress finding as lancet's findings keep it
//! ([`lancet_core::SessionsFacts`]) and as files a maintainer reads
//! ([`lancet_core::FindingFiles`]): `ID.json` (the record, which `lancet
//! replay` runs again), `ID.sql` (the round as one script) and the
//! directory `ID/` with the setup, a script per session for the DBMS's
//! own client, and the transactions around the end as they ran.

use super::record::StressFinding;
use super::NAME;
use crate::maker::Maker;
use lancet_core::{FindingFiles, SessionsFacts};

/// A record handed back by the findings (JSON text): this oracle's.
pub(crate) fn parse(record: &str) -> anyhow::Result<StressFinding> {
    Maker::parse(record, NAME, "stress", |f: &StressFinding| &f.made)
}

/// The invariant or error its signature names.
fn what(finding: &StressFinding) -> &str {
    finding.signature.split('@').next().unwrap_or("")
}

pub(crate) fn facts(finding: &StressFinding) -> SessionsFacts {
    let what = what(finding);
    let detail = finding
        .violations
        .first()
        .map(|v| v.detail.clone())
        .or_else(|| finding.error.clone())
        .unwrap_or_default();
    let relation = match finding.violations.first() {
        Some(v) => format!("{} at {}", v.invariant.relation(), finding.round.label()),
        None => format!(
            "concurrent transactions end in a commit or a conflict at {}",
            finding.round.label()
        ),
    };
    SessionsFacts {
        oracle: finding.made.oracle.clone(),
        dbms: finding.made.dbms.clone(),
        signature: finding.signature.clone(),
        fault: finding.fault.clone(),
        kind: crate::txn::kind_of(&finding.signature),
        relation,
        size: finding.round.size(),
        // One broken invariant is one bug at every level that keeps it.
        bug_key: format!("{NAME}|{what}"),
        bug_text: format!("{what}: {detail}"),
        origin: (
            finding.origin.seed,
            finding.origin.thread,
            finding.origin.database,
        ),
    }
}

pub(crate) fn files(finding: &StressFinding, id: &str) -> anyhow::Result<FindingFiles> {
    let mut directory = vec![(
        "setup.sql".to_string(),
        crate::txn::record::script(&finding.setup()),
    )];
    let sessions = finding.session_statements.len();
    for s in 0..sessions {
        directory.push((format!("session-{}.sql", s + 1), finding.session_script(s)));
    }
    let by_hand = format!(
        "\nBy hand: run setup.sql, then session-1.sql to session-{sessions}.sql at once, each \
         with `{}` (file: -); a race may need several tries. Or: lancet replay ../{id}.json\n",
        finding.client_command
    );
    directory.push((
        "transactions.txt".to_string(),
        format!("{}\n{}{by_hand}", finding.summary(), finding.tail_text()),
    ));
    Ok(FindingFiles {
        record: serde_json::to_string_pretty(finding)?,
        script: finding.script(id),
        directory,
    })
}
