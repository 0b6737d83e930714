//! `lancet`: the command line. A thin layer over the library: it parses
//! options, builds the provider and oracles, and hands them to the runner.

use anyhow::{bail, Context};
use clap::{Args, Parser, Subcommand};
use lancet::databases::{Databases, Ledger, RunToken};
use lancet::findings::FindingWriter;
use lancet::registry::{self, ProviderOptions};
use lancet::runner::{self, OracleSet, RunOptions, RunSetup};
use lancet_core::fault::Fault;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "lancet",
    version,
    about = "Finds logic bugs in SQL database systems: queries that silently return wrong results",
    after_help = "Exit status: 0 no findings; 1 findings were written; 2 bad input, or lancet could not \
start (nothing ran); 3 no findings, but the run ended early on an error (a worker stopped; the summary \
says what failed), or an interrupted selftest or a cleanup that could not drop everything."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate databases and queries and check the oracles' relations.
    Fuzz(FuzzArgs),
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
}

#[derive(Args)]
#[command(after_help = "\
Reads the ledger (run.ledger) of every run directory under --out whose run is no longer alive, \
and drops each database it lists as created and not dropped, if it still exists with the identity \
recorded at creation (its oid) and is owned by the role of --url. Prints one line per database.")]
struct CleanupArgs {
    /// The DBMS whose databases to drop.
    #[arg(long, default_value = "postgres", value_parser = clap::builder::PossibleValuesParser::new(registry::DBMS_NAMES))]
    dbms: String,
    /// The server [default: $LANCET_PG_URL].
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// The output directory the runs wrote into.
    #[arg(long, value_name = "DIR", default_value = "lancet-out")]
    out: PathBuf,
}

/// How to reach the DBMS a reproducer names.
#[derive(Args, Clone)]
struct ConnectArgs {
    /// SQLite: replay on this libsqlite3 shared library instead of the bundled SQLite.
    #[arg(long, value_name = "PATH")]
    sqlite_lib: Option<PathBuf>,
    /// PostgreSQL: the server to replay on [default: $LANCET_PG_URL].
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Replay without the planted fault a selftest finding was made with:
    /// on the real DBMS, where such a finding passes.
    #[arg(long)]
    no_fault: bool,
}

#[derive(Args)]
#[command(after_help = "\
A reproducer lancet wrote (FILE.sql with its FILE.json record) is reduced by the oracle's own \
relation and written to FILE.reduced.sql/.json. SQL from anywhere needs --dbms and a check: \
--check-cmd 'CMD' (exits 0 while the file is interesting; the candidate is {file} or \
$LANCET_REDUCE_FILE) or --check-differs [I,J] (statements I and J, 1-based, default the last \
two, are queries whose results must keep differing).")]
struct ReduceArgs {
    /// The reproducer (.sql or .json) or SQL file to reduce.
    file: PathBuf,
    #[command(flatten)]
    connect: ConnectArgs,
    /// The DBMS a foreign SQL file is for (its dialect, and where --check-differs runs it).
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(registry::DBMS_NAMES))]
    dbms: Option<String>,
    /// A shell command that exits 0 while the candidate file is still interesting.
    #[arg(long, value_name = "CMD", conflicts_with = "check_differs")]
    check_cmd: Option<String>,
    /// Two statements (1-based, `I,J`) whose results must keep differing; default the last two.
    #[arg(long, value_name = "I,J", num_args = 0..=1, default_missing_value = "last")]
    check_differs: Option<String>,
    /// Time limit in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    time_limit: u64,
    /// Where to write the reduced file [default: beside FILE, as FILE.reduced.sql].
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct ReplayArgs {
    /// Reproducers written by lancet (.sql with its .json record, or the .json).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    connect: ConnectArgs,
}

