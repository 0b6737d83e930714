//! The core printer's MySQL output: the cases every dialect runs (from
//! lancet-testkit), checked with sqlparser's MySQL dialect. Needs no
//! server.

use lancet_mysql::dialect::DIALECT;
use lancet_testkit::printer::Tested;
use lancet_testkit::standard::STANDARD;
use sqlparser::dialect::MySqlDialect;

lancet_testkit::printer_suite!(Tested::new(DIALECT, MySqlDialect {}));

#[test]
fn dialect_handles_compare_and_print_by_name() {
    use std::collections::HashSet;
    let again = lancet_core::Dialect::new(&lancet_mysql::dialect::MySql);
    assert_eq!(DIALECT, again);
    assert_ne!(DIALECT, STANDARD);
    assert_eq!(DIALECT.name(), "mysql");
    assert_eq!(format!("{DIALECT:?}"), "Dialect(\"mysql\")");
    assert_eq!(HashSet::from([DIALECT, again, STANDARD]).len(), 2);
}
