//! A stress finding's record: the round (which replays it), the
//! invariants it broke, the transactions around the end as they ran, each
//! session's statements as it sent them, and the statements that make its
//! table and begin its transactions on this DBMS. Pure data with the
//! forms people read it in; the files it is written as are
//! [`super::files`]'s.

use super::invariant::Violation;
use super::round::{Round, TABLE};
use super::run::{Ending, RoundRun, TxnLog};
use lancet_core::txn::{LevelRules, TxnKnob};
use lancet_core::DbError;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// How many transactions before the end a finding keeps with their
/// results.
pub const TAIL: usize = 40;

/// Where a round came from: the database's RNG and its place in it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct RoundOrigin {
    pub seed: u64,
    pub thread: u32,
    pub database: u64,
    pub round: u64,
}

/// How a round's transactions ended, as a finding counts them.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Endings {
    pub transactions: u64,
    pub committed: u64,
    pub conflicts: u64,
    /// COMMITs whose outcome is unknown.
    pub unknown: u64,
}

/// Everything a stress finding records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StressFinding {
    /// The oracle (always `txn-stress`), the DBMS and lancet.
    #[serde(flatten)]
    pub made: crate::maker::Maker,
    /// `bank-total@READ COMMITTED`: the invariant (or error) and the
    /// round's level with its settings.
    pub signature: String,
    /// The planted fault it was found under, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    pub rules: LevelRules,
    pub violations: Vec<Violation>,
    /// An error no level allows, instead of a violation (or beside one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub round: Round,
    pub endings: Endings,
    /// The last transactions to end before the round did (all sessions,
    /// by the time they ended), with what each statement returned.
    pub tail: Vec<TxnLog>,
    /// Each session's statements as it sent them: its reproducer.
    pub session_statements: Vec<Vec<String>>,
    pub final_rows: Vec<(i64, i64)>,
    pub origin: RoundOrigin,
    /// How many reruns of the round on a fresh table showed the
    /// signature again, of how many.
    pub repeated: (u32, u32),
    /// For a reduced finding: the round's statements and rows before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced_from: Option<usize>,
    /// The statements that create the table, as this DBMS takes them,
    /// and how a user runs a session's script with its client.
    pub create_table: Vec<String>,
    pub client_command: String,
}

/// The signature of a run of `round`: its first violation, else its
/// failure (`crash`, `hang`, `error CODE`), at the round's level and
/// settings; `None` for a clean run.
pub fn signature_of(
    round: &Round,
    violations: &[Violation],
    failure: Option<&DbError>,
    knobs: &[TxnKnob],
) -> Option<String> {
    let what = match (violations.first(), failure) {
        (Some(v), _) => v.invariant.name().to_string(),
        (None, Some(e)) => match e.kind {
            lancet_core::FailureKind::ConnectionLost => "crash".to_string(),
            lancet_core::FailureKind::Hang => "hang".to_string(),
            _ => format!("error {}", e.code.as_deref().unwrap_or("?")),
        },
        (None, None) => return None,
    };
    Some(format!("{what}@{}", round.signature_label(knobs)))
}

/// The file name a finding's signature gives (`n` numbers it):
/// `txn-stress-0003-bank-total-read-committed`.
pub fn file_id(n: u64, signature: &str) -> String {
    crate::txn::record::file_id_of(super::NAME, n, signature)
}

/// The last [`TAIL`] transactions of a run to end, in the order they
/// ended.
pub fn tail(run: &RoundRun) -> Vec<TxnLog> {
    let mut all: Vec<&TxnLog> = run.logs.iter().flatten().collect();
    all.sort_by_key(|l| (l.ended_ms, l.began_ms));
    let from = all.len().saturating_sub(TAIL);
    all[from..].iter().map(|l| (*l).clone()).collect()
}

/// Each session's statements as it sent them (a write the planted fault
/// kept back is a comment).
pub fn session_statements(run: &RoundRun) -> Vec<Vec<String>> {
    run.logs
        .iter()
        .map(|logs| {
            logs.iter()
                .flat_map(|l| &l.statements)
                .map(|(sql, result)| {
                    if result.starts_with("not sent") {
                        format!("-- {sql} ({result})")
                    } else {
                        sql.clone()
                    }
                })
                .collect()
        })
        .collect()
}

/// How a run's transactions ended.
pub fn endings(run: &RoundRun) -> Endings {
    let (committed, conflicts, unknown) = run.counts();
    Endings {
        transactions: run.logs.iter().map(|l| l.len() as u64).sum(),
        committed,
        conflicts,
        unknown,
    }
}

