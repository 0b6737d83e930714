//! The providers lancet knows, by `--dbms` name. The one place that names
//! concrete providers; oracles and the runner see only the trait.

use anyhow::Context;
use lancet_core::{ExpectedErrors, Provider};
use std::path::Path;

/// `--dbms` names, the default first.
pub const DBMS_NAMES: &[&str] = &["sqlite", "postgres", "citus", "mysql"];

/// Settings a provider may take from the command line or a config file.
#[derive(Clone, Debug, Default)]
pub struct ProviderOptions {
    /// Extra expected-error rules (TOML) added to the provider's own.
    pub expected_errors: Option<std::path::PathBuf>,
    /// SQLite only: a libsqlite3 shared library to load and test instead
    /// of the bundled SQLite.
    pub sqlite_lib: Option<std::path::PathBuf>,
    /// Server DBMSs: the server's URL (`--url`, else `LANCET_PG_URL`).
    pub url: Option<String>,
    /// SQLite: run databases in worker processes started this way (crash
    /// isolation); `None` runs the library inside this process.
    pub sqlite_worker: Option<lancet_sqlite::isolated::WorkerProgram>,
    /// SQLite: the address-space limit of a worker process, in bytes.
    pub sqlite_worker_memory: Option<u64>,
}

/// The SQL dialect of a `--dbms` name, as a finding's record names it:
/// the dialect of the provider that wrote it, if lancet has that provider.
pub fn dialect_of(dbms: &str) -> Option<lancet_core::Dialect> {
    match dbms {
        "sqlite" => Some(lancet_sqlite::dialect::DIALECT),
        "postgres" | "citus" => Some(lancet_postgres::dialect::DIALECT),
        "mysql" => Some(lancet_mysql::dialect::DIALECT),
        _ => None,
    }
}

/// The environment variable that gives PostgreSQL's URL when `--url` does not.
pub const PG_URL_VAR: &str = "LANCET_PG_URL";
/// The environment variable that gives MySQL's or MariaDB's URL when `--url` does not.
pub const MYSQL_URL_VAR: &str = "LANCET_MYSQL_URL";

fn load_expected(path: &Path) -> anyhow::Result<ExpectedErrors> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the expected-errors file {}", path.display()))?;
    ExpectedErrors::from_toml(&text, &path.display().to_string())
}

/// Creates the provider named `name`.
pub fn provider(name: &str, options: &ProviderOptions) -> anyhow::Result<Box<dyn Provider>> {
    let extra = match &options.expected_errors {
        Some(path) => Some(load_expected(path)?),
        None => None,
    };
    if options.sqlite_lib.is_some() && name != "sqlite" {
        anyhow::bail!("--sqlite-lib applies to --dbms sqlite only, not '{name}'");
    }
    if options.url.is_some() && name == "sqlite" {
        anyhow::bail!("--url is for server DBMSs; SQLite is embedded and needs none");
    }
    match name {
        "postgres" | "citus" => {
            let url = match &options.url {
                Some(u) => u.clone(),
                None => std::env::var(PG_URL_VAR).map_err(|_| {
                    anyhow::anyhow!(
                        "--dbms {name} needs a server: give --url postgres://USER@HOST:PORT/DATABASE \
                         (or set {PG_URL_VAR}, or `url` in a --config file){}",
                        if name == "citus" { "; for Citus, the coordinator's URL" } else { "" }
                    )
                })?,
            };
            let mut p = if name == "citus" {
                lancet_postgres::PostgresProvider::connect_flavor(
                    &url,
                    Box::new(lancet_postgres::citus::Citus::new()),
                )?
            } else {
                lancet_postgres::PostgresProvider::connect(&url)?
            };
            if let Some(extra) = extra {
                p = p.with_expected_errors(extra);
            }
            Ok(Box::new(p))
        }
        "mysql" => {
            let url = match &options.url {
                Some(u) => u.clone(),
                None => std::env::var(MYSQL_URL_VAR).map_err(|_| {
                    anyhow::anyhow!(
                        "--dbms mysql needs a server: give --url mysql://USER:PASSWORD@HOST:PORT/DATABASE \
                         (or set {MYSQL_URL_VAR}, or `url` in a --config file)"
                    )
                })?,
            };
            let mut p = lancet_mysql::MySqlProvider::connect(&url)?;
            if let Some(extra) = extra {
                p = p.with_expected_errors(extra);
            }
            Ok(Box::new(p))
        }
        "sqlite" => {
            let mut p = lancet_sqlite::SqliteProvider::new()?;
            if let Some(extra) = extra {
                p = p.with_expected_errors(extra);
            }
            if let Some(path) = &options.sqlite_lib {
                p = p.with_library(path)?;
            }
            if let Some(program) = &options.sqlite_worker {
                p = p.with_isolation(program.clone(), options.sqlite_worker_memory)?;
            }
            Ok(Box::new(p))
        }
        other => anyhow::bail!(
            "unknown DBMS '{other}'; lancet knows: {}",
            DBMS_NAMES.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{DbError, StatementKind};
    use std::path::PathBuf;

    fn example(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("configs/expected-errors")
            .join(name)
    }

    #[test]
    fn the_example_extra_rules_parse() {
        for name in ["sqlite-extra.example.toml", "postgres-extra.example.toml"] {
            let rules = load_expected(&example(name)).unwrap();
            assert!(!rules.rules.is_empty(), "{name} has no rules");
        }
    }

    #[test]
    fn extra_rules_extend_the_built_in_ones() {
        let unique = DbError::statement(
            Some("SQLITE_CONSTRAINT_UNIQUE".into()),
            "UNIQUE constraint failed: t0.c0",
        );
        let too_big = DbError::statement(Some("SQLITE_TOOBIG".into()), "string or blob too big");
        let built_in = provider("sqlite", &ProviderOptions::default()).unwrap();
        assert!(built_in
            .expected_errors()
            .is_expected(StatementKind::Insert, &unique));
        assert!(!built_in
            .expected_errors()
            .is_expected(StatementKind::Insert, &too_big));
        let options = ProviderOptions {
            expected_errors: Some(example("sqlite-extra.example.toml")),
            ..ProviderOptions::default()
        };
        let extended = provider("sqlite", &options).unwrap();
        assert!(extended
            .expected_errors()
            .is_expected(StatementKind::Insert, &unique));
        assert!(extended
            .expected_errors()
            .is_expected(StatementKind::Insert, &too_big));
    }
}
