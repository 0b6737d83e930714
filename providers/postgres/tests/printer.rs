//! The core printer's PostgreSQL output: the cases every dialect runs (from
//! lancet-testkit), checked with sqlparser's PostgreSQL dialect. Needs no
//! server.

use lancet_postgres::dialect::DIALECT;
use lancet_testkit::printer::Tested;
use sqlparser::dialect::PostgreSqlDialect;

lancet_testkit::printer_suite!(Tested::new(DIALECT, PostgreSqlDialect {}));
