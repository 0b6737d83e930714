//! Fleets: many `lancet fuzz --shard I/N` processes feeding one findings
//! store (`--store`: a throwaway PostgreSQL database, or an SQLite file).
//! Every finding on disk is in the store exactly once and the shards' bug
//! counts merge; a shard killed with SIGKILL (in the middle of a push when
//! the test catches one) leaves a store that is whole, that other shards
//! go on feeding and that `lancet push` completes; a store that is away
//! when the run starts gets everything once it is back; and a store that
//! is wrong or never answers is reported clearly, without its password.
//!
//! Over 600 lines on purpose: the fleet's promises share the shard,
//! store and kill helpers at the top; split by promise, each file would
//! copy them.

mod common;
use common::*;
use lancet_testkit::PgServer;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

fn server() -> PgServer {
    PgServer::start().expect("starting a throwaway PostgreSQL (tests/run.sh installs it)")
}

/// A server with an empty database `store`; returns it and the store's URL.
fn server_with_store() -> (PgServer, String) {
    let pg = server();
    pg.psql("postgres", "CREATE DATABASE store").unwrap();
    let url = pg.url_for("postgres", "store");
    (pg, url)
}

/// A lancet process whose stdout and stderr go to files: a run with
/// hundreds of findings says more than a pipe nobody reads can hold.
struct Proc {
    child: Child,
    name: String,
    stdout: PathBuf,
    stderr: PathBuf,
    started: Instant,
}

/// How a [`Proc`] ended.
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Ended {
    /// The end of stderr, for assertion messages.
    fn tail(&self) -> String {
        let lines: Vec<&str> = self.stderr.lines().collect();
        let from = lines.len().saturating_sub(12);
        format!(
            "status {:?}; stderr ends:\n{}",
            self.code,
            lines[from..].join("\n")
        )
    }
}

/// Starts `lancet ARGS`, its output in `logs/NAME.out` and `.err`.
fn spawn(logs: &Path, name: &str, args: &[&str]) -> Proc {
    std::fs::create_dir_all(logs).unwrap();
    let stdout = logs.join(format!("{name}.out"));
    let stderr = logs.join(format!("{name}.err"));
    let child = lancet()
        .args(args)
        .env_remove("LANCET_STORE_URL")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("starting lancet");
    Proc {
        child,
        name: name.to_string(),
        stdout,
        stderr,
        started: Instant::now(),
    }
}

/// Starts `lancet fuzz` as shard `shard` of seed `seed` with `extra`,
/// writing into `out` and feeding `store`.
fn spawn_shard(
    logs: &Path,
    out: &Path,
    store: &str,
    seed: &str,
    shard: &str,
    extra: &[&str],
) -> Proc {
    let mut args = vec![
        "fuzz",
        "--shard",
        shard,
        "--seed",
        seed,
        "--threads",
        "1",
        "--inject-fault",
        "drop-row",
        "--status-interval",
        "0",
        "--sample-interval",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--store",
        store,
    ];
    args.extend_from_slice(extra);
    spawn(logs, &format!("shard-{}", shard.replace('/', "of")), &args)
}

impl Proc {
    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits at most `limit`; kills it and fails past that.
    fn wait(mut self, limit: Duration) -> Ended {
        while self.child.try_wait().expect("waiting for lancet").is_none() {
            if self.started.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "lancet {} did not end within {limit:?}; stderr:\n{}",
                    self.name,
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let status = self.child.wait().unwrap();
        let ended = Ended {
            code: status.code(),
            stdout: std::fs::read_to_string(&self.stdout).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.stderr).unwrap_or_default(),
            took: self.started.elapsed(),
        };
        eprintln!(
            "lancet {} ended after {:.1} s, {}",
            self.name,
            ended.took.as_secs_f64(),
            ended.tail()
        );
        ended
    }

