//! Findings on disk: each one a self-contained reproducer (`.sql`, runnable
//! with the DBMS's own client) and a JSON record of the same facts, written
//! and synced before the run goes on, so that a Ctrl-C or a kill right
//! after a finding loses nothing.

use anyhow::Context;
use lancet_core::compare::RowDiff;
use lancet_core::fault::Fault;
use lancet_core::value::format_row;
use lancet_core::{
    Case, DbError, Disagreement, ExecError, FailureKind, KnobSetting, Provider, QueryContext,
    RanQuery,
};
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

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
}

impl FindingKind {
    pub fn name(self) -> &'static str {
        match self {
            FindingKind::Logic => "logic",
            FindingKind::UnexpectedError => "unexpected-error",
            FindingKind::Crash => "crash",
            FindingKind::Hang => "hang",
        }
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
                row_count: Some(q.rows),
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
            fault: source.fault.map(|f| f.name().to_string()),
            reduction: None,
            signature: None,
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
        Finding {
            oracle: Some(case.oracle.clone()),
            relation: Some(disagreement.relation),
            queries: found_queries(source.provider, ran),
            diff: Some(disagreement.diff),
            case: Some(case),
            ..Finding::new(source, FindingKind::Logic, origin, setup)
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
    pub fn load(path: &Path) -> anyhow::Result<Finding> {
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
        let Some(dialect) = crate::registry::dialect_of(&finding.dbms) else {
            anyhow::bail!(
                "the record names a DBMS lancet does not know: {}",
                finding.dbms
            );
        };
        let split = |t: &str| -> Vec<String> {
            crate::reduce::sql_text::split_statements(t, dialect)
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

/// The most rows of a diff a reproducer's header lists per side.
const MAX_LISTED_ROWS: usize = 20;

/// Renders the `.sql` reproducer: a comment header with the facts, the setup,
/// then the queries, each with its row count.
pub fn render_reproducer(
    f: &Finding,
    comment: &str,
    client_command: &str,
    file_name: &str,
) -> String {
    let mut out = String::new();
    let mut line = |text: &str| {
        out.push_str(comment);
        if !text.is_empty() {
            out.push(' ');
        }
        out.push_str(text);
        out.push('\n');
    };
    line(&format!(
        "lancet {} finding: {}",
        f.lancet_version,
        f.kind.name()
    ));
    line(&format!("DBMS: {} {}", f.dbms, f.dbms_version));
    if let Some(o) = &f.oracle {
        line(&format!("oracle: {o}"));
    }
    line(&format!(
        "regenerate: lancet fuzz --dbms {} --seed {} --thread {} --database {}{}",
        f.dbms,
        f.origin.seed,
        f.origin.thread,
        f.origin.database,
        f.oracle
            .as_deref()
            .map(|o| format!(" --oracle {o}"))
            .unwrap_or_default()
            + &f.fault
                .as_deref()
                .map(|x| format!(" --inject-fault {x}"))
                .unwrap_or_default()
    ));
    line(&format!(
        "run: {}",
        client_command.replace("{file}", file_name)
    ));
    if let Some(fault) = &f.fault {
        line(&format!(
            "planted fault: {fault} (lancet perturbed results on purpose; the DBMS itself agrees)"
        ));
    }
    line(&format!(
        "confirmed on a fresh database: {}",
        if f.confirmed { "yes" } else { "no" }
    ));
    if let Some(r) = &f.reduction {
        line(&format!(
            "reduced from {} ({} statements, {} bytes) to {} statements, {} bytes, in {:.1} s{}",
            r.from,
            r.statements_before,
            r.bytes_before,
            r.statements_after,
            r.bytes_after,
            r.seconds,
            if r.complete { "" } else { " (stopped early)" }
        ));
    }
    if let Some(sig) = &f.signature {
        line(&format!("signature: {sig}"));
    }
    if let Some(r) = &f.relation {
        line(&format!("relation that broke: {r}"));
    }
    for (i, q) in f.queries.iter().enumerate() {
        if let Some(c) = q.row_count {
            line(&format!("query {} ({}): {c} rows", i + 1, q.role));
        }
    }
    if let Some(diff) = &f.diff {
        let mut side = |name: &str, rows: &[(lancet_core::Row, usize)]| {
            if rows.is_empty() {
                return;
            }
            line(&format!("rows only in {name}:"));
            for (row, times) in rows.iter().take(MAX_LISTED_ROWS) {
                let suffix = if *times > 1 {
                    format!("  x{times}")
                } else {
                    String::new()
                };
                line(&format!("  {}{suffix}", format_row(row)));
            }
            if rows.len() > MAX_LISTED_ROWS {
                line(&format!("  ... and {} more", rows.len() - MAX_LISTED_ROWS));
            }
        };
        let first = f
            .queries
            .first()
            .map_or("query 1".to_string(), |q| format!("query 1 ({})", q.role));
        let second = f.queries.get(1).map_or_else(
            || "what must be in the result (it is missing)".to_string(),
            |q| format!("query 2 ({})", q.role),
        );
        side(&first, &diff.only_in_first);
        side(&second, &diff.only_in_second);
    }
    if let Some(e) = &f.error {
        line(&format!("error: {}", e.to_string().replace('\n', " ")));
    }
    out.push('\n');
    for stmt in &f.setup {
        out.push_str(stmt);
        out.push_str(";\n");
    }
    for (i, q) in f.queries.iter().enumerate() {
        out.push('\n');
        let what = match q.row_count {
            Some(c) => format!("query {} ({}): lancet saw {c} rows", i + 1, q.role),
            None => format!("statement {} ({})", i + 1, q.role),
        };
        out.push_str(&format!("{comment} {what}\n"));
        for line in &q.client_lines {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&q.sql);
        out.push_str(";\n");
    }
    out
}

/// Writes findings into one directory, numbering them in order.
pub struct FindingWriter {
    dir: PathBuf,
    next: AtomicU32,
}

impl FindingWriter {
    /// Creates the directory (and parents); fails clearly if it cannot.
    pub fn new(dir: &Path) -> anyhow::Result<FindingWriter> {
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the findings directory {}", dir.display()))?;
        // Fail now, not at the first finding, if we cannot write there.
        let probe = dir.join(".lancet-write-test");
        fs::write(&probe, b"").with_context(|| {
            format!("cannot write into the findings directory {}", dir.display())
        })?;
        let _ = fs::remove_file(&probe);
        Ok(FindingWriter {
            dir: dir.to_path_buf(),
            next: AtomicU32::new(1),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes the reproducer and the JSON record, synced to disk, among
    /// the findings (a crash or hang: nothing to confirm).
    pub fn write(
        &self,
        f: &Finding,
        comment: &str,
        client_command: &str,
    ) -> anyhow::Result<WrittenFinding> {
        self.write_into(&self.dir, f, comment, client_command)
    }

    /// Writes a finding that waits for confirmation into `pending/`: on
    /// disk before the run goes on, but never among the confirmed ones
    /// until [`FindingWriter::promote`] moves it there.
    pub fn write_pending(
        &self,
        f: &Finding,
        comment: &str,
        client_command: &str,
    ) -> anyhow::Result<WrittenFinding> {
        let dir = self.dir.join(PENDING_DIR);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        self.write_into(&dir, f, comment, client_command)
    }

    /// Rewrites a confirmed finding and moves it from `pending/` into the
    /// findings.
    pub fn promote(
        &self,
        w: &WrittenFinding,
        f: &Finding,
        comment: &str,
        client_command: &str,
    ) -> anyhow::Result<WrittenFinding> {
        self.update(w, f, comment, client_command)?;
        self.move_to(w, &self.dir)
    }

    fn write_into(
        &self,
        dir: &Path,
        f: &Finding,
        comment: &str,
        client_command: &str,
    ) -> anyhow::Result<WrittenFinding> {
        let n = self.next.fetch_add(1, Ordering::SeqCst);
        let stem = format!(
            "{n:04}-{}-t{}-d{}",
            f.oracle.as_deref().unwrap_or(f.kind.name()),
            f.origin.thread,
            f.origin.database
        );
        let written = WrittenFinding {
            sql: dir.join(format!("{stem}.sql")),
            json: dir.join(format!("{stem}.json")),
        };
        self.update(&written, f, comment, client_command)?;
        Ok(written)
    }

    /// Rewrites a finding's files in place (after confirmation).
    pub fn update(
        &self,
        w: &WrittenFinding,
        f: &Finding,
        comment: &str,
        client_command: &str,
    ) -> anyhow::Result<()> {
        let json = serde_json::to_string_pretty(f).context("serializing a finding")?;
        let sql_name = w
            .sql
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        write_synced(&w.json, json.as_bytes())?;
        write_synced(
            &w.sql,
            render_reproducer(f, comment, client_command, &sql_name).as_bytes(),
        )?;
        if let Some(d) = w.sql.parent().and_then(|d| fs::File::open(d).ok()) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Moves a finding that did not reproduce on a fresh database out of
    /// the findings into `dir`: kept for lancet's developers (it points at
    /// non-determinism in a generator), never reported as a DBMS bug.
    pub fn demote(&self, w: &WrittenFinding, dir: &Path) -> anyhow::Result<WrittenFinding> {
        self.move_to(w, dir)
    }

    /// Moves both files into `dir`: the record first, so that a kill in
    /// between leaves the reproducer where the leftover scan looks.
    fn move_to(&self, w: &WrittenFinding, dir: &Path) -> anyhow::Result<WrittenFinding> {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let moved = |from: &Path| -> anyhow::Result<PathBuf> {
            let to = dir.join(from.file_name().unwrap_or_default());
            fs::rename(from, &to)
                .with_context(|| format!("cannot move {} to {}", from.display(), to.display()))?;
            Ok(to)
        };
        let json = moved(&w.json)?;
        let sql = moved(&w.sql)?;
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(WrittenFinding { sql, json })
    }
}

/// The two files of a finding on disk.
#[derive(Clone, Debug)]
pub struct WrittenFinding {
    pub sql: PathBuf,
    pub json: PathBuf,
}

impl WrittenFinding {
    /// The files of a finding's reduced version: `<stem>.reduced.sql/.json`
    /// beside the unreduced ones, which are kept.
    pub fn reduced(&self) -> WrittenFinding {
        let with = |p: &Path, ext: &str| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            p.with_file_name(format!("{stem}.reduced.{ext}"))
        };
        WrittenFinding {
            sql: with(&self.sql, "sql"),
            json: with(&self.json, "json"),
        }
    }
}

/// The first reproducer in a findings directory (not the index, not a
/// reduced one), in file-name order.
pub fn first_reproducer(dir: &Path) -> Option<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.ends_with(".sql") && !name.ends_with(".reduced.sql") && !name.starts_with("index.")
        })
        .collect();
    files.sort();
    files.into_iter().next()
}

/// Where findings wait for confirmation, inside the findings directory.
pub const PENDING_DIR: &str = "pending";

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
