//! `lancet`: the command line. A thin layer over the library: it parses
//! options, builds the provider and oracles, and hands them to the runner.

mod args;
mod commands;

use args::*;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lancet",
    version,
    about = "Finds logic bugs in SQL database systems: queries that silently return wrong results",
    after_help = "Exit status: 0 no new findings; 1 new findings were written; 2 bad input, or lancet \
could not start (nothing ran); 3 no new findings, but lancet could not finish (a worker stopped on an \
error, a run with a limit was interrupted), or an interrupted selftest or a cleanup that could not drop \
everything. Findings of known open bugs (`fuzz --known`) are not new."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate databases and queries and check the oracles' relations.
    Fuzz(Box<FuzzArgs>),
    /// Measure throughput (checks/s) at 1 and 2 threads.
    Bench(BenchArgs),
    /// Prove every oracle works here: each must catch a planted fault.
    Selftest(SelftestArgs),
    /// Shrink a reproducer to the few statements that still show the bug.
    Reduce(ReduceArgs),
    /// Re-run reproducers: "still fails" or "passes" for each (exit 1 if any still fails).
    Replay(ReplayArgs),
    /// Drop the databases that earlier, killed runs left on a server (from their ledgers).
    Cleanup(CleanupArgs),
    /// Replay reproducers on every SQLite build in a directory, oldest first:
    /// where each starts to pass, and which were fixed by the same release.
    Bisect(BisectArgs),
    /// Feed a findings store from run directories (runs made without
    /// --store, or whose store was away at their end).
    Push(PushArgs),
    /// List the bugs in a findings store (or run directories), each with
    /// its signatures, counts across runs and shards, first and last seen,
    /// and the smallest reproducer.
    Findings(FindingsArgs),
    /// Write a campaign report: one self-contained HTML file with plots
    /// (throughput and findings over time per shard, oracles, groups) and
    /// the bugs, each with its signatures and their reproducers.
    Report(ReportArgs),
    /// Internal: serve one SQLite database at a time over stdin/stdout, for
    /// the crash isolation of engines that run inside lancet.
    #[command(name = "__engine-worker", hide = true)]
    EngineWorker(EngineWorkerArgs),
    /// Internal: run whole databases for a worker thread of a campaign
    /// (crash isolation of fuzzing; see `runner::child`).
    #[command(name = "__database-runner", hide = true)]
    DatabaseRunner,
}

fn main() -> ExitCode {
    lancet_engine::isolation::keep_freed_memory();
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
    use clap::{CommandFactory, FromArgMatches};
    let matches = Cli::command().get_matches();
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Fuzz(mut args) => {
            let sub = matches
                .subcommand_matches("fuzz")
                .expect("the fuzz subcommand");
            commands::campaign::apply_campaign(&mut args, sub).and_then(|()| commands::fuzz(*args))
        }
        Command::Bench(args) => commands::bench(args),
        Command::Selftest(args) => commands::selftest(args),
        Command::Reduce(args) => commands::reduce(args),
        Command::Replay(args) => commands::replay(args),
        Command::Cleanup(args) => commands::cleanup(args),
        Command::Bisect(args) => commands::bisect(args),
        Command::Push(args) => commands::push(args),
        Command::Findings(args) => commands::findings(args),
        Command::Report(args) => commands::report(args),
        Command::EngineWorker(args) => commands::engine_worker(&args).map(|()| ExitCode::SUCCESS),
        Command::DatabaseRunner => {
            lancet::runner::child::serve(&lancet::registry::CATALOG).map(|()| ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("lancet: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