    /// SIGKILL, then reaps it.
    fn kill(self) -> Ended {
        signal(self.pid(), "KILL");
        let ended = self.wait(Duration::from_secs(10));
        assert_eq!(ended.code, None, "SIGKILL ends a process without a code");
        ended
    }
}

/// A finished run: it exits 1 with findings (0 without), never 2, and
/// says the store has it.
fn assert_stored(e: &Ended) {
    assert!(matches!(e.code, Some(0 | 1)), "{}", e.tail());
    assert!(
        e.stderr.contains("the run is stored ("),
        "no `the run is stored`: {}",
        e.tail()
    );
}

/// The run directories under `out`, sorted.
fn runs_in(out: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("run.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn run_id(run_dir: &Path) -> String {
    read_json(&run_dir.join("run.json"))["run_id"]
        .as_str()
        .expect("run.json has run_id")
        .to_string()
}

/// The findings a run has on disk: each record `NNNN-*.json` (not a
/// reduced one, not the index, not one in pending/) as the `.sql` file
/// name the store keys it by.
fn records_on_disk(run_dir: &Path) -> BTreeSet<String> {
    files_with_ext(&run_dir.join("findings"), "json")
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let numbered = name.len() > 5
                && name.as_bytes()[..4].iter().all(u8::is_ascii_digit)
                && name.as_bytes()[4] == b'-';
            (numbered && !name.ends_with(".reduced.json"))
                .then(|| format!("{}.sql", name.trim_end_matches(".json")))
        })
        .collect()
}

/// A run's index.json: (count, findings' .sql file names) by signature.
fn index_of(run_dir: &Path) -> BTreeMap<String, (u64, BTreeSet<String>)> {
    let path = run_dir.join("findings").join("index.json");
    if !path.exists() {
        return BTreeMap::new();
    }
    read_json(&path)
        .as_array()
        .expect("index.json is an array")
        .iter()
        .map(|e| {
            let files = e["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    Path::new(f.as_str().unwrap())
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            (
                e["signature"].as_str().unwrap().to_string(),
                (e["count"].as_u64().unwrap(), files),
            )
        })
        .collect()
}

/// Complete lines of a run's samples.jsonl (a killed run may leave half
/// a line, which no reader takes).
fn samples_on_disk(run_dir: &Path) -> usize {
    let text = std::fs::read_to_string(run_dir.join("samples.jsonl")).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    complete.lines().filter(|l| !l.trim().is_empty()).count()
}

/// Reads a store with the test's own clients: rusqlite for an SQLite
/// file, psql for PostgreSQL. Values come back as text, NULL as empty
/// text (as psql prints it); only columns without `|` or line breaks are
/// read.
enum Reader<'a> {
    Sqlite(PathBuf),
    Postgres(&'a PgServer),
}

impl Reader<'_> {
    fn rows(&self, sql: &str) -> Vec<Vec<String>> {
        match self {
            Reader::Sqlite(path) => {
                let conn = rusqlite::Connection::open_with_flags(
                    path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
                )
                .unwrap();
                conn.busy_timeout(Duration::from_secs(10)).unwrap();
                let mut stmt = conn.prepare(sql).unwrap();
                let n = stmt.column_count();
                let mut rows = stmt.query([]).unwrap();
                let mut out = Vec::new();
                while let Some(row) = rows.next().unwrap() {
                    use rusqlite::types::ValueRef;
                    out.push(
                        (0..n)
                            .map(|i| match row.get_ref(i).unwrap() {
                                ValueRef::Null => String::new(),
                                ValueRef::Integer(v) => v.to_string(),
                                ValueRef::Real(v) => v.to_string(),
                                ValueRef::Text(t) | ValueRef::Blob(t) => {
                                    String::from_utf8_lossy(t).into_owned()
                                }
                            })
                            .collect(),
                    );
                }
                out
            }
            Reader::Postgres(pg) => pg
                .psql("store", sql)
                .unwrap()
                .lines()
                .filter(|l| !l.is_empty())
                .map(|l| l.split('|').map(str::to_string).collect())
                .collect(),
        }
    }

    /// One number.
    fn count(&self, sql: &str) -> u64 {
        self.rows(sql)[0][0].parse().unwrap()
    }

    /// Whether a writer is inside a transaction of the store right now.
    fn writer_busy(&self) -> bool {
        match self {
            Reader::Sqlite(path) => {
                if !path.exists() {
                    return false;
                }
                // BEGIN IMMEDIATE takes the write lock or fails at once:
                // busy means a push is between its BEGIN and COMMIT.
                let Ok(conn) = rusqlite::Connection::open(path) else {
                    return false;
                };
                // rusqlite waits 5 s for a lock by default: not here.
                conn.busy_timeout(Duration::ZERO).unwrap();
                match conn.execute_batch("BEGIN IMMEDIATE") {
                    Ok(()) => {
                        conn.execute_batch("ROLLBACK").unwrap();
                        false
                    }
                    Err(e) => e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy),
                }
            }
            Reader::Postgres(pg) => pg
                .psql(
                    "postgres",
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = 'store' \
                     AND pid <> pg_backend_pid() AND xact_start IS NOT NULL",
                )
                .is_ok_and(|n| n != "0"),
        }
    }
}

