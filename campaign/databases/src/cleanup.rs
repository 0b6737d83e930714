//! `lancet cleanup`: drops the databases that earlier runs created and did
//! not drop (a `kill -9`, a server that would not let go), as their
//! ledgers list them. Only runs that are no longer alive are touched, and
//! every drop goes through the provider's proof of ownership: the database
//! must still have the identity recorded at creation and belong to the
//! role.

use crate::databases::{is_not_ours, Ledger, LedgerLine, LEDGER_FILE};
use lancet_core::Provider;
use std::path::{Path, PathBuf};

/// What became of one database.
#[derive(Debug)]
pub enum Outcome {
    Dropped,
    /// It was not there any more.
    Gone,
    /// Not this role's, or not the database the run created.
    Refused(String),
    Failed(String),
}

/// One line of the cleanup report.
#[derive(Debug)]
pub struct Cleaned {
    pub run_dir: PathBuf,
    pub name: String,
    pub outcome: Outcome,
}

/// Drops what the dead runs under `out` left on `provider`'s server.
/// `live` lists run directories skipped because a process still holds them.
pub fn cleanup(
    provider: &dyn Provider,
    out: &Path,
) -> anyhow::Result<(Vec<Cleaned>, Vec<PathBuf>)> {
    let server = provider
        .server()
        .ok_or_else(|| anyhow::anyhow!("{} keeps no databases to clean up", provider.name()))?;
    let host = host_of(&server);
    let dirs = Ledger::run_dirs(out)
        .map_err(|e| anyhow::anyhow!("cannot read the output directory {}: {e}", out.display()))?;
    let (mut report, mut live) = (Vec::new(), Vec::new());
    for dir in dirs {
        let path = dir.join(LEDGER_FILE);
        if Ledger::is_live(&path) {
            live.push(dir);
            continue;
        }
        let open = Ledger::read_open(&path)?;
        let mut done: Vec<LedgerLine> = Vec::new();
        for line in open.into_iter().filter(|l| host_of(&l.server) == host) {
            let outcome = match provider.drop_database(&line.database) {
                Ok(true) => Outcome::Dropped,
                Ok(false) => Outcome::Gone,
                Err(e) if is_not_ours(&e) => Outcome::Refused(format!("{e:#}")),
                Err(e) => Outcome::Failed(format!("{e:#}")),
            };
            if matches!(
                outcome,
                Outcome::Dropped | Outcome::Gone | Outcome::Refused(_)
            ) {
                done.push(line.clone());
            }
            report.push(Cleaned {
                run_dir: dir.clone(),
                name: line.database.name.clone(),
                outcome,
            });
        }
        if !done.is_empty() {
            Ledger::mark_dropped(&path, &done)?;
        }
    }
    Ok((report, live))
}

/// `host:port` of a ledger's `user@host:port`: a database belongs to a
/// server, whichever role made it (ownership is checked on the server).
fn host_of(server: &str) -> &str {
    server.rsplit_once('@').map_or(server, |(_, h)| h)
}
