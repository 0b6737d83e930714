//! The child: serves one database at a time over stdin and stdout.

use super::protocol::*;
use super::*;

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

/// What a worker process serves: its engine's version (checked by the
/// parent against its own) and how to open a fresh, empty database
/// (`None`) or a database file (`Some(path)`; an engine without files
/// says so with an error).
pub struct WorkerEngine {
    pub version: String,
    pub open: WorkerOpen,
}

/// How a worker opens a database: fresh and empty, or a file.
pub type WorkerOpen = Box<dyn FnMut(Option<&Path>) -> anyhow::Result<Box<dyn Connection>>>;

/// The worker process's main loop: serves requests from stdin until it
/// closes, on the databases `engine` opens.
pub fn serve(
    mut engine: WorkerEngine,
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
    let mut input = BufReader::new(io::stdin().lock());
    // Straight to file descriptor 1: Rust's stdout is line-buffered, which
    // would split binary frames at every newline byte into extra writes.
    let stdout = io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .context("cannot use the worker's standard output")?;
    let mut output = BufWriter::with_capacity(256 * 1024, std::fs::File::from(stdout));
    write_frame(&mut output, engine.version.as_bytes())?;
    let mut conn: Option<Box<dyn Connection>> = None;
    let mut reply = Vec::with_capacity(4096);
    while let Some(frame) = read_frame(&mut input)? {
        reply.clear();
        let (&tag, body) = frame
            .split_first()
            .context("empty request to an engine worker process")?;
        let result: Result<Option<Vec<Row>>, DbError> = match tag {
            b'O' => {
                conn = None;
                let file = (!body.is_empty()).then(|| Path::new(OsStr::from_bytes(body)));
                let opened = (engine.open)(file);
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
                        let mut changes = Vec::new();
                        while !f.rest.is_empty() {
                            changes.push(f.string()?);
                        }
                        c.set_knobs(&KnobSetting { changes }).map(|()| None)
                    }
                    t => anyhow::bail!("unknown request {t} to an engine worker process"),
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
