//! The DBMSs lancet knows, by `--dbms` name: a list of the descriptions
//! their provider crates export. The one place that names concrete
//! providers; nothing else in the binary branches on a DBMS.

use anyhow::Context;
use lancet_core::{ExpectedErrors, Provider};
use lancet_engine::isolation::WorkerProgram;
use lancet_engine::{Catalog, DbmsDescription, OpenOptions, Workers};
use std::path::{Path, PathBuf};

/// Every DBMS, the default first. A new DBMS is one line here.
pub const DBMS: &[&DbmsDescription] = &[
    &lancet_sqlite::description::SQLITE,
    &lancet_postgres::description::POSTGRES,
    &lancet_postgres::description::CITUS,
    &lancet_mysql::description::MYSQL,
    &lancet_duckdb::description::DUCKDB,
];

/// [`DBMS`] as the value the findings crates are handed.
pub const CATALOG: Catalog = Catalog::new(DBMS);

/// The `--dbms` default: the first of [`DBMS`].
pub const DEFAULT_DBMS: &str = DBMS[0].name;

/// The first server DBMS of [`DBMS`]: the default of commands that only
/// servers need (`cleanup`).
pub const DEFAULT_SERVER_DBMS: &str = first_server();

const fn first_server() -> &'static str {
    let mut i = 0;
    while i < DBMS.len() {
        if DBMS[i].server.is_some() {
            return DBMS[i].name;
        }
        i += 1;
    }
    DEFAULT_DBMS
}

/// The `--dbms` names, for the command line.
pub fn names() -> Vec<&'static str> {
    CATALOG.names()
}

/// The description of `--dbms name`.
pub fn describe(name: &str) -> anyhow::Result<&'static DbmsDescription> {
    CATALOG.describe(name)
}

/// Settings a provider may take from the command line or a config file.
#[derive(Clone, Debug, Default)]
pub struct ProviderOptions {
    /// Extra expected-error rules (TOML) added to the provider's own.
    pub expected_errors: Option<PathBuf>,
    /// Another build of an in-process engine, and the option that named
    /// it (`--sqlite-lib`): it must be that DBMS's option.
    pub library: Option<(String, PathBuf)>,
    /// Server DBMSs: the server's URL (`--url`, else the DBMS's variable).
    pub url: Option<String>,
    /// In-process engines: run databases in worker processes started this
    /// way (crash isolation); `None` runs the engine inside this process.
    pub workers: Option<Workers>,
}

/// Worker processes for `dbms` unless `in_process` asks otherwise: every
/// engine that runs inside lancet gets them; a server needs none.
pub fn workers(
    dbms: &str,
    in_process: bool,
    memory_limit: Option<u64>,
) -> anyhow::Result<Option<Workers>> {
    if in_process || describe(dbms)?.in_process.is_none() {
        return Ok(None);
    }
    Ok(Some(Workers {
        program: WorkerProgram::current_exe()?,
        memory_limit,
    }))
}

fn load_expected(path: &Path) -> anyhow::Result<ExpectedErrors> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the expected-errors file {}", path.display()))?;
    ExpectedErrors::from_toml(&text, &path.display().to_string())
}

/// Creates the provider of `--dbms name`.
pub fn provider(name: &str, options: &ProviderOptions) -> anyhow::Result<Box<dyn Provider>> {
    let dbms = describe(name)?;
    let expected_errors = match &options.expected_errors {
        Some(path) => Some(load_expected(path)?),
        None => None,
    };
    if let Some((option, _)) = &options.library {
        if dbms.library_option != Some(option.as_str()) {
            let owner = DBMS
                .iter()
                .find(|d| d.library_option == Some(option.as_str()));
            anyhow::bail!(
                "{option} applies to --dbms {} only, not '{name}'",
                owner.map_or("(none)", |d| d.name)
            );
        }
    }
    if options.url.is_some() && dbms.server.is_none() {
        anyhow::bail!(
            "--url is for server DBMSs; {} runs inside lancet and needs none",
            dbms.label
        );
    }
    (dbms.open)(&OpenOptions {
        url: options.url.clone(),
        library: options.library.as_ref().map(|(_, p)| p.clone()),
        expected_errors,
        workers: options.workers.clone(),
    })
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