/// Options shared by `fuzz` and `bench`: what to test.
#[derive(Args, Clone)]
struct TargetArgs {
    /// The DBMS to test.
    #[arg(long, default_value = "sqlite", value_parser = clap::builder::PossibleValuesParser::new(registry::DBMS_NAMES))]
    dbms: String,
    /// The oracle to use, or `all` for a weighted rotation of every oracle.
    #[arg(long, default_value = "all", value_parser = oracle_names(), long_help = oracle_help())]
    oracle: String,
    /// Extra expected-error rules (TOML, see configs/expected-errors/),
    /// added to the provider's built-in ones.
    #[arg(long, value_name = "FILE")]
    expected_errors: Option<PathBuf>,
    /// SQLite: test this libsqlite3 shared library (a build of your own, an
    /// older release) instead of the bundled SQLite.
    #[arg(long, value_name = "PATH")]
    sqlite_lib: Option<PathBuf>,
    /// PostgreSQL: the server, as postgres://USER[:PASSWORD]@HOST:PORT/DATABASE
    /// [default: $LANCET_PG_URL]. lancet creates and drops only its own lancet_* databases.
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Checks per database before a new database is generated.
    #[arg(long, default_value_t = 500, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    checks_per_database: u64,
    /// Plant a fault that perturbs results (for testing lancet itself).
    #[arg(long, hide = true, value_name = "FAULT")]
    inject_fault: Option<String>,
}

#[derive(Args)]
struct FuzzArgs {
    /// A campaign file (TOML: dbms, url, oracle, threads, seed, timeout, queries, ...;
    /// see configs/). Options on the command line win over it.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    target: TargetArgs,
    /// Worker threads, each with its own databases [default: number of CPUs].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// The run's seed; with --thread and --database it regenerates one database exactly.
    #[arg(long, value_name = "S")]
    seed: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<u64>,
    /// Stop after this many checks (all threads together).
    #[arg(long, value_name = "N")]
    queries: Option<u64>,
    /// Output directory; a run writes into <DIR>/<run-id>/ (findings/, statements/, summary.json).
    #[arg(long, value_name = "DIR", default_value = "lancet-out")]
    out: PathBuf,
    /// Also write the run summary as JSON to this file.
    #[arg(long, value_name = "PATH")]
    summary_json: Option<PathBuf>,
    /// Write every statement of every database to <run>/statements/.
    #[arg(long)]
    log_statements: bool,
    /// Regenerate only this thread's database (needs --seed and --database).
    #[arg(long, value_name = "T", requires_all = ["seed", "database"])]
    thread: Option<u32>,
    /// Regenerate only this database of --thread (needs --seed and --thread).
    #[arg(long, value_name = "K", requires_all = ["seed", "thread"])]
    database: Option<u64>,
    /// Seconds between status lines; 0 for none.
    #[arg(long, value_name = "SECONDS", default_value_t = 5)]
    status_interval: u64,
    /// Keep findings as found: do not reduce them (on a separate thread) as they come.
    #[arg(long)]
    no_reduce: bool,
    /// Time limit for reducing one finding.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    reduce_time: u64,
}

#[derive(Args)]
struct BenchArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 10, value_name = "SECONDS")]
    seconds: u64,
    /// Thread counts to measure, comma-separated.
    #[arg(long, default_value = "1,2", value_delimiter = ',', value_name = "N,N",
          value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Vec<u32>,
    #[arg(long, default_value_t = 1, value_name = "S")]
    seed: u64,
}

#[derive(Args)]
struct SelftestArgs {
    /// The DBMS to test.
    #[arg(long, default_value = "sqlite", value_parser = clap::builder::PossibleValuesParser::new(registry::DBMS_NAMES))]
    dbms: String,
    /// Extra expected-error rules (TOML, see configs/expected-errors/),
    /// added to the provider's built-in ones.
    #[arg(long, value_name = "FILE")]
    expected_errors: Option<PathBuf>,
    /// PostgreSQL: the server [default: $LANCET_PG_URL].
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Output directory; the findings of the planted faults go to <DIR>/<run-id>/<oracle>/.
    #[arg(long, value_name = "DIR", default_value = "lancet-out")]
    out: PathBuf,
    /// Checks each oracle may take to catch its fault.
    #[arg(long, default_value_t = 2000, value_name = "N")]
    max_checks: u64,
    #[arg(long, default_value_t = 1, value_name = "S")]
    seed: u64,
}

fn oracle_names() -> clap::builder::PossibleValuesParser {
    let mut names = vec!["all"];
    names.extend(lancet_oracles::names());
    clap::builder::PossibleValuesParser::new(names)
}

