//! Crash isolation for embedded engines: each worker thread runs its
//! databases in a child process (lancet started as `lancet
//! __database-runner`), which generates, populates and checks a whole
//! database with the engine in its own address space, and sends back only
//! counts and findings. A segfault, an abort or runaway memory in the
//! engine ends the child, not the campaign: the parent reads from the
//! [flight recorder](super::recorder) what the child was running, files a
//! `crash` (or `hang`) finding, and starts a new child for the next
//! database.
//!
//! Running the whole loop in the child costs nothing per statement (no
//! round trip to the parent), unlike a child that serves statements one at
//! a time; that one ([`lancet_engine::isolation`]) still serves confirmation,
//! replay and reduction, which run few statements.
//!
//! Messages are JSON lines: [`ToChild`] on the child's stdin, [`FromChild`]
//! on its stdout.

use super::database::{run_database, DatabaseEnd, DatabasePlan, Progress};
use super::recorder::{Counts, FlightRecorder, LastWords, RecordingConnection, CHILD_FD};
use super::{OracleSet, Shared};
use crate::databases::{Databases, Purpose, RunToken};
use crate::findings::{Finding, FindingSource, Origin};
use anyhow::Context;
use lancet_core::{DbError, ExecError, FailureKind, ShapeTimes};
use lancet_engine::catalog::ProviderOptions;
use lancet_engine::Catalog;
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The hidden subcommand that makes lancet a database runner.
pub const CHILD_SUBCOMMAND: &str = "__database-runner";

/// How a run starts its children, and what they rebuild there.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChildProgram {
    /// lancet's own executable.
    pub program: PathBuf,
    /// The provider, as the command line gave it (built in-process there).
    pub dbms: String,
    /// Another build of the engine, and the option that named it.
    pub library: Option<(String, PathBuf)>,
    pub expected_errors: Option<PathBuf>,
    /// The child's address-space limit, in bytes.
    pub memory_limit: Option<u64>,
    /// The engine's statement time limit, which it enforces itself.
    pub time_limit: Duration,
    /// How long a statement may run before the child is taken to hang (the
    /// engine's own time limit interrupts statements well before).
    pub hang_after: Duration,
}

/// Once the run stops, a statement this far past the engine's time limit
/// is taken to hang, sooner than [`ChildProgram::hang_after`], so that the
/// run ends within its grace.
const HANG_AFTER_STOP: Duration = Duration::from_secs(3);

/// What the parent tells a child.
#[derive(Serialize, Deserialize)]
enum ToChild {
    /// Sent once, first.
    Start(Box<ChildStart>),
    /// Generate and check one database; at most `budget` checks.
    Run {
        thread: u32,
        database: u64,
        budget: Option<u64>,
    },
}

#[derive(Serialize, Deserialize)]
struct ChildStart {
    program: ChildProgram,
    oracles: Vec<(String, u32)>,
    seed: u64,
    checks_per_database: u64,
    log_dir: Option<PathBuf>,
    profile_shapes: bool,
    /// The planted fault's name (a name stands for one fault, period
    /// included, so the child perturbs the queries the parent confirms).
    fault: Option<String>,
}

/// What a child tells its parent.
#[derive(Serialize, Deserialize)]
enum FromChild {
    /// Started; the version of the engine it loaded.
    Ready {
        dbms_version: String,
    },
    /// Statement time by shape since the last report (when profiling; the
    /// counts themselves are in the recorder).
    Shapes(ShapeTimes),
    Warning(String),
    /// The database ended with a finding.
    Found(Box<Finding>),
    /// The database ended: all checks done (how many drew a case), or
    /// stopped (`None`).
    Done {
        cases: Option<u64>,
    },
    /// lancet failed in the child (not the engine): the thread stops.
    Failed(String),
}

/// How often a child reports statement shapes, and the parent takes its
/// counts, while it runs a database.
const REPORT_EVERY: Duration = Duration::from_millis(100);

/// The parent's side: one child process of one worker thread.
pub(super) struct ChildRunner {
    child: Child,
    to_child: ChildStdin,
    from_child: LineReader,
    recorder: FlightRecorder,
    stderr_tail: Arc<Mutex<String>>,
    time_limit: Duration,
    hang_after: Duration,
    alive: bool,
    /// The child's counts the run has already taken.
    seen: Counts,
    oracles: usize,
}

