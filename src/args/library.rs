//! `--X-lib PATH`: another build of an engine that runs inside lancet, one
//! option per DBMS that has one (the registry's `library_option`s:
//! `--sqlite-lib`, `--duckdb-lib`), so that a new engine's option appears
//! without a line here. The registry checks that the option given is the
//! one of `--dbms`.

use clap::{Arg, ArgMatches, Command};
use lancet::registry;
use std::path::PathBuf;

/// The engine build a command line names, with the option that named it.
#[derive(Clone, Debug, Default)]
pub struct LibraryArgs {
    pub given: Option<(String, PathBuf)>,
}

impl LibraryArgs {
    /// The build at `path`, as `option` names it (bisect's ladder).
    pub fn new(option: &str, path: PathBuf) -> LibraryArgs {
        LibraryArgs {
            given: Some((option.to_string(), path)),
        }
    }
}

/// Each option's argument id (its name without dashes) and the label of
/// its DBMS.
fn options() -> impl Iterator<Item = (&'static str, &'static str)> {
    registry::DBMS.iter().filter_map(|d| {
        let option = d.library_option?;
        Some((option.strip_prefix("--").unwrap_or(option), d.label))
    })
}

impl clap::FromArgMatches for LibraryArgs {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let given = options().find_map(|(id, _)| {
            matches
                .get_one::<PathBuf>(id)
                .map(|p| (format!("--{id}"), p.clone()))
        });
        Ok(LibraryArgs { given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Args for LibraryArgs {
    fn augment_args(cmd: Command) -> Command {
        let ids: Vec<&'static str> = options().map(|(id, _)| id).collect();
        options().fold(cmd, |cmd, (id, label)| {
            let others: Vec<&'static str> = ids.iter().copied().filter(|o| *o != id).collect();
            cmd.arg(
                Arg::new(id)
                    .long(id)
                    .value_name("PATH")
                    .value_parser(clap::value_parser!(PathBuf))
                    .conflicts_with_all(others)
                    .help(format!(
                        "{label}: use this build of the engine, a shared library (your own \
                         build, an older release), instead of the default one"
                    )),
            )
        })
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}
