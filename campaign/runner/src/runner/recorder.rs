//! The flight recorder of a child process: the statements of the database
//! it is running, each written *before* it runs, into memory that the
//! parent shares (a memfd mapped by both). When the child dies inside the
//! engine, the parent reads what it was doing there, without the child
//! having paid a system call or a wake-up per statement.
//!
//! The child also keeps its counts there (checks per oracle, skipped
//! checks, statements, time in the engine), so that the checks of a
//! database that ends in a crash are counted too.
//!
//! Layout: a header of 64-bit words (bytes used, statements started, a
//! stop request from the parent, an overflow mark, whether the child is
//! inside the engine, then the counts), then records, each a
//! tag byte, a `u32` little-endian length and that many bytes. The child
//! appends; the parent reads once the child is gone, or reads the header
//! words while it runs (to see it is making progress, and to ask it to stop).

use lancet_core::{Connection, DbError, KnobSetting, Row};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The file descriptor the recorder has in the child.
pub const CHILD_FD: RawFd = 3;

/// Size of the mapping: far more than a database's statements (a few
/// hundred KiB); only the pages written take memory.
const SIZE: usize = 64 << 20;
/// Oracles whose checks the header counts (more share the last slot).
pub const COUNTED_ORACLES: usize = 32;
const COUNTS: usize = 10;
/// The header word that marks the end of what a new check keeps: the
/// setup (the statements that succeeded before it).
const KEPT: usize = 8;
/// The header word counting distinct plans (plan coverage).
const PLANS: usize = 9;
const HEADER: usize = 8 * (COUNTS + 2 * COUNTED_ORACLES);

/// What a record is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tag {
    /// A statement that changes the database, about to run.
    Execute,
    /// The last `Execute` succeeded (it is part of the setup).
    Succeeded,
    /// A query, about to run.
    Query,
    /// A check begins: its index (`u64`) and its oracle's name.
    Check,
    /// An optimizer configuration about to be applied (knob names, `,`).
    Knobs,
}

impl Tag {
    fn byte(self) -> u8 {
        match self {
            Tag::Execute => b'E',
            Tag::Succeeded => b'S',
            Tag::Query => b'Q',
            Tag::Check => b'C',
            Tag::Knobs => b'N',
        }
    }
    fn from_byte(b: u8) -> Option<Tag> {
        Some(match b {
            b'E' => Tag::Execute,
            b'S' => Tag::Succeeded,
            b'Q' => Tag::Query,
            b'C' => Tag::Check,
            b'N' => Tag::Knobs,
            _ => return None,
        })
    }
}

/// A shared mapping of the recorder's memory.
pub struct FlightRecorder {
    base: *mut u8,
    fd: OwnedFd,
}

// SAFETY: the mapping lives as long as the value; the header words are
// accessed as atomics, and records are written by one process (the child)
// and read by the other only after the child is gone.
unsafe impl Send for FlightRecorder {}
unsafe impl Sync for FlightRecorder {}

