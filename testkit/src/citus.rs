//! A throwaway Citus cluster: a coordinator and two workers, each a
//! [`PgServer`] (127.0.0.1, free ports, temporary directories, stopped on
//! drop) with the Citus library preloaded, the extension created in their
//! `postgres` database and the workers registered with the coordinator.
//!
//! Citus is not in the package registries the test machines reach, so the
//! Citus tests run only where it is installed for the PostgreSQL the
//! testkit uses; elsewhere [`CitusCluster::start_or_skip`] says so in one
//! line and the test passes.

use crate::{bindir, PgServer, ServerOptions};
use anyhow::{bail, Context};
use std::path::PathBuf;

/// A running coordinator with its workers.
pub struct CitusCluster {
    pub coordinator: PgServer,
    pub workers: Vec<PgServer>,
}

/// Where Citus's library would be for the PostgreSQL the testkit uses
/// (Debian: `/usr/lib/postgresql/15/lib/citus.so`).
pub fn citus_library() -> anyhow::Result<PathBuf> {
    let bin = bindir()?;
    let lib = bin
        .parent()
        .map(|p| p.join("lib").join("citus.so"))
        .context("the PostgreSQL bindir has no parent")?;
    Ok(lib)
}

/// Whether Citus is installed for the PostgreSQL the testkit uses.
pub fn citus_installed() -> bool {
    citus_library().is_ok_and(|l| l.exists())
}

impl CitusCluster {
    /// Starts a cluster, or prints why the test `test` is skipped and
    /// returns `None` when Citus is not installed. A cluster that fails to
    /// start where Citus is installed is an error, not a skip.
    pub fn start_or_skip(test: &str) -> Option<CitusCluster> {
        if !citus_installed() {
            let lib = citus_library()
                .map(|l| l.display().to_string())
                .unwrap_or_else(|e| format!("({e})"));
            eprintln!(
                "SKIPPED {test}: Citus is not installed for this PostgreSQL (no {lib}); \
                 install Citus from its own packages to run the Citus tests"
            );
            println!("SKIPPED {test}: Citus is not installed");
            return None;
        }
        Some(Self::start().expect("starting a throwaway Citus cluster"))
    }

    /// Starts a coordinator and two workers.
    pub fn start() -> anyhow::Result<CitusCluster> {
        let options = ServerOptions::default()
            .setting("shared_preload_libraries", "citus")
            .setting("citus.node_conninfo", "'sslmode=disable'")
            .setting("max_prepared_transactions", "100")
            .setting("max_worker_processes", "32")
            .setting("max_connections", "120");
        let start = || PgServer::start_with(options.clone());
        let coordinator = start().context("starting the Citus coordinator")?;
        let workers = vec![
            start().context("starting a Citus worker")?,
            start().context("starting a Citus worker")?,
        ];
        for node in std::iter::once(&coordinator).chain(&workers) {
            node.psql("postgres", "CREATE EXTENSION citus")
                .with_context(|| format!("CREATE EXTENSION citus on port {}", node.port()))?;
        }
        coordinator
            .psql(
                "postgres",
                &format!(
                    "SELECT citus_set_coordinator_host('127.0.0.1', {})",
                    coordinator.port()
                ),
            )
            .context("registering the coordinator")?;
        for w in &workers {
            coordinator
                .psql(
                    "postgres",
                    &format!("SELECT citus_add_node('127.0.0.1', {})", w.port()),
                )
                .with_context(|| format!("registering the worker on port {}", w.port()))?;
        }
        let active = coordinator.psql(
            "postgres",
            "SELECT count(*) FROM pg_dist_node WHERE groupid <> 0 AND isactive",
        )?;
        if active != "2" {
            bail!("the coordinator lists {active} active workers, not 2");
        }
        Ok(CitusCluster {
            coordinator,
            workers,
        })
    }

    /// The coordinator's URL (`postgres://postgres@127.0.0.1:PORT/postgres`).
    pub fn url(&self) -> String {
        self.coordinator.url()
    }

    /// Every node, the coordinator first.
    pub fn nodes(&self) -> impl Iterator<Item = &PgServer> {
        std::iter::once(&self.coordinator).chain(&self.workers)
    }
}