fn oracle_help() -> String {
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

fn oracle_set(name: &str) -> anyhow::Result<OracleSet> {
    if name == "all" {
        return Ok(OracleSet::new(
            lancet_oracles::all()
                .into_iter()
                .map(|r| (r.oracle, r.weight))
                .collect(),
        ));
    }
    match lancet_oracles::by_name(name) {
        Some(o) => Ok(OracleSet::new(vec![(o, 1)])),
        None => bail!("unknown oracle '{name}'"),
    }
}

fn make_provider(t: &TargetArgs) -> anyhow::Result<Arc<dyn lancet_core::Provider>> {
    registry::provider(
        &t.dbms,
        &ProviderOptions {
            expected_errors: t.expected_errors.clone(),
            sqlite_lib: t.sqlite_lib.clone(),
            url: t.url.clone(),
        },
    )
    .map(Arc::from)
}

fn fault(name: &Option<String>) -> anyhow::Result<Option<Fault>> {
    match name {
        None => Ok(None),
        Some(n) => Fault::parse(n)
            .map(Some)
            .with_context(|| format!("unknown fault '{n}'")),
    }
}

/// Ctrl-C, SIGTERM and SIGHUP (what systemd, Docker, `timeout`, Kubernetes
/// and CI cancellation send) stop the run after the current checks, and
/// the run ends with its summary; a second signal exits at once. Returns a
/// flag that stays set after the first, for commands that run several
/// measurements (the runner itself also sets `stop` on a timeout).
fn install_interrupt(stop: Arc<AtomicBool>) -> anyhow::Result<Arc<AtomicBool>> {
    let presses = AtomicU32::new(0);
    let interrupted = Arc::new(AtomicBool::new(false));
    let flag = interrupted.clone();
    ctrlc::set_handler(move || {
        flag.store(true, Ordering::SeqCst);
        if presses.fetch_add(1, Ordering::SeqCst) == 0 {
            eprintln!(
                "\nlancet: stopping: the summary follows within {} s (findings so far are on disk); \
                 signal again to quit at once",
                lancet::runner::STOP_GRACE.as_secs() + 6
            );
            stop.store(true, Ordering::SeqCst);
        } else {
            eprintln!("\nlancet: quitting at once, without a summary; findings so far are on disk");
            std::process::exit(130);
        }
    })
    .context("cannot install the signal handler")?;
    Ok(interrupted)
}

/// Run options with no limits, logs or faults: callers set what they need.
fn plain_options(
    run_id: String,
    seed: u64,
    threads: u32,
    checks_per_database: u64,
    run_dir: &std::path::Path,
) -> RunOptions {
    RunOptions {
        run_id,
        seed,
        threads,
        timeout: None,
        max_checks: None,
        checks_per_database,
        only_database: None,
        log_dir: None,
        unconfirmed_dir: run_dir.join("unconfirmed"),
        status_interval: None,
        stop_after_findings: None,
        reduce: None,
    }
}

fn default_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (nanos ^ (u64::from(std::process::id()) << 32)) % 1_000_000_000_000
}

/// Checks before anything runs that the summary can be written where
/// `--summary-json` says (a missing directory would otherwise fail only
/// after the whole run).
fn check_writable(path: &std::path::Path) -> anyhow::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(drop)
        .with_context(|| format!("cannot write the summary to {}", path.display()))
}

/// Creates a run's directory and its ledger, after saying what killed
/// runs left in the same output directory.
fn start_run_dir(out: &std::path::Path, run_id: &str) -> anyhow::Result<(PathBuf, Ledger)> {
    for left in lancet::leftovers::scan(out) {
        eprintln!("{}", left.describe());
    }
    let run_dir = out.join(run_id);
    std::fs::create_dir_all(&run_dir)
        .with_context(|| format!("cannot create the run directory {}", run_dir.display()))?;
    let ledger = Ledger::create(&run_dir)?;
    Ok((run_dir, ledger))
}

/// Prints the summary and writes `summary.json` (and `--summary-json`).
/// A summary that cannot be written (a full disk) is printed on stderr
/// too, with why, so that it is never lost.
fn publish(summary: &lancet::summary::Summary, run_dir: &std::path::Path, extra: Option<&PathBuf>) {
    print!("{}", summary.render());
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let json = match serde_json::to_string_pretty(summary) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("lancet: cannot serialize the summary: {e}");
            return;
        }
    };
    let mut targets = vec![run_dir.join("summary.json")];
    targets.extend(extra.cloned());
    for path in targets {
        if let Err(e) = lancet::findings::write_synced(&path, json.as_bytes()) {
            eprintln!(
                "lancet: cannot write the summary to {}: {e:#}; here it is:\n{}",
                path.display(),
                summary.render()
            );
        }
    }
}

