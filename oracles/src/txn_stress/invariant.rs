//! The invariants a round keeps, checked on what its sessions logged and
//! the rows after it: every row ends at its start plus the changes of the
//! transactions whose COMMIT returned OK (a bank's balances, counters);
//! a bank's total never changes; and a read of the whole bank shows that
//! total where the level's reads see committed rows
//! ([`super::round::reads_checked`]). A row written by a transaction
//! whose COMMIT did not answer is open: it is not checked.

use super::round::{reads_after_writes_checked, reads_checked, Round, Workload};
use super::run::{Ending, RoundRun};
use lancet_core::txn::LevelRules;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Which invariant a round broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Invariant {
    /// The bank's accounts add up to another total after the round.
    BankTotal,
    /// A read of the whole bank showed another total.
    ReadTotal,
    /// An account's balance is not its start plus the committed transfers.
    Balance,
    /// A counter is not its start plus the committed increments.
    Counter,
}

impl Invariant {
    /// The kebab-case name signatures and reports use.
    pub fn name(self) -> &'static str {
        match self {
            Invariant::BankTotal => "bank-total",
            Invariant::ReadTotal => "read-total",
            Invariant::Balance => "balance",
            Invariant::Counter => "counter",
        }
    }

    /// What it says, in words.
    pub fn relation(self) -> &'static str {
        match self {
            Invariant::BankTotal => "a bank's total never changes",
            Invariant::ReadTotal => "a read of the whole bank shows its total",
            Invariant::Balance => "an account ends at its start plus the committed transfers",
            Invariant::Counter => "a counter ends at its start plus the committed increments",
        }
    }
}

/// One broken invariant: what was expected and what was seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Violation {
    pub invariant: Invariant,
    /// The row, for a balance or a counter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<i64>,
    pub expected: i64,
    /// `None`: the row is gone.
    pub actual: Option<i64>,
    /// For a read: the session and its transaction's place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<(usize, usize)>,
    pub detail: String,
}

/// Every invariant `run` of `round` broke at `rules`, in the order
/// signatures take them: the final total, the rows, then the reads.
pub fn judge(round: &Round, rules: &LevelRules, run: &RoundRun) -> Vec<Violation> {
    let mut out = Vec::new();
    if run.final_rows.is_empty() {
        // The rows could not be read: the run's failure says why.
        return out;
    }
    let total: i64 = round.rows.iter().map(|(_, v)| v).sum();
    if round.workload == Workload::Bank {
        let after: i64 = run.final_rows.iter().map(|(_, v)| v).sum();
        if after != total || run.final_rows.len() != round.rows.len() {
            out.push(Violation {
                invariant: Invariant::BankTotal,
                key: None,
                expected: total,
                actual: Some(after),
                at: None,
                detail: format!(
                    "the {} accounts add up to {after} after the round, not {total}",
                    run.final_rows.len()
                ),
            });
        }
    }
    out.extend(rows(round, run));
    if round.workload == Workload::Bank && reads_checked(rules, round.placement.as_deref()) {
        out.extend(reads(round, rules, run, total));
    }
    out
}

/// Each row against its start plus the committed changes.
fn rows(round: &Round, run: &RoundRun) -> Vec<Violation> {
    let mut expected: BTreeMap<i64, i64> = round.rows.iter().copied().collect();
    let mut open = BTreeSet::new();
    let mut changes: BTreeMap<i64, usize> = BTreeMap::new();
    for log in run.logs.iter().flatten() {
        let Some(txn) = round.txn(log.session, log.index) else {
            continue;
        };
        for (key, delta) in txn.stmts.iter().filter_map(|s| s.delta()) {
            match log.ending {
                Ending::Committed => {
                    *expected.entry(key).or_default() += delta;
                    *changes.entry(key).or_default() += 1;
                }
                Ending::Unknown => {
                    open.insert(key);
                }
                _ => {}
            }
        }
    }
    let after: BTreeMap<i64, i64> = run.final_rows.iter().copied().collect();
    let invariant = match round.workload {
        Workload::Bank => Invariant::Balance,
        Workload::Counters => Invariant::Counter,
    };
    let start: BTreeMap<i64, i64> = round.rows.iter().copied().collect();
    let mut out = Vec::new();
    for (&key, &want) in &expected {
        if open.contains(&key) {
            continue;
        }
        let got = after.get(&key).copied();
        if got != Some(want) {
            let from = start.get(&key).copied().unwrap_or_default();
            out.push(Violation {
                invariant,
                key: Some(key),
                expected: want,
                actual: got,
                at: None,
                detail: format!(
                    "row {key} ends at {} after the round; it began at {from} and {} committed change(s) make it {want}",
                    got.map_or("no row".to_string(), |v| v.to_string()),
                    changes.get(&key).copied().unwrap_or_default(),
                ),
            });
        }
    }
    out
}

/// Each whole-bank read against the total. A read after its
/// transaction's writes only where the level's reads show them on the
/// rows they were made on ([`reads_after_writes_checked`]).
fn reads(round: &Round, rules: &LevelRules, run: &RoundRun, total: i64) -> Vec<Violation> {
    let after_writes = reads_after_writes_checked(rules);
    let mut out = Vec::new();
    for log in run.logs.iter().flatten() {
        let Some(txn) = round.txn(log.session, log.index) else {
            continue;
        };
        for seen in &log.totals {
            let wrote_before = txn.stmts[..seen.stmt.min(txn.stmts.len())]
                .iter()
                .any(|s| s.delta().is_some());
            if wrote_before && !after_writes {
                continue;
            }
            let rows_ok = seen.rows.is_none_or(|n| n == round.rows.len());
            if seen.total != total || !rows_ok {
                out.push(Violation {
                    invariant: Invariant::ReadTotal,
                    key: None,
                    expected: total,
                    actual: Some(seen.total),
                    at: Some((log.session, log.index)),
                    detail: format!(
                        "session {} transaction {} read a total of {}{} where the bank holds {total}{}",
                        log.session + 1,
                        log.index + 1,
                        seen.total,
                        seen.rows.map(|n| format!(" in {n} rows")).unwrap_or_default(),
                        if wrote_before { " (after its own transfers)" } else { "" },
                    ),
                });
            }
        }
    }
    out
}
