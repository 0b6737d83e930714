//! The command line's options: one struct per subcommand (and the groups
//! they share), parsed by clap and handed to `commands`.

pub mod library;

use clap::Args;
use lancet::registry;
use std::path::PathBuf;

#[derive(Args)]
#[command(after_help = "\
Each build is a shared library of the DBMS (*.so: libsqlite3, libduckdb) in --libs, ordered by \
its version (tests/sqlite-ladder.sh builds a ladder of SQLite releases; tests/engines.sh links \
DuckDB's). Per file, one mark per build (F fails, \
. passes, - does not run) and where the bug went: the last release it fails on and the first \
it passes on, or that it still fails on the newest. Reproducers fixed by the same release are \
grouped: likely one bug.

Exit status: 0 every reproducer passes on the newest build; 1 at least one still fails there; \
2 bad input (no builds, unreadable reproducers, a DBMS without library builds).")]
pub struct BisectArgs {
    /// Reproducers written by lancet (.sql with its .json record).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The directory of the DBMS's library builds to replay on
    /// (`--sqlite-libs`, its first name, still works).
    #[arg(long, value_name = "DIR", visible_alias = "sqlite-libs")]
    pub libs: PathBuf,
    /// Record each verdict in the findings index next to the reproducer
    /// (index.json, index.md), whose groups then show the release that
    /// fixed each bug.
    #[arg(long)]
    pub update_index: bool,
    /// Write into the record and the header of each reproducer of a logic
    /// bug a release fixed the wrong side that release shows: the queries
    /// whose rows the fix changed.
    #[arg(long)]
    pub update_records: bool,
    #[command(flatten)]
    pub isolation: IsolationArgs,
}

#[derive(Args)]
pub struct EngineWorkerArgs {
    #[arg(long)]
    pub dbms: String,
    #[arg(long)]
    pub library: Option<PathBuf>,
    #[arg(long)]
    pub time_limit_ms: u64,
    #[arg(long)]
    pub memory_limit: Option<u64>,
    #[arg(long)]
    pub progress_file: Option<PathBuf>,
}

/// How SQLite runs: in child processes (the default) or inside lancet.
#[derive(Args, Clone, Default)]
pub struct IsolationArgs {
    /// SQLite: run the library inside lancet's own process instead of in
    /// worker processes. Slightly faster, but a crash of the library ends
    /// the run instead of becoming a finding.
    #[arg(long)]
    pub in_process: bool,
    /// SQLite: the most memory one worker process may map, in MiB; past it
    /// the library's allocations fail.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    pub worker_memory_mib: u64,
}

#[derive(Args)]
#[command(after_help = "\
Reads the ledger (run.ledger) of every run directory under --out whose run is no longer alive, \
and drops each database it lists as created and not dropped, if it still exists with the identity \
recorded at creation (its oid) and is owned by the role of --url. Prints one line per database.")]
pub struct CleanupArgs {
    /// The DBMS whose databases to drop.
    #[arg(long, default_value = registry::DEFAULT_SERVER_DBMS, value_parser = clap::builder::PossibleValuesParser::new(registry::names()))]
    pub dbms: String,
    /// The server [default: $LANCET_PG_URL].
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// The output directory the runs wrote into.
    #[arg(long, value_name = "DIR", default_value = "lancet-out")]
    pub out: PathBuf,
}

/// How to reach the DBMS a reproducer names.
#[derive(Args, Clone)]
pub struct ConnectArgs {
    /// Replay on another build of an in-process engine (`--sqlite-lib`,
    /// `--duckdb-lib`).
    #[command(flatten)]
    pub library: library::LibraryArgs,
    /// PostgreSQL: the server to replay on [default: $LANCET_PG_URL].
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// The campaign file the finding's run read (`fuzz --config`): its
    /// expected errors, its declared twin recipe (whose settings are
    /// knobs) and its server URL, unless given here.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Replay without the planted fault a selftest finding was made with:
    /// on the real DBMS, where such a finding passes.
    #[arg(long)]
    pub no_fault: bool,
    #[command(flatten)]
    pub isolation: IsolationArgs,
}

#[derive(Args)]
#[command(after_help = "\
A reproducer lancet wrote (FILE.sql with its FILE.json record) is reduced by the oracle's own \
relation and written to FILE.reduced.sql/.json. SQL from anywhere needs --dbms and a check: \
--check-cmd 'CMD' (exits 0 while the file is interesting; the candidate is {file} or \
$LANCET_REDUCE_FILE) or --check-differs [I,J] (statements I and J, 1-based, default the last \
two, are queries whose results must keep differing).")]
pub struct ReduceArgs {
    /// The reproducer (.sql or .json) or SQL file to reduce.
    pub file: PathBuf,
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// The DBMS a foreign SQL file is for (its dialect, and where --check-differs runs it).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(registry::names()))]
    pub dbms: Option<String>,
    /// A shell command that exits 0 while the candidate file is still interesting.
    #[arg(long, value_name = "CMD", conflicts_with = "check_differs")]
    pub check_cmd: Option<String>,
    /// Two statements (1-based, `I,J`) whose results must keep differing; default the last two.
    #[arg(long, value_name = "I,J", num_args = 0..=1, default_missing_value = "last",
          value_parser = parse_compared)]
    pub check_differs: Option<Compared>,
    /// Time limit in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    pub time_limit: u64,
    /// Where to write the reduced file [default: beside FILE, as FILE.reduced.sql].
    #[arg(long, value_name = "PATH")]
    pub out: Option<PathBuf>,
}