fn fuzz(args: FuzzArgs) -> anyhow::Result<ExitCode> {
    let t = &args.target;
    if let Some(path) = &args.summary_json {
        check_writable(path)?;
    }
    let provider = make_provider(t)?;
    let oracles = Arc::new(oracle_set(&t.oracle)?);
    let seed = args.seed.unwrap_or_else(default_seed);
    let token = RunToken::new();
    let run_id = lancet::run_id(seed, &token);
    let (run_dir, ledger) = start_run_dir(&args.out, &run_id)?;
    let writer = Arc::new(FindingWriter::new(&run_dir.join("findings"))?);
    let log_dir = if args.log_statements {
        let dir = run_dir.join("statements");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        Some(dir)
    } else {
        None
    };
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let options = RunOptions {
        timeout: args.timeout.map(Duration::from_secs),
        max_checks: args.queries,
        only_database: args.thread.zip(args.database),
        log_dir,
        status_interval: (args.status_interval > 0)
            .then(|| Duration::from_secs(args.status_interval)),
        reduce: (!args.no_reduce).then(|| Duration::from_secs(args.reduce_time.max(1))),
        ..plain_options(
            run_id.clone(),
            seed,
            threads,
            t.checks_per_database,
            &run_dir,
        )
    };
    let stop = Arc::new(AtomicBool::new(false));
    install_interrupt(stop.clone())?;
    eprintln!(
        "lancet: run {run_id}: {} with {} on {threads} thread(s), seed {seed}; output in {}",
        t.dbms,
        oracles.names().join(", "),
        run_dir.display()
    );
    let databases = Arc::new(Databases::new(provider.clone(), token, Some(ledger)));
    databases.set_fault(fault(&t.inject_fault)?);
    let summary = runner::run(RunSetup {
        provider,
        oracles,
        options,
        writer,
        databases,
        stop,
    })?;
    publish(&summary, &run_dir, args.summary_json.as_ref());
    Ok(ExitCode::from(summary.exit_code()))
}

