//! An oracle of either kind the runner drives, so that one list holds
//! every oracle (`lancet_oracles::all`): one whose checks are queries on
//! the session a campaign populates ([`Oracle`]), or one that opens
//! sessions of its own ([`SessionsOracle`]). A new oracle of either kind
//! is a new entry of that list; only a new kind of check would touch this
//! type.

use crate::fault::Fault;
use crate::oracle::Oracle;
use crate::sessions_oracle::SessionsOracle;

/// An oracle of either kind.
pub enum AnyOracle {
    /// Queries on the campaign's populated session, in a weighted rotation
    /// with the other query oracles.
    Queries(Box<dyn Oracle>),
    /// Sessions of its own on each database; runs alone.
    Sessions(Box<dyn SessionsOracle>),
}

impl AnyOracle {
    /// The `--oracle` name.
    pub fn name(&self) -> &'static str {
        match self {
            AnyOracle::Queries(o) => o.name(),
            AnyOracle::Sessions(o) => o.name(),
        }
    }

    /// One line for `--help`.
    pub fn description(&self) -> &'static str {
        match self {
            AnyOracle::Queries(o) => o.description(),
            AnyOracle::Sessions(o) => o.description(),
        }
    }

    /// Every planted fault it is known to catch.
    pub fn faults(&self) -> Vec<Fault> {
        match self {
            AnyOracle::Queries(o) => o.faults(),
            AnyOracle::Sessions(o) => o.faults(),
        }
    }
}
