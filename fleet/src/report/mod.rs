//! `lancet report`: a campaign as one self-contained HTML page, from a
//! findings store (or run directories read into one): throughput and
//! findings over time per shard, findings per oracle and per root-cause
//! group, the oracle mix, plan coverage, the expected-error share, and
//! the bugs with their signatures and reproducers inlined. No script and nothing
//! fetched: the file can be mailed, archived or opened offline.

mod plots;

use crate::run_files::Sample;
use crate::store::read::{BugSummary, RunInfo};
use crate::store::Store;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Reproducers inlined, most frequent bugs first: a store of a long
/// campaign against an old release can hold thousands of signatures.
const MAX_REPRODUCERS: usize = 500;

/// Groups drawn in the bar chart (largest first).
const MAX_GROUP_BARS: usize = 15;

/// Everything a report shows, read from a store once.
pub struct ReportData {
    pub store: String,
    pub runs: Vec<RunInfo>,
    pub samples: BTreeMap<String, Vec<Sample>>,
    pub bugs: Vec<BugSummary>,
    /// Each bug's smallest reproducer, by signature.
    pub reproducers: BTreeMap<String, String>,
}

impl ReportData {
    pub fn read(store: &mut Store) -> anyhow::Result<ReportData> {
        let runs = store.runs()?;
        let samples = store.samples()?;
        let bugs = store.bugs()?;
        let mut reproducers = BTreeMap::new();
        for b in bugs.iter().take(MAX_REPRODUCERS) {
            if let Some(f) = &b.smallest {
                if let Some(sql) = store.reproducer(&f.run_id, &f.file)? {
                    reproducers.insert(b.signature.clone(), sql);
                }
            }
        }
        Ok(ReportData {
            store: store.name().to_string(),
            runs,
            samples,
            bugs,
            reproducers,
        })
    }
}

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A run's totals: its summary where it ended, else its last sample.
struct RunTotals {
    checks: u64,
    skipped: u64,
    findings: u64,
    plans: u64,
    seconds: f64,
    stopped_by: String,
    per_oracle: BTreeMap<String, u64>,
}

fn totals(run: &RunInfo, samples: &[Sample]) -> RunTotals {
    let last = samples.last().cloned().unwrap_or_default();
    let get = |key: &str| {
        run.summary
            .as_ref()
            .and_then(|s| s.get(key))
            .and_then(serde_json::Value::as_u64)
    };
    let per_oracle = run
        .summary
        .as_ref()
        .and_then(|s| s.get("checks_per_oracle"))
        .and_then(|m| serde_json::from_value(m.clone()).ok())
        .unwrap_or(last.per_oracle.clone());
    RunTotals {
        checks: get("checks").unwrap_or(last.checks),
        skipped: get("skipped_checks").unwrap_or(last.skipped),
        findings: get("findings").unwrap_or(last.findings),
        plans: get("distinct_plans").unwrap_or(last.plans),
        seconds: run
            .summary
            .as_ref()
            .and_then(|s| s.get("elapsed_seconds"))
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(last.elapsed),
        stopped_by: run
            .summary
            .as_ref()
            .and_then(|s| s.get("stopped_by"))
            .and_then(serde_json::Value::as_str)
            .map_or_else(|| "running, or killed".to_string(), str::to_string),
        per_oracle,
    }
}

