//! Crash isolation: SQLite runs in a child process, so that a segfault, an
//! abort or runaway memory inside the library ends that process, not the
//! campaign. The parent sees the child die in the middle of a statement and
//! reports it as a lost connection, which the runner turns into a `crash`
//! finding (the statements that led to it are the session's, kept in the
//! parent); the next database gets a new child.
//!
//! The child is lancet itself, started as `lancet __sqlite-worker` (see
//! [`WorkerProgram`]), serving one database at a time over its stdin and
//! stdout with the small binary protocol below. Children are reused across
//! databases (a pool in the provider), so a worker thread pays for one
//! process start per crash, not per database.
//!
//! Protocol: each message is a frame, a `u32` little-endian length and that
//! many bytes. The parent sends requests ([`Request`]); the child answers
//! each (except `Close`) with one reply frame: `K` (done), `R` (rows) or `X`
//! (an error). A child that starts says hello first: its library's version
//! number.

use crate::connection::SqliteConnection;
use crate::dynamic::{DynamicConnection, SqliteLibrary};
use anyhow::Context;
use lancet_core::{Connection, DbError, FailureKind, KnobSetting, Row, Value};
use std::ffi::OsString;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The hidden subcommand that makes lancet a worker process.
pub const WORKER_SUBCOMMAND: &str = "__sqlite-worker";

/// How long past its statement time limit a child may stay silent before
/// it is taken to hang and is killed (the time limit interrupts statements
/// inside the child; one that does not stop is a hang of the library).
const HANG_GRACE: Duration = Duration::from_secs(10);

/// At most this many idle children are kept for reuse.
const IDLE_LIMIT: usize = 16;

/// How much of a child's standard error is kept, for the message of a crash.
const STDERR_TAIL: usize = 2000;

/// How to start a worker process: lancet's own executable and the
/// arguments before the worker's options.
#[derive(Clone, Debug)]
pub struct WorkerProgram {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

impl WorkerProgram {
    /// The running executable, started with [`WORKER_SUBCOMMAND`].
    pub fn current_exe() -> anyhow::Result<WorkerProgram> {
        let program = std::env::current_exe()
            .context("cannot find lancet's own executable to start SQLite worker processes")?;
        Ok(WorkerProgram {
            program,
            args: vec![WORKER_SUBCOMMAND.into()],
        })
    }
}

/// What the child is told to do.
enum Request<'a> {
    /// Close the current database (if any) and open a new, empty one.
    Open,
    Execute(&'a str),
    Query(&'a str),
    /// Several queries, stopping at the first that fails: one round trip.
    QueryMany(&'a [&'a str]),
    SetKnobs(&'a KnobSetting),
    /// Close the current database; no reply.
    Close,
}

// ---------------------------------------------------------------------------
// Frames and their contents.

fn write_frame(out: &mut impl Write, body: &[u8]) -> io::Result<()> {
    let len = u32::try_from(body.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "frame over 4 GiB"))?;
    out.write_all(&len.to_le_bytes())?;
    out.write_all(body)?;
    out.flush()
}

/// The next frame, or `None` at a clean end of input.
fn read_frame(input: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Reads the fields of a frame in order; every read checks the length.
struct Fields<'a> {
    rest: &'a [u8],
}

impl<'a> Fields<'a> {
    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        if self.rest.len() < n {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "truncated frame from an SQLite worker process",
            ));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> io::Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> io::Result<u64> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }
    fn bytes(&mut self) -> io::Result<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    fn string(&mut self) -> io::Result<String> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }
}

fn encode_request(request: &Request<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    match request {
        Request::Open => out.push(b'O'),
        Request::Execute(sql) => {
            out.push(b'E');
            out.extend_from_slice(sql.as_bytes());
        }
        Request::Query(sql) => {
            out.push(b'Q');
            out.extend_from_slice(sql.as_bytes());
        }
        Request::QueryMany(sqls) => {
            out.push(b'M');
            for sql in sqls.iter() {
                put_bytes(&mut out, sql.as_bytes());
            }
        }
        Request::SetKnobs(setting) => {
            out.push(b'S');
            for name in &setting.off {
                put_bytes(&mut out, name.as_bytes());
            }
        }
        Request::Close => out.push(b'C'),
    }
    out
}

