//! A transaction finding's record: what a schedule's run showed, with
//! the statements that make its table and begin its transactions as the
//! DBMS took them, and the forms people read it in (the schedule as a
//! table of sessions and steps, one script). Pure data: what lancet's
//! findings keep of it and the files it is written as are
//! [`super::files`]'s; where they are written is the campaign's.

use super::anomaly::Anomaly;
use super::driver::{ScheduleRun, TraceLine};
use super::schedule::{Action, Schedule, Step};
use lancet_core::txn::{IndexV, LevelRules};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Where a schedule came from: the database's RNG and its place in it.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct ScheduleOrigin {
    pub seed: u64,
    pub thread: u32,
    pub database: u64,
    pub schedule: u64,
}

/// Everything a transaction finding records.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TxnFinding {
    /// The oracle (always `txn`), the DBMS and lancet.
    #[serde(flatten)]
    pub made: crate::maker::Maker,
    /// `lost-update@REPEATABLE READ`: the anomaly's kind and the level,
    /// which is what groups findings into bugs.
    pub signature: String,
    /// Session 1's rules (every session's, unless the schedule mixes
    /// levels).
    pub rules: LevelRules,
    /// Where the schedule mixes levels: each session's rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_rules: Vec<LevelRules>,
    pub anomalies: Vec<Anomaly>,
    /// An error no level allows, instead of an anomaly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub schedule: Schedule,
    pub trace: Vec<TraceLine>,
    pub final_rows: Vec<(i64, i64)>,
    pub origin: ScheduleOrigin,
    /// How many of the runs of this schedule on fresh tables showed the
    /// anomaly again, of how many.
    pub repeated: (u32, u32),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// For a reduced finding: the statements and rows before, and after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduced_from: Option<usize>,
    /// The statements that create the table, as this DBMS takes them.
    pub create_table: Vec<String>,
    /// The statements a session's BEGIN step sends.
    pub begin: Vec<String>,
    /// Where the schedule mixes levels: each session's BEGIN.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub session_begins: Vec<Vec<String>>,
    pub client_command: String,
    /// The statements every session sends when it opens: the database's
    /// settings (SQLite's journal mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub database_settings: Vec<String>,
}

/// How a signature names the statement an anomaly shows in, where its
/// kind alone does not say: a locking read.
fn statement_class(op: super::schedule::Op) -> &'static str {
    match op {
        super::schedule::Op::LockingRead(..) => " by a locking read",
        _ => "",
    }
}

impl TxnFinding {
    /// The signature of a run of a schedule: its first anomaly (or
    /// error) and the level of the session it shows in (of session 1
    /// where it shows in no step: the final rows), so that a mixed
    /// schedule's finding groups with those of that level, and reduces
    /// to a schedule of that level alone.
    /// `settings` is what the signature names of the schedule's settings
    /// (` [innodb_snapshot_isolation=ON]`, see `Knobs::signature_part`).
    /// An anomaly of a locking read says so: a read that locks goes by
    /// another path in the DBMS than the write beside it.
    pub fn signature_of(run: &ScheduleRun, schedule: &Schedule, settings: &str) -> String {
        let what = match (&run.failure, run.anomalies.first()) {
            (_, Some(a)) => match &a.deviation {
                Some(name) => format!("deviation-{name}"),
                None => a.kind.name().to_string(),
            },
            (Some((_, e)), None) => match e.kind {
                lancet_core::FailureKind::ConnectionLost => "crash".to_string(),
                lancet_core::FailureKind::Hang => "hang".to_string(),
                _ => format!("error {}", e.code.as_deref().unwrap_or("?")),
            },
            (None, None) => "none".to_string(),
        };
        let step = match (&run.failure, run.anomalies.first()) {
            (_, Some(a)) if a.at_end => None,
            (_, Some(a)) => Some(a.step),
            (Some((step, _)), None) => Some(*step),
            (None, None) => None,
        };
        let session = step
            .and_then(|i| schedule.steps.get(i))
            .map_or(0, |st| st.session);
        let label = schedule.label_of(session);
        let by = match step.and_then(|i| schedule.steps.get(i)).map(|st| st.action) {
            Some(Action::Stmt(op)) if !run.anomalies.is_empty() => statement_class(op),
            _ => "",
        };
        match schedule.placement_label() {
            Some(placement) => format!("{what}@{label}{settings}{by} on {placement}"),
            None => format!("{what}@{label}{settings}{by}"),
        }
    }

