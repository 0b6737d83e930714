//! Findings are grouped by bug, not by query shape: a planted fault with
//! two bugs (a BETWEEN in a filter drops a row, a LIKE in a filter doubles
//! one), hit through every oracle and many query shapes, gives hundreds
//! of signatures and two large bugs holding nearly all findings, each
//! made of its construct alone, each reduced, neither holding the other.

mod common;
use common::*;
use lancet::dedup::Index;

#[test]
fn a_fault_with_two_bugs_gives_two_bugs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = fuzz_into(
        tmp.path(),
        &[
            "--dbms",
            "sqlite",
            "--inject-fault",
            "two-filter-bugs",
            "--threads",
            "2",
            "--seed",
            "9",
            "--queries",
            "6000",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let run_path = run_dir(tmp.path());
    let findings = run_path.join("findings");
    let index = Index::load(&findings).unwrap();
    let bugs = index.bugs();
    let total: u64 = index.entries().map(|e| e.count).sum();
    let signatures = index.unique();
    assert!(
        signatures >= 20,
        "many query shapes: {signatures} signatures"
    );

    let constructs_of = |entries: &[&lancet::dedup::Entry]| {
        entries
            .iter()
            .filter(|e| e.reduced)
            .min_by_key(|e| e.constructs.len())
            .map(|e| e.constructs.join(" "))
            .unwrap_or_default()
    };
    let mut top: Vec<String> = bugs[..2].iter().map(|(_, es)| constructs_of(es)).collect();
    top.sort();
    assert_eq!(
        top,
        ["Between", "LIKE"],
        "the two largest bugs are the planted ones"
    );
    let in_top: u64 = bugs[..2]
        .iter()
        .flat_map(|(_, es)| es.iter().map(|e| e.count))
        .sum();
    assert!(
        in_top * 100 >= total * 85,
        "the planted bugs hold {in_top} of {total} findings"
    );
    assert!(
        bugs.len() * 5 <= signatures,
        "{} bugs for {signatures} signatures",
        bugs.len()
    );
    for (_, entries) in &bugs[..2] {
        let construct = constructs_of(entries);
        assert!(
            entries.iter().any(|e| e.reduced),
            "every planted bug is reduced"
        );
        for e in entries {
            assert!(
                e.constructs.contains(&construct),
                "a {construct} bug holds {:?}",
                e.constructs
            );
        }
    }

    // The run's summary, `lancet findings` and the report show bugs.
    let summary = read_json(&run_path.join("summary.json"));
    assert_eq!(summary["bug_groups"].as_u64(), Some(bugs.len() as u64));
    let listed = run(&["findings", run_path.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{}", stderr(&listed));
    let first = &bugs[0].0;
    assert!(text.contains(&format!("bug {first}:")), "{text}");
    let shown = run(&[
        "findings",
        run_path.to_str().unwrap(),
        "--show",
        &first[..8],
    ]);
    let sql = String::from_utf8_lossy(&shown.stdout);
    assert!(
        sql.contains("BETWEEN") || sql.contains("LIKE"),
        "the bug's smallest reproducer: {sql}"
    );
    let html = tmp.path().join("report.html");
    let report = run(&[
        "report",
        run_path.to_str().unwrap(),
        "--output",
        html.to_str().unwrap(),
    ]);
    assert!(report.status.success(), "{}", stderr(&report));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!("bug <code>{first}</code>")),
        "report"
    );
}
