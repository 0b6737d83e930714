//! `lancet report` writes one self-contained HTML page that a real browser
//! (headless Chromium, installed by tests/run.sh) renders: plots as inline
//! SVG, the unique bugs with their reproducers, nothing fetched.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

fn chromium() -> Option<&'static str> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| Path::new(p).exists())
}

/// Two shards of a campaign with a planted fault, so the report has bugs.
fn two_shards(out: &Path) {
    for shard in ["0/2", "1/2"] {
        let o = run(&[
            "fuzz",
            "--shard",
            shard,
            "--seed",
            "11",
            "--threads",
            "1",
            "--queries",
            "3000",
            "--inject-fault",
            "drop-row",
            "--no-reduce",
            "--sample-interval",
            "1",
            "--status-interval",
            "0",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    }
}

#[test]
fn the_report_renders_in_a_real_browser() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    two_shards(&out);
    let html = dir.path().join("report.html");
    let o = run(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    // One vocabulary: the command's line counts bugs and signatures as the
    // page and `lancet findings` do.
    let said = String::from_utf8_lossy(&o.stdout);
    let heading = text
        .split("<h2>Bugs (")
        .nth(1)
        .and_then(|rest| rest.split(" signatures)").next())
        .expect("the page's bug heading");
    let (bugs, signatures) = heading.split_once(", under ").expect("N, under M");
    assert!(
        said.contains(&format!("{bugs} bug(s) under {signatures} signature(s)")),
        "the report's line says what the page says ({heading}): {said}"
    );
    let listed = run(&["findings", out.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&listed.stdout)
            .contains(&format!("{bugs} bug(s) under {signatures} signature(s)")),
        "lancet findings says what the page says: {}",
        String::from_utf8_lossy(&listed.stdout)
    );
    // Self-contained: no script, nothing loaded from elsewhere.
    for banned in ["<script", "http://", "https://", "src=", "<link"] {
        let outside_svg_namespace = text.replace("http://www.w3.org/2000/svg", "");
        assert!(
            !outside_svg_namespace.contains(banned),
            "the report holds {banned}"
        );
    }
    assert!(text.contains("shard 0/2") && text.contains("shard 1/2"));
    let Some(browser) = chromium() else {
        eprintln!("SKIPPED: the browser check (no chromium here; tests/run.sh installs it)");
        return;
    };
    let profile = dir.path().join("profile");
    let common_flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let url = format!("file://{}", html.display());
    let dom = Command::new(browser)
        .args(common_flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", &url])
        .output()
        .expect("running chromium");
    let page = String::from_utf8_lossy(&dom.stdout);
    let log = String::from_utf8_lossy(&dom.stderr);
    assert!(dom.status.success(), "chromium failed: {log}");
    // The browser built the page: its plots and the bug table are in the DOM.
    assert!(
        page.matches("<svg").count() >= 4,
        "plots missing from the DOM"
    );
    assert!(
        page.contains("signatures)</h2>")
            && page.contains("class=\"bughead\"")
            && page.contains("id=\"bug-"),
        "the bugs, each with its signatures"
    );
    for error in ["Uncaught", "Failed to load resource", "ERR_FILE_NOT_FOUND"] {
        assert!(!log.contains(error), "the browser reported {error}: {log}");
    }
    let png = dir.path().join("report.png");
    let shot = Command::new(browser)
        .args(common_flags)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args([
            "--window-size=1200,1600",
            &format!("--screenshot={}", png.display()),
            &url,
        ])
        .output()
        .expect("running chromium");
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    let bytes = std::fs::read(&png).expect("the screenshot");
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    // A blank page compresses to a few KB; plots and tables do not.
    assert!(
        bytes.len() > 40_000,
        "the screenshot is nearly empty ({} bytes)",
        bytes.len()
    );
    if let Ok(keep) = std::env::var("LANCET_KEEP_SCREENSHOT") {
        std::fs::copy(&png, keep).unwrap();
    }
}

#[test]
fn report_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(&["report", "-o", dir.path().join("r.html").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("give a store"), "{}", stderr(&o));
    let o = run(&[
        "report",
        dir.path().to_str().unwrap(),
        "-o",
        "/nonexistent/r.html",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("cannot write the report"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "report",
        dir.path().to_str().unwrap(),
        "-o",
        dir.path().join("r.html").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("neither a run directory"),
        "{}",
        stderr(&o)
    );
}