    /// The file name a finding's signature gives (`n` numbers it):
    /// `txn-0003-lost-update-read-committed`.
    pub fn file_id(n: u64, signature: &str) -> String {
        file_id_of(super::NAME, n, signature)
    }

    /// The statements that make the table and its rows.
    pub fn setup(&self) -> Vec<String> {
        let mut setup = self.database_settings.clone();
        setup.extend(self.create_table.iter().cloned());
        for t in 0..self.schedule.table_count() {
            setup.extend(self.schedule.fill_sql(t));
        }
        setup
    }

    /// The setup as a script: `setup.sql` of a finding's directory.
    pub fn setup_script(&self) -> String {
        script(&self.setup())
    }

    /// Session `session`'s statements in order, as a script of its own
    /// (`session-N.sql`).
    pub fn session_script(&self, session: usize) -> String {
        let statements: Vec<String> = self
            .database_settings
            .iter()
            .cloned()
            .chain(
                self.schedule
                    .session_steps(session)
                    .flat_map(|(_, st)| self.statements_of(st)),
            )
            .collect();
        script(&statements)
    }

    /// The schedule as one script for people: its table as comments, the
    /// setup, then every step in order under the session that sends it.
    /// One client cannot run it (the sessions must be apart); its run
    /// line is `lancet replay`, and `ID/` holds a script per session.
    pub fn script(&self, id: &str) -> String {
        let mut out = format!(
            "-- run: lancet replay {id}.json\n\
             -- by hand: run {id}/setup.sql, then open {} session(s) with `{}` and type each \
             step below in its session, in this order\n",
            self.schedule.sessions, self.client_command
        );
        for line in self.table().lines() {
            out.push_str(format!("-- {line}").trim_end());
            out.push('\n');
        }
        out.push_str("\n-- setup\n");
        out.push_str(&script(&self.setup()));
        for (i, step) in self.schedule.steps.iter().enumerate() {
            out.push_str(&format!(
                "-- step {}, session {}\n",
                i + 1,
                step.session + 1
            ));
            out.push_str(&script(&self.statements_of(step)));
        }
        out
    }

    /// The statements a step sends, as the finding's scripts show them.
    pub fn statements_of(&self, step: &Step) -> Vec<String> {
        match step.action {
            Action::Begin => self
                .session_begins
                .get(step.session)
                .unwrap_or(&self.begin)
                .clone(),
            Action::Commit => vec!["COMMIT".into()],
            Action::Rollback => vec!["ROLLBACK".into()],
            Action::Stmt(op) => vec![self.schedule.op_sql(op, step.table)],
        }
    }

    /// The schedule as people read it: what was seen, then one row per
    /// step with a column per session, then how to run it by hand.
    pub fn table(&self) -> String {
        let s = &self.schedule;
        let mut out = String::new();
        let _ = writeln!(out, "lancet transaction finding: {}", self.signature);
        let _ = writeln!(out, "{}", self.made.dbms_line());
        if self.session_rules.is_empty() {
            let _ = writeln!(out, "level: {}", describe(&self.rules));
        }
        for (s, rules) in self.session_rules.iter().enumerate() {
            let _ = writeln!(out, "session {}: {}", s + 1, describe(rules));
        }
        if let Some(fault) = &self.fault {
            let _ = writeln!(out, "planted fault: {fault} (not a bug of the DBMS)");
        }
        let _ = writeln!(
            out,
            "repeated: {} of {} runs on a fresh table",
            self.repeated.0, self.repeated.1
        );
        for a in &self.anomalies {
            let _ = writeln!(
                out,
                "\n{} at step {}: {}",
                a.kind.name(),
                a.step + 1,
                a.detail
            );
        }
        if let Some(e) = &self.error {
            let _ = writeln!(out, "\nerror: {e}");
        }
        if s.table_count() > 1 {
            let tables: Vec<String> = (0..s.table_count())
                .map(|t| {
                    let (index, placement) = s.shape(t);
                    format!(
                        "{} (keys from {}{}{})",
                        s.table_name(t),
                        t as i64 * super::schedule::KEYS_PER_TABLE,
                        match index {
                            IndexV::None => "",
                            IndexV::Plain => ", index on v",
                            IndexV::Unique => ", UNIQUE index on v",
                            IndexV::UniqueNullable => ", UNIQUE index on nullable v",
                        },
                        placement.map(|p| format!(", {p}")).unwrap_or_default()
                    )
                })
                .collect();
            let _ = writeln!(out, "\ntables: {}", tables.join("; "));
        }
        let _ = writeln!(out, "\nrows before: {}", super::model::show(&s.rows));
        let _ = writeln!(out, "rows after:  {}", super::model::show(&self.final_rows));
        let _ = writeln!(out, "\nstep | {}", session_header(s.sessions));
        for line in &self.trace {
            let mut cells = vec![String::new(); s.sessions];
            let waited = if line.waited { " [waited]" } else { "" };
            cells[line.session] = format!("{} -> {}{waited}", line.sql, line.result);
            let _ = writeln!(out, "{:>4} | {}", line.step + 1, cells.join(" | "));
        }
        out
    }
}

