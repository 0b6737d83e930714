//! Every `lancet` command line the documentation shows still parses: its
//! command exists, and each option it uses is one that command offers
//! (read from the command's `--help`). Documentation drifts silently when
//! an option is renamed; this test says where.

mod common;
use common::lancet;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `lancet CMD ...` lines inside fenced code blocks of `text`, with their
/// continuation lines joined.
fn command_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    let mut pending: Option<String> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            continue;
        }
        let trimmed = line.trim().trim_start_matches("$ ");
        if let Some(mut p) = pending.take() {
            p.push(' ');
            p.push_str(trimmed.trim_end_matches('\\'));
            if trimmed.ends_with('\\') {
                pending = Some(p);
            } else {
                out.push(p);
            }
            continue;
        }
        let Some(at) = trimmed.find("lancet ") else {
            continue;
        };
        // A command at the start of a line, or after a shell prompt or
        // a `run:` header: not prose that mentions lancet.
        let before = &trimmed[..at];
        if !(before.is_empty()
            || before.ends_with("./target/release/")
            || before.ends_with("run: "))
        {
            continue;
        }
        let command = trimmed[at..].trim_end_matches('\\').to_string();
        if trimmed.ends_with('\\') {
            pending = Some(command);
        } else {
            out.push(command);
        }
    }
    out
}

/// The subcommand and the `--options` of one command line (up to a
/// comment, a pipe or a redirection).
fn parse(line: &str) -> Option<(String, Vec<String>)> {
    let line = line.split(" #").next().unwrap_or(line);
    let line = line.split(" | ").next().unwrap_or(line);
    let mut words = line.split_whitespace().skip(1);
    let command = words.next()?.to_string();
    if !command.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
        return None;
    }
    let options = words
        .map(|w| w.trim_start_matches('['))
        .filter(|w| w.starts_with("--"))
        .map(|w| w.split(['=', ']']).next().unwrap_or(w).to_string())
        .collect();
    Some((command, options))
}

#[test]
fn every_documented_command_line_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    let mut helps: BTreeMap<String, Option<String>> = BTreeMap::new();
    let mut problems = BTreeSet::new();
    let mut checked = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let name = page.strip_prefix(root).unwrap().display().to_string();
        for line in command_lines(&text) {
            let Some((command, options)) = parse(&line) else {
                continue;
            };
            let help = helps.entry(command.clone()).or_insert_with(|| {
                let out = lancet()
                    .args([command.as_str(), "--help"])
                    .output()
                    .unwrap();
                out.status
                    .success()
                    .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
            });
            checked += 1;
            let Some(help) = help else {
                problems.insert(format!("{name}: `lancet {command}` is no command: {line}"));
                continue;
            };
            for option in options {
                if !help.contains(&format!("{option} "))
                    && !help.contains(&format!("{option}\n"))
                    && !help.contains(&format!("{option},"))
                    && !help.contains(&format!("{option}="))
                {
                    problems.insert(format!(
                        "{name}: `lancet {command}` has no option {option}: {line}"
                    ));
                }
            }
        }
    }
    assert!(
        checked >= 20,
        "only {checked} command lines found in the docs"
    );
    assert!(
        problems.is_empty(),
        "documented command lines that no longer parse:\n{}",
        problems.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// The files and folders a layout table's row names under its directory
/// (backticked names ending in `.rs` or `/`), which must exist there: a
/// layout page that names moved files sends newcomers to nothing.
fn missing_layout_paths(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).expect("the page reads");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for row in text.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(dir) = cells.get(1).map(|c| c.trim_matches('`')) else {
            continue;
        };
        if !dir.ends_with('/') || !root.join(dir).is_dir() {
            missing.push(format!("{dir} (the row's directory)"));
            continue;
        }
        let names = row.split('`').skip(1).step_by(2).skip(1);
        for name in names.filter(|n| n.ends_with(".rs") || n.ends_with('/')) {
            let candidates = [root.join(dir).join(name), root.join(name)];
            if !candidates.iter().any(|c| c.exists()) && !found_below(&root.join(dir), name) {
                missing.push(format!("{name} under {dir}"));
            }
        }
    }
    missing
}

/// Whether `name` (a file, or a folder when it ends in `/`) is somewhere
/// below `dir`.
fn found_below(dir: &Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let (want, folder) = match name.strip_suffix('/') {
        Some(n) => (n, true),
        None => (name, false),
    };
    let want = want.rsplit('/').next().unwrap_or(want);
    entries.flatten().any(|e| {
        let path = e.path();
        let is_dir = path.is_dir();
        (e.file_name().to_str() == Some(want) && is_dir == folder)
            || (is_dir && e.file_name() != "target" && found_below(&path, name))
    })
}

#[test]
fn the_layout_table_names_files_that_exist() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/tests.md");
    let missing = missing_layout_paths(&page);
    assert!(
        missing.is_empty(),
        "docs/tests.md's layout table names what is not there: {missing:?}"
    );
}
