//! Test oracles, each written once against lancet-core's model so that every
//! provider gets every oracle. Definitions: `shared/design/ORACLES.md`.

mod partition;
pub mod tlp_where;

use lancet_core::Oracle;

/// An oracle and its weight in the `all` rotation.
pub struct Registered {
    pub oracle: Box<dyn Oracle>,
    pub weight: u32,
}

/// Every oracle lancet has, in the order `--help` lists them.
pub fn all() -> Vec<Registered> {
    vec![Registered {
        oracle: Box::new(tlp_where::TlpWhere),
        weight: 1,
    }]
}

/// The names `--oracle` accepts (besides `all`).
pub fn names() -> Vec<&'static str> {
    all().iter().map(|r| r.oracle.name()).collect()
}

/// The oracle named `name`.
pub fn by_name(name: &str) -> Option<Box<dyn Oracle>> {
    all()
        .into_iter()
        .find(|r| r.oracle.name() == name)
        .map(|r| r.oracle)
}