/// A reply as the parent reads it.
enum Reply {
    Done,
    Rows(Vec<Row>),
    Error(DbError),
    /// The results of a `QueryMany`, up to and with the first error.
    Many(Vec<Reply>),
}

fn encode_error(out: &mut Vec<u8>, e: &DbError) {
    out.push(b'X');
    out.push(match e.kind {
        FailureKind::Statement => 0,
        FailureKind::ConnectionLost => 1,
        FailureKind::Timeout => 2,
        FailureKind::Hang => 3,
    });
    match &e.code {
        Some(code) => {
            out.push(1);
            put_bytes(out, code.as_bytes());
        }
        None => out.push(0),
    }
    put_bytes(out, e.message.as_bytes());
}

fn encode_rows(out: &mut Vec<u8>, rows: &[Row]) {
    out.push(b'R');
    out.extend_from_slice(&(rows.len() as u32).to_le_bytes());
    for row in rows {
        out.extend_from_slice(&(row.len() as u32).to_le_bytes());
        for v in row {
            match v {
                Value::Null => out.push(0),
                Value::Integer(i) => {
                    out.push(1);
                    out.extend_from_slice(&i.to_le_bytes());
                }
                Value::Real(r) => {
                    out.push(2);
                    out.extend_from_slice(&r.to_bits().to_le_bytes());
                }
                Value::Text(t) => {
                    out.push(3);
                    put_bytes(out, t.as_bytes());
                }
                Value::Blob(b) => {
                    out.push(4);
                    put_bytes(out, b);
                }
                Value::Boolean(b) => {
                    out.push(5);
                    out.push(u8::from(*b));
                }
                Value::Decimal(d) => {
                    out.push(6);
                    put_bytes(out, d.as_bytes());
                }
            }
        }
    }
}

fn decode_reply(body: &[u8]) -> io::Result<Reply> {
    let mut f = Fields { rest: body };
    match f.u8()? {
        b'K' => Ok(Reply::Done),
        b'M' => {
            let n = f.u32()? as usize;
            let mut parts = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                parts.push(decode_reply(f.bytes()?)?);
            }
            Ok(Reply::Many(parts))
        }
        b'X' => {
            let kind = match f.u8()? {
                0 => FailureKind::Statement,
                1 => FailureKind::ConnectionLost,
                2 => FailureKind::Timeout,
                _ => FailureKind::Hang,
            };
            let code = match f.u8()? {
                0 => None,
                _ => Some(f.string()?),
            };
            let message = f.string()?;
            Ok(Reply::Error(DbError {
                kind,
                code,
                message,
            }))
        }
        b'R' => {
            let n = f.u32()? as usize;
            let mut rows = Vec::with_capacity(n.min(1 << 16));
            for _ in 0..n {
                let width = f.u32()? as usize;
                let mut row = Vec::with_capacity(width.min(1 << 12));
                for _ in 0..width {
                    row.push(match f.u8()? {
                        0 => Value::Null,
                        1 => Value::Integer(f.u64()? as i64),
                        2 => Value::Real(f64::from_bits(f.u64()?)),
                        3 => Value::Text(f.string()?),
                        4 => Value::Blob(f.bytes()?.to_vec()),
                        5 => Value::Boolean(f.u8()? != 0),
                        6 => Value::Decimal(f.string()?),
                        t => {
                            return Err(io::Error::new(
                                io::ErrorKind::InvalidData,
                                format!("unknown value tag {t} from an SQLite worker process"),
                            ))
                        }
                    });
                }
                rows.push(row);
            }
            Ok(Reply::Rows(rows))
        }
        t => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unknown reply {t} from an SQLite worker process"),
        )),
    }
}

// ---------------------------------------------------------------------------
// The child.

/// Limits the child's address space, so that runaway memory in the library
/// fails its allocations (an out-of-memory error or an abort) instead of
/// dragging the machine into swap.
pub fn limit_memory(bytes: u64) {
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: bytes as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct we pass; failure leaves the limit
    // as it was, which is acceptable.
    unsafe {
        libc::setrlimit(libc::RLIMIT_AS, &limit);
    }
}

