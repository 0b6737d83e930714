//! DuckDB as the lancet binary offers it: `--dbms duckdb`, a libduckdb.so
//! loaded at run time (`--duckdb-lib`, `LANCET_DUCKDB_LIB`, or the cache
//! `tests/engines.sh` fills), run in worker processes.

use crate::connection::{DuckDbConnection, DEFAULT_TIME_LIMIT};
use crate::library::DuckDbLibrary;
use crate::DuckDbProvider;
use lancet_core::{Connection, Provider};
use lancet_engine::isolation::WorkerEngine;
use lancet_engine::{BuildVersion, DbmsDescription, InProcessEngine, OpenOptions};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// `--dbms duckdb`.
pub const DUCKDB: DbmsDescription = DbmsDescription {
    name: "duckdb",
    label: "DuckDB",
    server: None,
    in_process: Some(InProcessEngine {
        time_limit: DEFAULT_TIME_LIMIT,
        worker,
        build_version,
    }),
    library_option: Some("--duckdb-lib"),
    dialect: crate::dialect::DIALECT,
    parser_dialect: || Box::new(sqlparser::dialect::DuckDbDialect {}),
    checks_per_database: 500,
    open,
};

fn open(options: &OpenOptions) -> anyhow::Result<Box<dyn Provider>> {
    let mut p = DuckDbProvider::new(options.library.as_deref())?;
    if let Some(extra) = &options.expected_errors {
        p = p.with_expected_errors(extra.clone());
    }
    if let Some(workers) = &options.workers {
        p = p.with_isolation(workers)?;
    }
    Ok(Box::new(p))
}

/// What a worker process serves: fresh in-memory databases of the library
/// (the one given, else the default one).
fn worker(library: Option<&Path>, time_limit: Duration) -> anyhow::Result<WorkerEngine> {
    let path = crate::locate::library(library)?;
    let lib = DuckDbLibrary::load(&path)?;
    Ok(WorkerEngine {
        version: lib.version().to_string(),
        open: Box::new(move |file| {
            // One process holds a DuckDB file at a time: sessions of one
            // database in several workers cannot share it.
            anyhow::ensure!(
                file.is_none(),
                "a DuckDB worker opens in-memory databases only"
            );
            Ok(
                Box::new(DuckDbConnection::open(Arc::clone(&lib), time_limit)?)
                    as Box<dyn Connection>,
            )
        }),
    })
}

/// A libduckdb's `duckdb_library_version()`, ordered by release.
fn build_version(library: &Path) -> anyhow::Result<BuildVersion> {
    let lib = DuckDbLibrary::load(library)?;
    let (major, minor, patch) = lib.release().ok_or_else(|| {
        anyhow::anyhow!(
            "{}: cannot read a release from its version '{}'",
            library.display(),
            lib.version()
        )
    })?;
    Ok(BuildVersion {
        order: major * 1_000_000 + minor * 1000 + patch,
        text: format!("{major}.{minor}.{patch}"),
    })
}
