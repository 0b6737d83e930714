//! The parent: child processes, the pool that reuses them, and the
//! `Connection` that forwards a database's statements to one.

use super::process::*;
use super::protocol::*;
use super::*;

/// One running child process.
struct WorkerProcess {
    child: Child,
    to_child: BufWriter<ChildStdin>,
    /// Replies, read on the calling thread (waiting with poll(2), so that
    /// it can time out; a reader thread would add a wake-up per statement).
    from_child: ChildStdout,
    /// What has been read from the child and not yet decoded.
    buffer: Vec<u8>,
    /// Where reads land (allocated once: zeroing a fresh one per read
    /// cost more than the statements).
    chunk: Box<[u8]>,
    /// The end of what the child wrote to standard error.
    stderr_tail: Arc<Mutex<String>>,
    /// The index of the query of a batch the child is running (see
    /// [`serve`]); its file is unlinked once both have it open.
    progress: std::fs::File,
    /// The engine's name, for messages ("SQLite").
    label: &'static str,
}

impl WorkerProcess {
    fn spawn(
        program: &WorkerProgram,
        label: &'static str,
        args: &[OsString],
    ) -> anyhow::Result<(WorkerProcess, String)> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let progress_path = std::env::temp_dir().join(format!(
            "lancet-worker-{}-{}.progress",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let progress = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&progress_path)
            .with_context(|| format!("cannot create {}", progress_path.display()))?;
        let spawned = Command::new(&program.program)
            .args(&program.args)
            .args(args)
            .arg("--progress-file")
            .arg(&progress_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: Ctrl-C at the terminal stops lancet,
            // which ends its children itself, rather than killing them in
            // the middle of a statement (which would look like a crash).
            .process_group(0)
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_file(&progress_path);
                return Err(e).with_context(|| {
                    format!(
                        "cannot start a {label} worker process ({})",
                        program.program.display()
                    )
                });
            }
        };
        let to_child = BufWriter::new(child.stdin.take().context("worker stdin")?);
        let mut from_child = BufReader::new(child.stdout.take().context("worker stdout")?);
        let stderr_tail = keep_stderr_tail(child.stderr.take().context("worker stderr")?);
        let hello = read_frame(&mut from_child);
        // The child has opened it (or failed): the name is not needed.
        let _ = std::fs::remove_file(&progress_path);
        let version = match hello {
            Ok(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
            other => {
                let _ = child.kill();
                let status = child.wait().ok();
                let said = stderr_tail.lock().map(|t| t.clone()).unwrap_or_default();
                anyhow::bail!(
                    "a {label} worker process did not start ({}): {}{}",
                    status.map_or("no status".to_string(), describe_exit),
                    match other {
                        Err(e) => e.to_string(),
                        _ => "no greeting".to_string(),
                    },
                    if said.trim().is_empty() {
                        String::new()
                    } else {
                        format!("; it said: {}", said.trim())
                    }
                );
            }
        };
        // A large pipe buffer: big results pass with fewer wake-ups.
        // SAFETY: fcntl on a pipe descriptor we own; failure is harmless.
        unsafe {
            libc::fcntl(
                from_child.get_ref().as_raw_fd(),
                libc::F_SETPIPE_SZ,
                1 << 20,
            );
        }
        // The greeting was read through a BufReader: keep what it read ahead.
        let buffer = from_child.buffer().to_vec();
        let from_child = from_child.into_inner();
        Ok((
            WorkerProcess {
                child,
                to_child,
                from_child,
                buffer,
                chunk: vec![0u8; 256 * 1024].into_boxed_slice(),
                stderr_tail,
                progress,
                label,
            },
            version,
        ))
    }

    /// The next reply, waiting at most until `deadline`: `Ok(None)` when
    /// the time is up, `Err` when the child's output ended or is garbled.
    fn read_reply(&mut self, deadline: Instant) -> io::Result<Option<Reply>> {
        loop {
            if self.buffer.len() >= 4 {
                let len = u32::from_le_bytes([
                    self.buffer[0],
                    self.buffer[1],
                    self.buffer[2],
                    self.buffer[3],
                ]) as usize;
                if self.buffer.len() >= 4 + len {
                    let reply = decode_reply(&self.buffer[4..4 + len]);
                    self.buffer.drain(..4 + len);
                    return reply.map(Some);
                }
            }
            let Some(n) = read_within(&mut self.from_child, &mut self.chunk, deadline)? else {
                return Ok(None);
            };
            self.buffer.extend_from_slice(&self.chunk[..n]);
        }
    }

