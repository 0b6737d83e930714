//! [`DbmsDescription`]: what the binary needs to know about a DBMS to offer
//! it as `--dbms NAME`, open it, read its reproducers, and run it in worker
//! processes. A provider crate exports one per `--dbms` name.

use crate::isolation::{WorkerEngine, WorkerProgram};
use lancet_core::{Dialect, ExpectedErrors, Provider};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One DBMS as the binary sees it. A new DBMS is a provider crate that
/// exports one of these and one line in the binary's registry.
pub struct DbmsDescription {
    /// The `--dbms` name (also what finding records say).
    pub name: &'static str,
    /// The name people write ("SQLite", "PostgreSQL"), for messages.
    pub label: &'static str,
    /// How to reach a server; `None` for an engine that runs inside lancet.
    pub server: Option<ServerAccess>,
    /// An engine that runs inside lancet: its worker processes.
    pub in_process: Option<InProcessEngine>,
    /// The command-line option that loads another build of the engine
    /// from a shared library (`--sqlite-lib`), if the DBMS has one.
    pub library_option: Option<&'static str>,
    /// How lancet prints SQL for it.
    pub dialect: Dialect,
    /// The sqlparser dialect that reads its reproducers back.
    pub parser_dialect: fn() -> Box<dyn sqlparser::dialect::Dialect>,
    /// Checks per generated database by default: an embedded database
    /// costs nothing to make, a server's costs a round of DDL.
    pub checks_per_database: u64,
    /// Makes the provider.
    pub open: fn(&OpenOptions) -> anyhow::Result<Box<dyn Provider>>,
}

/// How a server DBMS is reached when `--url` is not given.
pub struct ServerAccess {
    /// The shape of its URL, for messages (`postgres://USER@HOST:PORT/DATABASE`).
    pub url_example: &'static str,
    /// The environment variable that gives the URL.
    pub url_variable: &'static str,
    /// What the URL must point at, if more than the server (Citus: the
    /// coordinator).
    pub url_note: Option<&'static str>,
}

/// An engine that runs inside lancet's own process, and so, by default,
/// in worker processes (a crash of the engine is a finding, not the end
/// of the run).
pub struct InProcessEngine {
    /// The statement time limit the engine enforces itself.
    pub time_limit: Duration,
    /// In a worker process: the engine (the built-in one, or the build in
    /// `library`) with `time_limit` on every statement.
    pub worker: fn(library: Option<&Path>, time_limit: Duration) -> anyhow::Result<WorkerEngine>,
    /// The version of the engine build in a shared library, for `bisect`'s
    /// ladder of builds; fails if the file is not a build of this engine.
    pub build_version: fn(library: &Path) -> anyhow::Result<BuildVersion>,
}

/// An engine build's version: `order` sorts builds oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BuildVersion {
    pub order: u64,
    /// As the engine's releases are named (`3.35.4`).
    pub text: String,
}

/// What a provider is made with: the command line's and a config file's
/// settings, already checked against the description.
#[derive(Default)]
pub struct OpenOptions {
    /// The server's URL (server DBMSs).
    pub url: Option<String>,
    /// A build of the engine to load ([`DbmsDescription::library_option`]).
    pub library: Option<PathBuf>,
    /// Rules added to the provider's own expected errors.
    pub expected_errors: Option<ExpectedErrors>,
    /// Worker processes for an in-process engine; `None` runs it inside
    /// this process.
    pub workers: Option<Workers>,
    /// A twin recipe a campaign file declares for an extension (PostgreSQL
    /// and Citus offer it to the twins oracle; the others have none).
    pub twin_recipe: Option<lancet_core::DeclaredRecipe>,
}

/// How an in-process engine's worker processes start, and their limits.
#[derive(Clone, Debug)]
pub struct Workers {
    pub program: WorkerProgram,
    /// The most memory one worker may map, in bytes.
    pub memory_limit: Option<u64>,
}

impl DbmsDescription {
    /// The URL to use: `url` if given, else the environment's, else an
    /// error that says how to give one.
    pub fn server_url(&self, url: Option<&str>) -> anyhow::Result<String> {
        if let Some(u) = url {
            return Ok(u.to_string());
        }
        let Some(server) = &self.server else {
            anyhow::bail!("--dbms {} runs inside lancet and needs no --url", self.name);
        };
        std::env::var(server.url_variable).map_err(|_| {
            anyhow::anyhow!(
                "--dbms {} needs a server: give --url {} (or set {}, or `url` in a --config file){}",
                self.name,
                server.url_example,
                server.url_variable,
                server.url_note.map(|n| format!("; {n}")).unwrap_or_default()
            )
        })
    }
}
