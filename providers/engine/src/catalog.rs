//! [`Catalog`]: the DBMSs a binary offers, as a value. The binary's
//! registry names the descriptions once; the crates below it that read
//! findings (a record names its DBMS, a reproducer is read back with its
//! DBMS's parser) are handed the catalog instead of looking a list up.

use crate::description::DbmsDescription;
use anyhow::Context;
use lancet_core::Dialect;

/// The descriptions of every DBMS lancet knows, the default first.
#[derive(Clone, Copy)]
pub struct Catalog {
    descriptions: &'static [&'static DbmsDescription],
}

impl Catalog {
    /// The catalog of `descriptions` (the registry's list).
    pub const fn new(descriptions: &'static [&'static DbmsDescription]) -> Catalog {
        Catalog { descriptions }
    }

    /// Every description, in the registry's order.
    pub fn descriptions(&self) -> &'static [&'static DbmsDescription] {
        self.descriptions
    }

    /// The `--dbms` names, for the command line and messages.
    pub fn names(&self) -> Vec<&'static str> {
        self.descriptions.iter().map(|d| d.name).collect()
    }

    /// The description of `--dbms name`.
    pub fn describe(&self, name: &str) -> anyhow::Result<&'static DbmsDescription> {
        self.descriptions
            .iter()
            .copied()
            .find(|d| d.name == name)
            .with_context(|| {
                format!(
                    "unknown DBMS '{name}'; lancet knows: {}",
                    self.names().join(", ")
                )
            })
    }

    /// The SQL dialect of a `--dbms` name, as a finding's record names it:
    /// the dialect of the provider that wrote it, if lancet has that provider.
    pub fn dialect_of(&self, dbms: &str) -> Option<Dialect> {
        self.describe(dbms).ok().map(|d| d.dialect)
    }

    /// The sqlparser dialect that reads SQL printed in `dialect`; sqlparser's
    /// generic one for a dialect no DBMS here prints.
    pub fn parser_dialect(&self, dialect: Dialect) -> Box<dyn sqlparser::dialect::Dialect> {
        match self
            .descriptions
            .iter()
            .find(|d| d.dialect.name() == dialect.name())
        {
            Some(d) => (d.parser_dialect)(),
            None => Box::new(sqlparser::dialect::GenericDialect {}),
        }
    }
}
