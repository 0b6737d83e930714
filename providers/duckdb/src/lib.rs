//! The DuckDB provider (`--dbms duckdb`): random databases and queries in
//! DuckDB's dialect, run on fresh in-memory databases of a `libduckdb.so`
//! loaded at run time through DuckDB's C API.
//!
//! Module map: [`library`] loads the C API's functions; [`locate`] finds
//! the default library; [`connection`] is one in-memory database (values,
//! errors by [`errors`]' types, the statement time limit); [`dialect`] is
//! how DuckDB spells SQL; [`types`] its column types, categories and
//! literals; [`schema`] the model of a generated database; [`expr`] the
//! expression menus over the server toolkit ([`lancet_server`]), with
//! [`lists`]', [`structs`]' and [`maps`]' expressions (their types and
//! literals are in [`nested`]);
//! [`query`] FROM clauses and the oracles' [`lancet_core::QueryGenerator`];
//! [`populate`] DuckDB's tables and statement forms for the toolkit's
//! population pipeline; [`knobs`] the optimizer passes; [`pqs`] what
//! PQS's evaluator reads.
//!
//! Owns everything DuckDB-specific; depends on lancet-core, lancet-engine
//! and lancet-server only. May not touch: the oracles, another provider,
//! the runner, findings or the store.

pub mod connection;
pub mod description;
pub mod dialect;
pub mod errors;
pub mod expr;
pub mod folding;
pub mod knobs;
pub mod library;
pub mod lists;
pub mod locate;
pub mod maps;
pub mod nested;
pub mod populate;
pub mod pqs;
pub mod query;
pub mod schema;
pub mod structs;
pub mod twins;
pub mod types;

pub use connection::DuckDbConnection;
pub use library::DuckDbLibrary;

use anyhow::Context;
use lancet_core::{
    Connection, CreatedDatabase, DatabaseId, Dialect, ExecError, ExpectedErrors, GeneratedDatabase,
    Knob, KnobSetting, OwnedDatabase, Provider, Rng, Session,
};
use lancet_engine::isolation::{WorkerPool, WorkerSpec};
use lancet_engine::Workers;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The built-in expected errors: what generated SQL may legitimately raise.
const EXPECTED_ERRORS: &str = include_str!("../expected-errors.toml");

/// One generated DuckDB database.
pub type DuckDatabase = lancet_server::ServerDatabase<schema::DuckSchema>;

/// lancet's DuckDB provider.
pub struct DuckDbProvider {
    expected: ExpectedErrors,
    library: Arc<DuckDbLibrary>,
    /// The optimizer passes the library lists.
    knobs: Vec<Knob>,
    /// How long one statement may run before it is interrupted.
    time_limit: Duration,
    /// Child processes that run the databases, when crash isolation is on.
    workers: Option<Arc<WorkerPool>>,
}

impl DuckDbProvider {
    /// A provider for the library at `library`, else the default one (see
    /// [`locate::library`]), with the built-in expected errors.
    pub fn new(library: Option<&Path>) -> anyhow::Result<Self> {
        let path = locate::library(library)?;
        let library = DuckDbLibrary::load(&path)?;
        let expected =
            ExpectedErrors::from_toml(EXPECTED_ERRORS, "providers/duckdb/expected-errors.toml")?;
        let mut probe = DuckDbConnection::open(Arc::clone(&library), Duration::from_secs(30))?;
        let names: Vec<String> = probe
            .query(knobs::LIST_QUERY)
            .map_err(anyhow::Error::new)
            .context("cannot list DuckDB's optimizer passes")?
            .into_iter()
            .filter_map(|row| match row.into_iter().next() {
                Some(lancet_core::Value::Text(name)) => Some(name),
                _ => None,
            })
            .collect();
        Ok(DuckDbProvider {
            expected,
            library,
            knobs: knobs::list(&names),
            time_limit: connection::DEFAULT_TIME_LIMIT,
            workers: None,
        })
    }

    /// Runs every database in a child process (see
    /// [`lancet_engine::isolation`]), so that a crash of the library is a
    /// finding instead of the end of lancet.
    pub fn with_isolation(mut self, workers: &Workers) -> anyhow::Result<Self> {
        let spec = WorkerSpec {
            dbms: description::DUCKDB.name.to_string(),
            label: description::DUCKDB.label,
            library: Some(self.library.path().to_path_buf()),
            time_limit: self.time_limit,
            memory_limit: workers.memory_limit,
        };
        let pool = WorkerPool::start(workers.program.clone(), &spec, self.library.version())?;
        self.workers = Some(Arc::new(pool));
        Ok(self)
    }

    /// Interrupts statements that run longer than `limit`.
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = limit;
        self
    }

    /// Adds a user's expected-error rules to the built-in ones.
    pub fn with_expected_errors(mut self, extra: ExpectedErrors) -> Self {
        self.expected.extend(extra);
        self
    }

    /// The loaded library.
    pub fn library(&self) -> &DuckDbLibrary {
        &self.library
    }
}

impl Provider for DuckDbProvider {
    fn name(&self) -> &'static str {
        description::DUCKDB.name
    }

    fn dialect(&self) -> Dialect {
        dialect::DIALECT
    }

    fn version(&self) -> anyhow::Result<String> {
        Ok(self.library.version_string())
    }

    fn expected_errors(&self) -> &ExpectedErrors {
        &self.expected
    }

    fn create_database(&self, id: &DatabaseId) -> anyhow::Result<CreatedDatabase> {
        let conn: Box<dyn Connection> = match &self.workers {
            Some(workers) => Box::new(workers.open()?),
            None => Box::new(DuckDbConnection::open(
                Arc::clone(&self.library),
                self.time_limit,
            )?),
        };
        Ok(CreatedDatabase {
            conn,
            owned: OwnedDatabase {
                name: id.name(),
                identity: None,
            },
        })
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
        let model = populate::populate(rng, session)?;
        Ok(Box::new(DuckDatabase::new(model)))
    }

    /// The `duckdb` shell on a fresh in-memory database (tests/engines.sh
    /// installs it from PyPI's duckdb-cli).
    fn client_command(&self) -> String {
        "duckdb :memory: < {file}".to_string()
    }

    fn features(&self) -> Vec<lancet_core::Feature> {
        vec![lancet_core::Feature::PivotRows]
    }

    fn knobs(&self) -> Vec<Knob> {
        self.knobs.clone()
    }

    fn knob_commands(&self, from: &KnobSetting, to: &KnobSetting) -> Vec<String> {
        knobs::commands(from, to)
    }
}
