//! What a schedule can show that its isolation level forbids, by kind:
//! findings are grouped by the kind and the level, not by the schedule.

use serde::{Deserialize, Serialize};

/// The kinds of departure from a level's documented rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnomalyKind {
    /// A read saw a row version no committed transaction wrote.
    DirtyRead,
    /// A read saw a version committed after its snapshot (or missed one
    /// committed before it).
    NonRepeatableRead,
    /// A read saw a row appear or vanish that its snapshot does not hold.
    Phantom,
    /// A read did not see the transaction's own write.
    LostOwnWrite,
    /// A read returned rows the model cannot name otherwise.
    WrongRead,
    /// A committed write is missing from the final rows, or a write the
    /// level must fail (first updater wins) succeeded.
    LostUpdate,
    /// The final rows differ from what the committed transactions make.
    WrongFinalState,
    /// Under SERIALIZABLE, no serial order of the committed transactions
    /// gives their reads and the final rows (write skew, G2-item).
    NotSerializable,
    /// A write changed a row another open transaction had changed without
    /// waiting for its lock.
    DidNotWait,
    /// A plain read waited, where the level says reads never wait.
    BlockingRead,
    /// A write waited for a lock until the lock timeout ended it, where
    /// the rules see no lock it could wait for (no open transaction had
    /// written its rows, none had a write in flight, and the level takes
    /// no locks beyond the rows a write changes).
    BlockingWrite,
    /// A serialization failure where the level never raises one.
    SpuriousConflict,
    /// Statements waited for each other's row locks in a cycle, and the
    /// DBMS did not break it with its deadlock error (a lock timeout
    /// ended it, or nothing did).
    UndetectedDeadlock,
}

impl AnomalyKind {
    /// The kebab-case name used in findings and reports.
    pub fn name(self) -> &'static str {
        match self {
            AnomalyKind::DirtyRead => "dirty-read",
            AnomalyKind::NonRepeatableRead => "non-repeatable-read",
            AnomalyKind::Phantom => "phantom",
            AnomalyKind::LostOwnWrite => "lost-own-write",
            AnomalyKind::WrongRead => "wrong-read",
            AnomalyKind::LostUpdate => "lost-update",
            AnomalyKind::WrongFinalState => "wrong-final-state",
            AnomalyKind::NotSerializable => "not-serializable",
            AnomalyKind::DidNotWait => "did-not-wait",
            AnomalyKind::BlockingRead => "blocking-read",
            AnomalyKind::BlockingWrite => "blocking-write",
            AnomalyKind::SpuriousConflict => "spurious-conflict",
            AnomalyKind::UndetectedDeadlock => "undetected-deadlock",
        }
    }
}

/// One departure: its kind, the step it shows at, and what was seen.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Anomaly {
    pub kind: AnomalyKind,
    pub step: usize,
    pub detail: String,
    /// Seen in the rows after the schedule (the final state, the serial
    /// order), not in one session's statement: `step` is then the last.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_end: bool,
    /// Under `--txn-strict`: the documented deviation of the level this
    /// is (the standard's rules forbid it, the DBMS's documentation
    /// allows it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deviation: Option<String>,
}
