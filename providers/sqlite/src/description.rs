//! SQLite as the lancet binary offers it: `--dbms sqlite`, the bundled
//! library or a build given with `--sqlite-lib`, run in worker processes.

use crate::connection::{SqliteConnection, DEFAULT_TIME_LIMIT};
use crate::dynamic::{DynamicConnection, SqliteLibrary};
use crate::SqliteProvider;
use lancet_core::{Connection, Provider};
use lancet_engine::isolation::WorkerEngine;
use lancet_engine::{BuildVersion, DbmsDescription, InProcessEngine, OpenOptions};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// `--dbms sqlite`.
pub const SQLITE: DbmsDescription = DbmsDescription {
    name: "sqlite",
    label: "SQLite",
    server: None,
    in_process: Some(InProcessEngine {
        time_limit: DEFAULT_TIME_LIMIT,
        worker,
        build_version,
    }),
    library_option: Some("--sqlite-lib"),
    dialect: crate::dialect::DIALECT,
    parser_dialect: || Box::new(sqlparser::dialect::SQLiteDialect {}),
    checks_per_database: 500,
    open,
};

fn open(options: &OpenOptions) -> anyhow::Result<Box<dyn Provider>> {
    let mut p = SqliteProvider::new()?;
    if let Some(extra) = &options.expected_errors {
        p = p.with_expected_errors(extra.clone());
    }
    if let Some(path) = &options.library {
        p = p.with_library(path)?;
    }
    if let Some(workers) = &options.workers {
        p = p.with_isolation(workers)?;
    }
    Ok(Box::new(p))
}

/// What a worker process serves: fresh in-memory databases of the bundled
/// SQLite or of the build in `library`, or the database files of the
/// transaction oracle's sessions.
fn worker(library: Option<&Path>, time_limit: Duration) -> anyhow::Result<WorkerEngine> {
    let library = library.map(SqliteLibrary::load).transpose()?;
    let version = match &library {
        Some(lib) => lib.version_number(),
        None => rusqlite::version_number(),
    };
    Ok(WorkerEngine {
        version: version.to_string(),
        open: Box::new(move |file| {
            Ok(match (&library, file) {
                (Some(lib), None) => {
                    Box::new(DynamicConnection::open(Arc::clone(lib), time_limit)?)
                        as Box<dyn Connection>
                }
                (Some(lib), Some(path)) => Box::new(DynamicConnection::open_file(
                    Arc::clone(lib),
                    path,
                    time_limit,
                )?),
                (None, None) => Box::new(SqliteConnection::open_with_time_limit(time_limit)?),
                (None, Some(path)) => Box::new(SqliteConnection::open_file(path, time_limit)?),
            })
        }),
    })
}

/// A libsqlite3's `sqlite3_libversion_number()`, as a release name.
fn build_version(library: &Path) -> anyhow::Result<BuildVersion> {
    let number = SqliteLibrary::load(library)?.version_number();
    Ok(BuildVersion {
        order: u64::try_from(number).unwrap_or(0),
        text: format!(
            "{}.{}.{}",
            number / 1_000_000,
            number / 1000 % 1000,
            number % 1000
        ),
    })
}