/// Large results are built, sent and freed for every query: keep freed
/// memory in the process instead of unmapping it and faulting fresh pages
/// in for the next result (glibc maps blocks over 128 KiB afresh by
/// default), which cost more than the copies themselves.
pub fn keep_freed_memory() {
    // SAFETY: mallopt only tunes glibc's allocator; a refusal changes nothing.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}

/// The worker process's main loop: serves requests from stdin until it
/// closes. `library` is `--sqlite-lib`, if given.
pub fn serve(
    library: Option<&Path>,
    time_limit: Duration,
    memory_limit: Option<u64>,
    progress: Option<&Path>,
) -> anyhow::Result<()> {
    // Where the child notes which query of a batch it is running, for the
    // parent to read if the child dies (a write to a file: no wake-up).
    let progress = progress
        .map(|p| std::fs::OpenOptions::new().write(true).open(p))
        .transpose()
        .context("cannot open the worker's progress file")?;
    if let Some(bytes) = memory_limit {
        limit_memory(bytes);
    }
    keep_freed_memory();
    let library = library.map(SqliteLibrary::load).transpose()?;
    let version = match &library {
        Some(lib) => lib.version_number(),
        None => rusqlite::version_number(),
    };
    let mut input = BufReader::new(io::stdin().lock());
    // Straight to file descriptor 1: Rust's stdout is line-buffered, which
    // would split binary frames at every newline byte into extra writes.
    let stdout = io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .context("cannot use the worker's standard output")?;
    let mut output = BufWriter::with_capacity(256 * 1024, std::fs::File::from(stdout));
    write_frame(&mut output, &version.to_le_bytes())?;
    let mut conn: Option<Box<dyn Connection>> = None;
    let mut reply = Vec::with_capacity(4096);
    while let Some(frame) = read_frame(&mut input)? {
        reply.clear();
        let (&tag, body) = frame
            .split_first()
            .context("empty request to an SQLite worker process")?;
        let result: Result<Option<Vec<Row>>, DbError> = match tag {
            b'O' => {
                conn = None;
                let opened: anyhow::Result<Box<dyn Connection>> = match &library {
                    Some(lib) => DynamicConnection::open(Arc::clone(lib), time_limit)
                        .map(|c| Box::new(c) as Box<dyn Connection>),
                    None => SqliteConnection::open_with_time_limit(time_limit)
                        .map(|c| Box::new(c) as Box<dyn Connection>),
                };
                match opened {
                    Ok(c) => {
                        conn = Some(c);
                        Ok(None)
                    }
                    Err(e) => Err(DbError::statement(None, format!("{e:#}"))),
                }
            }
            b'C' => {
                conn = None;
                continue;
            }
            b'M' => {
                let mut f = Fields { rest: body };
                let mut sqls = Vec::new();
                while !f.rest.is_empty() {
                    sqls.push(f.string()?);
                }
                let mut parts: Vec<Vec<u8>> = Vec::with_capacity(sqls.len());
                for (i, sql) in sqls.iter().enumerate() {
                    if let Some(file) = &progress {
                        use std::os::unix::fs::FileExt;
                        let _ = file.write_at(&(i as u32).to_le_bytes(), 0);
                    }
                    let mut part = Vec::new();
                    let failed = match conn.as_mut() {
                        None => {
                            encode_error(
                                &mut part,
                                &DbError::statement(None, "no database is open"),
                            );
                            true
                        }
                        Some(c) => match c.query(sql) {
                            Ok(rows) => {
                                encode_rows(&mut part, &rows);
                                false
                            }
                            Err(e) => {
                                encode_error(&mut part, &e);
                                true
                            }
                        },
                    };
                    parts.push(part);
                    if failed {
                        break;
                    }
                }
                reply.push(b'M');
                reply.extend_from_slice(&(parts.len() as u32).to_le_bytes());
                for part in &parts {
                    put_bytes(&mut reply, part);
                }
                write_frame(&mut output, &reply)?;
                continue;
            }
            _ => match conn.as_mut() {
                None => Err(DbError::statement(None, "no database is open")),
                Some(c) => match tag {
                    b'E' => c.execute(&String::from_utf8_lossy(body)).map(|()| None),
                    b'Q' => c.query(&String::from_utf8_lossy(body)).map(Some),
                    b'S' => {
                        let mut f = Fields { rest: body };
                        let mut off = Vec::new();
                        while !f.rest.is_empty() {
                            off.push(f.string()?);
                        }
                        c.set_knobs(&KnobSetting { off }).map(|()| None)
                    }
                    t => anyhow::bail!("unknown request {t} to an SQLite worker process"),
                },
            },
        };
        match result {
            Ok(None) => reply.push(b'K'),
            Ok(Some(rows)) => encode_rows(&mut reply, &rows),
            Err(e) => encode_error(&mut reply, &e),
        }
        write_frame(&mut output, &reply)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The parent.

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
}

impl WorkerProcess {
    fn spawn(program: &WorkerProgram, args: &[OsString]) -> anyhow::Result<(WorkerProcess, i32)> {
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
                        "cannot start an SQLite worker process ({})",
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
            Ok(Some(b)) if b.len() == 4 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            other => {
                let _ = child.kill();
                let status = child.wait().ok();
                let said = stderr_tail.lock().map(|t| t.clone()).unwrap_or_default();
                anyhow::bail!(
                    "an SQLite worker process did not start ({}): {}{}",
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
                        "the SQLite worker process did not answer within {} s; it was killed",
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
        death_error("the SQLite worker process", status, &self.stderr_tail)
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The error for a child process that is gone (`what` names it): how it
/// ended, and the last words it wrote to stderr.
pub fn death_error(
    what: &str,
    status: io::Result<std::process::ExitStatus>,
    stderr_tail: &Mutex<String>,
) -> DbError {
    // Let the stderr reader take the child's last output.
    std::thread::sleep(Duration::from_millis(20));
    let said = stderr_tail
        .lock()
        .map(|t| t.trim().to_string())
        .unwrap_or_default();
    DbError {
        kind: FailureKind::ConnectionLost,
        code: None,
        message: format!(
            "{what} died ({}){}",
            match status {
                Ok(s) => describe_exit(s),
                Err(e) => format!("no exit status: {e}"),
            },
            if said.is_empty() {
                String::new()
            } else {
                format!("; it wrote: {said}")
            }
        ),
    }
}

/// Reads what a child wrote into `chunk`, waiting at most until
/// `deadline`: `Ok(None)` when the time is up, `Err` when its output ended
/// (`UnexpectedEof`) or cannot be read.
pub fn read_within(
    from_child: &mut ChildStdout,
    chunk: &mut [u8],
    deadline: Instant,
) -> io::Result<Option<usize>> {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut fds = libc::pollfd {
            fd: from_child.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, for the duration of the call.
        let ready = unsafe { libc::poll(&mut fds, 1, ms) };
        if ready < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if ready == 0 {
            return Ok(None);
        }
        let n = from_child.read(chunk)?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the child process closed its output",
            ));
        }
        return Ok(Some(n));
    }
}

/// Keeps the end of what a child process writes to its standard error
/// (read on a thread of its own), for the message of its crash.
pub fn keep_stderr_tail(mut stderr: std::process::ChildStderr) -> Arc<Mutex<String>> {
    let stderr_tail = Arc::new(Mutex::new(String::new()));
    let tail = Arc::clone(&stderr_tail);
    std::thread::spawn(move || {
        let mut buf = [0u8; 1024];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Ok(mut t) = tail.lock() {
                t.push_str(&String::from_utf8_lossy(&buf[..n]));
                if t.len() > STDERR_TAIL {
                    let cut = t.len() - STDERR_TAIL;
                    let cut = (cut..t.len()).find(|&i| t.is_char_boundary(i)).unwrap_or(0);
                    t.drain(..cut);
                }
            }
        }
    });
    stderr_tail
}

/// `killed by signal 11 (SIGSEGV)`, `exit status 3`.
pub fn describe_exit(status: std::process::ExitStatus) -> String {
    if let Some(signal) = status.signal() {
        let name = match signal {
            libc::SIGSEGV => " (SIGSEGV)",
            libc::SIGABRT => " (SIGABRT)",
            libc::SIGBUS => " (SIGBUS)",
            libc::SIGFPE => " (SIGFPE)",
            libc::SIGILL => " (SIGILL)",
            libc::SIGKILL => " (SIGKILL)",
            _ => "",
        };
        format!("killed by signal {signal}{name}")
    } else {
        match status.code() {
            Some(code) => format!("exit status {code}"),
            None => "no exit status".to_string(),
        }
    }
}

/// Starts children and keeps idle ones for reuse.
pub struct WorkerPool {
    program: WorkerProgram,
    /// The worker's own options (library, time limit, memory limit).
    args: Vec<OsString>,
    /// The statement time limit the children apply, for the hang timeout.
    time_limit: Duration,
    idle: Mutex<Vec<WorkerProcess>>,
}

impl WorkerPool {
    /// A pool whose children load `library` (or use the bundled SQLite)
    /// and interrupt statements after `time_limit`. Starts one child at
    /// once, so that a worker that cannot start is an error now, and checks
    /// it runs the SQLite version `expected_version`.
    pub fn start(
        program: WorkerProgram,
        library: Option<&Path>,
        time_limit: Duration,
        memory_limit: Option<u64>,
        expected_version: i32,
    ) -> anyhow::Result<WorkerPool> {
        let mut args: Vec<OsString> = vec![
            "--time-limit-ms".into(),
            time_limit.as_millis().to_string().into(),
        ];
        if let Some(lib) = library {
            args.push("--sqlite-lib".into());
            args.push(lib.as_os_str().to_owned());
        }
        if let Some(bytes) = memory_limit {
            args.push("--memory-limit".into());
            args.push(bytes.to_string().into());
        }
        keep_freed_memory();
        let (first, version) = WorkerProcess::spawn(&program, &args)?;
        anyhow::ensure!(
            version == expected_version,
            "the SQLite worker process runs SQLite {version}, not {expected_version} as lancet does"
        );
        Ok(WorkerPool {
            program,
            args,
            time_limit,
            idle: Mutex::new(vec![first]),
        })
    }

    /// A new, empty database in an idle or new child.
    pub fn open(self: &Arc<Self>) -> anyhow::Result<IsolatedConnection> {
        let wait = self.time_limit + HANG_GRACE;
        // An idle child that fails to open (it died while idle) is
        // replaced by a new one.
        for _ in 0..2 {
            let reused = self.idle.lock().ok().and_then(|mut idle| idle.pop());
            let mut process = match reused {
                Some(p) => p,
                None => WorkerProcess::spawn(&self.program, &self.args)?.0,
            };
            match process.call(&Request::Open, wait) {
                Ok(Reply::Done) => {
                    return Ok(IsolatedConnection {
                        process: Some(process),
                        pool: Arc::clone(self),
                        failed_at: None,
                    })
                }
                Ok(Reply::Error(e)) => return Err(e.into()),
                Ok(_) => anyhow::bail!("an SQLite worker answered Open with something else"),
                Err(e) => log::debug!("an idle SQLite worker is gone: {e}"),
            }
        }
        anyhow::bail!("SQLite worker processes die as soon as they open a database")
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
                message: "the SQLite worker process of this database is gone".into(),
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
                "an SQLite worker answered a batch with something else",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_errors_survive_the_trip() {
        let rows = vec![
            vec![
                Value::Null,
                Value::Integer(-7),
                Value::Real(-0.0),
                Value::Text("é'x".into()),
            ],
            vec![
                Value::Blob(vec![0, 255]),
                Value::Boolean(true),
                Value::Decimal("1.50".into()),
                Value::Real(f64::NAN),
            ],
        ];
        let mut out = Vec::new();
        encode_rows(&mut out, &rows);
        let Reply::Rows(back) = decode_reply(&out).unwrap() else {
            panic!("not rows")
        };
        assert_eq!(back[0], rows[0]);
        assert_eq!(back[1][..3], rows[1][..3]);
        assert!(matches!(back[1][3], Value::Real(r) if r.is_nan()));
        assert!(matches!(back[0][2], Value::Real(r) if r.is_sign_negative()));

        let e = DbError {
            kind: FailureKind::Timeout,
            code: Some("SQLITE_INTERRUPT".into()),
            message: "interrupted".into(),
        };
        let mut out = Vec::new();
        encode_error(&mut out, &e);
        let Reply::Error(back) = decode_reply(&out).unwrap() else {
            panic!("not an error")
        };
        assert_eq!(back, e);
        assert!(decode_reply(&out[..out.len() - 1]).is_err());
    }
}
