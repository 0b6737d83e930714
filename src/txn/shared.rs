//! What a transaction campaign's threads share: the provider's
//! transactions and rules, the options, the counters and findings index,
//! and when to stop.

use super::options::TxnOptions;
use crate::databases::Databases;
use crate::dedup::Index;
use crate::summary::{Counters, LevelCounts, StopReason};
use lancet_core::txn::{LevelRules, Transactions};
use lancet_core::Provider;
use lancet_oracles::txn::{Schedule, TxnFault};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// What a campaign's threads share.
pub(super) struct Shared<'a> {
    pub(super) databases: &'a Databases,
    pub(super) tx: &'a dyn Transactions,
    pub(super) provider: &'a dyn Provider,
    pub(super) rules: Vec<LevelRules>,
    pub(super) options: &'a TxnOptions,
    /// The planted fault the driver applies, of `options`.
    pub(super) fault: Option<TxnFault>,
    pub(super) stop: &'a AtomicBool,
    pub(super) started: Instant,
    /// Schedules are checks of the one oracle `txn`.
    pub(super) counters: Counters,
    /// The findings index of `dir`: signatures, bugs, flood control.
    pub(super) index: Mutex<Index>,
    pub(super) dir: &'a Path,
    pub(super) reduced: AtomicU64,
    /// Numbers the findings' files.
    pub(super) next_finding: AtomicU64,
    pub(super) levels: Mutex<BTreeMap<String, LevelCounts>>,
    pub(super) warnings: Mutex<Vec<String>>,
    pub(super) failures: Mutex<Vec<String>>,
    /// Threads still running, for the monitor.
    pub(super) running: AtomicU64,
}

impl<'a> Shared<'a> {
    pub(super) fn new(
        databases: &'a Databases,
        tx: &'a dyn Transactions,
        provider: &'a dyn Provider,
        rules: Vec<LevelRules>,
        options: &'a TxnOptions,
        dir: &'a Path,
        stop: &'a AtomicBool,
    ) -> Shared<'a> {
        Shared {
            databases,
            tx,
            provider,
            rules,
            options,
            fault: options.fault.as_ref().and_then(TxnFault::of),
            stop,
            started: Instant::now(),
            counters: Counters::new(1),
            index: Mutex::new(Index::new(dir)),
            dir,
            reduced: AtomicU64::new(0),
            next_finding: AtomicU64::new(0),
            levels: Mutex::new(BTreeMap::new()),
            warnings: Mutex::new(Vec::new()),
            failures: Mutex::new(Vec::new()),
            running: AtomicU64::new(0),
        }
    }

    fn timed_out(&self) -> bool {
        self.options
            .timeout
            .is_some_and(|t| self.started.elapsed() >= t)
    }

    fn schedules_done(&self) -> bool {
        self.options
            .max_schedules
            .is_some_and(|m| self.counters.checks() >= m)
    }

    pub(super) fn should_stop(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
            || self.timed_out()
            || self.schedules_done()
            || self
                .options
                .stop_after_findings
                .is_some_and(|m| self.counters.findings() >= m)
    }

    /// Why the run ended, once it has.
    pub(super) fn stop_reason(&self) -> StopReason {
        if self.stop.load(Ordering::Relaxed) {
            StopReason::Interrupted
        } else if self.schedules_done() {
            StopReason::Checks
        } else if self.timed_out() {
            StopReason::Timeout
        } else if !self
            .failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
        {
            StopReason::Error
        } else {
            StopReason::Finished
        }
    }

    pub(super) fn warn(&self, what: String) {
        log::warn!("{what}");
        self.warnings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(what);
    }

    /// The rules of each session of `schedule`, by its level and mode.
    pub(super) fn rules_for(&self, schedule: &Schedule) -> Vec<&LevelRules> {
        (0..schedule.sessions)
            .map(|s| {
                let (level, mode) = schedule.level_of(s);
                self.rules
                    .iter()
                    .find(|r| r.level == level && r.mode.as_deref() == mode)
                    .expect("schedules are drawn at the levels of `rules`")
            })
            .collect()
    }
}
