//! `lancet fuzz --config FILE`: a campaign file fills in what the command
//! line left unset.

use crate::FuzzArgs;
use anyhow::bail;
use lancet::registry;

/// Fills in what the command line left unset from `--config`; an option
/// given on the command line (even with its default value) wins.
pub fn apply_campaign(args: &mut FuzzArgs, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    let Some(path) = args.config.clone() else {
        return Ok(());
    };
    let c = lancet::campaign::Campaign::load(&path)?;
    let given = |id: &str| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    let names = registry::names();
    if let Some(d) = c.dbms.filter(|_| !given("dbms")) {
        if !names.contains(&d.as_str()) {
            bail!(
                "{}: unknown dbms '{d}'; lancet knows: {}",
                path.display(),
                names.join(", ")
            );
        }
        args.target.dbms = d;
    }
    if let Some(o) = c.oracle.filter(|_| !given("oracle")) {
        if o != "all" && lancet_oracles::any_by_name(&o).is_none() {
            bail!("{}: unknown oracle '{o}'", path.display());
        }
        args.target.oracle = o;
    }
    if !given("url") {
        args.target.url = args.target.url.take().or(c.url);
    }
    args.target.expected_errors = args.target.expected_errors.take().or(c.expected_errors);
    args.target.twin_recipe = c.twin_recipe;
    args.junit = args.junit.take().or(c.junit);
    args.known = args.known.take().or(c.known);
    // The campaign file gets the same checks as the flags.
    if let Some(n) = c.threads.filter(|n| !(1..=1024).contains(n)) {
        bail!(
            "{}: threads must be from 1 to 1024, not {n}",
            path.display()
        );
    }
    if c.checks_per_database == Some(0) {
        bail!("{}: checks_per_database must be at least 1", path.display());
    }
    if c.reduce_time == Some(0) {
        bail!("{}: reduce_time must be at least 1 second", path.display());
    }
    args.threads = args.threads.or(c.threads);
    args.seed = args.seed.or(c.seed);
    if args.shard.is_none() {
        args.shard_count = args.shard_count.or(c.shard_count);
    }
    if !given("store")
        && matches.value_source("store") != Some(clap::parser::ValueSource::EnvVariable)
    {
        args.store.url = args.store.url.take().or(c.store);
    }
    args.timeout = args.timeout.or(c.timeout);
    args.queries = args.queries.or(c.queries);
    if let Some(n) = c
        .checks_per_database
        .filter(|_| !given("checks_per_database"))
    {
        args.target.checks_per_database = Some(n);
    }
    if let Some(out) = c.out.filter(|_| !given("out")) {
        args.out = out;
    }
    if c.reduce == Some(false) {
        args.no_reduce = true;
    }
    if let Some(t) = c.reduce_time.filter(|_| !given("reduce_time")) {
        args.reduce_time = t;
    }
    if c.reducers == Some(0) {
        bail!("{}: reducers must be at least 1", path.display());
    }
    args.reducers = args.reducers.or(c.reducers);
    if let Some(t) = c.finish_reductions.filter(|_| !given("finish_reductions")) {
        args.finish_reductions = t;
    }
    Ok(())
}
