//! The SQLite provider: random databases and queries for SQLite, run on
//! fresh in-memory databases through rusqlite.
//!
//! Module map: [`dialect`] is how SQLite spells SQL where dialects differ;
//! [`connection`] wraps rusqlite, and [`dynamic`] a libsqlite3
//! loaded at run time instead (`--sqlite-lib`); [`knobs`] lists the
//! optimizer switches of `sqlite3_test_control`; [`types`] and [`literals`]
//! know SQLite's types and values; [`functions`] lists the scalar functions
//! by version; [`expr_gen`] builds expressions; [`schema_gen`] and
//! [`data_gen`] build DDL and DML; [`populate`] runs them in order;
//! [`query_gen`] builds FROM clauses and implements the oracles'
//! [`lancet_core::QueryGenerator`].
//!
//! The version of the SQLite library in use is read once, when the provider
//! is made, and handed to every generator: functions and syntax newer than
//! the library are never generated, so the same code can drive other
//! libsqlite3 builds.
//!
//! Owns everything SQLite-specific; depends on lancet-core and
//! lancet-engine only. May not touch: the oracles, another provider, the
//! runner, findings or the store.

pub mod connection;
pub mod data_gen;
pub mod database;
pub mod description;
pub mod dialect;
pub mod dynamic;
pub mod eval;
pub mod expr_gen;
pub mod folding;
pub mod functions;
pub mod knobs;
pub mod literals;
pub mod operators;
pub mod populate;
pub mod pqs;
pub mod query_gen;
pub mod schema_gen;
pub mod statements;
pub mod twins;
pub mod txn;
pub mod types;

use lancet_core::{
    Connection, CreatedDatabase, DatabaseId, Dialect, ExecError, ExpectedErrors, GeneratedDatabase,
    Knob, KnobSetting, OwnedDatabase, Provider, Rng, Session,
};

pub use connection::SqliteConnection;
pub use dynamic::{DynamicConnection, SqliteLibrary};
use lancet_engine::isolation::{WorkerPool, WorkerSpec};
use lancet_engine::Workers;
pub use query_gen::SqliteQueryGenerator;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The built-in expected errors: what generated SQL may legitimately raise.
const EXPECTED_ERRORS: &str = include_str!("../expected-errors.toml");

/// lancet's SQLite provider.
pub struct SqliteProvider {
    expected: ExpectedErrors,
    /// `sqlite3_libversion_number()` of the library generated SQL must suit.
    version: i32,
    /// How long one statement may run before it is interrupted.
    time_limit: Duration,
    /// A libsqlite3 loaded at run time, used instead of the bundled one.
    library: Option<Arc<SqliteLibrary>>,
    /// Child processes that run the databases, when crash isolation is on.
    workers: Option<Arc<WorkerPool>>,
}

impl SqliteProvider {
    /// A provider for the SQLite linked into this binary, with the
    /// built-in expected errors.
    pub fn new() -> anyhow::Result<Self> {
        let expected =
            ExpectedErrors::from_toml(EXPECTED_ERRORS, "providers/sqlite/expected-errors.toml")?;
        Ok(SqliteProvider {
            expected,
            version: rusqlite::version_number(),
            time_limit: connection::DEFAULT_TIME_LIMIT,
            library: None,
            workers: None,
        })
    }

    /// Runs everything on the libsqlite3 shared library at `path` instead
    /// of the bundled SQLite: its databases, its version in summaries and
    /// findings, and its version number for what the generators may use.
    /// Fails if the file cannot be loaded or lacks a function lancet calls.
    pub fn with_library(mut self, path: &Path) -> anyhow::Result<Self> {
        let library = SqliteLibrary::load(path)?;
        self.version = library.version_number();
        self.library = Some(library);
        Ok(self)
    }

    /// Runs every database in a child process (see
    /// [`lancet_engine::isolation`]), so that a crash of the library is a
    /// finding instead of the end of lancet. Call after
    /// [`SqliteProvider::with_library`] and
    /// [`SqliteProvider::with_time_limit`]: the children use both.
    pub fn with_isolation(mut self, workers: &Workers) -> anyhow::Result<Self> {
        let spec = WorkerSpec {
            dbms: description::SQLITE.name.to_string(),
            label: description::SQLITE.label,
            library: self.library.as_ref().map(|lib| lib.path().to_path_buf()),
            time_limit: self.time_limit,
            memory_limit: workers.memory_limit,
        };
        let pool = WorkerPool::start(workers.program.clone(), &spec, &self.version.to_string())?;
        self.workers = Some(Arc::new(pool));
        Ok(self)
    }