    fn send(&mut self, request: &Request<'_>) -> io::Result<()> {
        write_frame(&mut self.to_child, &encode_request(request))
    }

    /// Sends `request` and waits for its reply, at most `wait`.
    fn call(&mut self, request: &Request<'_>, wait: Duration) -> Result<Reply, DbError> {
        if self.send(request).is_err() {
            return Err(self.died());
        }
        match self.read_reply(Instant::now() + wait) {
            Ok(Some(reply)) => Ok(reply),
            Err(_) => Err(self.died()),
            Ok(None) => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                Err(DbError {
                    kind: FailureKind::Hang,
                    code: None,
                    message: format!(
                        "the {} worker process did not answer within {} s; it was killed",
                        self.label,
                        wait.as_secs()
                    ),
                })
            }
        }
    }

    /// The error for a child that is gone: how it ended, and its last words.
    fn died(&mut self) -> DbError {
        // Its output closed; it is exiting or has exited.
        let status = self.child.wait();
        death_error(
            &format!("the {} worker process", self.label),
            status,
            &self.stderr_tail,
        )
    }
}

/// What worker processes run: an engine (by its `--dbms` name, `label`
/// for messages), the engine build to load, and the limits they keep.
#[derive(Clone, Debug)]
pub struct WorkerSpec {
    pub dbms: String,
    pub label: &'static str,
    /// A shared library of the engine to load instead of the built-in one.
    pub library: Option<PathBuf>,
    pub time_limit: Duration,
    /// The most memory a child may map, in bytes.
    pub memory_limit: Option<u64>,
}

/// Idle children kept for the next database.
pub struct WorkerPool {
    program: WorkerProgram,
    label: &'static str,
    args: Vec<OsString>,
    time_limit: Duration,
    idle: Mutex<Vec<WorkerProcess>>,
}

impl WorkerPool {
    /// A pool of children that run `spec`; starts one at once, to fail
    /// early if the worker cannot start or does not run the engine version
    /// `expected_version` the parent's generators target.
    pub fn start(
        program: WorkerProgram,
        spec: &WorkerSpec,
        expected_version: &str,
    ) -> anyhow::Result<WorkerPool> {
        let mut args: Vec<OsString> = vec![
            "--dbms".into(),
            spec.dbms.clone().into(),
            "--time-limit-ms".into(),
            spec.time_limit.as_millis().to_string().into(),
        ];
        if let Some(lib) = &spec.library {
            args.push("--library".into());
            args.push(lib.as_os_str().to_owned());
        }
        if let Some(bytes) = spec.memory_limit {
            args.push("--memory-limit".into());
            args.push(bytes.to_string().into());
        }
        keep_freed_memory();
        let (first, version) = WorkerProcess::spawn(&program, spec.label, &args)?;
        anyhow::ensure!(
            version == expected_version,
            "the {} worker process runs version {version}, not {expected_version} as lancet does",
            spec.label
        );
        Ok(WorkerPool {
            program,
            label: spec.label,
            args,
            time_limit: spec.time_limit,
            idle: Mutex::new(vec![first]),
        })
    }

    /// A new, empty database in an idle or new child.
    pub fn open(self: &Arc<Self>) -> anyhow::Result<IsolatedConnection> {
        self.open_in_child(None)
    }

    /// The database file at `path`, opened in an idle or new child: one
    /// of several sessions on one database, each in a process of its own.
    pub fn open_file(self: &Arc<Self>, path: &Path) -> anyhow::Result<IsolatedConnection> {
        self.open_in_child(Some(path))
    }