impl ChildRunner {
    /// Starts a child for `shared`'s run and waits until it is ready.
    pub(super) fn start(program: &ChildProgram, shared: &Shared) -> anyhow::Result<ChildRunner> {
        let recorder = FlightRecorder::create().context("cannot create a flight recorder")?;
        let fd = recorder.raw_fd();
        let mut command = Command::new(&program.program);
        command
            .arg(CHILD_SUBCOMMAND)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: Ctrl-C at the terminal stops lancet,
            // which ends its children itself, rather than killing them in
            // the middle of a statement (which would look like a crash).
            .process_group(0);
        // SAFETY: dup2 is async-signal-safe; it gives the child the
        // recorder at CHILD_FD (without close-on-exec).
        unsafe {
            command.pre_exec(move || {
                if libc::dup2(fd, CHILD_FD) < 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().with_context(|| {
            format!(
                "cannot start a database runner process ({})",
                program.program.display()
            )
        })?;
        let to_child = child.stdin.take().context("runner stdin")?;
        let from_child = LineReader::new(child.stdout.take().context("runner stdout")?);
        let stderr_tail = lancet_engine::isolation::keep_stderr_tail(
            child.stderr.take().context("runner stderr")?,
        );
        let mut runner = ChildRunner {
            child,
            to_child,
            from_child,
            recorder,
            stderr_tail,
            time_limit: program.time_limit,
            hang_after: program.hang_after,
            alive: true,
            seen: Counts::default(),
            oracles: shared.oracles.names().len(),
        };
        let options = &shared.options;
        let start = ToChild::Start(Box::new(ChildStart {
            program: program.clone(),
            oracles: shared
                .oracles
                .entries()
                .into_iter()
                .map(|(n, w)| (n.to_string(), w))
                .collect(),
            seed: options.seed,
            checks_per_database: options.checks_per_database,
            log_dir: options.log_dir.clone(),
            profile_shapes: options.profile_shapes,
            fault: shared.databases.fault().map(|f| f.name().to_string()),
        }));
        let ready = runner.send(&start).and_then(|()| {
            runner
                .from_child
                .next(Instant::now() + Duration::from_secs(60))
        });
        match ready {
            Ok(Some(FromChild::Ready { dbms_version })) => {
                anyhow::ensure!(
                    dbms_version == shared.dbms_version,
                    "the database runner process runs {dbms_version}, not {} as lancet does",
                    shared.dbms_version
                );
                Ok(runner)
            }
            Ok(Some(FromChild::Failed(e))) => {
                anyhow::bail!("the database runner process could not start: {e}")
            }
            other => {
                let why = match other {
                    Err(e) => e.to_string(),
                    _ => "no greeting".to_string(),
                };
                let died = runner.died();
                anyhow::bail!("the database runner process did not start ({why}): {died}")
            }
        }
    }

    /// Whether the child can run another database.
    pub(super) fn is_alive(&self) -> bool {
        self.alive
    }

    fn send(&mut self, message: &ToChild) -> io::Result<()> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.to_child.write_all(&line)?;
        self.to_child.flush()
    }

    /// Runs database `database` of `thread` in the child, adding its counts
    /// to the run's as they come (its checks also to `counted`). A child
    /// that dies in the engine ends the database with a crash finding; one
    /// that stays in one statement too long is killed, with a hang finding.
    pub(super) fn run_database(
        &mut self,
        shared: &Shared,
        thread: u32,
        database: u64,
        budget: Option<u64>,
        counted: &mut u64,
    ) -> anyhow::Result<DatabaseEnd> {
        self.recorder.clear_stop();
        if self
            .send(&ToChild::Run {
                thread,
                database,
                budget,
            })
            .is_err()
        {
            return Ok(self.crashed(shared, thread, database, None));
        }
        let mut started = self.recorder.statements_started();
        let mut moved = Instant::now();
        loop {
            let message = self.from_child.next(Instant::now() + REPORT_EVERY);
            *counted += self.take_counts(shared);
            let mut hang_after = self.hang_after;
            if shared.stopped() {
                self.recorder.request_stop();
                hang_after = hang_after.min(self.time_limit + HANG_AFTER_STOP);
            }
            match message {
                Ok(None) => {
                    let now_started = self.recorder.statements_started();
                    if now_started != started || !self.recorder.in_engine() {
                        started = now_started;
                        moved = Instant::now();
                    } else if moved.elapsed() > hang_after {
                        let _ = self.child.kill();
                        let error = DbError {
                            kind: FailureKind::Hang,
                            code: None,
                            message: format!(
                                "a statement ran for over {} s despite the time limit of {} s; \
                                 the database runner process was killed",
                                hang_after.as_secs(),
                                self.time_limit.as_secs()
                            ),
                        };
                        let end = self.crashed(shared, thread, database, Some(error));
                        *counted += self.take_counts(shared);
                        return Ok(end);
                    }
                }
                Ok(Some(FromChild::Shapes(shapes))) => shared.counters.add_shapes(shapes),
                Ok(Some(FromChild::Warning(w))) => super::report::warn_log(shared, &w),
                Ok(Some(FromChild::Found(finding))) => return Ok(DatabaseEnd::Found(finding)),
                Ok(Some(FromChild::Done { cases: Some(cases) })) => {
                    return Ok(DatabaseEnd::Done { cases })
                }
                Ok(Some(FromChild::Done { cases: None })) => return Ok(DatabaseEnd::Stopped),
                Ok(Some(FromChild::Failed(e))) => {
                    self.alive = false;
                    anyhow::bail!("in the database runner process: {e}")
                }
                Ok(Some(FromChild::Ready { .. })) => {
                    anyhow::bail!("the database runner process greeted twice")
                }
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    // lancet's own bug: the child is fine, its message is not.
                    self.alive = false;
                    let _ = self.child.kill();
                    anyhow::bail!("a message from the database runner process is garbled: {e}")
                }
                Err(_) => {
                    let end = self.crashed(shared, thread, database, None);
                    *counted += self.take_counts(shared);
                    return Ok(end);
                }
            }
        }
    }

    /// Adds what the child counted since the last look to the run's
    /// counters; returns the checks among it.
    fn take_counts(&mut self, shared: &Shared) -> u64 {
        let now = self.recorder.counts(self.oracles);
        let new = now.since(&self.seen);
        self.seen = now;
        let counters = &shared.counters;
        let mut checks = 0;
        for (oracle, &(n, nonempty)) in new.checks.iter().enumerate() {
            if n > 0 {
                counters.add_checks(oracle, n, nonempty);
                checks += n;
            }
        }
        counters.add_skipped_many(new.skipped);
        counters.add_statements(new.statements, Duration::from_nanos(new.dbms_nanos));
        counters.add_plans(new.plans);
        checks
    }

    /// The finding for a child that died (or was killed, `error` says
    /// why) in the middle of a database, from its flight recorder.
    fn crashed(
        &mut self,
        shared: &Shared,
        thread: u32,
        database: u64,
        error: Option<DbError>,
    ) -> DatabaseEnd {
        let died = self.died();
        let mut error = error.unwrap_or(died);
        let words = LastWords::read(&self.recorder);
        if words.overflowed {
            error.message.push_str(
                " (the flight recorder overflowed: the reproducer lacks some statements)",
            );
        }
        let (true, Some(failing)) = (words.in_engine, words.failing) else {
            // Not inside the engine: lancet itself failed in the child.
            return DatabaseEnd::Lost(format!(
                "the database runner process died outside the DBMS: {}",
                error.message
            ));
        };
        let source = shared.finding_source();
        let (check, oracle) = match &words.check {
            Some((check, oracle)) => (*check, Some(oracle.as_str())),
            None => (0, None),
        };
        let origin = Origin {
            seed: shared.options.seed,
            thread,
            database,
            check,
            rotation: shared.oracles.names().len() > 1,
        };
        let mut finding = Finding::failure(
            &source,
            oracle,
            origin,
            words.setup,
            ExecError::Lost {
                sql: failing,
                error,
            },
        );
        finding.set_failing_knobs(&*shared.provider, words.knobs);
        DatabaseEnd::Found(Box::new(finding))
    }

    /// Why the child is gone: how it ended, and its last words on stderr.
    fn died(&mut self) -> DbError {
        self.alive = false;
        // It may still be running (a broken pipe, garbled output): end it.
        let status = match self.child.try_wait() {
            Ok(Some(s)) => Ok(s),
            _ => {
                // Give a child that is exiting a moment, then end it.
                std::thread::sleep(Duration::from_millis(20));
                match self.child.try_wait() {
                    Ok(Some(s)) => Ok(s),
                    _ => {
                        let _ = self.child.kill();
                        self.child.wait()
                    }
                }
            }
        };
        lancet_engine::isolation::death_error(
            "the database runner process",
            status,
            &self.stderr_tail,
        )
    }
}

impl Drop for ChildRunner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads a child's JSON lines, waiting at most until a deadline.
struct LineReader {
    from_child: ChildStdout,
    buffer: Vec<u8>,
    chunk: Box<[u8]>,
}

impl LineReader {
    fn new(from_child: ChildStdout) -> LineReader {
        LineReader {
            from_child,
            buffer: Vec::new(),
            chunk: vec![0u8; 64 * 1024].into_boxed_slice(),
        }
    }

    /// The next message; `Ok(None)` when none came before `deadline`;
    /// `Err` when the child's output ended or is garbled.
    fn next(&mut self, deadline: Instant) -> io::Result<Option<FromChild>> {
        loop {
            if let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                let message = serde_json::from_slice(&self.buffer[..end]);
                self.buffer.drain(..=end);
                return message
                    .map(Some)
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e));
            }
            let read = lancet_engine::isolation::read_within(
                &mut self.from_child,
                &mut self.chunk,
                deadline,
            )?;
            let Some(n) = read else {
                return Ok(None);
            };
            self.buffer.extend_from_slice(&self.chunk[..n]);
        }
    }
}

// ---------------------------------------------------------------------------
// The child's side.

mod serve;
pub use serve::serve;
