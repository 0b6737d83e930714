//! What a parent of a child process needs, whatever the child does: the
//! end of its stderr, how it ended, and its output within a deadline.

use super::*;

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
