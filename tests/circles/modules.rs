//! A crate's modules and what each one imports: the module tree follows
//! `mod` declarations from the crate's root file (a file `a.rs` or
//! `a/mod.rs`, or an inline `mod a { }`), and a module's imports are the
//! paths it names from its own crate: `use crate::…`, `use super::…`,
//! `use self::…` (grouped forms and `pub use` re-exports included), a
//! `use` of a child module by its bare name, and paths in code that start
//! with `crate::`, `super::` or `self::`. A path imports the deepest
//! module it names as written and, where what it names there is that
//! module's own import (a re-export), the modules that import leads to:
//! `use crate::expr::TypedColumn` imports `expr` and, if `expr` re-exports
//! it, `types`. Naming one's own ancestor is no import (see
//! [`Crate::imports`]).

use super::lexer::{code_tokens, matching_brace, Token};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Reads a file of the crate, by its path relative to the workspace root.
pub type ReadFile<'a> = &'a dyn Fn(&Path) -> Option<String>;

/// One module: a file or an inline `mod`.
#[derive(Debug, Default)]
pub struct Module {
    /// Its path from the crate root (empty for the root itself).
    pub path: Vec<String>,
    /// The file it is in, relative to the workspace root.
    pub file: PathBuf,
    /// That file's lines, to quote an importing line.
    pub lines: Vec<String>,
    children: BTreeMap<String, usize>,
    /// Items it defines (struct, enum, fn, …), which a path may end on.
    defines: BTreeSet<String>,
    /// Names it imports (`use … as name`), to the paths they stand for.
    imports: BTreeMap<String, Path_>,
    /// Modules it glob-imports (`use a::*`).
    globs: Vec<Path_>,
    /// Every path into its own crate it names, where it names it.
    references: Vec<Reference>,
}

impl Module {
    /// The module's name as the check prints it: `crate` for the root,
    /// else its path (`runner::reduce_queue`).
    pub fn name(&self) -> String {
        if self.path.is_empty() {
            "crate".into()
        } else {
            self.path.join("::")
        }
    }
}

/// A path as written, with the module it was written in: resolved once the
/// whole tree is known.
#[derive(Clone, Debug)]
struct Path_ {
    segments: Vec<String>,
    /// The module it is written in.
    from: usize,
}

/// Where a module names a path.
#[derive(Clone, Debug)]
struct Reference {
    path: Path_,
    line: usize,
}

/// One edge of the module graph: `from` names something of `to` at `line`
/// of `from`'s file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Import {
    pub from: usize,
    pub to: usize,
    pub line: usize,
}

/// A crate's module tree and the imports between its modules.
#[derive(Debug)]
pub struct Crate {
    /// The root file relative to the workspace root (`core/src/lib.rs`).
    pub root: PathBuf,
    pub modules: Vec<Module>,
}

impl Crate {
    /// Reads the crate whose root file is `root`, following `mod`
    /// declarations. A declared module with no file is an error.
    pub fn read(root: &Path, read: ReadFile) -> Result<Crate, String> {
        let mut krate = Crate {
            root: root.to_path_buf(),
            modules: Vec::new(),
        };
        let dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
        krate.read_file(Vec::new(), root, dir, read)?;
        Ok(krate)
    }

    /// Reads the module `path` from `file`; its file children live in `dir`.
    fn read_file(
        &mut self,
        path: Vec<String>,
        file: &Path,
        dir: PathBuf,
        read: ReadFile,
    ) -> Result<usize, String> {
        let text = read(file).ok_or_else(|| format!("cannot read {}", file.display()))?;
        let tokens = code_tokens(&text);
        let lines: Vec<String> = text.lines().map(|l| l.trim().to_string()).collect();
        self.read_body(path, file, &lines, dir, &tokens, read)
    }

