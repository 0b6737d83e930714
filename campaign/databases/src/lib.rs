//! The databases a run creates and owns ([`databases`]): each made
//! through the provider with a name of this run's token, handed out for a
//! purpose (a check, a replay, a reduction), reused or dropped, with drops
//! that give up in time on a server that will not let go
//! (`databases::drops`); the ledger ([`ledger`]) that lists them on disk
//! as they are created and dropped, so that what a killed run left is
//! known; and `lancet cleanup` ([`cleanup`]), which drops what earlier runs
//! left through the provider's proof of ownership.
//!
//! Its own crate because everything that touches a DBMS on behalf of a run
//! (the runner, replay, reduction, known bugs) takes its databases from
//! here, and none of that belongs below it: it depends on lancet-core only
//! (the `Provider` and `Connection` traits). May not touch: findings,
//! oracles, the runner's threads, a DBMS by name.

pub mod cleanup;
pub mod databases;
pub mod ledger;
