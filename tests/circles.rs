//! No import circles: within each crate of the workspace, no two modules
//! may import each other, directly or through others (issue 42). The check
//! reads every crate's source from its root file (`src/lib.rs`,
//! `src/main.rs`, `src/bin/*.rs` of each workspace member), builds the
//! module graph from the paths each module names in its own crate
//! (`circles/modules.rs` says which), and fails on any circle, naming it
//! as paths of modules with the lines that import. A parent's `mod child;` is not an import, nor is a module's
//! use of what its own ancestors hold (`super::Shared`, `crate::VERSION`:
//! a module is part of its parent); `#[cfg(test)]` items are left out (a
//! file's tests belong to it).

/// The check's parts, in `tests/circles/`.
mod circles {
    pub mod graph;
    pub mod lexer;
    pub mod modules;
}
use circles::{graph, lexer, modules};

use graph::Circle;
use modules::Crate;
use std::path::{Path, PathBuf};

/// The workspace members listed in the root `Cargo.toml`.
fn members(root: &Path) -> Vec<PathBuf> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("root Cargo.toml");
    let start = manifest.find("members").expect("a members list") + "members".len();
    let list = &manifest[start..];
    let list = &list[list.find('[').expect("members = [")..list.find(']').expect("]")];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(|m| root.join(m))
        .collect()
}

/// The crate root files of the package in `dir`, relative to `root`.
fn crate_roots(root: &Path, dir: &Path) -> Vec<PathBuf> {
    let src = dir.join("src");
    let mut out: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .filter(|f| f.is_file())
        .collect();
    if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = bins
            .map(|e| e.expect("src/bin entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
        bins.sort();
        out.extend(bins);
    }
    out.into_iter()
        .map(|f| {
            f.strip_prefix(root)
                .expect("under the workspace")
                .to_path_buf()
        })
        .collect()
}

/// Every circle in the workspace at `root`.
fn workspace_circles(root: &Path) -> Vec<Circle> {
    let read = |p: &Path| std::fs::read_to_string(root.join(p)).ok();
    let mut out = Vec::new();
    for member in members(root) {
        for crate_root in crate_roots(root, &member) {
            let krate = Crate::read(&crate_root, &read).unwrap_or_else(|e| panic!("{e}"));
            out.extend(graph::circles(&krate));
        }
    }
    out
}

#[test]
fn no_module_imports_itself_through_others() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = workspace_circles(root);
    let problems: String = found
        .iter()
        .map(|c| format!("circle {}\n{}\n", c.key, c.explanation))
        .collect();
    assert!(
        problems.is_empty(),
        "modules that import each other (break each circle by moving what \
         both need into a module below both, so imports point one way):\n\n{problems}"
    );
}

/// The circles of a crate held in memory: `files` are (path, text).
fn circles_in(files: &[(&str, &str)]) -> Vec<Circle> {
    let read = |p: &Path| {
        files
            .iter()
            .find(|(f, _)| Path::new(f) == p)
            .map(|(_, t)| t.to_string())
    };
    let krate = Crate::read(Path::new("src/lib.rs"), &read).expect("the crate reads");
    graph::circles(&krate)
}

/// The keys of [`circles_in`].
fn circles_of(files: &[(&str, &str)]) -> Vec<String> {
    circles_in(files).into_iter().map(|c| c.key).collect()
}

#[test]
fn a_circle_through_a_third_module_is_found_and_explained() {
    let files = [
        ("src/lib.rs", "mod a; mod b; pub mod c;"),
        ("src/a.rs", "use crate::b::{self, Thing};\npub struct A;"),
        ("src/b.rs", "pub struct Thing;\nfn f() { crate::c::g() }"),
        ("src/c/mod.rs", "pub fn g() {}\nuse super::a::A;"),
    ];
    let circles = circles_in(&files);
    assert_eq!(circles.len(), 1);
    assert_eq!(circles[0].key, "src/lib.rs: a b c");
    let explanation = &circles[0].explanation;
    assert!(explanation.contains("a -> b -> c -> a"), "{explanation}");
    assert!(
        explanation.contains("src/c/mod.rs:2: use super::a::A;"),
        "{explanation}"
    );
}

#[test]
fn re_exports_lead_to_the_defining_module() {
    // `a` uses `Value` through the root's re-export; the root itself is no
    // step of a circle, and `value` imports nothing back.
    let files = [
        (
            "src/lib.rs",
            "pub mod a; pub mod value; pub mod ast;\npub use value::Value;\npub use ast::*;",
        ),
        ("src/a.rs", "use crate::{Value, Expr};\npub struct A;"),
        ("src/value.rs", "pub struct Value;"),
        (
            "src/ast.rs",
            "pub enum Expr { V(crate::Value) }\nfn f(_: crate::a::A) {}",
        ),
    ];
    assert_eq!(circles_of(&files), ["src/lib.rs: a ast"]);
}

#[test]
fn tests_comments_strings_and_declarations_are_no_imports() {
    let files = [
        ("src/lib.rs", "pub mod a; pub mod b;\nuse a::A;"),
        (
            "src/a.rs",
            "// crate::b::B\n/* use crate::b; */\npub struct A;\nconst S: &str = \"crate::b::B\";\nconst R: &str = r#\"use crate::b;\"#;\nfn f<'a>(_: &'a str) -> char { '\"' }\n#[cfg(test)]\nmod tests {\n    use crate::b::B;\n}",
        ),
        ("src/b.rs", "pub struct B;\nfn f(_: crate::a::A) {}"),
    ];
    assert!(circles_of(&files).is_empty());
}

#[test]
fn a_module_imports_what_it_names_and_what_that_re_exports() {
    // `query` names `expr` to reach `TypedColumn`, which `expr` re-exports
    // from `types`: `query` depends on both, and `expr` on `query`.
    let files = [
        ("src/lib.rs", "mod expr; mod query; mod types;"),
        ("src/types.rs", "pub struct TypedColumn;"),
        (
            "src/expr.rs",
            "pub use crate::types::TypedColumn;\nfn g() { crate::query::q() }",
        ),
        (
            "src/query.rs",
            "use crate::expr::TypedColumn;\npub fn q() {}",
        ),
    ];
    assert_eq!(circles_of(&files), ["src/lib.rs: expr query"]);
}

#[test]
fn a_parent_and_its_children_are_no_circle_but_a_sibling_is() {
    // The parent's items are below its children (`super::Shared`), and
    // a parent may name its children; two children may not name each
    // other.
    let files = [
        ("src/lib.rs", "pub mod runner;"),
        (
            "src/runner/mod.rs",
            "mod queue;\nmod triage;\nuse queue::Queue;\npub struct Shared;",
        ),
        (
            "src/runner/queue.rs",
            "use super::Shared;\npub struct Queue;\nfn f() { super::triage::t() }",
        ),
        (
            "src/runner/triage.rs",
            "use super::queue::Queue;\npub fn t() {}",
        ),
    ];
    assert_eq!(
        circles_of(&files),
        ["src/lib.rs: runner::queue runner::triage"]
    );
}

#[test]
fn the_lexer_keeps_lines() {
    let tokens = lexer::code_tokens("a\n/* x\n y */ b \"s\ns\" c");
    let lines: Vec<(String, usize)> = tokens.into_iter().map(|t| (t.text, t.line)).collect();
    assert_eq!(lines, [("a".into(), 1), ("b".into(), 3), ("c".into(), 4)]);
}
