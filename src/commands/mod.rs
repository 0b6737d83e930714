//! The commands' implementations; `main.rs` only parses arguments. This
//! module holds what several commands share: making the provider and the
//! oracle set, run directories, interrupts and publishing summaries.

use crate::{ConnectArgs, IsolationArgs, TargetArgs};
use anyhow::{bail, Context};
use lancet::databases::{Databases, Ledger, RunToken};
use lancet::registry::{self, ProviderOptions};
use lancet::runner::{OracleSet, RunOptions};
use lancet_core::fault::Fault;
use lancet_core::{AnyOracle, SessionsRun};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

mod bisect;
pub mod campaign;
mod cleanup;
mod feed;
mod fuzz;
mod known;
mod reduce;
mod selftest;
mod shard;
mod store;

pub use bisect::bisect;
pub use cleanup::cleanup;
pub use fuzz::{bench, fuzz};
pub use reduce::{reduce, replay};
pub use selftest::selftest;
pub use store::{findings, push, report};

/// The oracles `--oracle name` selects: `all` (the query oracles'
/// weighted rotation), one query oracle, or one that opens sessions of its
/// own, prepared for `provider` with `run`.
pub fn oracle_set(
    name: &str,
    provider: &Arc<dyn lancet_core::Provider>,
    run: &SessionsRun,
) -> anyhow::Result<OracleSet> {
    if name == "all" {
        return Ok(OracleSet::new(
            lancet_oracles::all()
                .into_iter()
                .filter(|r| r.weight > 0)
                .filter_map(|r| match r.oracle {
                    AnyOracle::Queries(o) => Some((o, r.weight)),
                    AnyOracle::Sessions(_) => None,
                })
                .collect(),
        ));
    }
    match lancet_oracles::any_by_name(name) {
        Some(AnyOracle::Queries(o)) => Ok(OracleSet::new(vec![(o, 1)])),
        Some(AnyOracle::Sessions(o)) => Ok(OracleSet::sessions(
            o.name(),
            o.prepare(provider.clone(), run)?,
        )),
        None => bail!("unknown oracle '{name}'"),
    }
}

/// What a run of an oracle that opens sessions of its own needs from the
/// command line: its planted fault, its settings and its reduction time.
pub fn sessions_run(
    fault: &Option<String>,
    txn: &TxnArgs,
    reduce: Option<std::time::Duration>,
) -> anyhow::Result<SessionsRun> {
    let mut settings: Vec<String> = txn.levels.iter().map(|l| format!("levels={l}")).collect();
    if txn.strict {
        settings.push("strict".into());
    }
    Ok(SessionsRun {
        fault: self::fault(fault)?,
        settings,
        reduce,
    })
}

/// The transaction oracles' flags, as `fuzz` and `bench` take them.
#[derive(Clone, Debug, Default)]
pub struct TxnArgs {
    /// `--txn-levels`.
    pub levels: Vec<String>,
    /// `--txn-strict`.
    pub strict: bool,
}

/// The oracles `name` selects that can run on `provider`, and a note on
/// those that cannot (empty when all can). An explicit choice of oracles
/// none of which can run is an error.
pub fn oracles_for(
    name: &str,
    provider: &Arc<dyn lancet_core::Provider>,
    run: &SessionsRun,
) -> anyhow::Result<(OracleSet, String)> {
    let (set, dropped) = oracle_set(name, provider, run)?.without_unsupported(&**provider);
    let why: Vec<String> = dropped
        .iter()
        .map(|(oracle, feature)| format!("{oracle} (needs {})", feature.describe()))
        .collect();
    if set.is_empty() {
        bail!(
            "no oracle of '{name}' can run on {} {}: {}",
            provider.name(),
            provider.version().unwrap_or_default(),
            why.join("; ")
        );
    }
    let note = if why.is_empty() {
        String::new()
    } else {
        format!(" (not here: {})", why.join("; "))
    };
    Ok((set, note))
}

