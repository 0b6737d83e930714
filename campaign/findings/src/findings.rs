//! What lancet knows about one finding: its kind, origin, setup, the
//! queries as they ran with their contexts, the diff or error, and the
//! oracle's case; the JSON record is this struct. [`Finding::load`] reads a
//! record back together with its `.sql` as the user may have edited it.
//! Writing both to disk is [`crate::reproducer`]'s.

use anyhow::Context;
use lancet_core::compare::RowDiff;
use lancet_core::fault::Fault;
use lancet_core::{
    Case, DbError, Disagreement, ExecError, FailureKind, KnobSetting, Provider, QueryContext,
    RanQuery,
};
use lancet_engine::Catalog;
use serde::{Deserialize, Serialize};
use std::fs;
use std::path::Path;

/// What kind of problem a finding shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FindingKind {
    /// Two queries whose results must agree did not.
    Logic,
    /// The DBMS raised an error that no rule expects.
    UnexpectedError,
    /// The connection broke: a crash or restart of the server.
    Crash,
    /// A statement neither finished within its time limit nor answered a
    /// cancel request: the DBMS hung.
    Hang,
    /// Two queries returned the same rows, but one took far longer than
    /// its equivalent (the performance oracle).
    Performance,
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Logic => "logic",
            FindingKind::UnexpectedError => "unexpected-error",
            FindingKind::Crash => "crash",
            FindingKind::Hang => "hang",
            FindingKind::Performance => "performance",
        }
    }

    /// The kind named `name` (as [`FindingKind::name`] gives it).
    pub fn from_name(name: &str) -> Option<FindingKind> {
        [
            FindingKind::Logic,
            FindingKind::UnexpectedError,
            FindingKind::Crash,
            FindingKind::Hang,
            FindingKind::Performance,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }

    /// Findings of an oracle's relation: replayed, confirmed and
    /// deduplicated through the oracle's case.
    pub fn is_relation(self) -> bool {
        matches!(self, FindingKind::Logic | FindingKind::Performance)
    }
}

/// One query of a finding, as run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FoundQuery {
    pub role: String,
    pub sql: String,
    pub row_count: Option<usize>,
    /// Where the query ran (its knob setting); the default for most.
    #[serde(default, skip_serializing_if = "QueryContext::is_default")]
    pub context: QueryContext,
    /// The DBMS client's commands the reproducer runs just before this
    /// query to give it its context (`SET enable_hashjoin = off;`,
    /// `.testctrl optimizations 0x..`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_lines: Vec<String>,
}

impl FoundQuery {
    /// The failing statement of an error, crash or hang finding.
    pub fn failing(sql: String) -> FoundQuery {
        FoundQuery {
            role: "failing statement".into(),
            sql,
            row_count: None,
            context: QueryContext::default(),
            client_lines: Vec::new(),
        }
    }
}

/// The queries of a check as a finding records them: each with the
/// client commands that move the configuration from the previous query's
/// to its own.
pub fn found_queries(provider: &dyn Provider, ran: &[RanQuery]) -> Vec<FoundQuery> {
    let mut in_force = KnobSetting::default();
    ran.iter()
        .map(|q| {
            let client_lines = provider.knob_commands(&in_force, &q.context.knobs);
            in_force = q.context.knobs.clone();
            FoundQuery {
                role: q.role.clone(),
                sql: q.sql.clone(),
                row_count: (!q.statement).then_some(q.rows),
                context: q.context.clone(),
                client_lines,
            }
        })
        .collect()
}

/// What every finding of a run says about where it came from.
pub struct FindingSource<'a> {
    pub provider: &'a dyn Provider,
    pub dbms_version: &'a str,
    pub fault: Option<Fault>,
}

/// Where in a run a finding came from: enough to regenerate it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Origin {
    pub seed: u64,
    pub thread: u32,
    pub database: u64,
    /// The check's index within its database.
    pub check: u64,
    /// Whether the check was drawn from a rotation of several oracles
    /// (`--oracle all`): only that rotation draws the same checks again,
    /// so the regenerate line names it and not the finding's oracle.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rotation: bool,
}