    /// Reads a module body (a whole file, or an inline module's braces).
    fn read_body(
        &mut self,
        path: Vec<String>,
        file: &Path,
        lines: &[String],
        dir: PathBuf,
        tokens: &[Token],
        read: ReadFile,
    ) -> Result<usize, String> {
        let me = self.modules.len();
        self.modules.push(Module {
            path: path.clone(),
            file: file.to_path_buf(),
            lines: lines.to_vec(),
            ..Module::default()
        });
        let mut depth = 0usize;
        let mut i = 0;
        while i < tokens.len() {
            let t = &tokens[i];
            let next = |k: usize| tokens.get(i + k).map(|t| t.text.as_str()).unwrap_or("");
            if depth == 0 && t.is("mod") && tokens.get(i + 1).is_some_and(Token::is_word) {
                let name = next(1).to_string();
                let mut child_path = path.clone();
                child_path.push(name.clone());
                let child = if next(2) == "{" {
                    let close = matching_brace(tokens, i + 2);
                    let body = &tokens[i + 3..close.min(tokens.len())];
                    i = close + 1;
                    self.read_body(child_path, file, lines, dir.join(&name), body, read)?
                } else {
                    i += 3;
                    let (child_file, child_dir) = child_file(&dir, &name, read)
                        .ok_or_else(|| format!("{}: no file for `mod {name};`", file.display()))?;
                    self.read_file(child_path, &child_file, child_dir, read)?
                };
                self.modules[me].children.insert(name, child);
                continue;
            }
            if t.is("use") && !tokens.get(i.wrapping_sub(1)).is_some_and(|p| p.is("::")) {
                let mut leaves = Vec::new();
                let mut k = i + 1;
                if tokens.get(k).is_some_and(|t| t.is("::")) {
                    k += 1; // `use ::std::…` names another crate; no harm
                }
                let end = use_tree(tokens, k, Vec::new(), &mut leaves);
                for leaf in leaves {
                    let path = Path_ {
                        segments: leaf.segments.clone(),
                        from: me,
                    };
                    self.modules[me].references.push(Reference {
                        path: path.clone(),
                        line: t.line,
                    });
                    // Only module-level imports are visible as `module::name`.
                    if depth == 0 {
                        match leaf.binds {
                            Binding::Glob => self.modules[me].globs.push(path),
                            Binding::Name(name) => {
                                self.modules[me].imports.insert(name, path);
                            }
                            Binding::None => {}
                        }
                    }
                }
                i = end;
                continue;
            }
            if (t.is("crate") || t.is("super") || t.is("self"))
                && next(1) == "::"
                && !tokens.get(i.wrapping_sub(1)).is_some_and(|p| p.is("in"))
            {
                let mut segments = vec![t.text.clone()];
                let mut k = i + 1;
                while tokens.get(k).is_some_and(|t| t.is("::"))
                    && tokens.get(k + 1).is_some_and(Token::is_word)
                {
                    segments.push(tokens[k + 1].text.clone());
                    k += 2;
                }
                self.modules[me].references.push(Reference {
                    path: Path_ { segments, from: me },
                    line: t.line,
                });
                i = k;
                continue;
            }
            if depth == 0 {
                let defined = match t.text.as_str() {
                    "struct" | "enum" | "union" | "trait" | "type" | "fn" | "const" | "static" => {
                        tokens.get(i + 1)
                    }
                    "macro_rules" if next(1) == "!" => tokens.get(i + 2),
                    _ => None,
                };
                if let Some(name) = defined.filter(|n| n.is_word()) {
                    self.modules[me].defines.insert(name.text.clone());
                }
            }
            match t.text.as_str() {
                "{" => depth += 1,
                "}" => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
        }
        Ok(me)
    }

    /// The imports between this crate's modules, sorted: one per line of
    /// a module that names another module, except one of its own
    /// ancestors (a module is part of its parent: what a parent holds for
    /// its children, `super::Shared`, is below them by construction).
    pub fn imports(&self) -> Vec<Import> {
        let mut out = BTreeSet::new();
        for (from, m) in self.modules.iter().enumerate() {
            for r in &m.references {
                let mut named = Vec::new();
                self.resolve(&r.path, 0, &mut named);
                for to in named {
                    if to != from && !self.is_ancestor(to, from) {
                        out.insert(Import {
                            from,
                            to,
                            line: r.line,
                        });
                    }
                }
            }
        }
        out.into_iter().collect()
    }

    /// Whether `a` is an ancestor of `b` (the root is everyone's).
    fn is_ancestor(&self, a: usize, b: usize) -> bool {
        let (a, b) = (&self.modules[a].path, &self.modules[b].path);
        a.len() < b.len() && b.starts_with(a)
    }

    /// Adds to `out` the modules `path` names: the deepest module it names
    /// as written, then, when what it names there is an import of that
    /// module (a re-export), the modules that import's path names, down
    /// to the module that defines it. Nothing for a path into another
    /// crate.
    fn resolve(&self, path: &Path_, hops: usize, out: &mut Vec<usize>) {
        if hops > 16 {
            return; // a re-export loop; rustc would reject it
        }
        let mut module = path.from;
        let mut rest = path.segments.as_slice();
        match rest.first().map(String::as_str) {
            Some("crate") => {
                module = 0;
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().is_some_and(|s| s == "super") {
                    let Some(parent) = self.parent(module) else {
                        return;
                    };
                    module = parent;
                    rest = &rest[1..];
                }
            }
            Some(first) if self.modules[module].children.contains_key(first) => {}
            _ => return,
        }
        while let Some((first, tail)) = rest.split_first() {
            match self.modules[module].children.get(first) {
                Some(&child) => {
                    module = child;
                    rest = tail;
                }
                None => break,
            }
        }
        out.push(module);
        let Some(name) = rest.first() else {
            return;
        };
        let m = &self.modules[module];
        if m.defines.contains(name) {
            return;
        }
        if let Some(import) = m.imports.get(name) {
            let mut segments = import.segments.clone();
            segments.extend_from_slice(&rest[1..]);
            let followed = Path_ {
                segments,
                from: import.from,
            };
            self.resolve(&followed, hops + 1, out);
            return;
        }
        for glob in &m.globs {
            let mut through = Vec::new();
            self.resolve(glob, hops + 1, &mut through);
            let Some(&target) = through.last() else {
                continue;
            };
            let t = &self.modules[target];
            if t.defines.contains(name)
                || t.imports.contains_key(name)
                || t.children.contains_key(name)
            {
                let mut segments = glob.segments.clone();
                segments.extend_from_slice(rest);
                let followed = Path_ {
                    segments,
                    from: glob.from,
                };
                self.resolve(&followed, hops + 1, out);
                return;
            }
        }
    }

    fn parent(&self, module: usize) -> Option<usize> {
        let path = &self.modules[module].path;
        let parent = path.get(..path.len().checked_sub(1)?)?;
        self.modules.iter().position(|m| m.path == parent)
    }
}

/// The file and child directory of `mod name;` declared in a module whose
/// children live in `dir`: `dir/name.rs` (children in `dir/name/`) or
/// `dir/name/mod.rs`.
fn child_file(dir: &Path, name: &str, read: ReadFile) -> Option<(PathBuf, PathBuf)> {
    let flat = dir.join(format!("{name}.rs"));
    let nested = dir.join(name).join("mod.rs");
    [flat, nested]
        .into_iter()
        .find(|f| read(f).is_some())
        .map(|f| (f, dir.join(name)))
}

/// What a `use` leaf binds in the module it is in.
enum Binding {
    Name(String),
    Glob,
    None,
}

struct Leaf {
    segments: Vec<String>,
    binds: Binding,
}

/// Parses the use tree at `i` under `prefix` into `out`; returns the index
/// past the tree (past the `;` at the top level).
fn use_tree(tokens: &[Token], mut i: usize, prefix: Vec<String>, out: &mut Vec<Leaf>) -> usize {
    let mut segments = prefix;
    loop {
        let Some(t) = tokens.get(i) else { return i };
        if t.is("*") {
            out.push(Leaf {
                segments,
                binds: Binding::Glob,
            });
            return after_leaf(tokens, i + 1);
        }
        if t.is("{") {
            i += 1;
            while tokens.get(i).is_some_and(|t| !t.is("}")) {
                i = use_tree(tokens, i, segments.clone(), out);
                if tokens.get(i).is_some_and(|t| t.is(",")) {
                    i += 1;
                }
            }
            return after_leaf(tokens, i + 1);
        }
        if !t.is_word() {
            return after_leaf(tokens, i);
        }
        let is_self_leaf = t.is("self") && !segments.is_empty();
        if !is_self_leaf {
            segments.push(t.text.clone());
        }
        i += 1;
        if tokens.get(i).is_some_and(|t| t.is("::")) {
            i += 1;
            continue;
        }
        let mut name = segments.last().cloned();
        if tokens.get(i).is_some_and(|t| t.is("as")) {
            name = tokens
                .get(i + 1)
                .map(|t| t.text.clone())
                .filter(|n| n != "_");
            i += 2;
        }
        out.push(Leaf {
            segments,
            binds: name.map_or(Binding::None, Binding::Name),
        });
        return after_leaf(tokens, i);
    }
}

/// Past a `;` that ends a whole `use` item, else `i` (a `,` or `}` in a
/// group is for the caller).
fn after_leaf(tokens: &[Token], i: usize) -> usize {
    if tokens.get(i).is_some_and(|t| t.is(";")) {
        i + 1
    } else {
        i
    }
}
