//! What happens to a finding: written to disk at once (to `pending/`
//! until a fresh database confirms it), confirmed with the same check
//! executor that found it, filed in the index and queued for reduction.

use super::crash_triage::{failing_statement, Collateral, CrashWork};
use super::dbms_wait::wait_for_dbms;
use super::reduce_queue::ReduceWork;
use super::report::Event;
use super::Shared;
use crate::databases::Purpose;
use crate::findings::{Finding, FindingKind, RunningStatement};
use crate::replay::{replay_on, LostInReplay, Replayed};
use crate::reproducer::WrittenFinding;
use std::time::Instant;

/// Whether a finding stands without a replay: a crash or hang would only
/// take the server down again.
fn stands_alone(kind: FindingKind) -> bool {
    matches!(kind, FindingKind::Crash | FindingKind::Hang)
}

/// Writes a finding (to `pending/` until confirmed on a fresh database),
/// confirms it, and reports it.
pub(super) fn record(shared: &Shared, thread: u32, mut finding: Finding) -> anyhow::Result<()> {
    if finding.kind == FindingKind::Crash
        && finding
            .error
            .as_ref()
            .is_some_and(|e| shared.provider.lost_to_another_crash(e))
    {
        return keep_collateral(shared, thread, &finding);
    }
    // Signed once here: the index reads the signature from the finding.
    let sig = crate::signature::signature(&finding, shared.provider.dialect(), shared.catalog);
    finding.signature = Some(sig.clone());
    if let Some(limit) = shared.options.flood_limit {
        let mut index = shared.index.lock().unwrap_or_else(|e| e.into_inner());
        if !index.reserve(&sig, limit) {
            index.add_not_written(&sig)?;
            shared.counters.add_flooded();
            return Ok(());
        }
    }
    let result = write_and_report(shared, thread, finding);
    if shared.options.flood_limit.is_some() {
        shared
            .index
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .release(&sig);
    }
    result
}

/// A session the server ended because another one crashed it: the
/// crash is the finding (the thread whose statement crashed the server
/// has it); this one is kept with the unconfirmed findings, to show what
/// was running when the server went down, and counted there.
fn keep_collateral(shared: &Shared, thread: u32, finding: &Finding) -> anyhow::Result<()> {
    let comment = shared.provider.comment_prefix();
    let client = shared.provider.client_command();
    let pending = shared.writer.write_pending(finding, comment, &client)?;
    let moved = shared
        .writer
        .demote(&pending, &shared.options.unconfirmed_dir)?;
    shared.counters.add_unconfirmed();
    shared
        .collateral
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(Collateral {
            found_at: Instant::now(),
            running: RunningStatement {
                thread,
                sql: failing_statement(finding),
                file: moved.sql.display().to_string(),
            },
        });
    let _ = shared.events.send(Event::Warning(format!(
        "worker {thread}: the server ended its session because another server process crashed \
         (the crash is that session's finding); what this one was running is kept in {}",
        moved.sql.display()
    )));
    Ok(())
}

/// [`record`] past the flood limit check.
fn write_and_report(shared: &Shared, thread: u32, mut finding: Finding) -> anyhow::Result<()> {
    let comment = shared.provider.comment_prefix();
    let client = shared.provider.client_command();
    let writer = &shared.writer;
    let (path, confirmed) = if stands_alone(finding.kind) {
        let written = writer.write(&finding, comment, &client)?;
        file_finding(shared, &finding, &written)?;
        // A crash is replayed, then reduced, once the workers are done
        // (`crash_triage`): every candidate that still crashes takes the
        // DBMS down again. A hang is not: each candidate would wait out the
        // time limit.
        if finding.kind == FindingKind::Crash && shared.options.reduce.is_some() {
            shared
                .crashes
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(CrashWork {
                    work: ReduceWork {
                        finding: finding.clone(),
                        written: written.clone(),
                    },
                    thread,
                    found_at: Instant::now(),
                });
        }
        (written.sql, true)
    } else {
        let pending = writer.write_pending(&finding, comment, &client)?;
        finding.confirmed = confirm(shared, thread, &finding)?;
        if finding.confirmed {
            let written = writer.promote(&pending, &finding, comment, &client)?;
            file_finding(shared, &finding, &written)?;
            // A performance finding is not reduced (each candidate would
            // be timed, slowly and with noise); its reproducer is whole.
            let reducible = finding.kind != FindingKind::Performance;
            if reducible && shared.options.reduce.is_some() {
                // Signed once, in `record`.
                let signature = finding.signature.clone().unwrap_or_default();
                shared.reductions.push(
                    signature,
                    ReduceWork {
                        finding: finding.clone(),
                        written: written.clone(),
                    },
                );
            }
            (written.sql, true)
        } else {
            writer.update(&pending, &finding, comment, &client)?;
            let moved = writer.demote(&pending, &shared.options.unconfirmed_dir)?;
            shared.counters.add_unconfirmed();
            (moved.sql, false)
        }
    };
    let _ = shared.events.send(Event::Finding {
        headline: finding.headline(),
        path,
        confirmed,
    });
    Ok(())
}

/// Counts a finding that is on disk among the findings, and indexes it.
fn file_finding(
    shared: &Shared,
    finding: &Finding,
    written: &WrittenFinding,
) -> anyhow::Result<()> {
    shared.count_finding();
    shared.index.lock().unwrap_or_else(|e| e.into_inner()).add(
        finding,
        shared.provider.dialect(),
        shared.catalog,
        &written.sql,
        None,
    )?;
    Ok(())
}

/// How many fresh databases a confirmation may try when the connection
/// is lost under it (a crash or restart of the server, a killed session).
const CONFIRM_ATTEMPTS: usize = 2;

/// Replays a finding on a fresh database through the same connection
/// stack and the same check executor as the run: a logic finding must
/// break the same relation with the same rows again, an error finding
/// must fail again with the same code. Anything else is not reported as a
/// DBMS bug. A connection lost during the replay is a crash finding of its
/// own (recorded here, never dropped), and the replay is tried again on
/// another fresh database.
fn confirm(shared: &Shared, thread: u32, finding: &Finding) -> anyhow::Result<bool> {
    let databases = &shared.databases;
    for _ in 0..CONFIRM_ATTEMPTS {
        let Ok(mut scratch) = wait_for_dbms(shared, thread, || {
            databases.create(Purpose::Confirm, thread, databases.next_index())
        }) else {
            return Ok(false);
        };
        match replay_on(finding, scratch.session()) {
            Ok(Replayed::StillFails { same, .. }) => return Ok(same),
            Ok(Replayed::Passes(_)) => return Ok(false),
            Err(e) => match e.downcast_ref::<LostInReplay>() {
                Some(lost) => record(shared, thread, lost.finding(finding))?,
                None => return Ok(false),
            },
        }
    }
    Ok(false)
}