/// Asserts that two maps are equal, naming only what differs.
fn assert_same<K: Ord + std::fmt::Debug, V: PartialEq + std::fmt::Debug>(
    store: &BTreeMap<K, V>,
    disk: &BTreeMap<K, V>,
    what: &str,
) {
    let keys: BTreeSet<&K> = store.keys().chain(disk.keys()).collect();
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| store.get(*k) != disk.get(*k))
        .map(|k| format!("{k:?}: store {:?}, disk {:?}", store.get(k), disk.get(k)))
        .collect();
    assert!(
        differ.is_empty(),
        "{what}: {} in the store, {} on disk; {} differ, first:\n{}",
        store.len(),
        disk.len(),
        differ.len(),
        differ[..differ.len().min(8)].join("\n")
    );
}

/// Asserts that the store holds exactly what the run directories `runs`
/// hold, and nothing else: each finding on disk once under its index's
/// signature, each run's bug counts as its index.json has them, each
/// complete sample. Returns the number of findings.
///
/// A finished run's findings on disk are exactly those its index lists; a
/// killed run's may hold the one it was filing when it died (see below).
// Long because: compares every table of the store with the run directories, one after the other.
fn assert_store_matches(store: &Reader, runs: &[PathBuf]) -> usize {
    let mut on_disk: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut bugs_on_disk: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut samples: BTreeMap<String, u64> = BTreeMap::new();
    let mut unindexed_files: BTreeSet<(String, String)> = BTreeSet::new();
    let mut extra_counts: BTreeMap<String, u64> = BTreeMap::new();
    for dir in runs {
        let id = run_id(dir);
        let records = records_on_disk(dir);
        let mut listed = BTreeMap::new();
        for (sig, (count, files)) in index_of(dir) {
            bugs_on_disk.insert((id.clone(), sig.clone()), count);
            for f in files {
                listed.insert(f, sig.clone());
            }
        }
        // The index lists every finding on disk: the store is fed from it.
        let unlisted: Vec<&String> = listed.keys().filter(|f| !records.contains(*f)).collect();
        assert!(
            unlisted.is_empty(),
            "{}: index.json lists findings that are not on disk: {unlisted:?}",
            dir.display()
        );
        let unindexed: Vec<&String> = records
            .iter()
            .filter(|f| !listed.contains_key(*f))
            .collect();
        if dir.join("summary.json").exists() {
            assert!(
                unindexed.is_empty(),
                "{}: findings on disk that index.json does not list: {unindexed:?}",
                dir.display()
            );
        } else if !unindexed.is_empty() {
            // A run killed between moving a confirmed finding into
            // findings/ and saving the index: the push files it all the
            // same, under the signature its record gives.
            eprintln!(
                "{}: killed with {} finding(s) on disk that index.json does not list: {unindexed:?}",
                dir.display(),
                unindexed.len()
            );
            for f in &unindexed {
                unindexed_files.insert((id.clone(), (*f).clone()));
            }
            extra_counts.insert(id.clone(), unindexed.len() as u64);
        }
        for (file, sig) in listed {
            on_disk.insert((id.clone(), file), sig);
        }
        let n = samples_on_disk(dir) as u64;
        if n > 0 {
            samples.insert(id, n);
        }
    }

    let rows = store.rows("SELECT run_id, file, signature FROM lancet_findings");
    let doubled = store.count(
        "SELECT count(*) FROM (SELECT run_id, file FROM lancet_findings \
         GROUP BY run_id, file HAVING count(*) > 1) AS d",
    );
    assert_eq!(doubled, 0, "a finding is in the store twice");
    let mut stored: BTreeMap<(String, String), String> = rows
        .iter()
        .map(|r| ((r[0].clone(), r[1].clone()), r[2].clone()))
        .collect();
    assert_eq!(rows.len(), stored.len(), "a finding is in the store twice");
    // Unindexed findings of killed runs are stored, under their record's
    // signature (the index never gave them one).
    for key in &unindexed_files {
        assert!(
            stored.remove(key).is_some(),
            "unindexed finding {key:?} is not in the store"
        );
    }
    assert_same(
        &stored,
        &on_disk,
        "findings (run, file) and their signatures",
    );

    let bugs: BTreeMap<(String, String), u64> = store
        .rows("SELECT run_id, signature, count FROM lancet_run_bugs")
        .into_iter()
        .map(|r| ((r[0].clone(), r[1].clone()), r[2].parse().unwrap()))
        .collect();
    // Runs with unindexed findings: their counts are the index's plus one
    // per such finding, in total.
    let total = |m: &BTreeMap<(String, String), u64>, run: &str| -> u64 {
        m.iter()
            .filter(|((r, _), _)| r == run)
            .map(|(_, n)| n)
            .sum()
    };
    for (run, extra) in &extra_counts {
        assert_eq!(
            total(&bugs, run),
            total(&bugs_on_disk, run) + extra,
            "{run}: bug counts"
        );
    }
    let keep = |m: BTreeMap<(String, String), u64>| -> BTreeMap<(String, String), u64> {
        m.into_iter()
            .filter(|((r, _), _)| !extra_counts.contains_key(r))
            .collect()
    };
    assert_same(
        &keep(bugs),
        &keep(bugs_on_disk),
        "bug counts (run, signature)",
    );

    let stored_samples: BTreeMap<String, u64> = store
        .rows("SELECT run_id, count(*) FROM lancet_samples GROUP BY run_id")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    assert_same(&stored_samples, &samples, "samples by run");

    let ids: BTreeSet<String> = store
        .rows("SELECT run_id FROM lancet_runs")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(
        ids,
        runs.iter().map(|d| run_id(d)).collect(),
        "the store's runs"
    );
    on_disk.len() + unindexed_files.len()
}

