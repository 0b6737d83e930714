//! The `.sql` reproducer of a finding: a comment header with the facts
//! (DBMS, oracle, how to regenerate and run it, the relation and the rows
//! that differ), the setup, then the compared queries, each preceded by the
//! client commands that give it its context. Plain SQL for the DBMS's own
//! client; the JSON record beside it carries the same facts for lancet.
//! [`FindingWriter`] puts both on disk, synced, before a run goes on.

use crate::findings::{Finding, FindingKind};
use anyhow::Context;
use lancet_core::knobs::describe_changes;
use lancet_core::value::format_row;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The most rows of a diff a reproducer's header lists per side.
const MAX_LISTED_ROWS: usize = 20;

/// Text for a comment line: a control character in a value (a newline,
/// a NUL from `char(0)`) is shown escaped, so that it can neither end the
/// comment and run as SQL nor make the file unreadable to a client or a
/// store that refuses NUL.
fn comment_safe(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '\t' => out.push('\t'),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A statement on one header line: whitespace runs made one space, long
/// ones cut.
fn one_line(sql: &str) -> String {
    let flat = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(200) {
        Some((at, _)) => format!("{} ...", &flat[..at]),
        None => flat,
    }
}

/// Renders the `.sql` reproducer: a comment header with the facts, the setup,
/// then the queries, each with its row count.
pub fn render(f: &Finding, comment: &str, client_command: &str, file_name: &str) -> String {
    let mut h = HeaderLines {
        out: String::new(),
        comment,
    };
    header_origin(&mut h, f, client_command, file_name);
    header_result(&mut h, f);
    let mut out = h.out;
    statements(&mut out, f, comment);
    out
}

/// The header: comment lines, each made safe for the comment syntax.
struct HeaderLines<'a> {
    out: String,
    comment: &'a str,
}

impl HeaderLines<'_> {
    fn line(&mut self, text: &str) {
        self.out.push_str(self.comment);
        if !text.is_empty() {
            self.out.push(' ');
        }
        self.out.push_str(&comment_safe(text));
        self.out.push('\n');
    }
}