    fn open_in_child(self: &Arc<Self>, file: Option<&Path>) -> anyhow::Result<IsolatedConnection> {
        let wait = self.time_limit + HANG_GRACE;
        // An idle child that fails to open (it died while idle) is
        // replaced by a new one.
        for _ in 0..2 {
            let reused = self.idle.lock().ok().and_then(|mut idle| idle.pop());
            let mut process = match reused {
                Some(p) => p,
                None => WorkerProcess::spawn(&self.program, self.label, &self.args)?.0,
            };
            match process.call(&Request::Open(file), wait) {
                Ok(Reply::Done) => {
                    return Ok(IsolatedConnection {
                        process: Some(process),
                        pool: Arc::clone(self),
                        failed_at: None,
                    })
                }
                Ok(Reply::Error(e)) => return Err(e.into()),
                Ok(_) => anyhow::bail!("a {} worker answered Open with something else", self.label),
                Err(e) => log::debug!("an idle {} worker is gone: {e}", self.label),
            }
        }
        anyhow::bail!(
            "{} worker processes die as soon as they open a database",
            self.label
        )
    }

    fn give_back(&self, mut process: WorkerProcess) {
        if process.send(&Request::Close).is_err() {
            return;
        }
        if let Ok(mut idle) = self.idle.lock() {
            if idle.len() < IDLE_LIMIT {
                idle.push(process);
            }
        }
    }
}

/// One database in a child process. After the child dies every call
/// reports the lost connection; dropping the connection returns a live
/// child to its pool.
pub struct IsolatedConnection {
    process: Option<WorkerProcess>,
    pool: Arc<WorkerPool>,
    /// After the child died in a batch: the query it was running.
    failed_at: Option<usize>,
}

impl IsolatedConnection {
    fn call(&mut self, request: &Request<'_>) -> Result<Reply, DbError> {
        let wait = self.pool.time_limit + HANG_GRACE;
        let Some(process) = self.process.as_mut() else {
            return Err(DbError {
                kind: FailureKind::ConnectionLost,
                code: None,
                message: format!(
                    "the {} worker process of this database is gone",
                    self.pool.label
                ),
            });
        };
        let reply = process.call(request, wait);
        if matches!(&reply, Err(e) if matches!(e.kind, FailureKind::ConnectionLost | FailureKind::Hang))
        {
            use std::os::unix::fs::FileExt;
            let mut index = [0u8; 4];
            self.failed_at = process
                .progress
                .read_exact_at(&mut index, 0)
                .ok()
                .map(|()| u32::from_le_bytes(index) as usize);
            self.process = None;
        }
        match reply? {
            Reply::Error(e) => Err(e),
            other => Ok(other),
        }
    }
}

impl Drop for IsolatedConnection {
    fn drop(&mut self) {
        if let Some(process) = self.process.take() {
            self.pool.give_back(process);
        }
    }
}

impl Connection for IsolatedConnection {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.call(&Request::Execute(sql)).map(|_| ())
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        match self.call(&Request::Query(sql))? {
            Reply::Rows(rows) => Ok(rows),
            _ => Ok(Vec::new()),
        }
    }

    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        self.call(&Request::SetKnobs(setting)).map(|_| ())
    }

    fn query_many(&mut self, sqls: &[&str]) -> Vec<Result<Vec<Row>, DbError>> {
        match self.call(&Request::QueryMany(sqls)) {
            Ok(Reply::Many(parts)) => parts
                .into_iter()
                .map(|p| match p {
                    Reply::Rows(rows) => Ok(rows),
                    Reply::Error(e) => Err(e),
                    _ => Ok(Vec::new()),
                })
                .collect(),
            Ok(_) => vec![Err(DbError::statement(
                None,
                format!(
                    "a {} worker answered a batch with something else",
                    self.pool.label
                ),
            ))],
            Err(e) => {
                // The child died or hung in the middle of the batch: the
                // queries before the one it was running are not the cause.
                let at = self.failed_at.take().unwrap_or(0);
                let mut out: Vec<Result<Vec<Row>, DbError>> = (0..at
                    .min(sqls.len().saturating_sub(1)))
                    .map(|_| Ok(Vec::new()))
                    .collect();
                out.push(Err(e));
                out
            }
        }
    }
}