/// `lancet findings --store STORE`: its first line's signatures and runs.
fn findings_headline(store: &str) -> (usize, usize) {
    let out = lancet()
        .args(["findings", "--store", store])
        .env_remove("LANCET_STORE_URL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = stdout.lines().next().unwrap_or_default();
    // lancet findings: B bug(s) under S signature(s) in R run(s) ...
    let words: Vec<&str> = first.split_whitespace().collect();
    assert!(
        words.len() > 8
            && words[..2] == ["lancet", "findings:"]
            && words[3] == "bug(s)"
            && words[6] == "signature(s)",
        "{first}"
    );
    let bugs: usize = words[2].parse().unwrap();
    let signatures: usize = words[5].parse().unwrap();
    assert!(bugs <= signatures, "{first}");
    (signatures, words[8].parse().unwrap())
}

#[test]
fn fleet_of_four_shards_stores_every_finding_once() {
    let (pg, url) = server_with_store();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let logs = tmp.path().join("logs");
    // Four shards at once into one output directory and one store: they
    // migrate the new store together and push in parallel.
    let shards: Vec<Proc> = (0..4)
        .map(|i| {
            spawn_shard(
                &logs,
                &out,
                &url,
                "7",
                &format!("{i}/4"),
                &["--queries", "1500", "--no-reduce"],
            )
        })
        .collect();
    for p in shards {
        assert_stored(&p.wait(Duration::from_secs(120)));
    }
    let runs = runs_in(&out);
    assert_eq!(runs.len(), 4, "{runs:?}");
    for dir in &runs {
        assert!(
            !records_on_disk(dir).is_empty(),
            "{} has no findings: raise --queries",
            dir.display()
        );
    }
    let store = Reader::Postgres(&pg);
    let findings = assert_store_matches(&store, &runs);
    assert_eq!(
        store.count("SELECT count(*) FROM lancet_findings") as usize,
        findings
    );

    // The runs are the four shards, each ended (a summary).
    let shards = store.rows(
        "SELECT shard_index, shard_count, CASE WHEN summary IS NULL THEN 0 ELSE 1 END \
         FROM lancet_runs ORDER BY shard_index",
    );
    let want: Vec<Vec<String>> = (0..4)
        .map(|i| vec![i.to_string(), "4".into(), "1".into()])
        .collect();
    assert_eq!(shards, want);
    for dir in &runs {
        assert!(samples_on_disk(dir) > 0, "{} has no samples", dir.display());
    }

    // One bug list across the shards: the signatures of the four indexes,
    // their counts added.
    let mut merged: BTreeMap<String, u64> = BTreeMap::new();
    for dir in &runs {
        for (sig, (count, _)) in index_of(dir) {
            *merged.entry(sig).or_default() += count;
        }
    }
    let signatures: BTreeSet<String> = store
        .rows("SELECT DISTINCT signature FROM lancet_run_bugs")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    let indexed: BTreeSet<String> = merged.keys().cloned().collect();
    assert!(
        signatures == indexed,
        "{} signatures in lancet_run_bugs, {} in the index.json files; only in the store: {:?}; \
         only on disk: {:?}",
        signatures.len(),
        indexed.len(),
        signatures.difference(&indexed).take(5).collect::<Vec<_>>(),
        indexed.difference(&signatures).take(5).collect::<Vec<_>>()
    );
    let sums: BTreeMap<String, u64> = store
        .rows("SELECT signature, SUM(count) FROM lancet_run_bugs GROUP BY signature")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect();
    assert_same(&sums, &merged, "findings by signature, over all runs");

    assert_eq!(findings_headline(&url), (merged.len(), 4));

    // --show prints the smallest reproducer of a bug found in several
    // shards (or of the most frequent one): one of its files on disk.
    let (sig, _) = merged.iter().max_by_key(|(_, c)| **c).unwrap();
    let out_show = run(&["findings", "--store", &url, "--show", sig]);
    assert_eq!(out_show.status.code(), Some(0), "{}", stderr(&out_show));
    let shown = String::from_utf8_lossy(&out_show.stdout);
    let candidates: Vec<String> = runs
        .iter()
        .flat_map(|dir| {
            index_of(dir)
                .remove(sig)
                .map(|(_, files)| files)
                .unwrap_or_default()
                .into_iter()
                .map(|f| std::fs::read_to_string(dir.join("findings").join(f)).unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        candidates.iter().any(|c| *c == shown),
        "--show {sig} printed no reproducer of that bug:\n{shown}"
    );
}

/// Three shards of a five-shard campaign killed with SIGKILL: two as soon
/// as their first push to the store is seen open (in the middle of a
/// write), one between pushes; then the other two shards run to the end
/// on the same store, and `lancet push` adds what the killed ones had on
/// disk. Returns how many kills landed inside a push.
fn kill_shards_and_complete(store: &Reader, url: &str, dir: &Path) -> usize {
    let out = dir.join("out");
    let logs = dir.join("logs");
    let killed_args = ["--timeout", "60"];
    // Started 1.5 s apart, so that their pushes (every 5 s) never overlap
    // and an open transaction is the watched shard's.
    let mut plans = Vec::new();
    for (i, watch, latest) in [(0, true, 5.9), (1, false, 7.3), (2, true, 5.9)] {
        if i > 0 {
            std::thread::sleep(Duration::from_millis(1500));
        }
        let p = spawn_shard(&logs, &out, url, "21", &format!("{i}/5"), &killed_args);
        plans.push((Some(p), watch, latest));
    }
    let mut mid_push = 0;
    while plans.iter().any(|(p, _, _)| p.is_some()) {
        for (slot, watch, latest) in plans.iter_mut() {
            let Some(p) = slot.as_ref() else { continue };
            let age = p.started.elapsed().as_secs_f64();
            let busy = *watch && age >= 4.6 && store.writer_busy();
            if busy || age >= *latest {
                let p = slot.take().unwrap();
                let name = p.name.clone();
                let e = p.kill();
                eprintln!(
                    "killed {name} after {:.2} s, {}",
                    e.took.as_secs_f64(),
                    if busy {
                        "inside a push"
                    } else {
                        "between pushes"
                    }
                );
                mid_push += usize::from(busy);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let killed = runs_in(&out);
    assert_eq!(killed.len(), 3, "{killed:?}");
    for d in &killed {
        assert!(
            !records_on_disk(d).is_empty(),
            "{} has no findings yet",
            d.display()
        );
        assert!(!d.join("summary.json").exists());
    }

    // The store still works: two more shards run to the end on it.
    let rest: Vec<Proc> = (3..5)
        .map(|i| {
            spawn_shard(
                &logs,
                &out,
                url,
                "21",
                &format!("{i}/5"),
                &["--queries", "1000", "--no-reduce"],
            )
        })
        .collect();
    for p in rest {
        assert_stored(&p.wait(Duration::from_secs(90)));
    }

    // lancet push completes the killed runs; pushing again changes nothing.
    let mut args = vec!["push", "--store", url];
    args.extend(killed.iter().map(|d| d.to_str().unwrap()));
    let pushed = run(&args);
    assert_eq!(pushed.status.code(), Some(0), "{}", stderr(&pushed));
    let again = run(&["push", "--store", url, out.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let again = String::from_utf8_lossy(&again.stdout);
    assert_eq!(again.lines().count(), 5, "{again}");
    assert!(
        again.lines().all(|l| l.contains("(0 new, 0 removed)")),
        "a second push changed the store:\n{again}"
    );

    let runs = runs_in(&out);
    assert_eq!(runs.len(), 5);
    assert_store_matches(store, &runs);
    // The killed runs have no summary; the finished ones do.
    let summaries: BTreeMap<String, String> = store
        .rows("SELECT run_id, CASE WHEN summary IS NULL THEN 0 ELSE 1 END FROM lancet_runs")
        .into_iter()
        .map(|r| (r[0].clone(), r[1].clone()))
        .collect();
    for d in &runs {
        let want = if killed.contains(d) { "0" } else { "1" };
        assert_eq!(summaries[&run_id(d)], want, "{}", d.display());
    }
    assert_eq!(findings_headline(url).1, 5);
    mid_push
}

#[test]
fn a_shard_killed_mid_write_leaves_the_store_whole() {
    let started = Instant::now();
    // An SQLite store file.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("store.sqlite");
    let reader = Reader::Sqlite(file.clone());
    let mid_sqlite = kill_shards_and_complete(&reader, file.to_str().unwrap(), tmp.path());
    let check = reader.rows("PRAGMA integrity_check");
    assert_eq!(check, vec![vec!["ok".to_string()]]);
    eprintln!(
        "SQLite: {mid_sqlite} kill(s) inside a push; {:.1} s",
        started.elapsed().as_secs_f64()
    );

    // A PostgreSQL store.
    let (pg, url) = server_with_store();
    let tmp = tempfile::tempdir().unwrap();
    let mid_pg = kill_shards_and_complete(&Reader::Postgres(&pg), &url, tmp.path());
    eprintln!(
        "PostgreSQL: {mid_pg} kill(s) inside a push; {:.1} s in all",
        started.elapsed().as_secs_f64()
    );
    // Four kills were aimed at an open push; the test must have caught one.
    assert!(mid_sqlite + mid_pg > 0, "no kill landed inside a push");
}

#[test]
fn store_errors_are_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let out_s = out.to_str().unwrap();

    // A scheme lancet does not know: refused before the run.
    let o = run(&[
        "fuzz",
        "--store",
        "mysql://x",
        "--out",
        out_s,
        "--queries",
        "10",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("scheme"), "{}", stderr(&o));
    assert!(!out.exists(), "a refused store started a run");

    // A store nobody answers for: the run starts, goes on and ends, then
    // says how to push it later; the password is never printed.
    let started = Instant::now();
    let store = "postgres://u:secretpw@127.0.0.1:1/x";
    let p = spawn(
        &tmp.path().join("logs"),
        "unreachable",
        &[
            "fuzz",
            "--store",
            store,
            "--queries",
            "200",
            "--threads",
            "1",
            "--seed",
            "3",
            "--inject-fault",
            "drop-row",
            "--no-reduce",
            "--status-interval",
            "0",
            "--out",
            out_s,
        ],
    );
    let e = p.wait(Duration::from_secs(60));
    eprintln!(
        "the unreachable store took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(e.code, Some(2), "{}", e.tail());
    assert!(e.stderr.contains("unreachable"), "{}", e.tail());
    assert!(e.stderr.contains("lancet push --store"), "{}", e.tail());
    let run_at = run_dir(&out);
    assert!(run_at.join("summary.json").exists(), "the run did not end");
    assert!(
        e.stderr.contains("lancet push --store postgres://"),
        "{}",
        e.tail()
    );
    assert!(
        e.stderr.contains(run_at.to_str().unwrap()),
        "the push command does not name the run directory: {}",
        e.tail()
    );
    assert!(!e.stdout.contains("secretpw") && !e.stderr.contains("secretpw"));
    for f in files_below(&out, "") {
        let text = std::fs::read(&f).unwrap();
        assert!(
            !String::from_utf8_lossy(&text).contains("secretpw"),
            "{} holds the password",
            f.display()
        );
    }

    // An SQLite store in a directory that does not exist.
    let o = run(&["findings", "--store", "/nonexistent-dir/x.sqlite"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("/nonexistent-dir") && err.contains("does not exist"),
        "{err}"
    );
}

#[test]
fn a_store_that_comes_back_gets_everything() {
    let (pg, url) = server_with_store();
    pg.stop().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let p = spawn_shard(
        &tmp.path().join("logs"),
        &out,
        &url,
        "11",
        "0/1",
        &["--timeout", "15"],
    );
    std::thread::sleep(Duration::from_secs(4));
    pg.start_again().unwrap();
    let e = p.wait(Duration::from_secs(90));
    assert_stored(&e);
    assert!(e.stderr.contains("unreachable"), "{}", e.tail());
    if !e.stderr.contains("reachable again") {
        eprintln!("(no `reachable again`: the feeder's first try found the store back)");
    }
    let runs = runs_in(&out);
    let findings = assert_store_matches(&Reader::Postgres(&pg), &runs);
    assert!(findings > 0);
    let store = Reader::Postgres(&pg);
    assert_eq!(
        store.count("SELECT count(*) FROM lancet_runs WHERE summary IS NOT NULL"),
        1
    );
}