/// The run's `statements/` directory, made (`--log-statements`).
pub fn statements_dir(run_dir: &std::path::Path) -> anyhow::Result<std::path::PathBuf> {
    let dir = run_dir.join("statements");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

pub fn make_provider(t: &TargetArgs) -> anyhow::Result<Arc<dyn lancet_core::Provider>> {
    registry::provider(
        &t.dbms,
        &ProviderOptions {
            expected_errors: t.expected_errors.clone(),
            library: t.library.given.clone(),
            url: t.url.clone(),
            workers: workers(&t.dbms, &t.isolation)?,
            twin_recipe: t.twin_recipe.clone(),
        },
    )
    .map(Arc::from)
}

/// Worker processes for an engine that runs inside lancet, unless
/// `--in-process`.
pub fn workers(
    dbms: &str,
    isolation: &IsolationArgs,
) -> anyhow::Result<Option<lancet_engine::Workers>> {
    registry::workers(
        dbms,
        isolation.in_process,
        Some(isolation.worker_memory_mib << 20),
    )
}

/// The planted fault of a query campaign: one that acts outside query
/// rows (an oracle's own, as a sessions oracle's driver faults are) would
/// change nothing there, so it is a clear error, not a run that cannot
/// find its fault.
pub fn query_fault(name: &Option<String>) -> anyhow::Result<Option<Fault>> {
    let fault = fault(name)?;
    if let Some(f) = fault.as_ref().filter(|f| f.as_any().is_some()) {
        let owner = lancet_oracles::all()
            .into_iter()
            .find(|r| r.oracle.faults().iter().any(|o| o.name() == f.name()))
            .map_or("its own oracle", |r| r.oracle.name());
        bail!(
            "the planted fault {} acts in the {owner} oracle's own driver, not on query rows: use it with --oracle {owner}",
            f.name(),
        );
    }
    Ok(fault)
}

pub fn fault(name: &Option<String>) -> anyhow::Result<Option<Fault>> {
    match name {
        None => Ok(None),
        Some(n) => lancet_oracles::fault(n).map(Some).with_context(|| {
            let known: Vec<&str> = lancet_oracles::faults().iter().map(|f| f.name()).collect();
            format!("unknown fault '{n}' (known: {})", known.join(", "))
        }),
    }
}

/// Ctrl-C, SIGTERM and SIGHUP (what systemd, Docker, `timeout`, Kubernetes
/// and CI cancellation send) stop the run after the current checks, and
/// the run ends with its summary; a second signal exits at once. Returns a
/// flag that stays set after the first, for commands that run several
/// measurements (the runner itself also sets `stop` on a timeout).
pub fn install_interrupt(stop: Arc<AtomicBool>) -> anyhow::Result<Arc<AtomicBool>> {
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
pub fn plain_options(
    run_id: String,
    seed: u64,
    threads: u32,
    checks_per_database: u64,
    run_dir: &std::path::Path,
) -> RunOptions {
    RunOptions {
        run_id,
        seed,
        shard: lancet::shard::Shard::WHOLE,
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
        flood_limit: None,
        profile_shapes: false,
        run_dir: None,
        sample_interval: std::time::Duration::from_secs(5),
        child: None,
    }
}

/// `--checks-per-database`, or its default for the DBMS: databases of an
/// embedded engine cost nothing to make; a server's cost about 100 ms to
/// create and drop (measured with `lancet bench` on PostgreSQL 15: 1,415
/// TLP WHERE checks/s at 500 checks per database, 1,899 at 2,000).
pub fn checks_per_database(t: &TargetArgs) -> anyhow::Result<u64> {
    Ok(
        match (
            t.checks_per_database,
            lancet_oracles::any_by_name(&t.oracle),
        ) {
            (Some(n), _) => n,
            // An oracle that opens sessions of its own says how many of its
            // checks a database takes.
            (None, Some(AnyOracle::Sessions(o))) => o.checks_per_database(),
            (None, _) => registry::describe(&t.dbms)?.checks_per_database,
        },
    )
}

/// [`database_child`] for a fuzzing or bench target.
pub fn target_child(t: &TargetArgs) -> anyhow::Result<Option<lancet::runner::child::ChildProgram>> {
    database_child(
        &t.dbms,
        &t.library,
        t.expected_errors.as_deref(),
        &t.isolation,
    )
}

/// How a run's worker threads start child processes for their databases
/// (an engine that runs inside lancet, unless `--in-process`): the crash
/// isolation of fuzzing.
pub fn database_child(
    dbms: &str,
    library: &crate::args::library::LibraryArgs,
    expected_errors: Option<&std::path::Path>,
    isolation: &IsolationArgs,
) -> anyhow::Result<Option<lancet::runner::child::ChildProgram>> {
    let Some(engine) = &registry::describe(dbms)?.in_process else {
        return Ok(None);
    };
    if isolation.in_process {
        return Ok(None);
    }
    let program = std::env::current_exe()
        .context("cannot find lancet's own executable to start database runner processes")?;
    Ok(Some(lancet::runner::child::ChildProgram {
        program,
        dbms: dbms.to_string(),
        library: library.given.clone(),
        expected_errors: expected_errors.map(Into::into),
        memory_limit: Some(isolation.worker_memory_mib << 20),
        time_limit: engine.time_limit,
        hang_after: engine.time_limit + std::time::Duration::from_secs(10),
    }))
}

pub fn default_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    (nanos ^ (u64::from(std::process::id()) << 32)) % 1_000_000_000_000
}

/// Checks before anything runs that an output file (`--summary-json`, a
/// report) can be written there: a missing directory would otherwise fail
/// only after the whole work.
pub fn check_writable(path: &std::path::Path, what: &str) -> anyhow::Result<()> {
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(drop)
        .with_context(|| format!("cannot write the {what} to {}", path.display()))?;
    // A file made only to try is not left behind: a command that fails
    // later leaves no empty output.
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Creates a run's directory and its ledger, after saying what killed
/// runs left in the same output directory.
pub fn start_run_dir(out: &std::path::Path, run_id: &str) -> anyhow::Result<(PathBuf, Ledger)> {
    for left in lancet::leftovers::scan(out) {
        eprintln!("{}", left.describe());
    }
    std::fs::create_dir_all(out)
        .with_context(|| format!("cannot create the output directory {}", out.display()))?;
    // The run directory is created, never reused: two runs started in the
    // same second with the same seed and token (a forced token) get
    // `-2`, `-3`, ... rather than writing into one directory.
    let mut run_dir = out.join(run_id);
    let mut n = 1;
    loop {
        match std::fs::create_dir(&run_dir) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => {
                n += 1;
                run_dir = out.join(format!("{run_id}-{n}"));
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("cannot create the run directory {}", run_dir.display())
                })
            }
        }
    }
    let ledger = Ledger::create(&run_dir)?;
    Ok((run_dir, ledger))
}

