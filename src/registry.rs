//! The DBMSs lancet knows, by `--dbms` name: a list of the descriptions
//! their provider crates export. The one place that names concrete
//! providers; nothing else in the binary branches on a DBMS.

use lancet_core::Provider;
use lancet_engine::{Catalog, DbmsDescription, Workers};

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

pub use lancet_engine::catalog::ProviderOptions;

/// Worker processes for `dbms` unless `in_process` asks otherwise (see
/// [`Catalog::workers`]).
pub fn workers(
    dbms: &str,
    in_process: bool,
    memory_limit: Option<u64>,
) -> anyhow::Result<Option<Workers>> {
    CATALOG.workers(dbms, in_process, memory_limit)
}

/// Creates the provider of `--dbms name` (see [`Catalog::provider`]).
pub fn provider(name: &str, options: &ProviderOptions) -> anyhow::Result<Box<dyn Provider>> {
    CATALOG.provider(name, options)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lancet_core::{DbError, StatementKind};
    use std::path::{Path, PathBuf};

    fn example(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("configs/expected-errors")
            .join(name)
    }

    #[test]
    fn the_example_extra_rules_parse() {
        for name in ["sqlite-extra.example.toml", "postgres-extra.example.toml"] {
            let rules = lancet_engine::catalog::load_expected(&example(name)).unwrap();
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