/// Everything known about one finding. The JSON record is this struct.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Finding {
    pub kind: FindingKind,
    pub lancet_version: String,
    pub dbms: String,
    pub dbms_version: String,
    pub oracle: Option<String>,
    pub origin: Origin,
    /// The relation that broke (logic findings).
    pub relation: Option<String>,
    /// The statements that build the database, in order.
    pub setup: Vec<String>,
    /// The queries of the check (logic findings) or the failing statement.
    pub queries: Vec<FoundQuery>,
    pub diff: Option<RowDiff>,
    pub error: Option<DbError>,
    /// The oracle's inputs, for reduction.
    pub case: Option<Case>,
    /// Whether replaying the reproducer on a fresh database showed it again.
    pub confirmed: bool,
    /// A planted fault the run used (selftest and tests), if any.
    pub fault: Option<String>,
    /// Set on a reduced finding: what it was reduced from, and how.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<ReductionInfo>,
    /// The deduplication signature (see `dedup`), once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The optimizer knobs that, each off alone, make the disagreement
    /// vanish (see `localize`): where the bug likely is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hidden_by_knobs: Vec<String>,
    /// Knob differential findings: the smallest set of knobs whose turning
    /// off alone flips the result (see `localize::knobs_that_flip`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flipped_by_knobs: Vec<String>,
    /// Performance findings: the median times of the equivalent queries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<lancet_core::oracle::Timing>,
    /// Reduced logic findings: which query is wrong, or why lancet cannot
    /// tell (see `wrong_side`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrong_side: Option<WrongSide>,
    /// Reduced logic findings: what the tables the queries read hold after
    /// the setup (see `stored_rows`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored: Vec<StoredTable>,
    /// Crash findings: what replaying it on a fresh database showed once
    /// the workers were done (see `runner::crash_triage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crash_replay: Option<CrashReplay>,
}

/// A crash replayed on a fresh database once the workers were done: did it
/// crash the DBMS again, and, if not, what every session was running when
/// the DBMS went down (one of them may have crashed it).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct CrashReplay {
    /// The statements crashed the DBMS again.
    pub repeated: bool,
    /// Lost sessions of the same crash folded into this finding: they
    /// were its collateral (kept in `unconfirmed/`), not crashes of their own.
    #[serde(default)]
    pub folded: u32,
    /// When it did not repeat: the other sessions' statements at the time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_running: Vec<RunningStatement>,
}

/// What one session was running when the DBMS went down.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunningStatement {
    pub thread: u32,
    pub sql: String,
    /// The file that keeps that session's statements.
    pub file: String,
}

/// What lancet could decide about which query of a finding is wrong
/// ([`crate::wrong_side`] decides it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WrongSide {
    /// The roles of the wrong queries (`partitioned`, `pivot query`);
    /// empty when lancet cannot tell.
    pub wrong: Vec<String>,
    /// How lancet knows, or why it cannot tell.
    pub how: String,
    /// What the (first) wrong query should return, when known: its row
    /// count and its first rows as the client prints values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_rows: Option<usize>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected: Vec<String>,
}

impl WrongSide {
    /// lancet cannot tell which side is wrong, for `why`.
    pub fn cannot_tell(why: impl Into<String>) -> WrongSide {
        WrongSide {
            wrong: Vec::new(),
            how: why.into(),
            expected_rows: None,
            expected: Vec::new(),
        }
    }
}

/// One table's rows after a finding's setup ([`crate::stored_rows`]
/// reads them).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoredTable {
    /// As the queries name it.
    pub table: String,
    pub rows: usize,
    /// The first rows, as lancet prints values.
    pub shown: Vec<String>,
}

/// How a reduced finding came about.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReductionInfo {
    /// The file name of the unreduced reproducer.
    pub from: String,
    /// Statements (setup and queries) before and after.
    pub statements_before: usize,
    pub statements_after: usize,
    /// Bytes of SQL before and after.
    pub bytes_before: usize,
    pub bytes_after: usize,
    pub seconds: f64,
    /// Candidates replayed on fresh databases.
    pub tests: u64,
    /// False if the time limit or an interrupt ended the reduction early.
    pub complete: bool,
}

impl Finding {
    /// This finding's statements, origin and fault with nothing a check,
    /// a confirmation or a reduction said of them: no result, case,
    /// signature or explanation. A finding made from another (a crash met
    /// while replaying it) starts from here.
    pub fn unexplained(&self) -> Finding {
        Finding {
            diff: None,
            error: None,
            case: None,
            confirmed: false,
            reduction: None,
            signature: None,
            hidden_by_knobs: Vec::new(),
            flipped_by_knobs: Vec::new(),
            wrong_side: None,
            stored: Vec::new(),
            timing: None,
            ..self.clone()
        }
    }