/// A group's label short enough for a bar: `hidden by query-flattener off`.
fn short_group(label: &str) -> String {
    let short = label
        .replace("hidden by the knob change ", "hidden by ")
        .replace("disagrees with only the knob change(s) ", "shown by ")
        .replace('`', "");
    if short.chars().count() > 34 {
        let cut: String = short.chars().take(33).collect();
        format!("{cut}…")
    } else {
        short
    }
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// `12,345`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; }
h2 { font-size: 1.25em; margin-top: 1.8em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
.lede { color: #555; margin-top: 0; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 1em 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 1em; min-width: 120px; }
.card b { display: block; font-size: 1.4em; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; }
th, td { border-bottom: 1px solid #eee; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f6f6; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.bughead td { background: #fbf7ea; }
td.t { white-space: nowrap; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
.plot svg { max-width: 100%; height: auto; border: 1px solid #eee; }
pre { background: #f7f7f7; padding: 0.8em; overflow-x: auto; font-size: 0.85em; }
section.bug h3 { font-size: 1em; margin: 1.2em 0 0.3em; }
section.bug p { margin: 0.2em 0; }
code { font-size: 0.95em; }
";

/// The runs of a report, each with its totals, and their samples.
struct Campaign<'a> {
    data: &'a ReportData,
    runs: Vec<(&'a RunInfo, RunTotals)>,
}

impl<'a> Campaign<'a> {
    fn new(data: &'a ReportData) -> Campaign<'a> {
        let mut campaign = Campaign {
            data,
            runs: Vec::new(),
        };
        campaign.runs = data
            .runs
            .iter()
            .map(|r| (r, totals(r, campaign.samples_of(r))))
            .collect();
        campaign
    }

    /// A run's samples, in order (none if it sent none).
    fn samples_of(&self, run: &RunInfo) -> &'a [Sample] {
        self.data
            .samples
            .get(&run.run_id)
            .map_or(&[], Vec::as_slice)
    }
}

/// The report as one HTML document.
pub fn render(data: &ReportData, generated_unix: u64) -> anyhow::Result<String> {
    let campaign = Campaign::new(data);
    let mut h = String::new();
    write_head(&mut h, &campaign, generated_unix);
    write_over_time(&mut h, &campaign)?;
    write_oracles(&mut h, &campaign)?;
    write_groups(&mut h, data)?;
    write_runs(&mut h, &campaign);
    write_bugs(&mut h, data);
    write_reproducers(&mut h, data);
    h.push_str("</body></html>\n");
    Ok(h)
}

/// The document's head, title and lede, and the cards of campaign totals.
fn write_head(h: &mut String, campaign: &Campaign, generated_unix: u64) {
    let data = campaign.data;
    let all = &campaign.runs;
    let checks: u64 = all.iter().map(|(_, t)| t.checks).sum();
    let skipped: u64 = all.iter().map(|(_, t)| t.skipped).sum();
    let findings: u64 = all.iter().map(|(_, t)| t.findings).sum();
    let cpu_seconds: f64 = all.iter().map(|(_, t)| t.seconds).sum();
    let mut dbms: Vec<String> = data
        .runs
        .iter()
        .map(|r| {
            let version = r.dbms_version.split(" (").next().unwrap_or_default();
            format!("{} ({version})", r.dbms)
        })
        .collect();
    dbms.sort();
    dbms.dedup();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>lancet campaign report</title><style>{STYLE}</style></head><body>\n\
         <h1>lancet campaign report</h1>\n<p class=\"lede\">{} run(s) from {}, \
         generated {} UTC. {}</p>\n",
        data.runs.len(),
        esc(&data.store),
        crate::utc::utc_time(generated_unix),
        esc(&dbms.join("; "))
    );
    let _ = writeln!(
        h,
        "<div class=\"cards\">\
         <div class=\"card\"><b>{}</b>checks</div>\
         <div class=\"card\"><b>{:.0}</b>checks/s (all runs)</div>\
         <div class=\"card\"><b>{}</b>findings</div>\
         <div class=\"card\"><b>{}</b>bugs</div>\
         <div class=\"card\"><b>{}</b>signatures</div>\
         <div class=\"card\"><b>{:.1}%</b>skipped on expected errors</div>\
         <div class=\"card\"><b>{}</b>runs / shards</div></div>",
        thousands(checks),
        all.iter()
            .map(|(_, t)| t.checks as f64 / t.seconds.max(1e-9))
            .sum::<f64>(),
        thousands(findings),
        crate::store::read::group_into_bugs(&data.bugs).len(),
        data.bugs.len(),
        100.0 * share(skipped, checks + skipped),
        data.runs.len()
    );
    if cpu_seconds == 0.0 && data.runs.is_empty() {
        h.push_str("<p>The store holds no run yet.</p>");
    }
}

/// Throughput and findings over time, per shard or run, in a unit that
/// suits the campaign's length.
fn write_over_time(h: &mut String, campaign: &Campaign) -> anyhow::Result<()> {
    let data = campaign.data;
    let t0 = data.runs.iter().map(|r| r.started_unix).min().unwrap_or(0);
    let span = data
        .runs
        .iter()
        .map(|r| {
            r.started_unix.saturating_sub(t0) as f64
                + campaign.samples_of(r).last().map_or(0.0, |s| s.elapsed)
        })
        .fold(0.0, f64::max);
    let (unit, per) = if span < 300.0 {
        ("seconds", 1.0)
    } else if span < 3.0 * 3600.0 {
        ("minutes", 60.0)
    } else {
        ("hours", 3600.0)
    };
    let x_label = format!("{unit} since the campaign started");
    let mut rate_lines = Vec::new();
    let mut finding_lines = Vec::new();
    for run in &data.runs {
        let s = campaign.samples_of(run);
        let offset = (run.started_unix.saturating_sub(t0)) as f64;
        let at = |x: &Sample| (offset + x.elapsed) / per;
        let rates = s
            .windows(2)
            .filter(|w| w[1].elapsed > w[0].elapsed)
            .map(|w| {
                (
                    at(&w[1]),
                    (w[1].checks.saturating_sub(w[0].checks)) as f64
                        / (w[1].elapsed - w[0].elapsed),
                )
            })
            .collect();
        rate_lines.push(plots::Line {
            label: run.label(),
            points: rates,
        });
        finding_lines.push(plots::Line {
            label: run.label(),
            points: s.iter().map(|x| (at(x), x.findings as f64)).collect(),
        });
    }
    h.push_str("<h2>Over time</h2>\n<div class=\"plots\">");
    for svg in [
        plots::time_plot("Throughput per shard", &x_label, "checks/s", &rate_lines)?,
        plots::time_plot(
            "Findings per shard",
            &x_label,
            "findings (cumulative)",
            &finding_lines,
        )?,
    ] {
        let _ = write!(h, "<div class=\"plot\">{svg}</div>");
    }
    h.push_str("</div>\n");
    Ok(())
}

/// What ran and what it found, by oracle: the oracle mix and findings per
/// oracle (a finding of no oracle counts under its kind).
fn write_oracles(h: &mut String, campaign: &Campaign) -> anyhow::Result<()> {
    let mut mix: BTreeMap<String, u64> = BTreeMap::new();
    for (_, t) in &campaign.runs {
        for (o, n) in &t.per_oracle {
            *mix.entry(o.clone()).or_default() += n;
        }
    }
    let mut mix_bars: Vec<(String, f64)> =
        mix.iter().map(|(o, n)| (o.clone(), *n as f64)).collect();
    mix_bars.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut per_oracle: BTreeMap<String, u64> = BTreeMap::new();
    for b in &campaign.data.bugs {
        *per_oracle
            .entry(b.oracle.clone().unwrap_or_else(|| b.kind.clone()))
            .or_default() += b.count;
    }
    let mut finding_bars: Vec<(String, f64)> = per_oracle
        .iter()
        .map(|(o, n)| (o.clone(), *n as f64))
        .collect();
    finding_bars.sort_by(|a, b| b.1.total_cmp(&a.1));
    h.push_str("<h2>Oracles</h2>\n<div class=\"plots\">");
    let _ = writeln!(
        h,
        "<div class=\"plot\">{}</div><div class=\"plot\">{}</div></div>",
        plots::bar_plot("Oracle mix", "checks", &mix_bars)?,
        plots::bar_plot(
            "Findings per oracle",
            "findings (flooded ones included)",
            &finding_bars
        )?
    );
    Ok(())
}

/// Root-cause groups: a bar per group (the largest) and a table of all.
fn write_groups(h: &mut String, data: &ReportData) -> anyhow::Result<()> {
    let mut groups: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
    for b in &data.bugs {
        for g in &b.groups {
            let e = groups.entry(g.as_str()).or_default();
            e.0 += 1;
            e.1 += b.count;
        }
    }
    h.push_str("<h2>Root-cause groups</h2>\n");
    if groups.is_empty() {
        h.push_str("<p>No group: no bug was localized to a knob or bisected to a release.</p>\n");
        return Ok(());
    }
    let mut bars: Vec<(String, f64)> = groups
        .iter()
        .map(|(g, (n, _))| (short_group(g), *n as f64))
        .collect();
    bars.sort_by(|a, b| b.1.total_cmp(&a.1));
    // The largest groups are the ones to read first; the table lists all.
    bars.truncate(MAX_GROUP_BARS);
    let _ = write!(
        h,
        "<p>Signatures that one optimizer knob hides, that one knob change shows, or that one \
         release fixed: likely one bug each.</p><div class=\"plot\">{}</div>\n<table><tr><th>group</th>\
         <th>signatures</th><th>findings</th></tr>",
        plots::bar_plot(
            &format!("Signatures per group (the {} largest)", bars.len()),
            "signatures",
            &bars
        )?
    );
    for (g, (n, c)) in &groups {
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=\"n\">{n}</td><td class=\"n\">{c}</td></tr>",
            esc(g)
        );
    }
    h.push_str("</table>\n");
    Ok(())
}

/// The table of runs and shards, with each one's totals.
fn write_runs(h: &mut String, campaign: &Campaign) {
    h.push_str(
        "<h2>Runs and shards</h2>\n<table><tr><th>run</th><th>host</th><th>DBMS</th><th>seed</th>\
         <th>threads</th><th>seconds</th><th>checks</th><th>checks/s</th><th>findings</th>\
         <th>plans / 1k checks</th><th>expected errors</th><th>ended</th></tr>\n",
    );
    for (run, t) in &campaign.runs {
        let _ = writeln!(
            h,
            "<tr><td>{}<br><small>{}</small></td><td>{}</td><td>{} {}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{:.0}</td><td class=\"n\">{}</td><td class=\"n\">{:.0}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}%</td><td>{}</td></tr>",
            esc(&run.label()),
            esc(&run.run_id),
            esc(&run.host),
            esc(&run.dbms),
            esc(run.dbms_version.split(" (").next().unwrap_or_default()),
            run.seed,
            run.threads,
            t.seconds,
            thousands(t.checks),
            t.checks as f64 / t.seconds.max(1e-9),
            t.findings,
            if t.plans == 0 {
                "-".to_string()
            } else {
                format!("{:.0}", 1000.0 * share(t.plans, t.checks))
            },
            100.0 * share(t.skipped, t.checks + t.skipped),
            esc(&t.stopped_by)
        );
    }
    h.push_str("</table>\n");
}

/// The bugs, each with the query that shows it and its signatures, each
/// signature linked to its reproducer below.
fn write_bugs(h: &mut String, data: &ReportData) {
    let bugs = crate::store::read::group_into_bugs(&data.bugs);
    let _ = write!(
        h,
        "<h2>Bugs ({}, under {} signatures)</h2>\n<p>Signatures whose reduced cases are the \
         same once tables, columns, literals, oracles and the direction of comparisons are \
         abstracted, and that the same knob hides and the same release fixed, are one bug.</p>\
         <table><tr><th>signature</th><th>oracle</th><th>findings</th>\
         <th>runs</th><th>first seen (UTC)</th><th>last seen (UTC)</th><th>statements</th>\
         <th>groups</th></tr>\n",
        bugs.len(),
        data.bugs.len()
    );
    for bug in &bugs {
        let _ = writeln!(
            h,
            "<tr class=\"bughead\"><td colspan=\"8\"><b>bug <code>{}</code></b>: {} finding(s) \
             under {} signature(s)<br><code>{}</code></td></tr>",
            esc(bug.bug),
            bug.count,
            bug.signatures.len(),
            esc(bug.core)
        );
        for b in &bug.signatures {
            write_signature_row(h, b);
        }
    }
    h.push_str("</table>\n");
}

/// One signature of a bug, linked to its reproducer.
fn write_signature_row(h: &mut String, b: &BugSummary) {
    let _ = writeln!(
        h,
        "<tr><td><a href=\"#bug-{sig}\"><code>{sig}</code></a></td><td>{}</td><td class=\"n\">{}</td>\
         <td class=\"n\">{}</td><td class=\"t\">{}</td><td class=\"t\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
        esc(b.oracle.as_deref().unwrap_or(&b.kind)),
        b.count,
        b.runs,
        crate::utc::utc_time(b.first_seen),
        crate::utc::utc_time(b.last_seen),
        b.smallest.as_ref().map_or("-".into(), |f| f.statements.to_string()),
        esc(&b.groups.join("; ")),
        sig = esc(&b.signature)
    );
}

/// Each bug's smallest reproducer, inlined (the most frequent
/// [`MAX_REPRODUCERS`]).
fn write_reproducers(h: &mut String, data: &ReportData) {
    h.push_str(
        "<h2>Reproducers</h2>\n<p>The smallest reproducer of each bug (reduced where \
                it was), to run with the DBMS's own client.</p>\n",
    );
    if data.bugs.len() > MAX_REPRODUCERS {
        let _ = write!(
            h,
            "<p>The {MAX_REPRODUCERS} most frequent of {} bugs; `lancet findings --show SIGNATURE` \
             prints any other.</p>",
            data.bugs.len()
        );
    }
    for b in data.bugs.iter().take(MAX_REPRODUCERS) {
        let where_ = b.smallest.as_ref().map_or(String::new(), |f| {
            format!("{}/findings/{}", f.run_id, f.reproducer_file())
        });
        let _ = write!(
            h,
            "<section class=\"bug\" id=\"bug-{sig}\"><h3><code>{sig}</code> {} x{}: <code>{}</code></h3>",
            esc(b.oracle.as_deref().unwrap_or(&b.kind)),
            b.count,
            esc(&where_),
            sig = esc(&b.signature)
        );
        if let Some(rel) = &b.relation {
            let _ = write!(h, "<p>Relation: {}</p>", esc(rel));
        }
        match data.reproducers.get(&b.signature) {
            Some(sql) => {
                let _ = write!(h, "<pre>{}</pre>", esc(sql));
            }
            None => h.push_str("<p>No reproducer on record (all past the flood limit).</p>"),
        }
        h.push_str("</section>\n");
    }
}
