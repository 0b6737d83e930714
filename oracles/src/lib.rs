//! Test oracles, each written once against lancet-core's model so that every
//! provider gets every oracle. Definitions: `docs/oracles.md`.
//!
//! Owns: the oracles of both kinds (what a test relation builds, runs and
//! compares), listed once in [`all`]: query oracles and those that open
//! sessions of their own (the transaction oracle, [`txn`], and its stress
//! rounds, [`txn_stress`]), and their planted faults. Depends on
//! lancet-core only. May not touch: a
//! DBMS by name or any provider crate, findings on disk, the runner's
//! threads or processes; an oracle sees a DBMS only through core's traits.

pub mod coddtest;
pub mod dist_vs_local;
pub mod dqe;
pub mod eet;
mod file_finding;
mod greedy;
pub mod knobs;
pub mod maker;
pub mod norec;
mod partition;
pub mod perf;
pub mod pqs;
pub mod stepwise;
pub mod tlp_aggregate;
pub mod tlp_distinct;
pub mod tlp_group_by;
pub mod tlp_having;
pub mod tlp_where;
pub mod transform;
mod twin_query;
pub mod twins;
pub mod txn;
pub mod txn_stress;

use lancet_core::fault::Fault;
use lancet_core::{AnyOracle, Oracle};

/// An oracle and its weight in the `all` rotation (0: not in it).
pub struct Registered {
    pub oracle: AnyOracle,
    pub weight: u32,
}

/// Every oracle lancet has, in the order `--help` lists them: the query
/// oracles of the `all` rotation, then those that open sessions of their
/// own and run alone.
pub fn all() -> Vec<Registered> {
    let entry = |oracle: Box<dyn Oracle>, weight| Registered {
        oracle: AnyOracle::Queries(oracle),
        weight,
    };
    vec![
        entry(Box::new(tlp_where::TlpWhere), 3),
        entry(Box::new(tlp_distinct::TlpDistinct), 1),
        entry(Box::new(tlp_group_by::TlpGroupBy), 1),
        entry(Box::new(tlp_having::TlpHaving), 1),
        entry(Box::new(tlp_aggregate::TlpAggregate), 2),
        entry(Box::new(norec::NoRec), 3),
        entry(Box::new(pqs::Pqs), 2),
        entry(Box::new(dist_vs_local::DistVsLocal), 3),
        entry(Box::new(knobs::Knobs), 2),
        entry(Box::new(perf::Perf), 1),
        entry(Box::new(transform::Transform), 3),
        entry(Box::new(stepwise::Stepwise), 2),
        entry(Box::new(coddtest::CoddTest), 2),
        entry(Box::new(dqe::Dqe), 2),
        entry(Box::new(eet::Eet), 3),
        entry(Box::new(twins::Twins), 2),
        Registered {
            oracle: AnyOracle::Sessions(Box::new(txn::Txn)),
            weight: 0,
        },
        Registered {
            oracle: AnyOracle::Sessions(Box::new(txn_stress::TxnStress)),
            weight: 0,
        },
    ]
}

/// The names `--oracle` accepts (besides `all`), of either kind.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|r| r.oracle.name()).collect()
}

/// The names of the query oracles (those of the `all` rotation and any
/// other that checks queries on the campaign's session).
pub fn query_names() -> Vec<&'static str> {
    all()
        .iter()
        .filter(|r| matches!(r.oracle, AnyOracle::Queries(_)))
        .map(|r| r.oracle.name())
        .collect()
}

/// The oracle named `name`, of either kind.
pub fn any_by_name(name: &str) -> Option<AnyOracle> {
    all()
        .into_iter()
        .find(|r| r.oracle.name() == name)
        .map(|r| r.oracle)
}

/// The query oracle named `name` (`None` for an oracle of the other
/// kind, which has no queries to replay).
pub fn by_name(name: &str) -> Option<Box<dyn Oracle>> {
    match any_by_name(name)? {
        AnyOracle::Queries(o) => Some(o),
        AnyOracle::Sessions(_) => None,
    }
}

/// Every planted fault lancet knows: core's generic ones and each
/// oracle's, once each, in that order (`--inject-fault` names one; a
/// finding's record names the fault it was made under).
pub fn faults() -> Vec<Fault> {
    let mut out = lancet_core::fault::generic_faults();
    for f in all().into_iter().flat_map(|r| r.oracle.faults()) {
        if !out.iter().any(|o| o.name() == f.name()) {
            out.push(f);
        }
    }
    out
}

/// The planted fault named `name`, if lancet has one.
pub fn fault(name: &str) -> Option<Fault> {
    faults().into_iter().find(|f| f.name() == name)
}