/// Prints the summary and writes `summary.json` (and `--summary-json`).
/// A summary that cannot be written (a full disk) is printed on stderr
/// too, with why, so that it is never lost.
pub fn publish(
    summary: &lancet::summary::Summary,
    run_dir: &std::path::Path,
    extra: Option<&PathBuf>,
) {
    print!("{}", summary.render());
    let _ = std::io::Write::flush(&mut std::io::stdout());
    write_summary(summary, run_dir, extra);
}

/// Writes the summary as `summary.json` in the run directory (and to
/// `extra`); a file that cannot be written gets the summary on stderr.
pub fn write_summary(
    summary: &lancet::summary::Summary,
    run_dir: &std::path::Path,
    extra: Option<&PathBuf>,
) {
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
        if let Err(e) = lancet::reproducer::write_synced(&path, json.as_bytes()) {
            eprintln!(
                "lancet: cannot write the summary to {}: {e:#}; here it is:\n{}",
                path.display(),
                summary.render()
            );
        }
    }
}

/// The provider a recorded finding names, reached as `connect` says, with
/// its databases kept in memory (a replay or reduction keeps no ledger).
pub fn provider_for(dbms: &str, connect: &ConnectArgs) -> anyhow::Result<Databases> {
    let campaign = match &connect.config {
        Some(path) => {
            let c = lancet::campaign::Campaign::load(path)?;
            if let Some(other) = c.dbms.as_deref().filter(|d| *d != dbms) {
                bail!(
                    "{} is a campaign of {other}, and the finding is of {dbms}",
                    path.display()
                );
            }
            c
        }
        None => lancet::campaign::Campaign::default(),
    };
    let provider = registry::provider(
        dbms,
        &ProviderOptions {
            library: connect.library.given.clone(),
            url: connect.url.clone().or(campaign.url),
            workers: workers(dbms, &connect.isolation)?,
            expected_errors: campaign.expected_errors,
            twin_recipe: campaign.twin_recipe,
        },
    )?;
    Ok(Databases::new(Arc::from(provider), RunToken::new(), None))
}

/// `FILE.sql` → `FILE.reduced.sql` (a reduced file reduces onto itself).
pub fn reduced_path(file: &std::path::Path, ext: &str) -> PathBuf {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = stem.strip_suffix(".reduced").unwrap_or(&stem);
    file.with_file_name(format!("{stem}.reduced.{ext}"))
}

/// `lancet __engine-worker`: serves one engine's databases to a parent
/// lancet over stdin and stdout (see `lancet_engine::isolation`).
pub fn engine_worker(args: &crate::EngineWorkerArgs) -> anyhow::Result<()> {
    let dbms = registry::describe(&args.dbms)?;
    let engine = dbms
        .in_process
        .as_ref()
        .with_context(|| format!("{} does not run inside lancet", dbms.label))?;
    let served = (engine.worker)(
        args.library.as_deref(),
        std::time::Duration::from_millis(args.time_limit_ms),
    )?;
    lancet_engine::isolation::serve(served, args.memory_limit, args.progress_file.as_deref())
}
