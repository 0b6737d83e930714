//! Worker processes for engines that run inside lancet (SQLite, and any
//! other in-process engine that says so in its [`crate::DbmsDescription`]):
//! the engine runs in a child process, so that a segfault, an abort or
//! runaway memory inside the library ends that process, not the campaign.
//! The parent sees the child die in the middle of a statement and reports
//! it as a lost connection, which the runner turns into a `crash` finding
//! (the statements that led to it are the session's, kept in the parent);
//! the next database gets a new child.
//!
//! The child is lancet itself, started as `lancet __engine-worker --dbms
//! NAME` (see [`WorkerProgram`]), serving one database at a time over its
//! stdin and stdout with the small binary protocol below; what it serves
//! the engine gives as a [`WorkerEngine`]. Children are reused across
//! databases (a [`WorkerPool`] in the provider), so a worker thread pays
//! for one process start per crash, not per database.
//!
//! Protocol: each message is a frame, a `u32` little-endian length and that
//! many bytes. The parent sends requests ([`protocol::Request`]); the
//! child answers each (except `Close`) with one reply frame: `K` (done),
//! `R` (rows) or `X` (an error). A child that starts says hello first: its
//! engine's version, as text.
//!
//! Modules: [`protocol`] (frames and their contents), [`serve`] (the
//! child's loop), [`parent`] (child processes, their pool, and the
//! `Connection` over them), [`process`] (what any parent of a child
//! process needs: its stderr, how it ended, waiting for its output).

mod parent;
mod process;
mod protocol;
mod serve;

pub use parent::{IsolatedConnection, WorkerPool, WorkerSpec};
pub use process::{death_error, describe_exit, keep_stderr_tail, read_within};
pub use serve::{keep_freed_memory, limit_memory, serve, WorkerEngine, WorkerOpen};

use anyhow::Context;
use lancet_core::{Connection, DbError, FailureKind, KnobSetting, Row, Value};
use std::ffi::{OsStr, OsString};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The hidden subcommand that makes lancet a worker process.
pub const WORKER_SUBCOMMAND: &str = "__engine-worker";

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
            .context("cannot find lancet's own executable to start engine worker processes")?;
        Ok(WorkerProgram {
            program,
            args: vec![WORKER_SUBCOMMAND.into()],
        })
    }
}
