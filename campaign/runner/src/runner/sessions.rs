//! A database of a run whose oracle opens sessions of its own
//! ([`lancet_core::SessionsOracle`]): the runner creates it, the oracle
//! runs its checks on it, and what the oracle reports (checks, its own
//! counts, findings) goes where a query oracle's goes: the run's
//! counters, its findings directory and index, flood control, the
//! summary.

use super::report::{warn_log, Event};
use super::Shared;
use crate::finding_record::FindingRecord;
use lancet_core::{Connection, OwnedDatabase, PreparedSessions, Provider, SessionsDatabase};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The runner's side of one database of a sessions oracle.
struct CampaignDatabase<'a> {
    shared: &'a Shared,
    database: &'a OwnedDatabase,
    thread: u32,
    index: u64,
    /// A filed finding is being reduced on this database's thread: it
    /// counts among the run's reductions, which an interrupt or the end
    /// of the finishing time (`--finish-reductions`) cuts short, until its
    /// reduced form is filed, the next check runs or the database ends.
    reducing: bool,
}

impl CampaignDatabase<'_> {
    fn begin_reduction(&mut self) {
        if self.shared.options.reduce.is_some() && !self.reducing {
            self.reducing = true;
            self.shared.live_reducers.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn end_reduction(&mut self) {
        if std::mem::take(&mut self.reducing) {
            self.shared.live_reducers.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for CampaignDatabase<'_> {
    fn drop(&mut self) {
        self.end_reduction();
    }
}

/// Runs a sessions oracle's checks on one database of the run.
pub(super) fn run_database(
    shared: &Shared,
    oracle: &dyn PreparedSessions,
    database: &OwnedDatabase,
    thread: u32,
    index: u64,
) -> anyhow::Result<()> {
    let mut rng = lancet_core::rng::database_rng(shared.options.seed, thread, index);
    let mut db = CampaignDatabase {
        shared,
        database,
        thread,
        index,
        reducing: false,
    };
    oracle.run_database(&mut db, &mut rng, shared.options.checks_per_database)
}

impl SessionsDatabase for CampaignDatabase<'_> {
    fn provider(&self) -> &dyn Provider {
        &*self.shared.provider
    }

    fn database(&self) -> &OwnedDatabase {
        self.database
    }

    fn logged(
        &mut self,
        session: usize,
        connection: Box<dyn Connection>,
    ) -> anyhow::Result<Box<dyn Connection>> {
        match &self.shared.options.log_dir {
            Some(dir) => LoggedConnection::wrap(
                connection,
                dir.join(format!("t{}-d{}-s{session}.sql", self.thread, self.index)),
            ),
            None => Ok(connection),
        }
    }

    fn should_stop(&self) -> bool {
        self.shared.should_stop()
    }

    fn interrupted(&self) -> bool {
        self.shared.abort_reduction.load(Ordering::SeqCst)
    }

    fn count_check(&mut self, statements: u64, took: Duration, nonempty: bool) {
        self.end_reduction();
        self.shared.counters.add_statements(statements, took);
        self.shared.counters.add_check(0, nonempty);
    }

    fn tally(&mut self, label: String, counts: &[(&'static str, u64)]) {
        let mut tallies = self
            .shared
            .tallies
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let tally = tallies.entry(label).or_default();
        for &(name, n) in counts {
            match tally.iter_mut().find(|(have, _)| *have == name) {
                Some((_, sum)) => *sum += n,
                None => tally.push((name, n)),
            }
        }
    }

    fn reserve(&mut self, signature: &str) -> bool {
        let Some(limit) = self.shared.options.flood_limit else {
            return true;
        };
        let mut index = self.shared.index.lock().unwrap_or_else(|e| e.into_inner());
        if index.reserve(signature, limit) {
            return true;
        }
        if let Err(e) = index.add_not_written(signature) {
            warn_log(self.shared, &format!("the findings index: {e:#}"));
        }
        self.shared.counters.add_flooded();
        false
    }

    fn release(&mut self, signature: &str) {
        if self.shared.options.flood_limit.is_some() {
            self.shared
                .index
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .release(signature);
        }
    }

    fn file(&mut self, record: &str) -> anyhow::Result<String> {
        let shared = self.shared;
        let n = shared.next_sessions_finding.fetch_add(1, Ordering::Relaxed);
        let written = FindingRecord::write_sessions(record, shared.writer.dir(), n)?;
        shared
            .index
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add_indexed(written.indexed, &written.sql, None)?;
        shared.count_finding();
        let _ = shared.events.send(Event::Finding {
            headline: written.headline,
            path: written.sql,
            confirmed: true,
        });
        self.begin_reduction();
        Ok(written.id)
    }

    fn file_reduced(&mut self, id: &str, record: &str) -> anyhow::Result<()> {
        let shared = self.shared;
        let dir = shared.writer.dir();
        let original = dir.join(format!("{id}.sql"));
        let written = FindingRecord::write_sessions_as(record, dir, &format!("{id}.reduced"))?;
        shared
            .index
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .add_indexed(written.indexed, &written.sql, Some(&original))?;
        shared.reduced.fetch_add(1, Ordering::Relaxed);
        self.end_reduction();
        Ok(())
    }

    fn warn(&mut self, what: String) {
        let _ = self.shared.events.send(Event::Warning(what));
    }

    fn origin(&self) -> (u64, u32, u64) {
        (self.shared.options.seed, self.thread, self.index)
    }

    fn lancet_version(&self) -> &'static str {
        crate::VERSION
    }
}

/// A session's connection that writes each statement to its log before
/// it runs it (`--log-statements`: `statements/tT-dK-sN.sql`; `-s0` is
/// the session that sets the tables up and reads the final rows).
struct LoggedConnection {
    inner: Box<dyn Connection>,
    log: std::io::BufWriter<std::fs::File>,
}

impl LoggedConnection {
    fn wrap(inner: Box<dyn Connection>, path: PathBuf) -> anyhow::Result<Box<dyn Connection>> {
        let file = std::fs::File::create(&path)
            .map_err(|e| anyhow::anyhow!("cannot create statement log {}: {e}", path.display()))?;
        Ok(Box::new(LoggedConnection {
            inner,
            log: std::io::BufWriter::new(file),
        }))
    }

    fn log(&mut self, sql: &str) {
        use std::io::Write;
        // A log that cannot be written loses lines, not the run.
        let _ = writeln!(self.log, "{sql};");
    }
}

impl Connection for LoggedConnection {
    fn execute(&mut self, sql: &str) -> Result<(), lancet_core::DbError> {
        self.log(sql);
        self.inner.execute(sql)
    }
    fn query(&mut self, sql: &str) -> Result<Vec<lancet_core::Row>, lancet_core::DbError> {
        self.log(sql);
        self.inner.query(sql)
    }
    fn set_knobs(
        &mut self,
        setting: &lancet_core::KnobSetting,
    ) -> Result<(), lancet_core::DbError> {
        self.inner.set_knobs(setting)
    }
}