fn bench(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let t = &args.target;
    let provider = make_provider(t)?;
    let token = RunToken::new();
    let scratch = std::env::temp_dir().join(format!("lancet-bench-{token}"));
    println!(
        "lancet bench: {} ({}), oracle {}, {} s per measurement",
        t.dbms,
        provider.version()?,
        t.oracle,
        args.seconds
    );
    println!(
        "{:>8} {:>12} {:>14} {:>12} {:>9}",
        "threads", "checks/s", "statements/s", "DBMS time", "findings"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = install_interrupt(stop.clone())?;
    let databases = Arc::new(Databases::new(provider.clone(), token, None));
    databases.set_fault(fault(&t.inject_fault)?);
    for &threads in &args.threads {
        let run_id = format!("bench-{threads}");
        let writer = Arc::new(FindingWriter::new(&scratch.join(&run_id).join("findings"))?);
        let options = RunOptions {
            timeout: Some(Duration::from_secs(args.seconds)),
            ..plain_options(run_id, args.seed, threads, t.checks_per_database, &scratch)
        };
        let s = runner::run(RunSetup {
            provider: provider.clone(),
            oracles: Arc::new(oracle_set(&t.oracle)?),
            options,
            writer,
            databases: databases.clone(),
            stop: stop.clone(),
        })?;
        println!(
            "{:>8} {:>12.0} {:>14.0} {:>11.0}% {:>9}",
            threads,
            s.checks_per_second,
            s.statements_per_second,
            100.0 * s.dbms_time_share,
            s.findings
        );
        for f in &s.failures {
            println!("         FAILED {f}");
        }
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        stop.store(false, Ordering::SeqCst);
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(ExitCode::SUCCESS)
}

fn selftest(args: SelftestArgs) -> anyhow::Result<ExitCode> {
    let provider: Arc<dyn lancet_core::Provider> = Arc::from(registry::provider(
        &args.dbms,
        &ProviderOptions {
            expected_errors: args.expected_errors.clone(),
            url: args.url.clone(),
            ..ProviderOptions::default()
        },
    )?);
    let token = RunToken::new();
    let run_id = format!("selftest-{}", lancet::run_id(args.seed, &token));
    let (run_dir, ledger) = start_run_dir(&args.out, &run_id)?;
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = install_interrupt(stop.clone())?;
    println!(
        "lancet selftest: {} ({}); each oracle must catch its planted fault within {} checks",
        args.dbms,
        provider.version()?,
        args.max_checks
    );
    println!(
        "{:<15} {:<14} {:>7} {:>8}  reproducer",
        "oracle", "fault", "caught", "checks"
    );
    let databases = Arc::new(Databases::new(provider.clone(), token, Some(ledger)));
    let all = lancet_oracles::all();
    let total = all.len();
    let (mut missed, mut ran, mut broken) = (Vec::new(), 0, Vec::new());
    for registered in all {
        if interrupted.load(Ordering::SeqCst) {
            break;
        }
        let name = registered.oracle.name();
        let fault = registered.oracle.planted_fault();
        databases.set_fault(Some(fault));
        let oracles = Arc::new(OracleSet::new(vec![(registered.oracle, 1)]));
        let dir = run_dir.join(name);
        let writer = Arc::new(FindingWriter::new(&dir.join("findings"))?);
        let options = RunOptions {
            max_checks: Some(args.max_checks),
            // A safety net: an oracle that generates no checks here would run forever.
            timeout: Some(Duration::from_secs(120)),
            stop_after_findings: Some(1),
            ..plain_options(format!("{run_id}-{name}"), args.seed, 1, 200, &dir)
        };
        let s = runner::run(RunSetup {
            provider: provider.clone(),
            oracles,
            options,
            writer: writer.clone(),
            databases: databases.clone(),
            stop: stop.clone(),
        })?;
        let _ = std::fs::write(
            dir.join("summary.json"),
            serde_json::to_string_pretty(&s).unwrap_or_default(),
        );
        if interrupted.load(Ordering::SeqCst) && s.findings == 0 {
            println!(
                "{name:<15} {:<14} {:>7} {:>8}  interrupted",
                fault.name(),
                "-",
                s.checks
            );
            break;
        }
        ran += 1;
        // An oracle this DBMS offers nothing to (PQS without an evaluator).
        if s.findings == 0
            && s.failures
                .iter()
                .any(|f| f.contains("found nothing to test"))
        {
            println!(
                "{:<15} {:<14} {:>7} {:>8}  not supported on {}: no checks generated",
                name,
                fault.name(),
                "n/a",
                0,
                args.dbms
            );
            stop.store(false, Ordering::SeqCst);
            continue;
        }
        let caught = s.findings > 0;
        let reproducer = if caught {
            lancet::findings::first_reproducer(writer.dir())
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        } else if !s.failures.is_empty() {
            broken.push(format!("{name}: {}", s.failures.join("; ")));
            missed.push(name);
            format!("could not run: {}", s.failures.join("; "))
        } else {
            missed.push(name);
            String::new()
        };
        println!(
            "{:<15} {:<14} {:>7} {:>8}  {}",
            name,
            fault.name(),
            if caught { "yes" } else { "NO" },
            s.checks,
            reproducer
        );
        for l in &s.leftover_databases {
            println!("  left on the server: {}: {}", l.name, l.why);
        }
        stop.store(false, Ordering::SeqCst);
    }
    if ran < total {
        println!(
            "selftest interrupted: {ran} of {total} oracles ran; this proves nothing about the others"
        );
        return Ok(ExitCode::from(3));
    }
    if missed.is_empty() {
        println!("selftest passed: every oracle caught its fault");
        Ok(ExitCode::SUCCESS)
    } else if !broken.is_empty() {
        println!("selftest FAILED: {} could not run", broken.join("; "));
        Ok(ExitCode::from(3))
    } else {
        println!("selftest FAILED: {} missed their fault", missed.join(", "));
        Ok(ExitCode::from(1))
    }
}

/// The provider a recorded finding names, reached as `connect` says, with
/// its databases kept in memory (a replay or reduction keeps no ledger).
fn provider_for(dbms: &str, connect: &ConnectArgs) -> anyhow::Result<Databases> {
    let provider = registry::provider(
        dbms,
        &ProviderOptions {
            sqlite_lib: connect.sqlite_lib.clone(),
            url: connect.url.clone(),
            ..ProviderOptions::default()
        },
    )?;
    Ok(Databases::new(Arc::from(provider), RunToken::new(), None))
}

/// `FILE.sql` → `FILE.reduced.sql` (a reduced file reduces onto itself).
fn reduced_path(file: &std::path::Path, ext: &str) -> PathBuf {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".reduced").unwrap_or(&stem);
    file.with_file_name(format!("{stem}.reduced.{ext}"))
}

fn reduce(args: ReduceArgs) -> anyhow::Result<ExitCode> {
    let stop = Arc::new(AtomicBool::new(false));
    install_interrupt(stop.clone())?;
    let limit = Duration::from_secs(args.time_limit.max(1));
    let name = args
        .file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if args.check_cmd.is_some() || args.check_differs.is_some() {
        let dbms = args
            .dbms
            .as_deref()
            .context("--dbms is needed to reduce a SQL file with --check-cmd or --check-differs")?;
        let databases = provider_for(dbms, &args.connect)?;
        let text = std::fs::read_to_string(&args.file)
            .with_context(|| format!("cannot read {}", args.file.display()))?;
        let dialect = databases.provider().dialect();
        let check = match (&args.check_cmd, &args.check_differs) {
            (Some(cmd), _) => lancet::reduce::foreign::Check::Command(cmd.clone()),
            (None, Some(spec)) => {
                let n = lancet::reduce::sql_text::split_statements(&text, dialect).len();
                let (first, second) = if spec == "last" {
                    if n < 2 {
                        bail!(
                            "{} has fewer than two statements to compare",
                            args.file.display()
                        );
                    }
                    (n - 2, n - 1)
                } else {
                    let parts: Vec<&str> = spec.split(',').collect();
                    let num = |s: &str| -> anyhow::Result<usize> {
                        match s.trim().parse::<usize>() {
                            Ok(i) if i >= 1 => Ok(i - 1),
                            _ => bail!("--check-differs takes two statement numbers from 1, as `I,J`; got '{spec}'"),
                        }
                    };
                    match parts.as_slice() {
                        [a, b] => (num(a)?, num(b)?),
                        _ => bail!(
                            "--check-differs takes two statement numbers, as `I,J`; got '{spec}'"
                        ),
                    }
                };
                lancet::reduce::foreign::Check::Differs {
                    databases: &databases,
                    first,
                    second,
                }
            }
            (None, None) => unreachable!("checked above"),
        };
        let r = lancet::reduce::foreign::reduce_foreign(
            &text,
            &name,
            dialect,
            &check,
            limit,
            Some(&stop),
        )?;
        let out = args.out.unwrap_or_else(|| reduced_path(&args.file, "sql"));
        lancet::findings::write_synced(&out, r.text().as_bytes())?;
        println!(
            "reduced {name}: {} -> {} statements ({} -> {} bytes) in {:.1} s, {} candidates tried{}\nwritten to {}",
            r.statements_before,
            r.statements.len(),
            r.bytes_before,
            r.bytes(),
            r.seconds,
            r.tests,
            if r.complete { "" } else { " (stopped early: time limit or Ctrl-C)" },
            out.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.dbms.is_some() {
        bail!("--dbms is for SQL files from elsewhere, with --check-cmd or --check-differs; a lancet reproducer names its DBMS");
    }
    let finding = lancet::findings::Finding::load(&args.file)?;
    let databases = provider_for(&finding.dbms, &args.connect)?;
    let provider = databases.provider();
    lancet::replay::check_case(&finding, provider.dialect())?;
    databases.set_fault(lancet::replay::recorded_fault(
        &finding,
        args.connect.no_fault,
    )?);
    let reducer = lancet::reduce::Reducer::new(&databases)
        .with_time_limit(limit)
        .with_abort(&stop);
    let sql_name = name.replace(".json", ".sql");
    let r = reducer.reduce(&finding, &sql_name)?;
    let mut reduced = r.finding;
    reduced.signature = Some(lancet::dedup::signature(&reduced, provider.dialect()));
    let out_sql = args.out.unwrap_or_else(|| reduced_path(&args.file, "sql"));
    let written = lancet::findings::WrittenFinding {
        json: out_sql.with_extension("json"),
        sql: out_sql,
    };
    let dir = written.sql.parent().unwrap_or(std::path::Path::new("."));
    let writer = FindingWriter::new(dir)?;
    writer.update(
        &written,
        &reduced,
        provider.comment_prefix(),
        &provider.client_command(),
    )?;
    let i = &r.info;
    println!(
        "reduced {name}: {} -> {} statements ({} -> {} bytes) in {:.1} s, {} candidates tried{}\nsignature {}\nwritten to {}",
        i.statements_before,
        i.statements_after,
        i.bytes_before,
        i.bytes_after,
        i.seconds,
        i.tests,
        if i.complete { "" } else { " (stopped early: time limit or Ctrl-C)" },
        reduced.signature.as_deref().unwrap_or(""),
        written.sql.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn replay(args: ReplayArgs) -> anyhow::Result<ExitCode> {
    let mut failing = 0;
    let mut broken = 0;
    for file in &args.files {
        let outcome = lancet::findings::Finding::load(file).and_then(|finding| {
            let databases = provider_for(&finding.dbms, &args.connect)?;
            let fault = lancet::replay::recorded_fault(&finding, args.connect.no_fault)?;
            lancet::replay::check_case(&finding, databases.provider().dialect())?;
            let note = fault
                .map(|f| format!(" [with planted fault {}]", f.name()))
                .unwrap_or_default();
            databases.set_fault(fault);
            Ok((lancet::replay::replay(&finding, &databases)?, note))
        });
        match outcome {
            Ok((lancet::replay::Replayed::StillFails { why, .. }, note)) => {
                failing += 1;
                println!("{}: still fails{note}: {why}", file.display());
            }
            Ok((lancet::replay::Replayed::Passes(why), note)) => {
                println!("{}: passes{note}: {why}", file.display());
            }
            Err(e) => {
                broken += 1;
                println!("{}: cannot replay: {e:#}", file.display());
            }
        }
    }
    println!(
        "{} reproducer(s): {failing} still fail, {} pass, {broken} cannot be replayed",
        args.files.len(),
        args.files.len() - failing - broken
    );
    Ok(if failing > 0 {
        ExitCode::from(1)
    } else if broken > 0 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

fn cleanup(args: CleanupArgs) -> anyhow::Result<ExitCode> {
    let provider = registry::provider(
        &args.dbms,
        &ProviderOptions {
            url: args.url.clone(),
            ..ProviderOptions::default()
        },
    )?;
    let (report, live) = lancet::cleanup::cleanup(&*provider, &args.out)?;
    for dir in &live {
        println!("skipped {}: its run is still alive", dir.display());
    }
    let mut failed = 0;
    for c in &report {
        use lancet::cleanup::Outcome;
        match &c.outcome {
            Outcome::Dropped => println!("dropped {} (run {})", c.name, c.run_dir.display()),
            Outcome::Gone => println!("gone {} (run {})", c.name, c.run_dir.display()),
            Outcome::Refused(why) => println!("refused {}: {why}", c.name),
            Outcome::Failed(why) => {
                failed += 1;
                println!("failed {}: {why}", c.name);
            }
        }
    }
    println!(
        "lancet cleanup: {} database(s) listed by dead runs' ledgers under {}; {failed} could not be dropped",
        report.len(),
        args.out.display()
    );
    Ok(if failed > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// Fills in what the command line left unset from `--config`; an option
/// given on the command line (even with its default value) wins.
fn apply_campaign(args: &mut FuzzArgs, matches: &clap::ArgMatches) -> anyhow::Result<()> {
    let Some(path) = args.config.clone() else {
        return Ok(());
    };
    let c = lancet::campaign::Campaign::load(&path)?;
    let given = |id: &str| matches.value_source(id) == Some(clap::parser::ValueSource::CommandLine);
    let names = registry::DBMS_NAMES;
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
        if o != "all" && lancet_oracles::by_name(&o).is_none() {
            bail!("{}: unknown oracle '{o}'", path.display());
        }
        args.target.oracle = o;
    }
    if !given("url") {
        args.target.url = args.target.url.take().or(c.url);
    }
    args.target.expected_errors = args.target.expected_errors.take().or(c.expected_errors);
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
    args.timeout = args.timeout.or(c.timeout);
    args.queries = args.queries.or(c.queries);
    if let Some(n) = c
        .checks_per_database
        .filter(|_| !given("checks_per_database"))
    {
        args.target.checks_per_database = n;
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
    Ok(())
}

fn main() -> ExitCode {
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
            apply_campaign(&mut args, sub).and_then(|()| fuzz(args))
        }
        Command::Bench(args) => bench(args),
        Command::Selftest(args) => selftest(args),
        Command::Reduce(args) => reduce(args),
        Command::Replay(args) => replay(args),
        Command::Cleanup(args) => cleanup(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("lancet: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
