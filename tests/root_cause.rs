//! Root-cause grouping by optimizer knob: a planted fault that drops rows
//! only while every knob is on is a fault "of an optimization"; after
//! reduction, lancet finds that turning off any knob alone hides it,
//! records that in the finding and groups its signatures in the index. A
//! fault that ignores knobs is hidden by none.

mod common;
use common::*;
use std::path::PathBuf;

fn first_finding(dir: &std::path::Path) -> PathBuf {
    let run = run_dir(dir);
    finding_files(&run.join("findings"), "json")
        .into_iter()
        .find(|p| !p.to_string_lossy().contains(".reduced."))
        .expect("a finding")
}

#[test]
fn a_fault_that_knobs_hide_is_localized_and_grouped_and_one_that_they_do_not_is_not() {
    // During a run: the reducer thread localizes and the index groups.
    let tmp = tempfile::tempdir().unwrap();
    let out = fuzz_into(
        tmp.path(),
        &[
            "--inject-fault",
            "drop-row-under-default-knobs",
            "--oracle",
            "tlp-where",
            "--threads",
            "1",
            "--seed",
            "3",
            "--timeout",
            "20",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let run_path = run_dir(tmp.path());
    let reduced: Vec<serde_json::Value> = finding_files(&run_path.join("findings"), "json")
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".reduced."))
        .map(|p| read_json(&p))
        .collect();
    assert!(!reduced.is_empty(), "no finding was reduced within the run");
    // A reduction the end of the run cut short of localization has none.
    let localized: Vec<Vec<&str>> = reduced
        .iter()
        .filter_map(|r| r["hidden_by_knobs"].as_array())
        .map(|a| a.iter().filter_map(|k| k.as_str()).collect())
        .collect();
    assert!(!localized.is_empty(), "no reduced finding was localized");
    for knobs in &localized {
        assert!(knobs.contains(&"query-flattener"), "{knobs:?}");
    }
    let index = std::fs::read_to_string(run_path.join("findings/index.md")).unwrap();
    assert!(
        index.contains("## Groups (likely one bug each)")
            && index.contains("hidden by the knob change `query-flattener off`"),
        "{index}"
    );

    // `lancet reduce` of a fault no knob hides records no knob.
    let tmp = tempfile::tempdir().unwrap();
    fuzz_into(
        tmp.path(),
        &[
            "--inject-fault",
            "drop-row",
            "--oracle",
            "tlp-where",
            "--threads",
            "1",
            "--seed",
            "3",
            "--queries",
            "400",
            "--no-reduce",
        ],
    );
    let finding = first_finding(tmp.path());
    let out = run(&["reduce", finding.with_extension("sql").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let reduced = read_json(&PathBuf::from(
        finding.to_string_lossy().replace(".json", ".reduced.json"),
    ));
    assert!(
        reduced.get("hidden_by_knobs").is_none(),
        "a fault of no optimization is hidden by no knob: {reduced}"
    );
}

/// Flood control: past `--flood-limit` findings of one (reduced)
/// signature, further ones are counted in the index and the summary, and
/// their files are not kept.
#[test]
fn a_frequent_bug_is_counted_not_written_past_the_flood_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let summary_path = tmp.path().join("s.json");
    let out_dir = tmp.path().join("out");
    let out = fuzz_into(
        &out_dir,
        &[
            "--inject-fault",
            "drop-row",
            "--oracle",
            "tlp-where",
            "--threads",
            "1",
            "--seed",
            "5",
            "--timeout",
            "15",
            "--flood-limit",
            "2",
            "--summary-json",
            summary_path.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let summary = read_json(&summary_path);
    assert!(summary["flooded"].as_u64().unwrap() > 0, "{summary}");
    let run = run_dir(&out_dir);
    let index = read_json(&run.join("findings/index.json"));
    let mut over = 0;
    for entry in index.as_array().unwrap() {
        let written = entry["findings"].as_array().unwrap().len();
        // The limit, and the signature's first reduced finding, which is
        // never flooded (unreduced findings waiting under its signature
        // must not flood away the one reduced reproducer of the bug).
        assert!(written <= 2 + 1, "{entry}");
        let not_written = entry["not_written"].as_u64().unwrap_or(0);
        if not_written > 0 {
            over += 1;
        }
        // Every finding is counted once, written or not. (A signature's
        // count may fall back to the limit after findings counted under it
        // provisionally reduce to another signature.)
        assert_eq!(
            entry["count"].as_u64().unwrap(),
            written as u64 + not_written,
            "{entry}"
        );
    }
    assert!(over > 0, "no signature went past the limit");
    // Every file the index names exists; no other finding files are left.
    let on_disk = finding_files(&run.join("findings"), "sql").len();
    let named: usize = index
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["findings"].as_array().unwrap().len())
        .sum();
    assert!(on_disk <= 2 * named, "{on_disk} files for {named} findings");
}
