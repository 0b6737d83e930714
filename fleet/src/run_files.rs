//! What a run directory says about its run besides findings: `run.json`,
//! written when the run starts, and `samples.jsonl`, a line of counters
//! every few seconds. The findings store and `lancet report` read them, so
//! a run killed at any moment leaves what it did until then.

use crate::shard::Shard;
use anyhow::Context;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The run's file in its directory.
pub const RUN_FILE: &str = "run.json";
/// The throughput samples' file in a run's directory.
pub const SAMPLES_FILE: &str = "samples.jsonl";

/// What a run is: written once, at its start.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    pub run_id: String,
    pub lancet_version: String,
    pub dbms: String,
    pub dbms_version: String,
    pub seed: u64,
    pub shard: Shard,
    pub threads: u32,
    pub oracles: Vec<String>,
    /// Seconds since 1970, UTC.
    pub started_unix: u64,
    /// The machine (a pod's name in Kubernetes).
    pub host: String,
}

impl RunRecord {
    pub fn save(&self, run_dir: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_string_pretty(self).context("serializing the run record")?;
        write_synced(&run_dir.join(RUN_FILE), json.as_bytes())
    }

    pub fn load(run_dir: &Path) -> anyhow::Result<RunRecord> {
        let path = run_dir.join(RUN_FILE);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "cannot read {} (is this a run directory of lancet fuzz?)",
                path.display()
            )
        })?;
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a run record", path.display()))
    }
}

/// The counters of a run at one moment.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    /// 0, 1, 2, ... within the run.
    pub seq: u64,
    /// Seconds since the run started.
    pub elapsed: f64,
    /// Seconds since 1970, UTC.
    pub unix: u64,
    pub checks: u64,
    /// Checks skipped on an expected error.
    pub skipped: u64,
    pub nonempty: u64,
    pub statements: u64,
    pub databases: u64,
    pub findings: u64,
    /// Distinct plans run (plan coverage; 0 where plans are not read).
    pub plans: u64,
    pub per_oracle: BTreeMap<String, u64>,
}

/// Appends samples to `samples.jsonl`, a line each, flushed at once.
pub struct SampleLog {
    path: PathBuf,
    file: Option<std::fs::File>,
    next_seq: u64,
    warned: bool,
}

impl SampleLog {
    pub fn new(run_dir: &Path) -> SampleLog {
        SampleLog {
            path: run_dir.join(SAMPLES_FILE),
            file: None,
            next_seq: 0,
            warned: false,
        }
    }

    /// Writes one sample, numbering it. A sample that cannot be written
    /// is dropped with one warning: samples are statistics, and a full
    /// disk must not stop the run (findings have their own checks).
    pub fn append(&mut self, mut sample: Sample) -> Option<String> {
        sample.seq = self.next_seq;
        self.next_seq += 1;
        let result = (|| -> anyhow::Result<()> {
            if self.file.is_none() {
                self.file = Some(
                    std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&self.path)?,
                );
            }
            let mut line = serde_json::to_string(&sample)?;
            line.push('\n');
            let file = self.file.as_mut().expect("opened above");
            file.write_all(line.as_bytes())?;
            file.flush()?;
            Ok(())
        })();
        match result {
            Ok(()) => None,
            Err(e) if !self.warned => {
                self.warned = true;
                Some(format!(
                    "cannot write the throughput samples to {}: {e:#} (the run goes on without them)",
                    self.path.display()
                ))
            }
            Err(_) => None,
        }
    }
}

/// The samples of a run directory, in order. A last line still being
/// written (no newline yet) is left for later.
pub fn read_samples(run_dir: &Path) -> anyhow::Result<Vec<Sample>> {
    let path = run_dir.join(SAMPLES_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let complete = match text.rfind('\n') {
        Some(end) => &text[..end],
        None => "",
    };
    complete
        .lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l)
                .with_context(|| format!("{} line {}: not a sample", path.display(), i + 1))
        })
        .collect()
}

/// Seconds since 1970.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// This machine's name: `HOSTNAME`, else the kernel's.
pub fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// Writes a file through a temporary name and renames it, so that a reader
/// never sees half a file, and syncs it. A kill leaves at most a
/// `NAME.tmp` beside it, which the next run recognises and removes.
pub fn write_synced(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut file =
        fs::File::create(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
    if let Err(e) = file.write_all(bytes).and_then(|_| file.sync_all()) {
        drop(file);
        let _ = fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write {}", path.display()));
    }
    fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} to {}", tmp.display(), path.display()))
}
