//! MySQL and MariaDB as the lancet binary offers them: `--dbms mysql`, a
//! server reached by URL (which of the two is read from the server).

use crate::MySqlProvider;
use lancet_core::Provider;
use lancet_engine::{DbmsDescription, OpenOptions, ServerAccess};

/// The environment variable that gives the server's URL when `--url` does not.
pub const URL_VARIABLE: &str = "LANCET_MYSQL_URL";

/// `--dbms mysql`.
pub const MYSQL: DbmsDescription = DbmsDescription {
    name: "mysql",
    label: "MySQL",
    server: Some(ServerAccess {
        url_example: "mysql://USER:PASSWORD@HOST:PORT/DATABASE",
        url_variable: URL_VARIABLE,
        url_note: None,
    }),
    in_process: None,
    library_option: None,
    dialect: crate::dialect::DIALECT,
    parser_dialect: || Box::new(sqlparser::dialect::MySqlDialect {}),
    checks_per_database: 2_000,
    open,
};

fn open(options: &OpenOptions) -> anyhow::Result<Box<dyn Provider>> {
    let url = MYSQL.server_url(options.url.as_deref())?;
    let mut p = MySqlProvider::connect(&url)?;
    if let Some(extra) = &options.expected_errors {
        p = p.with_expected_errors(extra.clone());
    }
    Ok(Box::new(p))
}