impl StressFinding {
    /// The statements that make the table and its rows.
    pub fn setup(&self) -> Vec<String> {
        let mut setup = vec![format!("DROP TABLE IF EXISTS {TABLE}")];
        setup.extend(self.create_table.iter().cloned());
        setup.extend(self.round.fill_sql());
        setup
    }

    /// Session `s`'s statements as a script (`session-N.sql`): one line
    /// each, comments kept.
    pub fn session_script(&self, s: usize) -> String {
        self.session_statements
            .get(s)
            .map(|stmts| {
                stmts
                    .iter()
                    .map(|sql| {
                        if sql.starts_with("--") {
                            format!("{sql}\n")
                        } else {
                            format!("{sql};\n")
                        }
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The finding as one script for people: what was seen as comments,
    /// the setup, then each session's statements under its name. One
    /// client cannot show a race; its run line is `lancet replay`, and
    /// `ID/` holds a script per session to run side by side.
    pub fn script(&self, id: &str) -> String {
        let mut out = format!(
            "-- run: lancet replay {id}.json\n\
             -- by hand: run {id}/setup.sql, then run {id}/session-1.sql to session-{}.sql at \
             once, each with `{}` (a race: it may take several tries)\n",
            self.round.sessions.len(),
            self.client_command
        );
        for line in self.summary().lines() {
            out.push_str(format!("-- {line}").trim_end());
            out.push('\n');
        }
        out.push_str("\n-- setup\n");
        out.push_str(&crate::txn::record::script(&self.setup()));
        for s in 0..self.session_statements.len() {
            let _ = writeln!(out, "\n-- session {}", s + 1);
            out.push_str(&self.session_script(s));
        }
        out
    }

    /// What was seen, in a few lines: the level, the invariants broken
    /// with expected and actual values, how the transactions ended, and
    /// whether a rerun showed it again.
    pub fn summary(&self) -> String {
        let mut out = String::new();
        let r = &self.round;
        let _ = writeln!(out, "lancet stress finding: {}", self.signature);
        let _ = writeln!(out, "{}", self.made.dbms_line());
        let _ = writeln!(out, "level: {}", crate::txn::record::describe(&self.rules));
        if !r.settings.is_empty() {
            let _ = writeln!(out, "settings: {}", r.label());
        }
        if let Some(fault) = &self.fault {
            let _ = writeln!(out, "planted fault: {fault} (not a bug of the DBMS)");
        }
        let _ = writeln!(
            out,
            "round: {:?}, {} rows, {} sessions, {} transactions planned{}",
            r.workload,
            r.rows.len(),
            r.sessions.len(),
            r.transactions(),
            if r.index_v { ", index on v" } else { "" }
        );
        let e = &self.endings;
        let _ = writeln!(
            out,
            "ran: {} transactions, {} committed, {} ended in a conflict, {} with an unknown COMMIT",
            e.transactions, e.committed, e.conflicts, e.unknown
        );
        let _ = writeln!(out, "repeated: {}", self.repeated_text());
        for v in &self.violations {
            let actual = v.actual.map_or("no row".to_string(), |a| a.to_string());
            let _ = writeln!(
                out,
                "\n{} ({}): expected {}, actual {actual}: {}",
                v.invariant.name(),
                v.invariant.relation(),
                v.expected,
                v.detail
            );
        }
        if let Some(e) = &self.error {
            let _ = writeln!(out, "\nerror: {e}");
        }
        let _ = writeln!(out, "\nrows before: {}", crate::txn::model::show(&r.rows));
        let _ = writeln!(
            out,
            "rows after:  {}",
            crate::txn::model::show(&self.final_rows)
        );
        out
    }

    /// How often reruns showed it, in words: a violation that did not
    /// repeat is a race.
    pub fn repeated_text(&self) -> String {
        let (shown, of) = self.repeated;
        if of > 0 && shown == 0 {
            format!("not reproduced on rerun: a race (0 of {of} reruns on a fresh table)")
        } else {
            format!("{shown} of {of} reruns on a fresh table")
        }
    }

    /// The transactions before the end, as people read them: one block
    /// per transaction with its session, time and ending, then each
    /// statement and what it returned.
    pub fn tail_text(&self) -> String {
        let mut out = format!(
            "the last {} transactions to end, in the order they ended:\n",
            self.tail.len()
        );
        for log in &self.tail {
            let ending = match log.ending {
                Ending::Conflict(c) => format!("conflict ({c:?})"),
                e => format!("{e:?}").to_lowercase(),
            };
            let _ = writeln!(
                out,
                "\nsession {} transaction {} ({} ms to {} ms): {ending}",
                log.session + 1,
                log.index + 1,
                log.began_ms,
                log.ended_ms
            );
            for (sql, result) in &log.statements {
                let _ = writeln!(out, "  {sql} -> {result}");
            }
        }
        out
    }
}
