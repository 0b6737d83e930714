//! The findings store: every run's findings, bug counts, root-cause
//! groups, summary and throughput samples in one database, so that many
//! runs (shards of one campaign on many machines, or a spare machine's
//! runs over months) can be listed and reported together.
//!
//! An SQLite file (no setup) or a shared PostgreSQL database (for fleets).
//! A run's directory stays the truth: findings are on local disk first and
//! the store is fed from it ([`push`]), by a thread of `lancet fuzz
//! --store` ([`feed`]) or afterwards by `lancet push`.

pub mod backend;
pub mod feed;
pub mod push;
pub mod read;
mod schema;

use anyhow::{bail, Context};
use backend::Backend;
use std::path::{Path, PathBuf};

/// Where a store is, as given to `--store`.
#[derive(Clone)]
pub enum StoreLocation {
    Sqlite(PathBuf),
    Postgres(Box<lancet_postgres_url::ServerUrl>),
}

impl StoreLocation {
    /// `postgres://USER@HOST:PORT/DB` (or key=value pairs) for PostgreSQL;
    /// `sqlite:PATH` or a plain path for an SQLite file. Errors never
    /// quote the text (it may hold a password).
    pub fn parse(text: &str) -> anyhow::Result<StoreLocation> {
        let t = text.trim();
        if t.is_empty() {
            bail!("--store is empty; give an SQLite file or a postgres:// URL");
        }
        if t.starts_with("postgres://") || t.starts_with("postgresql://") {
            return Ok(StoreLocation::Postgres(Box::new(
                lancet_postgres_url::ServerUrl::parse_option(t, "--store")?,
            )));
        }
        if let Some(path) = t
            .strip_prefix("sqlite://")
            .or_else(|| t.strip_prefix("sqlite:"))
        {
            return Ok(StoreLocation::Sqlite(PathBuf::from(path)));
        }
        if let Some((scheme, _)) = t.split_once("://") {
            // A scheme of letters is safe to quote; anything else may be a
            // password typed in the wrong place.
            let named = if !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '+')
            {
                format!(" ({scheme}://)")
            } else {
                String::new()
            };
            bail!("the --store URL has a scheme lancet does not know{named}; give an SQLite file (PATH or sqlite:PATH) or postgres://USER@HOST:PORT/DATABASE");
        }
        if t.contains('=') && t.contains("host") {
            return Ok(StoreLocation::Postgres(Box::new(
                lancet_postgres_url::ServerUrl::parse_option(t, "--store")?,
            )));
        }
        Ok(StoreLocation::Sqlite(PathBuf::from(t)))
    }

    /// How messages name the store: never with a password.
    pub fn display(&self) -> String {
        match self {
            StoreLocation::Sqlite(p) if p.as_os_str() == ":memory:" => {
                "the run directories given".into()
            }
            StoreLocation::Sqlite(p) => p.display().to_string(),
            StoreLocation::Postgres(url) => format!("postgres://{}", url.display_name()),
        }
    }
}

/// Why a store could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The server did not answer or is not ready: worth retrying.
    #[error("the store {store} is unreachable: {reason}")]
    Unreachable { store: String, reason: String },
    /// Anything else (a refused login, a missing database, a file that is
    /// not SQLite, a store from a newer lancet): retrying will not help.
    #[error("{0:#}")]
    Refused(anyhow::Error),
}

/// An open store, migrated to this lancet's schema.
pub struct Store {
    db: Backend,
    name: String,
}

