//! The seams between the binary, core, oracles, the fleet crate, the
//! campaign's crates (`campaign/`) and providers, checked on the source: a
//! new DBMS is one crate and one line in `src/registry.rs`, so nothing else
//! in the binary, core, the oracles, the fleet crate or the campaign's
//! crates names a DBMS or a provider crate.

use std::path::{Path, PathBuf};

/// Files that may name a provider, and why.
const MAY_NAME_PROVIDERS: &[(&str, &str)] = &[("src/registry.rs", "the list of DBMSs")];

/// Whether `line` names the crate `name` as a whole word
/// (`lancet_postgres_url`, a URL parser no provider owns, is not
/// `lancet_postgres`).
fn names_crate(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        let next = line[at + name.len()..].chars().next();
        !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A file's code without its unit tests (which may use a concrete DBMS as
/// a fixture) and without comments.
fn code_of(text: &str) -> String {
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `file` is a module of unit tests in a file of its own: its
/// parent (`dir.rs` or `dir/mod.rs` for `dir/name.rs`) declares it as
/// `#[cfg(test)] mod name;`. Like a `#[cfg(test)]` block, it may use a
/// concrete DBMS as a fixture.
fn is_unit_test_module(file: &Path) -> bool {
    let (Some(stem), Some(dir)) = (file.file_stem(), file.parent()) else {
        return false;
    };
    let declaration = format!("mod {};", stem.to_string_lossy());
    let parents = [dir.with_extension("rs"), dir.join("mod.rs")];
    parents.iter().any(|parent| {
        let Ok(text) = std::fs::read_to_string(parent) else {
            return false;
        };
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines
            .windows(2)
            .any(|w| w[0] == "#[cfg(test)]" && w[1] == declaration)
    })
}

#[test]
fn only_the_registry_names_a_dbms() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "core/src", "oracles/src", "fleet/src"] {
        rust_files(&root.join(dir), &mut files);
    }
    // The campaign's crates (databases, findings, reduction, the runner), every one.
    for entry in std::fs::read_dir(root.join("campaign")).unwrap() {
        rust_files(&entry.unwrap().path().join("src"), &mut files);
    }
    let mut names: Vec<String> = lancet::registry::names()
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect();
    names.push("\"mariadb\"".into());
    let crates = [
        "lancet_sqlite",
        "lancet_postgres",
        "lancet_mysql",
        "lancet_duckdb",
    ];
    let mut offences = Vec::new();
    for file in &files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if is_unit_test_module(file) {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let exempt = MAY_NAME_PROVIDERS.iter().any(|(f, _)| *f == rel);
        for (i, line) in code.lines().enumerate() {
            let named = names.iter().find(|n| line.contains(n.as_str()));
            let crate_named = crates.iter().find(|c| names_crate(line, c));
            if exempt {
                continue;
            }
            if let Some(what) = named.map(String::as_str).or(crate_named.copied()) {
                offences.push(format!("{rel}:{}: names {what}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "outside src/registry.rs nothing may name a DBMS (its description says what \
         the binary needs):\n{}",
        offences.join("\n")
    );
}

#[test]
fn every_dbms_is_described_consistently() {
    for d in lancet::registry::DBMS {
        assert_eq!(
            lancet::registry::describe(d.name).unwrap().name,
            d.name,
            "two DBMSs share a name"
        );
        if let Some(option) = d.library_option {
            assert!(option.starts_with("--"), "{}: {option}", d.name);
            assert!(
                d.in_process.is_some(),
                "{}: a library option needs an in-process engine",
                d.name
            );
        }
        assert!(
            d.server.is_some() != d.in_process.is_some(),
            "{}: a DBMS is either a server or an engine inside lancet",
            d.name
        );
        assert!(d.checks_per_database > 0, "{}", d.name);
    }
    assert_eq!(
        lancet::registry::DBMS[0].name,
        lancet::registry::DEFAULT_DBMS
    );
}

/// The server toolkit is what server providers share: they depend on it,
/// so it may depend on core, never on a provider or the binary.
#[test]
fn the_server_toolkit_depends_on_no_provider() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("providers/server/Cargo.toml")).unwrap();
    for provider in [
        "lancet-sqlite",
        "lancet-postgres",
        "lancet-mysql",
        "lancet-duckdb",
        "lancet-engine",
    ] {
        assert!(
            !manifest.contains(provider),
            "providers/server/Cargo.toml names {provider}"
        );
    }
}

/// The campaign's crates sit below the binary and beside no provider:
/// their dependencies (not dev-dependencies, where a provider may serve
/// unit tests as a fixture) name no provider and not the `lancet` crate,
/// and point one way, databases ← findings ← reduce ← campaign.
#[test]
fn the_campaign_crates_depend_on_no_provider_and_not_on_the_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let order = [
        "lancet-databases",
        "lancet-findings",
        "lancet-reduce",
        "lancet-campaign",
    ];
    for entry in std::fs::read_dir(root.join("campaign")).unwrap() {
        let dir = entry.unwrap().path();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let name = manifest
            .lines()
            .find_map(|l| l.strip_prefix("name = \""))
            .and_then(|l| l.strip_suffix('"'))
            .unwrap()
            .to_string();
        let start = manifest.find("[dependencies]").unwrap();
        let end = manifest[start + 1..]
            .find("\n[")
            .map_or(manifest.len(), |e| start + 1 + e);
        let dependencies: Vec<&str> = manifest[start..end]
            .lines()
            .filter_map(|l| l.split(['.', ' ', '=']).next())
            .filter(|d| d.starts_with("lancet"))
            .collect();
        for d in &dependencies {
            assert!(
                ![
                    "lancet",
                    "lancet-sqlite",
                    "lancet-postgres",
                    "lancet-mysql",
                    "lancet-duckdb",
                    "lancet-server"
                ]
                .contains(d),
                "{name} depends on {d}"
            );
            let above = |n: &str| order.iter().position(|o| *o == n);
            if let (Some(me), Some(it)) = (above(&name), above(d)) {
                assert!(it < me, "{name} depends on {d}, which is above it");
            }
        }
    }
}