/// Where the finding comes from and how to run it: version, DBMS,
/// oracle, the line that regenerates it, the client's run line, the
/// planted fault, confirmation, reduction and knob localization.
fn header_origin(h: &mut HeaderLines, f: &Finding, client_command: &str, file_name: &str) {
    h.line(&format!(
        "lancet {} finding: {}",
        f.lancet_version,
        f.kind.name()
    ));
    h.line(&format!("DBMS: {} {}", f.dbms, f.dbms_version));
    if let Some(o) = &f.oracle {
        h.line(&format!("oracle: {o}"));
    }
    h.line(&format!(
        "regenerate: lancet fuzz --dbms {} --seed {} --thread {} --database {}{}",
        f.dbms,
        f.origin.seed,
        f.origin.thread,
        f.origin.database,
        match (f.origin.rotation, f.oracle.as_deref()) {
            (true, _) => " --oracle all".to_string(),
            (false, Some(o)) => format!(" --oracle {o}"),
            (false, None) => String::new(),
        } + &f
            .fault
            .as_deref()
            .map(|x| format!(" --inject-fault {x}"))
            .unwrap_or_default()
    ));
    h.line(&format!(
        "run: {}",
        client_command.replace("{file}", file_name)
    ));
    if let Some(fault) = &f.fault {
        h.line(&format!(
            "planted fault: {fault} (lancet perturbed results on purpose; the DBMS itself agrees)"
        ));
    }
    h.line(&format!(
        "confirmed on a fresh database: {}",
        match (f.confirmed, f.kind, &f.crash_replay) {
            (_, FindingKind::Crash, Some(r)) if r.repeated => "yes (the crash repeated)",
            (_, FindingKind::Crash, Some(_)) => {
                "no: the crash did not repeat (what every session was running is listed below)"
            }
            (true, _, _) => "yes",
            // A crash is replayed once the workers are done (with
            // reduction); a hang stands without a replay, which would only
            // wait out the limit again.
            (false, FindingKind::Crash | FindingKind::Hang, _) => {
                "not replayed (a crash or hang would take the server down again)"
            }
            (false, _, _) => "no",
        }
    ));
    if let Some(r) = &f.crash_replay {
        if r.folded > 0 {
            h.line(&format!(
                "{} other session(s) lost in the same crash are folded into this finding (kept in unconfirmed/)",
                r.folded
            ));
        }
        for other in &r.also_running {
            h.line(&format!(
                "when the DBMS went down, thread {} was running: {} (its statements: {})",
                other.thread,
                one_line(&other.sql),
                other.file
            ));
        }
    }
    if let Some(r) = &f.reduction {
        h.line(&format!(
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
    if !f.flipped_by_knobs.is_empty() {
        h.line(&format!(
            "localized: the result differs with only these knob changes: {}",
            describe_changes(&f.flipped_by_knobs)
        ));
    }
    if !f.hidden_by_knobs.is_empty() {
        h.line(&format!(
            "hidden by any one of these knob changes: {}",
            describe_changes(&f.hidden_by_knobs)
        ));
    }
}

/// Which query is wrong and what it should return, or why lancet cannot
/// tell (see `wrong_side`).
fn header_wrong_side(h: &mut HeaderLines, f: &Finding) {
    let Some(w) = &f.wrong_side else {
        return;
    };
    if w.wrong.is_empty() {
        h.line(&format!("wrong side: lancet cannot tell: {}", w.how));
        return;
    }
    let named: Vec<String> = w
        .wrong
        .iter()
        .map(
            |role| match compared(&f.queries).position(|q| &q.role == role) {
                Some(i) => format!("query {} ({role})", i + 1),
                None => role.clone(),
            },
        )
        .collect();
    h.line(&format!("wrong: {}; {}", named.join(" and "), w.how));
    if let Some(n) = w.expected_rows {
        h.line(&format!(
            "{} should return {n} rows{}",
            named[0],
            if w.expected.is_empty() { "" } else { ":" }
        ));
        for row in &w.expected {
            h.line(&format!("  {row}"));
        }
        if n > w.expected.len() {
            h.line(&format!("  ... and {} more", n - w.expected.len()));
        }
    }
}

/// What broke: signature, relation, timings, row counts, the differing
/// rows, the error.
fn header_result(h: &mut HeaderLines, f: &Finding) {
    if let Some(sig) = &f.signature {
        h.line(&format!("signature: {sig}"));
    }
    if let Some(r) = &f.relation {
        h.line(&format!("relation that broke: {r}"));
    }
    if let Some(t) = &f.timing {
        let medians: Vec<String> = t
            .medians_ms
            .iter()
            .map(|(role, ms)| format!("{ms:.1} ms {role}"))
            .collect();
        h.line(&format!(
            "median times over {} runs each: {} (each query's EXPLAIN precedes its first run below)",
            t.runs,
            medians.join(", ")
        ));
    }
    for (i, q) in compared(&f.queries).enumerate() {
        if let Some(c) = q.row_count {
            h.line(&format!("query {} ({}): {c} rows", i + 1, q.role));
        }
    }
    header_wrong_side(h, f);
    if let Some(diff) = &f.diff {
        let side = |h: &mut HeaderLines, name: &str, rows: &[(lancet_core::Row, usize)]| {
            if rows.is_empty() {
                return;
            }
            h.line(&format!("rows only in {name}:"));
            for (row, times) in rows.iter().take(MAX_LISTED_ROWS) {
                let suffix = if *times > 1 {
                    format!("  x{times}")
                } else {
                    String::new()
                };
                h.line(&format!("  {}{suffix}", format_row(row)));
            }
            if rows.len() > MAX_LISTED_ROWS {
                h.line(&format!("  ... and {} more", rows.len() - MAX_LISTED_ROWS));
            }
        };
        let (first, second) = match &diff.sides {
            Some([first, second]) => (first.clone(), second.clone()),
            None => (
                compared(&f.queries)
                    .next()
                    .map_or("query 1".to_string(), |q| format!("query 1 ({})", q.role)),
                compared(&f.queries).nth(1).map_or_else(
                    || "what must be in the result (it is missing)".to_string(),
                    |q| format!("query 2 ({})", q.role),
                ),
            ),
        };
        side(h, &first, &diff.only_in_first);
        side(h, &second, &diff.only_in_second);
    }
    if let Some(e) = &f.error {
        h.line(&format!("error: {}", e.to_string().replace('\n', " ")));
    }
}

/// The setup statements, then the queries and statements that ran, each
/// under a comment naming it.
fn statements(out: &mut String, f: &Finding, comment: &str) {
    out.push('\n');
    for stmt in &f.setup {
        out.push_str(stmt);
        out.push_str(";\n");
    }
    stored_tables(out, f, comment);
    // Queries and statements are numbered apart, so that `query 1` and
    // `query 2` are the compared ones whatever statements come first.
    let (mut queries, mut statements) = (0, 0);
    for q in &f.queries {
        out.push('\n');
        let what = match q.row_count {
            Some(c) => {
                queries += 1;
                format!("query {queries} ({}): lancet saw {c} rows", q.role)
            }
            None => {
                statements += 1;
                format!("statement {statements} ({})", q.role)
            }
        };
        out.push_str(&format!("{comment} {what}\n"));
        for line in &q.client_lines {
            out.push_str(line);
            out.push('\n');
        }
        out.push_str(&q.sql);
        out.push_str(";\n");
    }
}

/// What the tables the queries read hold after the setup, each as a
/// `SELECT *` with the rows lancet read below it (see `stored_rows`).
fn stored_tables(out: &mut String, f: &Finding, comment: &str) {
    if f.stored.is_empty() {
        return;
    }
    out.push_str(&format!(
        "\n{comment} What the tables hold now, as lancet read them (the engine may have \
         converted values on the way in):\n"
    ));
    for t in &f.stored {
        out.push_str(&format!("SELECT * FROM {};\n", t.table));
        out.push_str(&format!("{comment}   {} rows\n", t.rows));
        for row in &t.shown {
            out.push_str(&format!("{comment}   {}\n", row.replace('\n', " ")));
        }
        if t.rows > t.shown.len() {
            out.push_str(&format!(
                "{comment}   ... and {} more\n",
                t.rows - t.shown.len()
            ));
        }
    }
}

/// The queries whose results were compared (not the statements that
/// prepared them), in order.
fn compared(
    queries: &[crate::findings::FoundQuery],
) -> impl Iterator<Item = &crate::findings::FoundQuery> {
    queries.iter().filter(|q| q.row_count.is_some())
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
            render(f, comment, client_command, &sql_name).as_bytes(),
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

/// The findings in a findings directory as files with extension `ext`
/// (`sql` or `json`): not the index, not reduced ones; in file-name order.
/// Empty when the directory cannot be read.
pub fn finding_files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let Ok(listing) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let suffix = format!(".{ext}");
    let reduced = format!(".reduced.{ext}");
    let mut files: Vec<PathBuf> = listing
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            name.ends_with(&suffix) && !name.ends_with(&reduced) && !name.starts_with("index.")
        })
        .collect();
    files.sort();
    files
}

/// The first reproducer in a findings directory (not the index, not a
/// reduced one), in file-name order.
pub fn first_reproducer(dir: &Path) -> Option<PathBuf> {
    finding_files(dir, "sql").into_iter().next()
}

/// Where findings wait for confirmation, inside the findings directory.
pub const PENDING_DIR: &str = "pending";

/// Run files and findings are written alike (see the fleet crate).
pub use lancet_fleet::run_files::write_synced;

#[cfg(test)]
mod comment_tests {
    #[test]
    fn control_characters_stay_inside_the_comment() {
        assert_eq!(super::comment_safe("(NULL, 'a')"), "(NULL, 'a')");
        assert_eq!(
            super::comment_safe("('\0', 'x\ny', '\u{1}')"),
            "('\\0', 'x\\ny', '\\u{1}')"
        );
    }
}
