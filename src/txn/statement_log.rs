//! `--log-statements` for a transaction campaign: each session of a
//! worker's database writes the statements it runs, in its order, to a
//! file of its own beside the query campaign's logs
//! (`statements/tT-dK-sN.sql`; `-s0` is the session that sets the
//! tables up and reads the final rows).

use lancet_core::{Connection, DbError, KnobSetting, Row};
use std::io::Write;
use std::path::Path;

/// A session's connection that writes each statement to its log before
/// it runs it.
pub(super) struct LoggedConnection {
    inner: Box<dyn Connection>,
    log: std::io::BufWriter<std::fs::File>,
}

impl LoggedConnection {
    /// `inner`, logging to session `session`'s file of (thread,
    /// database) in `dir`.
    pub(super) fn wrap(
        inner: Box<dyn Connection>,
        dir: &Path,
        (thread, database, session): (u32, u64, usize),
    ) -> anyhow::Result<Box<dyn Connection>> {
        let path = dir.join(format!("t{thread}-d{database}-s{session}.sql"));
        let file = std::fs::File::create(&path)
            .map_err(|e| anyhow::anyhow!("cannot create statement log {}: {e}", path.display()))?;
        Ok(Box::new(LoggedConnection {
            inner,
            log: std::io::BufWriter::new(file),
        }))
    }

    fn log(&mut self, sql: &str) {
        // A log that cannot be written loses lines, not the run.
        let _ = writeln!(self.log, "{sql};");
    }
}

impl Connection for LoggedConnection {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.log(sql);
        self.inner.execute(sql)
    }
    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        self.log(sql);
        self.inner.query(sql)
    }
    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        self.inner.set_knobs(setting)
    }
}
