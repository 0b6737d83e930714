//! How a transaction campaign runs: its limits, levels, planted fault,
//! reduction budget and the driver's timing.

use crate::shard::Shard;
use lancet_core::fault::Fault;
use lancet_core::txn::IsolationLevel;
use lancet_oracles::txn::Timing;
use std::path::PathBuf;
use std::time::Duration;

/// How a campaign runs.
#[derive(Clone, Debug)]
pub struct TxnOptions {
    /// Names the run in its summary.
    pub run_id: String,
    pub seed: u64,
    pub threads: u32,
    pub timeout: Option<Duration>,
    /// Which part of a campaign this run is (`--shard`): its workers run
    /// the shard's campaign threads.
    pub shard: Shard,
    /// Run only this thread's database (`--thread T --database K`): it
    /// regenerates a finding's schedules.
    pub only_database: Option<(u32, u64)>,
    /// `--log-statements`: each session's statements go to a file here.
    pub log_dir: Option<PathBuf>,
    /// Stop after this many schedules in all.
    pub max_schedules: Option<u64>,
    /// Only these levels (all the provider models if empty).
    pub levels: Vec<IsolationLevel>,
    /// A planted fault of the transaction oracle's (`--inject-fault`).
    pub fault: Option<Fault>,
    /// Time for reducing one finding; `None`: no reduction.
    pub reduce: Option<Duration>,
    pub timing: Timing,
    pub schedules_per_database: u64,
    /// Flood control (`--flood-limit`): past this many findings of one
    /// signature, further ones are counted, not written or reduced.
    pub flood_limit: Option<u64>,
    /// Stop once this many findings are written (`selftest`).
    pub stop_after_findings: Option<u64>,
    /// A status line this often (`--status-interval`).
    pub status_interval: Option<Duration>,
    /// The run's directory, for `run.json` and a line of counters in
    /// `samples.jsonl` every `sample_interval` (what the findings store
    /// and `lancet report` read); none for a bench or a selftest.
    pub run_dir: Option<PathBuf>,
    pub sample_interval: Duration,
}

impl Default for TxnOptions {
    fn default() -> Self {
        TxnOptions {
            run_id: "txn".into(),
            seed: 0,
            threads: 1,
            timeout: None,
            shard: Shard::WHOLE,
            only_database: None,
            log_dir: None,
            max_schedules: None,
            levels: Vec::new(),
            fault: None,
            reduce: None,
            timing: Timing::default(),
            schedules_per_database: 500,
            flood_limit: None,
            stop_after_findings: None,
            status_interval: None,
            run_dir: None,
            sample_interval: Duration::from_secs(10),
        }
    }
}