    fn new(
        source: &FindingSource,
        kind: FindingKind,
        origin: Origin,
        setup: Vec<String>,
    ) -> Finding {
        Finding {
            kind,
            lancet_version: crate::VERSION.to_string(),
            dbms: source.provider.name().to_string(),
            dbms_version: source.dbms_version.to_string(),
            oracle: None,
            origin,
            relation: None,
            setup,
            queries: Vec::new(),
            diff: None,
            error: None,
            case: None,
            confirmed: false,
            fault: source.fault.as_ref().map(|f| f.name().to_string()),
            reduction: None,
            signature: None,
            hidden_by_knobs: Vec::new(),
            flipped_by_knobs: Vec::new(),
            wrong_side: None,
            stored: Vec::new(),
            timing: None,
            crash_replay: None,
        }
    }

    /// A broken relation: the oracle's case, the queries as they ran and
    /// how their results differ.
    pub fn logic(
        source: &FindingSource,
        origin: Origin,
        setup: Vec<String>,
        case: Case,
        disagreement: Disagreement,
        ran: &[RanQuery],
    ) -> Finding {
        let mut queries = found_queries(source.provider, ran);
        let kind = if disagreement.timing.is_some() {
            // Both plans go into the reproducer: each query's first run is
            // preceded by the dialect's EXPLAIN of it.
            if let Some(prefix) = source.provider.dialect().rules().explain_prefix() {
                let mut explained: Vec<QueryContext> = Vec::new();
                for q in &mut queries {
                    if !explained.contains(&q.context) {
                        explained.push(q.context.clone());
                        q.client_lines.push(format!("{prefix}{};", q.sql));
                    }
                }
            }
            FindingKind::Performance
        } else {
            FindingKind::Logic
        };
        Finding {
            oracle: Some(case.oracle.clone()),
            relation: Some(disagreement.relation),
            queries,
            diff: Some(disagreement.diff),
            case: Some(case),
            timing: disagreement.timing,
            ..Finding::new(source, kind, origin, setup)
        }
    }

    /// A statement that failed in a way that is a finding by itself: an
    /// unexpected error, a lost connection (crash) or a hang.
    pub fn failure(
        source: &FindingSource,
        oracle: Option<&str>,
        origin: Origin,
        setup: Vec<String>,
        error: ExecError,
    ) -> Finding {
        let (kind, sql, error) = match error {
            ExecError::Unexpected { sql, error } => (FindingKind::UnexpectedError, sql, error),
            ExecError::Lost { sql, error } if error.kind == FailureKind::Hang => {
                (FindingKind::Hang, sql, error)
            }
            ExecError::Lost { sql, error } => (FindingKind::Crash, sql, error),
            ExecError::Expected(error) => (FindingKind::UnexpectedError, String::new(), error),
        };
        Finding {
            oracle: oracle.map(str::to_string),
            queries: vec![FoundQuery::failing(sql)],
            error: Some(error),
            ..Finding::new(source, kind, origin, setup)
        }
    }

    /// Says that the failing statement ran with `knobs` off: the
    /// reproducer then sets them first, with the client's commands.
    pub fn set_failing_knobs(&mut self, provider: &dyn Provider, knobs: KnobSetting) {
        if knobs.is_default() {
            return;
        }
        if let Some(q) = self.queries.last_mut() {
            q.client_lines = provider.knob_commands(&KnobSetting::default(), &knobs);
            q.context.knobs = knobs;
        }
    }

    /// Statements a reproducer runs: setup and queries.
    pub fn statement_count(&self) -> usize {
        self.setup.len() + self.queries.len()
    }

    /// Bytes of SQL a reproducer runs.
    pub fn sql_bytes(&self) -> usize {
        self.setup.iter().map(|s| s.len() + 2).sum::<usize>()
            + self.queries.iter().map(|q| q.sql.len() + 2).sum::<usize>()
    }

