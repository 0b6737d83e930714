//! [`Catalog`]: the DBMSs a binary offers, as a value. The binary's
//! registry names the descriptions once; the crates below it that read
//! findings (a record names its DBMS, a reproducer is read back with its
//! DBMS's parser) and the runner (a worker process makes its provider)
//! are handed the catalog instead of looking a list up.

use crate::description::DbmsDescription;
use crate::isolation::WorkerProgram;
use crate::{OpenOptions, Workers};
use anyhow::Context;
use lancet_core::{Dialect, ExpectedErrors, Provider};
use std::path::{Path, PathBuf};

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

    /// Worker processes for `dbms` unless `in_process` asks otherwise:
    /// every engine that runs inside lancet gets them; a server needs none.
    pub fn workers(
        &self,
        dbms: &str,
        in_process: bool,
        memory_limit: Option<u64>,
    ) -> anyhow::Result<Option<Workers>> {
        if in_process || self.describe(dbms)?.in_process.is_none() {
            return Ok(None);
        }
        Ok(Some(Workers {
            program: WorkerProgram::current_exe()?,
            memory_limit,
        }))
    }

    /// Creates the provider of `--dbms name`.
    pub fn provider(
        &self,
        name: &str,
        options: &ProviderOptions,
    ) -> anyhow::Result<Box<dyn Provider>> {
        let dbms = self.describe(name)?;
        let expected_errors = match &options.expected_errors {
            Some(path) => Some(load_expected(path)?),
            None => None,
        };
        if let Some((option, _)) = &options.library {
            if dbms.library_option != Some(option.as_str()) {
                let owner = self
                    .descriptions
                    .iter()
                    .find(|d| d.library_option == Some(option.as_str()));
                anyhow::bail!(
                    "{option} applies to --dbms {} only, not '{name}'",
                    owner.map_or("(none)", |d| d.name)
                );
            }
        }
        if options.url.is_some() && dbms.server.is_none() {
            anyhow::bail!(
                "--url is for server DBMSs; {} runs inside lancet and needs none",
                dbms.label
            );
        }
        (dbms.open)(&OpenOptions {
            url: options.url.clone(),
            library: options.library.as_ref().map(|(_, p)| p.clone()),
            expected_errors,
            workers: options.workers.clone(),
            twin_recipe: options.twin_recipe.clone(),
        })
    }
}

/// Settings a provider may take from the command line or a config file.
#[derive(Clone, Debug, Default)]
pub struct ProviderOptions {
    /// Extra expected-error rules (TOML) added to the provider's own.
    pub expected_errors: Option<PathBuf>,
    /// Another build of an in-process engine, and the option that named
    /// it (`--sqlite-lib`): it must be that DBMS's option.
    pub library: Option<(String, PathBuf)>,
    /// Server DBMSs: the server's URL (`--url`, else the DBMS's variable).
    pub url: Option<String>,
    /// In-process engines: run databases in worker processes started this
    /// way (crash isolation); `None` runs the engine inside this process.
    pub workers: Option<Workers>,
    /// See [`OpenOptions::twin_recipe`].
    pub twin_recipe: Option<lancet_core::DeclaredRecipe>,
}

/// Reads an expected-errors file (`--expected-errors`).
pub fn load_expected(path: &Path) -> anyhow::Result<ExpectedErrors> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the expected-errors file {}", path.display()))?;
    ExpectedErrors::from_toml(&text, &path.display().to_string())
}