impl Store {
    pub fn open(location: &StoreLocation) -> Result<Store, OpenError> {
        let name = location.display();
        let mut db = match location {
            StoreLocation::Sqlite(path) => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    if !dir.is_dir() {
                        return Err(OpenError::Refused(anyhow::anyhow!(
                            "the store's directory {} does not exist",
                            dir.display()
                        )));
                    }
                }
                Backend::sqlite(path).map_err(OpenError::Refused)?
            }
            StoreLocation::Postgres(url) => {
                let config = postgres::Config::from(url.config_for(&url.maintenance_database()));
                Backend::postgres(config).map_err(|e| classify(&name, &e))?
            }
        };
        schema::migrate(&mut db).map_err(|e| {
            if is_transient(&e) {
                OpenError::Unreachable {
                    store: name.clone(),
                    reason: format!("{e:#}"),
                }
            } else {
                OpenError::Refused(e.context(format!("cannot set up the store {name}")))
            }
        })?;
        Ok(Store { db, name })
    }

    /// How messages name the store.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Pushes what changed in a run directory (see [`push::push_run`]);
    /// a transaction that lost a race with another shard's (a deadlock
    /// or serialization failure PostgreSQL reports) is tried again.
    pub fn push_run(
        &mut self,
        run_dir: &Path,
        findings: &dyn push::RunFindings,
        state: &mut push::PushState,
    ) -> anyhow::Result<push::Pushed> {
        let mut tries = 0;
        loop {
            match push::push_run(&mut self.db, run_dir, findings, state) {
                Err(e) if tries < 5 && is_conflict(&e) => tries += 1,
                other => {
                    return other.with_context(|| {
                        format!(
                            "cannot push {} to the store {}",
                            run_dir.display(),
                            self.name
                        )
                    })
                }
            }
        }
    }

    pub(crate) fn db(&mut self) -> &mut Backend {
        &mut self.db
    }
}

/// A PostgreSQL error as an [`OpenError`].
fn classify(store: &str, e: &postgres::Error) -> OpenError {
    match e.as_db_error() {
        Some(db) if !transient_state(db.code().code()) => OpenError::Refused(anyhow::anyhow!(
            "the store {store} refused lancet: {} (SQLSTATE {})",
            db.message(),
            db.code().code()
        )),
        _ => OpenError::Unreachable {
            store: store.to_string(),
            reason: match std::error::Error::source(e) {
                Some(cause) => format!("{e}: {cause}"),
                None => e.to_string(),
            },
        },
    }
}

/// Server states that pass: starting up or shutting down, too many
/// connections, out of resources.
fn transient_state(code: &str) -> bool {
    code.starts_with("57P") || code.starts_with("53") || code.starts_with("08")
}

/// Whether an error is the store being away (a broken connection, a
/// server restarting) rather than lancet's or the store's fault.
pub fn is_transient(e: &anyhow::Error) -> bool {
    e.chain()
        .any(|c| match c.downcast_ref::<postgres::Error>() {
            Some(pg) => match pg.as_db_error() {
                Some(db) => transient_state(db.code().code()),
                None => true,
            },
            None => c
                .downcast_ref::<rusqlite::Error>()
                .is_some_and(|s| s.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)),
        })
}

/// A deadlock or serialization failure between concurrent writers.
fn is_conflict(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<postgres::Error>()
            .and_then(|pg| pg.as_db_error())
            .is_some_and(|db| matches!(db.code().code(), "40P01" | "40001" | "23505"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_is_migrated_once_and_a_newer_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store.sqlite");
        let location = StoreLocation::parse(path.to_str().unwrap()).unwrap();
        for _ in 0..2 {
            let mut store = Store::open(&location).unwrap();
            let version = store
                .db()
                .query("SELECT version FROM lancet_store_version", &[])
                .unwrap();
            assert_eq!(version, vec![vec![backend::Value::Int(schema::current())]]);
        }
        let mut store = Store::open(&location).unwrap();
        store
            .db()
            .execute("UPDATE lancet_store_version SET version = 99", &[])
            .unwrap();
        drop(store);
        let Err(OpenError::Refused(e)) = Store::open(&location) else {
            panic!("a store of schema 99 was opened");
        };
        assert!(format!("{e:#}").contains("newer lancet"), "{e:#}");
    }

    #[test]
    fn store_locations_never_quote_a_password() {
        for text in [
            "postgres://u:hunter2@h:5432/db",
            "postgresql://u:hunter2@h/db",
            "host=h user=u password=hunter2 dbname=db",
        ] {
            let l = StoreLocation::parse(text).unwrap();
            assert!(!l.display().contains("hunter2"), "{}", l.display());
        }
        for bad in [
            "mysql://u:hunter2@h/db",
            "postgres://u:hunt@er2@h/db",
            "x:hunter2://",
        ] {
            let e = StoreLocation::parse(bad).err().expect(bad);
            assert!(!format!("{e:#}").contains("hunter2"), "{e:#}");
        }
        assert!(matches!(
            StoreLocation::parse("sqlite:a.db").unwrap(),
            StoreLocation::Sqlite(_)
        ));
    }
}
