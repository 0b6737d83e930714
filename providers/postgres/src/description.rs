//! PostgreSQL and Citus as the lancet binary offers them: `--dbms
//! postgres` and `--dbms citus`, each a server reached by URL.

use crate::PostgresProvider;
use lancet_core::Provider;
use lancet_engine::{DbmsDescription, OpenOptions, ServerAccess};

/// The environment variable that gives the server's URL when `--url` does not.
pub const URL_VARIABLE: &str = "LANCET_PG_URL";

/// `--dbms postgres`.
pub const POSTGRES: DbmsDescription = DbmsDescription {
    name: "postgres",
    label: "PostgreSQL",
    server: Some(POSTGRES_ACCESS),
    in_process: None,
    library_option: None,
    dialect: crate::dialect::DIALECT,
    parser_dialect: || Box::new(sqlparser::dialect::PostgreSqlDialect {}),
    checks_per_database: 2_000,
    open: |options| open(options, &POSTGRES, false),
};

/// `--dbms citus`: PostgreSQL with Citus, reached at the coordinator.
pub const CITUS: DbmsDescription = DbmsDescription {
    name: "citus",
    label: "Citus",
    server: Some(ServerAccess {
        url_note: Some("for Citus, the coordinator's URL"),
        ..POSTGRES_ACCESS
    }),
    open: |options| open(options, &CITUS, true),
    ..POSTGRES
};

const POSTGRES_ACCESS: ServerAccess = ServerAccess {
    url_example: "postgres://USER@HOST:PORT/DATABASE",
    url_variable: URL_VARIABLE,
    url_note: None,
};

fn open(
    options: &OpenOptions,
    me: &DbmsDescription,
    citus: bool,
) -> anyhow::Result<Box<dyn Provider>> {
    let url = me.server_url(options.url.as_deref())?;
    let mut p = if citus {
        PostgresProvider::connect_flavor(&url, Box::new(crate::citus::Citus::new()))?
    } else {
        PostgresProvider::connect(&url)?
    };
    if let Some(recipe) = &options.twin_recipe {
        p = p.with_declared_recipe(recipe.clone());
    }
    if let Some(extra) = &options.expected_errors {
        p = p.with_expected_errors(extra.clone());
    }
    Ok(Box::new(p))
}