fn session_header(n: usize) -> String {
    (1..=n)
        .map(|s| format!("session {s}"))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The file name of oracle `oracle`'s `n`-th finding with `signature`:
/// its name, the number, and the signature in lower-case words
/// (`txn-0003-lost-update-read-committed`).
pub fn file_id_of(oracle: &str, n: u64, signature: &str) -> String {
    let mut id = format!("{oracle}-{n:04}-");
    for c in signature.chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.ends_with('-') {
            id.push('-');
        }
    }
    id.trim_end_matches('-').to_string()
}

/// Statements as a script, one a line.
pub(crate) fn script(statements: &[String]) -> String {
    statements.iter().map(|s| format!("{s};\n")).collect()
}

/// A level's rules in one line, with the documentation they come from.
pub(crate) fn describe(rules: &LevelRules) -> String {
    format!(
        "{} (rules: reads see {:?}, writes {:?}{}; from {})",
        rules.label(),
        rules.read_view,
        rules.writes,
        if rules.serializable {
            ", committed transactions serializable"
        } else {
            ""
        },
        rules.source
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::txn::{AnomalyKind, SessionLevel};
    use lancet_core::txn::IsolationLevel;

    /// A mixed schedule's signature names the level of the session a
    /// statement's anomaly shows in, and session 1's for the final rows,
    /// whichever session happened to end last.
    #[test]
    fn a_mixed_schedule_is_signed_by_the_session_of_its_anomaly() {
        let step = |session, action| Step {
            session,
            action,
            table: 0,
        };
        let schedule = Schedule {
            table: "t".into(),
            index_v: false,
            unique_v: false,
            nullable_v: false,
            spellings: Default::default(),
            placement: None,
            rows: vec![(1, 1)],
            level: IsolationLevel::ReadCommitted,
            mode: None,
            sessions: 2,
            mixed: vec![
                SessionLevel {
                    level: IsolationLevel::ReadCommitted,
                    mode: None,
                },
                SessionLevel {
                    level: IsolationLevel::Serializable,
                    mode: None,
                },
            ],
            more_tables: Vec::new(),
            steps: vec![
                step(0, Action::Begin),
                step(1, Action::Begin),
                step(0, Action::Commit),
                step(1, Action::Commit),
            ],
            settings: Default::default(),
        };
        let signed = |kind, step, at_end| {
            let run = ScheduleRun {
                anomalies: vec![Anomaly {
                    kind,
                    step,
                    detail: String::new(),
                    at_end,
                    deviation: None,
                }],
                ..ScheduleRun::default()
            };
            TxnFinding::signature_of(&run, &schedule, "")
        };
        assert_eq!(
            signed(AnomalyKind::SpuriousConflict, 3, false),
            "spurious-conflict@SERIALIZABLE"
        );
        assert_eq!(
            signed(AnomalyKind::WrongFinalState, 3, true),
            "wrong-final-state@READ COMMITTED"
        );
    }
}
