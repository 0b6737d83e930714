//! A sessions oracle's finding run again on a fresh database of its own
//! (`lancet replay`, `lancet reduce`, a run's `--known` bugs): the oracle
//! named in the record is prepared for the DBMS with the planted fault
//! the caller says, and runs the record's case on sessions it opens.

use lancet_core::{
    AnyOracle, Connection, OwnedDatabase, PreparedSessions, Provider, Reduction, SessionsDatabase,
    SessionsRun, ShownAgain,
};
use lancet_databases::databases::{Databases, Purpose};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The oracle a record names, prepared for `databases`' DBMS with `fault`
/// (a planted fault's name) in place of the one the record names.
fn prepared(
    databases: &Databases,
    oracle: &str,
    fault: Option<&str>,
) -> anyhow::Result<Box<dyn PreparedSessions>> {
    let Some(AnyOracle::Sessions(o)) = lancet_oracles::any_by_name(oracle) else {
        anyhow::bail!(
            "the record names {oracle}, which is not an oracle that opens sessions of its own"
        );
    };
    let fault = match fault {
        None => None,
        Some(name) => Some(lancet_oracles::fault(name).ok_or_else(|| {
            anyhow::anyhow!("the record names an unknown planted fault '{name}'")
        })?),
    };
    o.prepare(
        databases.shared_provider(),
        &SessionsRun {
            fault,
            ..SessionsRun::default()
        },
    )
}

/// Runs the case of `record` (the finding's JSON) again, of `oracle`'s,
/// with `fault`: what it shows now.
pub fn replay(
    databases: &Databases,
    oracle: &str,
    record: &str,
    fault: Option<&str>,
) -> anyhow::Result<ShownAgain> {
    let prepared = prepared(databases, oracle, fault)?;
    let scratch = databases.create(Purpose::Replay, 0, databases.next_index())?;
    let stop = AtomicBool::new(false);
    let mut db = ReplayDatabase {
        provider: databases.provider(),
        database: scratch.owned(),
        stop: &stop,
    };
    let shown = prepared.replay(record, &mut db);
    drop(scratch);
    shown
}

/// Shrinks the case of `record` within `budget`, on a fresh database;
/// `stop` (Ctrl-C) cuts it short.
pub fn reduce(
    databases: &Databases,
    oracle: &str,
    record: &str,
    fault: Option<&str>,
    budget: Duration,
    stop: &AtomicBool,
) -> anyhow::Result<Reduction> {
    let prepared = prepared(databases, oracle, fault)?;
    let scratch = databases.create(Purpose::Replay, 0, databases.next_index())?;
    let mut db = ReplayDatabase {
        provider: databases.provider(),
        database: scratch.owned(),
        stop,
    };
    let reduced = prepared.reduce(record, &mut db, budget);
    drop(scratch);
    reduced
}

/// A database for one finding's case: no statement logs, no counts, and
/// nothing filed (the command writes what it makes).
struct ReplayDatabase<'a> {
    provider: &'a dyn Provider,
    database: &'a OwnedDatabase,
    stop: &'a AtomicBool,
}

impl SessionsDatabase for ReplayDatabase<'_> {
    fn provider(&self) -> &dyn Provider {
        self.provider
    }
    fn database(&self) -> &OwnedDatabase {
        self.database
    }
    fn logged(
        &mut self,
        _session: usize,
        connection: Box<dyn Connection>,
    ) -> anyhow::Result<Box<dyn Connection>> {
        Ok(connection)
    }
    fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    fn interrupted(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
    fn count_check(&mut self, _statements: u64, _took: Duration, _nonempty: bool) {}
    fn tally(&mut self, _label: String, _counts: &[(&'static str, u64)]) {}
    fn reserve(&mut self, _signature: &str) -> bool {
        true
    }
    fn release(&mut self, _signature: &str) {}
    fn file(&mut self, _record: &str) -> anyhow::Result<String> {
        anyhow::bail!("a replay files no finding")
    }
    fn file_reduced(&mut self, _id: &str, _record: &str) -> anyhow::Result<()> {
        anyhow::bail!("a replay files no finding")
    }
    fn warn(&mut self, what: String) {
        log::warn!("{what}");
    }
    fn origin(&self) -> (u64, u32, u64) {
        (0, 0, 0)
    }
    fn lancet_version(&self) -> &'static str {
        crate::VERSION
    }
}
