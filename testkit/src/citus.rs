//! A throwaway Citus cluster: a coordinator and two workers, each a
//! [`PgServer`] (127.0.0.1, free ports, temporary directories, stopped on
//! drop) with the Citus library preloaded, the extension created in their
//! `postgres` database and the workers registered with the coordinator.
//!
//! Citus is in no package registry the test machines reach:
//! `tests/engines.sh` builds Citus 14.0.1 into PostgreSQL 18 (the wheel)
//! and Citus 13.2.2 into Debian's PostgreSQL 15 from `../shared/vendor/citus`.
//! Where it is missing, [`CitusCluster::start_or_skip`] says SKIPPED in one
//! line and the test passes, except in CI ([`crate::in_ci`]), where a
//! missing Citus fails the test: the CI gate is what lancet's CI must test.

use crate::{bindir_of, default_major, in_ci, PgServer, ServerOptions};
use anyhow::{bail, Context};
use std::path::PathBuf;

/// A running coordinator with its workers.
pub struct CitusCluster {
    pub coordinator: PgServer,
    pub workers: Vec<PgServer>,
}

/// Where Citus's library would be for PostgreSQL `major`
/// (`<pkglibdir>/citus.so`, beside the server's own libraries).
pub fn citus_library(major: u32) -> anyhow::Result<PathBuf> {
    let bin = bindir_of(major)?;
    let lib = bin
        .parent()
        .map(|p| p.join("lib").join("citus.so"))
        .context("the PostgreSQL bindir has no parent")?;
    Ok(lib)
}

/// Whether Citus is installed for PostgreSQL `major`.
pub fn citus_installed(major: u32) -> bool {
    citus_library(major).is_ok_and(|l| l.exists())
}

impl CitusCluster {
    /// Starts a cluster, or prints why the test `test` is skipped and
    /// returns `None` when Citus is not installed. A cluster that fails to
    /// start where Citus is installed is an error, not a skip.
    pub fn start_or_skip(test: &str) -> Option<CitusCluster> {
        Self::start_or_skip_major(test, default_major())
    }

    /// [`CitusCluster::start_or_skip`] on PostgreSQL `major` (18: Citus
    /// 14; 15: Citus 13.2).
    pub fn start_or_skip_major(test: &str, major: u32) -> Option<CitusCluster> {
        if !citus_installed(major) {
            let lib = citus_library(major)
                .map(|l| l.display().to_string())
                .unwrap_or_else(|e| format!("({e})"));
            if in_ci() {
                panic!(
                    "{test}: Citus is not installed for PostgreSQL {major} (no {lib}), and CI \
                     must test it: tests/run.sh builds it (tests/engines.sh)"
                );
            }
            eprintln!(
                "SKIPPED {test}: Citus is not installed for PostgreSQL {major} (no {lib}); \
                 tests/run.sh builds it from ../shared/vendor/citus (tests/engines.sh)"
            );
            println!("SKIPPED {test}: Citus is not installed for PostgreSQL {major}");
            return None;
        }
        Some(
            Self::start_major(major)
                .unwrap_or_else(|e| panic!("starting a throwaway Citus cluster: {e:#}")),
        )
    }

    /// Starts a coordinator and two workers of the default major.
    pub fn start() -> anyhow::Result<CitusCluster> {
        Self::start_major(default_major())
    }

    /// Starts a coordinator and two workers of PostgreSQL `major`.
    pub fn start_major(major: u32) -> anyhow::Result<CitusCluster> {
        let options = ServerOptions::default()
            .major(major)
            .setting("shared_preload_libraries", "citus")
            .setting("citus.node_conninfo", "'sslmode=disable'")
            .setting("max_prepared_transactions", "100")
            .setting("max_worker_processes", "32")
            .setting("max_connections", "120");
        // The three nodes start at once (initdb and the extension take
        // most of a cluster's start).
        let start = || -> anyhow::Result<PgServer> {
            let node = PgServer::start_with(options.clone())?;
            node.psql("postgres", "CREATE EXTENSION citus")
                .with_context(|| format!("CREATE EXTENSION citus on port {}", node.port()))?;
            Ok(node)
        };
        let (coordinator, workers) = std::thread::scope(|scope| {
            let nodes: Vec<_> = (0..3).map(|_| scope.spawn(start)).collect();
            let mut nodes = nodes.into_iter().map(|h| {
                h.join()
                    .unwrap_or_else(|_| bail!("a node's start panicked"))
            });
            let coordinator = nodes
                .next()
                .context("no coordinator")?
                .context("starting the Citus coordinator")?;
            let workers = nodes
                .map(|w| w.context("starting a Citus worker"))
                .collect::<anyhow::Result<Vec<_>>>()?;
            anyhow::Ok((coordinator, workers))
        })?;
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
