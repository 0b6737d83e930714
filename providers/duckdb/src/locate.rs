//! Where the DuckDB library comes from when `--duckdb-lib` names none:
//! `LANCET_DUCKDB_LIB`, else the cache `tests/engines.sh` installs into
//! (`LANCET_CACHE_DIR`, else `/var/cache/lancet` as root, else
//! `${XDG_CACHE_HOME:-$HOME/.cache}/lancet`), so that `lancet fuzz --dbms duckdb` runs at once
//! after one run of that script.

use std::path::{Path, PathBuf};

/// The environment variable that names the library.
pub const LIBRARY_VARIABLE: &str = "LANCET_DUCKDB_LIB";

/// The npm package version `tests/engines.sh` installs first: the default
/// build, looked for before any other in the cache.
pub const DEFAULT_RELEASE: &str = "1.5.6-r.1";

/// An environment variable's value, unless unset or empty.
fn var(name: &str) -> Option<std::ffi::OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

/// The cache directory `tests/engines.sh` uses: `LANCET_CACHE_DIR`, else
/// `/var/cache/lancet` as root, else `${XDG_CACHE_HOME:-$HOME/.cache}/lancet`.
fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = var("LANCET_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    use std::os::unix::fs::MetadataExt;
    if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
        return Some(PathBuf::from("/var/cache/lancet"));
    }
    match var("XDG_CACHE_HOME") {
        Some(x) => Some(PathBuf::from(x).join("lancet")),
        None => var("HOME").map(|home| PathBuf::from(home).join(".cache/lancet")),
    }
}

/// The library in one cache directory: the default release, else the
/// newest `duckdb-*/libduckdb.so` by its directory's version.
fn in_cache(dir: &Path) -> Option<PathBuf> {
    let pinned = dir.join(format!("duckdb-{DEFAULT_RELEASE}/libduckdb.so"));
    if pinned.is_file() {
        return Some(pinned);
    }
    let mut found: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("duckdb-")?;
            let lib = e.path().join("libduckdb.so");
            let key = version
                .split(|c: char| !c.is_ascii_digit())
                .filter_map(|p| p.parse().ok())
                .collect();
            lib.is_file().then_some((key, lib))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, p)| p)
}

/// The library to load: `given` (`--duckdb-lib`), else the environment's,
/// else the cache's; an error that says how to get one.
pub fn library(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    if let Some(p) = var(LIBRARY_VARIABLE) {
        return Ok(PathBuf::from(p));
    }
    let dir = cache_dir();
    if let Some(p) = dir.as_deref().and_then(in_cache) {
        return Ok(p);
    }
    anyhow::bail!(
        "--dbms duckdb needs DuckDB's shared library (libduckdb.so) and found none: \
         run tests/engines.sh once (it installs the npm registry's \
         @duckdb/node-bindings-linux-x64@{DEFAULT_RELEASE} into the cache), or give \
         --duckdb-lib PATH, or set {LIBRARY_VARIABLE}. Looked in: {}",
        dir.map_or("(no cache directory: HOME is not set)".into(), |d| d
            .display()
            .to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_cached_release_wins_without_the_pinned_one() {
        let dir = std::env::temp_dir().join(format!("lancet-duck-locate-{}", std::process::id()));
        for v in ["1.3.2-alpha.26", "1.4.4-r.4", "1.10.0-r.1"] {
            let d = dir.join(format!("duckdb-{v}"));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("libduckdb.so"), b"").unwrap();
        }
        assert_eq!(
            in_cache(&dir),
            Some(dir.join("duckdb-1.10.0-r.1/libduckdb.so"))
        );
        let pinned = dir.join(format!("duckdb-{DEFAULT_RELEASE}"));
        std::fs::create_dir_all(&pinned).unwrap();
        std::fs::write(pinned.join("libduckdb.so"), b"").unwrap();
        assert_eq!(in_cache(&dir), Some(pinned.join("libduckdb.so")));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