/// The two statements `--check-differs` compares.
#[derive(Clone, Copy, Debug)]
pub enum Compared {
    /// The last two statements of the file.
    Last,
    /// Statements `I` and `J` (0-based here; 1-based on the command line).
    Pair(usize, usize),
}

pub fn parse_compared(spec: &str) -> Result<Compared, String> {
    if spec == "last" {
        return Ok(Compared::Last);
    }
    let number = |s: &str| match s.trim().parse::<usize>() {
        Ok(i) if i >= 1 => Ok(i - 1),
        _ => Err(format!(
            "two statement numbers from 1 are needed, as `I,J`; got '{spec}'"
        )),
    };
    match spec.split(',').collect::<Vec<_>>().as_slice() {
        [a, b] => Ok(Compared::Pair(number(a)?, number(b)?)),
        _ => Err(format!(
            "two statement numbers are needed, as `I,J`; got '{spec}'"
        )),
    }
}

#[derive(Args)]
pub struct ReplayArgs {
    /// Reproducers written by lancet (.sql with its .json record, or the .json).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub connect: ConnectArgs,
}

#[derive(Args)]
pub struct PushArgs {
    /// The store (required) and the run directories to push to it.
    #[command(flatten)]
    pub source: StoreSource,
}

/// `--store`: `fuzz`, `push`, `findings` and `report` name a store alike.
#[derive(Args)]
pub struct StoreArg {
    /// The findings store, shared by runs and shards: an SQLite file (PATH)
    /// or a PostgreSQL database (postgres://USER@HOST:PORT/DB). A run's
    /// findings are on its disk first; a store that is away is retried
    /// without stopping the run.
    #[arg(
        long = "store",
        id = "store",
        value_name = "URL",
        env = "LANCET_STORE_URL",
        hide_env_values = true
    )]
    pub url: Option<String>,
}

/// What `findings` and `report` read: a store, run directories, or both
/// (the directories are pushed to the store first).
#[derive(Args)]
pub struct StoreSource {
    #[command(flatten)]
    pub store: StoreArg,
    /// Run directories, or output directories holding runs.
    #[arg(value_name = "DIR")]
    pub runs: Vec<PathBuf>,
}

#[derive(Args)]
pub struct FindingsArgs {
    #[command(flatten)]
    pub source: StoreSource,
    /// Print the smallest reproducer of the signature, or of the bug, with
    /// this id (or a prefix of it) instead of the list.
    #[arg(long, value_name = "BUG-OR-SIGNATURE")]
    pub show: Option<String>,
}

#[derive(Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub source: StoreSource,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE", default_value = "lancet-report.html")]
    pub output: PathBuf,
}