    /// Reads a finding: its JSON record, and the `.sql` reproducer beside
    /// it as the user may have edited it. Edited or removed setup
    /// statements are taken from the `.sql`; the compared queries must
    /// still be the record's (the oracle's relation is defined over them),
    /// or the file is refused with a message that says so.
    /// `catalog` says which dialect the record's DBMS prints.
    pub fn load(path: &Path, catalog: &Catalog) -> anyhow::Result<Finding> {
        let mut finding = Finding::load_record(path)?;
        let sql = path.with_extension("sql");
        let text = match fs::read_to_string(&sql) {
            Ok(t) => t,
            Err(e) if path.extension().is_some_and(|x| x == "json") => {
                log::info!("{}: {e}; replaying the record alone", sql.display());
                return Ok(finding);
            }
            Err(e) => anyhow::bail!("cannot read {}: {e}", sql.display()),
        };
        let text = without_client_lines(&text, &finding);
        let Some(dialect) = catalog.dialect_of(&finding.dbms) else {
            anyhow::bail!(
                "the record names a DBMS lancet does not know: {}",
                finding.dbms
            );
        };
        let split = |t: &str| -> Vec<String> {
            crate::script::split_statements(t, dialect, catalog)
                .iter()
                .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
                .collect()
        };
        let joined = |stmts: &mut dyn Iterator<Item = &String>| -> String {
            stmts.map(|s| format!("{s};\n")).collect()
        };
        let in_file = split(&text);
        let queries = split(&joined(&mut finding.queries.iter().map(|q| &q.sql)));
        let recorded = split(&joined(&mut finding.setup.iter())).len() + queries.len();
        if in_file.len() == recorded
            && in_file
                == split(&joined(
                    &mut finding
                        .setup
                        .iter()
                        .chain(finding.queries.iter().map(|q| &q.sql)),
                ))
        {
            return Ok(finding);
        }
        let n = in_file.len();
        if n < queries.len() || in_file[n - queries.len()..] != queries[..] {
            anyhow::bail!(
                "{} no longer matches its record {}: its last {} statement(s) must be the compared \
                 queries as recorded (the oracle's relation is defined over them); edit only the \
                 statements before them, or reduce the file as SQL with `lancet reduce --dbms {} \
                 --check-differs`",
                sql.display(),
                path.with_extension("json").display(),
                queries.len(),
                finding.dbms
            );
        }
        log::info!(
            "{}: {} setup statement(s) as edited (the record has {})",
            sql.display(),
            n - queries.len(),
            finding.setup.len()
        );
        finding.setup = in_file[..n - queries.len()].to_vec();
        Ok(finding)
    }

    /// Reads a finding's JSON record only.
    pub fn load_record(path: &Path) -> anyhow::Result<Finding> {
        let json = if path.extension().is_some_and(|e| e == "json") {
            path.to_path_buf()
        } else {
            path.with_extension("json")
        };
        let text = fs::read_to_string(&json).with_context(|| {
            if json.as_path() == path {
                format!("cannot read {}", json.display())
            } else {
                format!(
                    "{} is not a lancet reproducer: its record {} cannot be read \
                     (for SQL from elsewhere, `lancet reduce` takes --dbms with --check-cmd or --check-differs)",
                    path.display(),
                    json.display()
                )
            }
        })?;
        let mut finding: Finding = serde_json::from_str(&text)
            .with_context(|| format!("{} is not a valid lancet finding record", json.display()))?;
        // Records made before cases named their oracle.
        if let (Some(case), Some(oracle)) = (&mut finding.case, &finding.oracle) {
            if case.oracle.is_empty() {
                case.oracle = oracle.clone();
            }
        }
        Ok(finding)
    }

    /// A one-line description for status output.
    pub fn headline(&self) -> String {
        match self.kind {
            FindingKind::Logic => format!(
                "{} broke ({} vs {} rows)",
                self.oracle.as_deref().unwrap_or("?"),
                count(&self.queries, 0),
                count(&self.queries, 1)
            ),
            FindingKind::Performance => format!(
                "{} found a slow plan: {}",
                self.oracle.as_deref().unwrap_or("?"),
                self.timing
                    .as_ref()
                    .map(|t| t
                        .medians_ms
                        .iter()
                        .map(|(role, ms)| format!("{ms:.0} ms {role}"))
                        .collect::<Vec<_>>()
                        .join(" vs "))
                    .unwrap_or_default()
            ),
            FindingKind::UnexpectedError | FindingKind::Crash | FindingKind::Hang => format!(
                "{}: {}",
                self.kind.name(),
                self.error
                    .as_ref()
                    .map(|e| e.to_string())
                    .unwrap_or_default()
            ),
        }
    }
}

fn count(queries: &[FoundQuery], i: usize) -> String {
    queries
        .get(i)
        .and_then(|q| q.row_count)
        .map_or("?".into(), |c| c.to_string())
}

/// A reproducer's text without the client commands (knob settings) that
/// the record's queries carry: they are not SQL, and they sit among the
/// compared queries, after the first query's comment.
fn without_client_lines(text: &str, finding: &Finding) -> String {
    let lines: Vec<&str> = finding
        .queries
        .iter()
        .flat_map(|q| q.client_lines.iter().map(String::as_str))
        .collect();
    if lines.is_empty() {
        return text.to_string();
    }
    let mut in_queries = false;
    text.lines()
        .filter(|l| {
            let t = l.trim();
            in_queries |= t.starts_with("-- query 1 (") || t.starts_with("# query 1 (");
            !(in_queries && lines.contains(&t))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}