    /// Whether databases run in child processes.
    pub fn is_isolated(&self) -> bool {
        self.workers.is_some()
    }

    /// The loaded library, if [`SqliteProvider::with_library`] named one.
    pub fn library(&self) -> Option<&SqliteLibrary> {
        self.library.as_deref()
    }

    /// Interrupts statements that run longer than `limit` (reported as
    /// timeouts) instead of the default [`connection::DEFAULT_TIME_LIMIT`].
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// Adds a user's expected-error rules to the built-in ones.
    pub fn with_expected_errors(mut self, extra: ExpectedErrors) -> Self {
        self.expected.extend(extra);
        self
    }

    /// The `sqlite3_libversion_number()` the generators target.
    pub fn version_number(&self) -> i32 {
        self.version
    }
}

impl Provider for SqliteProvider {
    fn name(&self) -> &'static str {
        "sqlite"
    }

    fn dialect(&self) -> Dialect {
        dialect::DIALECT
    }

    fn version(&self) -> anyhow::Result<String> {
        match &self.library {
            Some(lib) => Ok(lib.version_string()),
            None => connection::version_string(),
        }
    }

    fn expected_errors(&self) -> &ExpectedErrors {
        &self.expected
    }

    fn create_database(&self, id: &DatabaseId) -> anyhow::Result<CreatedDatabase> {
        let conn: Box<dyn Connection> = match (&self.workers, &self.library) {
            (Some(workers), _) => Box::new(workers.open()?),
            (None, Some(lib)) => {
                Box::new(DynamicConnection::open(Arc::clone(lib), self.time_limit)?)
            }
            (None, None) => Box::new(SqliteConnection::open_with_time_limit(self.time_limit)?),
        };
        Ok(CreatedDatabase {
            conn,
            owned: OwnedDatabase {
                name: id.name(),
                identity: None,
            },
        })
    }

    /// SQLite's transactions (see [`txn`]), on the bundled library or
    /// the one `--sqlite-lib` loads, each session in a worker process
    /// where crash isolation is on.
    fn transactions(&self) -> Option<&dyn lancet_core::txn::Transactions> {
        Some(self)
    }

    fn drop_database(&self, _db: &OwnedDatabase) -> anyhow::Result<bool> {
        // In-memory databases vanish with their connection.
        Ok(true)
    }

    fn populate(
        &self,
        rng: &mut Rng,
        session: &mut Session,
    ) -> Result<Box<dyn GeneratedDatabase>, ExecError> {
        Ok(Box::new(query_gen::Generated {
            database: populate::populate(rng, session, self.version)?,
            version: self.version,
            // PQS only on the bundled library, the build its evaluator was
            // validated against.
            pqs: self.library.is_none(),
        }))
    }

    fn client_command(&self) -> String {
        // A database in memory: nothing left from an earlier run.
        "sqlite3 :memory: < {file}".to_string()
    }

    fn features(&self) -> Vec<lancet_core::Feature> {
        // PQS' evaluator was validated against the bundled library only.
        if self.library.is_none() {
            vec![lancet_core::Feature::PivotRows]
        } else {
            Vec::new()
        }
    }

    fn knobs(&self) -> Vec<Knob> {
        if self.library.as_ref().is_some_and(|lib| !lib.has_knobs()) {
            return Vec::new();
        }
        knobs::list(self.version)
    }

    fn knob_commands(&self, from: &KnobSetting, to: &KnobSetting) -> Vec<String> {
        if from == to {
            return Vec::new();
        }
        let setting = to;
        // Connections refuse unknown knobs, so a setting that reaches a
        // reproducer has none; skip one anyway rather than write a wrong mask.
        let mask =
            setting
                .changes
                .iter()
                .fold(0u32, |mask, name| match knobs::find(name, self.version) {
                    Ok(knob) => mask | knob.bit,
                    Err(e) => {
                        log::warn!("{e}");
                        mask
                    }
                });
        vec![knobs::shell_command(mask)]
    }
}