/// Options shared by `fuzz` and `bench`: what to test.
#[derive(Args, Clone)]
pub struct TargetArgs {
    /// The DBMS to test.
    #[arg(long, default_value = registry::DEFAULT_DBMS, value_parser = clap::builder::PossibleValuesParser::new(registry::names()))]
    pub dbms: String,
    /// The oracle to use, or `all` for a weighted rotation of every oracle.
    #[arg(long, default_value = "all", value_parser = oracle_names(), long_help = oracle_help())]
    pub oracle: String,
    /// Extra expected-error rules (TOML, see configs/expected-errors/),
    /// added to the provider's built-in ones.
    #[arg(long, value_name = "FILE")]
    pub expected_errors: Option<PathBuf>,
    /// Another build of an in-process engine (`--sqlite-lib`,
    /// `--duckdb-lib`).
    #[command(flatten)]
    pub library: library::LibraryArgs,
    /// PostgreSQL: the server, as postgres://USER[:PASSWORD]@HOST:PORT/DATABASE
    /// [default: $LANCET_PG_URL]. lancet creates and drops only its own lancet_* databases.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Checks per database before a new database is generated [default: 500
    /// for SQLite; 2000 for server DBMSs, where creating and dropping a
    /// database costs as much as hundreds of checks].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub checks_per_database: Option<u64>,
    /// Plant a fault that perturbs results (for testing lancet itself).
    #[arg(long, hide = true, value_name = "FAULT")]
    pub inject_fault: Option<String>,
    #[command(flatten)]
    pub isolation: IsolationArgs,
    /// The campaign file's `[twin_recipe]`, for the provider.
    #[arg(skip)]
    pub twin_recipe: Option<lancet_core::DeclaredRecipe>,
}

/// `lancet fuzz --help`'s closing text: what a CI gate reads.
const FUZZ_EXIT_STATUS: &str = "\
Exit status:
  0  no new findings, and the run did what was asked (findings of known open bugs, --known, and
     known bugs that are fixed do not count)
  1  at least one new finding was written
  2  bad input: options, campaign file, URL, paths, known-bug reproducers; no fuzzing ran
  3  no new findings, but lancet could not finish: a worker stopped on an error, or a signal
     (Ctrl-C, SIGTERM, SIGHUP) came before the run's end (--timeout, --queries); a run with
     neither ends by a signal, with 0
A second signal quits at once with 130, without a summary or JUnit report.";