impl FlightRecorder {
    /// A new recorder (the parent's side), to be handed to one child.
    pub fn create() -> io::Result<FlightRecorder> {
        // SAFETY: a NUL-terminated name; the flags ask for close-on-exec
        // (the child gets its copy through `dup2` only).
        let fd =
            unsafe { libc::memfd_create(c"lancet-flight-recorder".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor we just opened and own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: ftruncate on our own descriptor.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), SIZE as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Self::map(fd)
    }

    /// The recorder the parent handed to this process (the child's side).
    pub fn inherited() -> io::Result<FlightRecorder> {
        // SAFETY: the parent put the recorder at CHILD_FD for this process;
        // nothing else here owns that descriptor.
        let fd = unsafe { OwnedFd::from_raw_fd(CHILD_FD) };
        Self::map(fd)
    }

    fn map(fd: OwnedFd) -> io::Result<FlightRecorder> {
        // SAFETY: maps SIZE bytes of a file of that size, shared.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(FlightRecorder {
            base: base.cast(),
            fd,
        })
    }

    /// The descriptor to hand to the child (as [`CHILD_FD`]).
    pub fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn word(&self, i: usize) -> &AtomicU64 {
        // SAFETY: the header's words are 8-byte aligned (the mapping is
        // page-aligned) and inside it; AtomicU64 has u64's layout.
        unsafe { &*(self.base.add(8 * i) as *const AtomicU64) }
    }

    /// Forgets the records (a new database begins); the stop request stays.
    pub fn clear(&self) {
        self.word(3).store(0, Ordering::Relaxed);
        self.word(KEPT).store(HEADER as u64, Ordering::Relaxed);
        self.word(0).store(HEADER as u64, Ordering::Release);
    }

    /// Appends a record made of `parts`. A check's record first drops the
    /// records after the setup (the queries of earlier checks and their
    /// knobs, which the defaults replaced): the recorder holds a database's
    /// setup and one check, however many checks it runs. A record that
    /// does not fit marks the recorder as overflowed (the parent then says
    /// the record is incomplete).
    pub fn record(&self, tag: Tag, parts: &[&[u8]]) {
        let mut used = (self.word(0).load(Ordering::Relaxed) as usize).max(HEADER);
        if tag == Tag::Check {
            used = (self.word(KEPT).load(Ordering::Relaxed) as usize).clamp(HEADER, used);
        }
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let end = used + 5 + len;
        if end > SIZE {
            self.word(3).store(1, Ordering::Relaxed);
            return;
        }
        // SAFETY: [used, end) is inside the mapping, written only here.
        unsafe {
            let mut p = self.base.add(used);
            *p = tag.byte();
            std::ptr::copy_nonoverlapping((len as u32).to_le_bytes().as_ptr(), p.add(1), 4);
            p = p.add(5);
            for part in parts {
                std::ptr::copy_nonoverlapping(part.as_ptr(), p, part.len());
                p = p.add(part.len());
            }
        }
        self.word(0).store(end as u64, Ordering::Release);
        if tag == Tag::Succeeded {
            self.word(KEPT).store(end as u64, Ordering::Relaxed);
        }
        if matches!(tag, Tag::Execute | Tag::Query) {
            self.word(1).fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Marks the child as inside the engine (`true`) or back in lancet.
    pub fn set_in_engine(&self, inside: bool) {
        self.word(4).store(u64::from(inside), Ordering::Relaxed);
    }

    /// Whether the child is inside the engine (a hang or crash there is
    /// the engine's; elsewhere, lancet's own).
    pub fn in_engine(&self) -> bool {
        self.word(4).load(Ordering::Relaxed) != 0
    }

    /// Withdraws a stop request (before the next database).
    pub fn clear_stop(&self) {
        self.word(2).store(0, Ordering::Relaxed);
    }

    /// Counts a check of oracle `oracle`; `nonempty` if it saw rows.
    pub fn count_check(&self, oracle: usize, nonempty: bool) {
        let slot = COUNTS + 2 * oracle.min(COUNTED_ORACLES - 1);
        self.word(slot).fetch_add(1, Ordering::Relaxed);
        if nonempty {
            self.word(slot + 1).fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts a skipped check.
    pub fn count_skipped(&self) {
        self.word(5).fetch_add(1, Ordering::Relaxed);
    }

    /// Counts statements run and the time they took in the engine.
    pub fn count_statements(&self, count: u64, nanos: u64) {
        self.word(6).fetch_add(count, Ordering::Relaxed);
        self.word(7).fetch_add(nanos, Ordering::Relaxed);
    }

    /// Counts plans run for the first time in their database.
    pub fn count_plans(&self, new: u64) {
        self.word(PLANS).fetch_add(new, Ordering::Relaxed);
    }

    /// The counts so far (they only grow over a child's life).
    pub fn counts(&self, oracles: usize) -> Counts {
        Counts {
            checks: (0..oracles.min(COUNTED_ORACLES))
                .map(|i| {
                    (
                        self.word(COUNTS + 2 * i).load(Ordering::Relaxed),
                        self.word(COUNTS + 2 * i + 1).load(Ordering::Relaxed),
                    )
                })
                .collect(),
            skipped: self.word(5).load(Ordering::Relaxed),
            statements: self.word(6).load(Ordering::Relaxed),
            dbms_nanos: self.word(7).load(Ordering::Relaxed),
            plans: self.word(PLANS).load(Ordering::Relaxed),
        }
    }

    /// Statements started so far (a count that moves while the child works).
    pub fn statements_started(&self) -> u64 {
        self.word(1).load(Ordering::Relaxed)
    }

    /// Asks the child to stop before its next check.
    pub fn request_stop(&self) {
        self.word(2).store(1, Ordering::Relaxed);
    }

    /// Whether the parent asked this child to stop.
    pub fn stop_requested(&self) -> bool {
        self.word(2).load(Ordering::Relaxed) != 0
    }

    /// The records, in order; whether some did not fit.
    pub fn records(&self) -> (Vec<(Tag, Vec<u8>)>, bool) {
        let used = (self.word(0).load(Ordering::Acquire) as usize).clamp(HEADER, SIZE);
        let mut out = Vec::new();
        let mut at = HEADER;
        // SAFETY: reads within [HEADER, used), inside the mapping.
        let bytes = unsafe { std::slice::from_raw_parts(self.base, used) };
        while at + 5 <= used {
            let len =
                u32::from_le_bytes([bytes[at + 1], bytes[at + 2], bytes[at + 3], bytes[at + 4]])
                    as usize;
            let Some(tag) = Tag::from_byte(bytes[at]) else {
                break;
            };
            if at + 5 + len > used {
                break;
            }
            out.push((tag, bytes[at + 5..at + 5 + len].to_vec()));
            at += 5 + len;
        }
        (out, self.word(3).load(Ordering::Relaxed) != 0)
    }
}

impl Drop for FlightRecorder {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `map` mapped.
        unsafe {
            libc::munmap(self.base.cast(), SIZE);
        }
    }
}

/// A child's counts, as kept in its recorder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    /// Per oracle: checks, and how many of them saw rows.
    pub checks: Vec<(u64, u64)>,
    pub skipped: u64,
    pub statements: u64,
    pub dbms_nanos: u64,
    /// Plans run for the first time in their database.
    pub plans: u64,
}

impl Counts {
    /// What was counted since `before`.
    pub fn since(&self, before: &Counts) -> Counts {
        Counts {
            checks: self
                .checks
                .iter()
                .enumerate()
                .map(|(i, &(c, n))| {
                    let (bc, bn) = before.checks.get(i).copied().unwrap_or_default();
                    (c.saturating_sub(bc), n.saturating_sub(bn))
                })
                .collect(),
            skipped: self.skipped.saturating_sub(before.skipped),
            statements: self.statements.saturating_sub(before.statements),
            dbms_nanos: self.dbms_nanos.saturating_sub(before.dbms_nanos),
            plans: self.plans.saturating_sub(before.plans),
        }
    }
}

/// What the recorder says a dead child was doing in its database.
#[derive(Debug, Default, PartialEq)]
pub struct LastWords {
    /// The statements that succeeded and shaped the database, in order.
    pub setup: Vec<String>,
    /// The statement it was running when it died.
    pub failing: Option<String>,
    /// The check that was running (index, oracle), if any.
    pub check: Option<(u64, String)>,
    /// The knobs switched off when it died.
    pub knobs: KnobSetting,
    /// Some records did not fit: the setup is incomplete.
    pub overflowed: bool,
    /// It died inside the engine (not in lancet's own code).
    pub in_engine: bool,
}

impl LastWords {
    pub fn read(recorder: &FlightRecorder) -> LastWords {
        let (records, overflowed) = recorder.records();
        let mut words = LastWords {
            overflowed,
            in_engine: recorder.in_engine(),
            ..LastWords::default()
        };
        let mut last: Option<(Tag, String)> = None;
        for (tag, bytes) in records {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            match tag {
                Tag::Succeeded => {
                    if let Some((Tag::Execute, sql)) = last.take() {
                        words.setup.push(sql);
                    }
                }
                Tag::Check => {
                    if bytes.len() >= 8 {
                        let mut n = [0u8; 8];
                        n.copy_from_slice(&bytes[..8]);
                        let name = String::from_utf8_lossy(&bytes[8..]).into_owned();
                        words.check = Some((u64::from_le_bytes(n), name));
                    }
                    last = None;
                }
                Tag::Knobs => {
                    words.knobs = KnobSetting {
                        changes: text
                            .split(',')
                            .filter(|s| !s.is_empty())
                            .map(str::to_string)
                            .collect(),
                    };
                }
                Tag::Execute | Tag::Query => last = Some((tag, text)),
            }
        }
        words.failing = last.map(|(_, sql)| sql);
        words
    }
}

/// A connection that writes each statement to the recorder before it runs
/// (a batch, `query_many`, goes one query at a time through `query`: the
/// trait's default).
pub struct RecordingConnection {
    inner: Box<dyn Connection>,
    recorder: Arc<FlightRecorder>,
}

impl RecordingConnection {
    pub fn new(inner: Box<dyn Connection>, recorder: Arc<FlightRecorder>) -> Self {
        RecordingConnection { inner, recorder }
    }
}

impl Connection for RecordingConnection {
    fn execute(&mut self, sql: &str) -> Result<(), DbError> {
        self.recorder.record(Tag::Execute, &[sql.as_bytes()]);
        self.recorder.set_in_engine(true);
        let r = self.inner.execute(sql);
        self.recorder.set_in_engine(false);
        if r.is_ok() {
            self.recorder.record(Tag::Succeeded, &[]);
        }
        r
    }

    fn query(&mut self, sql: &str) -> Result<Vec<Row>, DbError> {
        self.recorder.record(Tag::Query, &[sql.as_bytes()]);
        self.recorder.set_in_engine(true);
        let r = self.inner.query(sql);
        self.recorder.set_in_engine(false);
        r
    }

    fn set_knobs(&mut self, setting: &KnobSetting) -> Result<(), DbError> {
        self.recorder
            .record(Tag::Knobs, &[setting.changes.join(",").as_bytes()]);
        self.recorder.set_in_engine(true);
        let r = self.inner.set_knobs(setting);
        self.recorder.set_in_engine(false);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(r: &FlightRecorder, n: u64, oracle: &str) {
        r.record(Tag::Check, &[&n.to_le_bytes(), oracle.as_bytes()]);
    }

    #[test]
    fn last_words_name_the_setup_and_the_failing_statement() {
        let r = FlightRecorder::create().unwrap();
        r.clear();
        r.record(Tag::Execute, &[b"CREATE TABLE t0(c0)"]);
        r.record(Tag::Succeeded, &[]);
        r.record(Tag::Execute, &[b"INSERT INTO t0 VALUES (1/0)"]);
        r.record(Tag::Execute, &[b"INSERT INTO t0 VALUES (1)"]);
        r.record(Tag::Succeeded, &[]);
        check(&r, 6, "tlp-where");
        r.record(Tag::Knobs, &[b"exists-to-join"]);
        r.record(Tag::Query, &[b"SELECT 1 FROM t0"]);
        r.record(Tag::Knobs, &[b""]);
        check(&r, 7, "norec");
        r.record(Tag::Knobs, &[b"query-flattener"]);
        r.record(Tag::Query, &[b"SELECT * FROM t0"]);
        let words = LastWords::read(&r);
        assert_eq!(
            words.setup,
            ["CREATE TABLE t0(c0)", "INSERT INTO t0 VALUES (1)"]
        );
        assert_eq!(words.failing.as_deref(), Some("SELECT * FROM t0"));
        assert_eq!(words.check, Some((7, "norec".to_string())));
        assert_eq!(words.knobs.changes, ["query-flattener"]);
        assert_eq!(r.statements_started(), 5);
        assert!(!words.overflowed);
        assert!(!words.in_engine);
        r.set_in_engine(true);
        assert!(LastWords::read(&r).in_engine);
        r.set_in_engine(false);
        r.clear();
        assert_eq!(LastWords::read(&r), LastWords::default());
    }

    /// A database with a million checks (`--checks-per-database`) keeps
    /// its setup and one check in the recorder, not every query it ran.
    #[test]
    fn the_recorder_holds_the_setup_and_one_check() {
        let r = FlightRecorder::create().unwrap();
        r.clear();
        r.record(Tag::Execute, &[b"CREATE TABLE t0(c0)"]);
        r.record(Tag::Succeeded, &[]);
        let query = vec![b'x'; 4096];
        for n in 0..100_000 {
            check(&r, n, "norec");
            r.record(Tag::Query, &[&query]);
        }
        let (records, overflowed) = r.records();
        assert!(!overflowed);
        assert_eq!(records.len(), 4, "{records:?}");
        let words = LastWords::read(&r);
        assert_eq!(words.setup, ["CREATE TABLE t0(c0)"]);
        assert_eq!(words.check, Some((99_999, "norec".to_string())));
    }
}