#[derive(Args)]
#[command(after_help = FUZZ_EXIT_STATUS)]
pub struct FuzzArgs {
    /// A campaign file (TOML: dbms, url, oracle, threads, seed, timeout, queries, ...;
    /// see configs/). Options on the command line win over it.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub target: TargetArgs,
    /// Worker threads, each with its own databases [default: number of CPUs].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// The run's seed; with --thread and --database it regenerates one database exactly.
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<u64>,
    /// Stop after this many checks (all threads together).
    #[arg(long, value_name = "N")]
    pub queries: Option<u64>,
    /// Output directory; a run writes into <DIR>/<run-id>/ (findings/, statements/, summary.json).
    #[arg(long, value_name = "DIR", default_value = "lancet-out")]
    pub out: PathBuf,
    /// Also write the run summary as JSON to this file.
    #[arg(long, value_name = "PATH")]
    pub summary_json: Option<PathBuf>,
    /// Write every statement of every database to <run>/statements/.
    #[arg(long)]
    pub log_statements: bool,
    /// Run one shard of a campaign split over several processes or
    /// machines: I (0-based) of N. Shards of one --seed never generate the
    /// same database; a finding regenerates from its seed, thread and
    /// database alone.
    #[arg(long, value_name = "I/N", conflicts_with = "shard_count")]
    pub shard: Option<String>,
    /// As a pod of a Kubernetes Indexed Job with N completions: run shard
    /// $JOB_COMPLETION_INDEX of N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100000))]
    pub shard_count: Option<u32>,
    #[command(flatten)]
    pub store: StoreArg,
    /// Regenerate only this thread's database (needs --seed and --database).
    #[arg(long, value_name = "T", requires_all = ["seed", "database"])]
    pub thread: Option<u32>,
    /// Regenerate only this database of --thread (needs --seed and --thread).
    #[arg(long, value_name = "K", requires_all = ["seed", "thread"])]
    pub database: Option<u64>,
    /// Seconds between status lines; 0 for none.
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    pub status_interval: u64,
    /// Seconds between throughput samples (<run>/samples.jsonl, the
    /// findings store and `lancet report` plot them).
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub sample_interval: u64,
    /// Keep findings as found: do not reduce them (on a separate thread) as they come.
    #[arg(long)]
    pub no_reduce: bool,
    /// Flood control: after this many findings of one signature, further
    /// ones are only counted in the index (not written, confirmed or
    /// reduced), so that one frequent bug neither slows the run nor fills
    /// the disk. 0 writes every finding.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub flood_limit: u64,
    /// Time limit for reducing one finding.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub reduce_time: u64,
    /// Reducer threads beside the workers [default: the workers' number,
    /// at most the cores].
    #[arg(long, value_name = "N")]
    pub reducers: Option<u32>,
    /// When the run ends by --timeout or --queries, how long the reducers
    /// may go on with the findings still queued before the summary (an
    /// interrupt ends them at once; 0 leaves the queue as it is).
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub finish_reductions: u64,
    /// Write a JUnit XML report here at the end of the run (a test case per
    /// oracle, per new bug, per known bug); its directory must exist.
    #[arg(long, value_name = "PATH")]
    pub junit: Option<PathBuf>,
    /// Reproducers of known open bugs (.sql with .json, as in a run's findings/),
    /// replayed at start-up: findings of those still open do not fail the run;
    /// those that pass are reported fixed.
    #[arg(long, value_name = "DIR")]
    pub known: Option<PathBuf>,
    /// --oracle txn and txn-stress: only these isolation levels (read-uncommitted,
    /// read-committed, repeatable-read, serializable), comma-separated [default: every
    /// level lancet models for the DBMS].
    #[arg(long, value_name = "LEVEL,LEVEL", value_delimiter = ',')]
    pub txn_levels: Vec<String>,
    /// --oracle txn: report a documented deviation of a level from the standard
    /// (InnoDB's REPEATABLE READ writes that see newer rows, rows skipped after a
    /// lock wait, PostgreSQL's READ COMMITTED re-check) as a finding of its own
    /// kind, `deviation-NAME@LEVEL` [default: allowed, counted in the summary].
    #[arg(long)]
    pub txn_strict: bool,
}

#[derive(Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub target: TargetArgs,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    pub seconds: u64,
    /// Thread counts to measure, comma-separated.
    #[arg(long, default_value = "1,2", value_delimiter = ',', value_name = "N,N",
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Vec<u32>,
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
    /// Feed each measurement's run to this findings store, as `fuzz
    /// --store` does (to measure what the store costs).
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
}

#[derive(Args)]
pub struct SelftestArgs {
    /// The DBMS to test.
    #[arg(long, default_value = registry::DEFAULT_DBMS, value_parser = clap::builder::PossibleValuesParser::new(registry::names()))]
    pub dbms: String,
    /// Extra expected-error rules (TOML, see configs/expected-errors/),
    /// added to the provider's built-in ones.
    #[arg(long, value_name = "FILE")]
    pub expected_errors: Option<PathBuf>,
    /// PostgreSQL: the server [default: $LANCET_PG_URL].
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// Output directory; the findings of the planted faults go to <DIR>/<run-id>/<oracle>/.
    #[arg(long, value_name = "DIR", default_value = "lancet-out")]
    pub out: PathBuf,
    /// Checks each oracle may take to catch its fault.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    pub max_checks: u64,
    #[command(flatten)]
    pub isolation: IsolationArgs,
    #[arg(long, default_value_t = 1, value_name = "S")]
    pub seed: u64,
}

/// `--oracle`'s values: `all` and every oracle.
pub fn oracle_names() -> clap::builder::PossibleValuesParser {
    let mut names = vec!["all"];
    names.extend(lancet_oracles::names());
    clap::builder::PossibleValuesParser::new(names)
}

/// `--oracle`'s long help: each oracle with its one line.
pub fn oracle_help() -> String {
    let mut s =
        String::from("The oracle to use, or `all` for a weighted rotation of every oracle:\n");
    for r in lancet_oracles::all() {
        s.push_str(&format!(
            "  {:<12} {}\n",
            r.oracle.name(),
            r.oracle.description()
        ));
    }
    s
}
