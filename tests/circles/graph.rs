//! Circles in a crate's import graph: each strongly connected set of
//! modules (every one reaches every other through imports) is one circle,
//! explained as paths of modules that lead back to where they start.

use super::modules::{Crate, Import};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// One circle: modules of one crate that import each other, directly or
/// through others.
#[derive(Debug)]
pub struct Circle {
    /// `crate-root-file: module module …`, the modules sorted: how the
    /// failure names it.
    pub key: String,
    /// Paths that close on themselves and together take every import
    /// inside the circle, each step with the line that imports.
    pub explanation: String,
}

/// The circles of `krate`, sorted by key.
pub fn circles(krate: &Crate) -> Vec<Circle> {
    let imports = krate.imports();
    let mut next: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for i in &imports {
        next.entry(i.from).or_default().insert(i.to);
    }
    let mut out: Vec<Circle> = components(krate.modules.len(), &next)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|members| explain(krate, &members, &imports, &next))
        .collect();
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out
}

/// Tarjan's strongly connected components of the graph `next` over nodes
/// `0..n`.
fn components(n: usize, next: &BTreeMap<usize, BTreeSet<usize>>) -> Vec<BTreeSet<usize>> {
    struct State<'a> {
        next: &'a BTreeMap<usize, BTreeSet<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        counter: usize,
        out: Vec<BTreeSet<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.counter);
        s.low[v] = s.counter;
        s.counter += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        let successors: Vec<usize> = s.next.get(&v).into_iter().flatten().copied().collect();
        for w in successors {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.insert(w);
                if w == v {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut s = State {
        next,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        counter: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The circle of `members`: its key, and closed paths covering each import
/// between members, each step printed with its first importing line.
fn explain(
    krate: &Crate,
    members: &BTreeSet<usize>,
    imports: &[Import],
    next: &BTreeMap<usize, BTreeSet<usize>>,
) -> Circle {
    let name = |m: usize| krate.modules[m].name();
    let mut names: Vec<String> = members.iter().map(|&m| name(m)).collect();
    names.sort();
    let key = format!("{}: {}", krate.root.display(), names.join(" "));

    let inside: Vec<(usize, usize)> = imports
        .iter()
        .filter(|i| members.contains(&i.from) && members.contains(&i.to))
        .map(|i| (i.from, i.to))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut covered = BTreeSet::new();
    let mut explanation = String::new();
    for &(from, to) in &inside {
        if covered.contains(&(from, to)) {
            continue;
        }
        let back = shortest_path(to, from, members, next);
        let mut cycle = vec![from];
        cycle.extend(back);
        let steps: Vec<(usize, usize)> = cycle.windows(2).map(|w| (w[0], w[1])).collect();
        covered.extend(steps.iter().copied());
        let path: Vec<String> = cycle.iter().map(|&m| name(m)).collect();
        explanation.push_str(&format!("    {}\n", path.join(" -> ")));
        for (a, b) in steps {
            let lines: Vec<&Import> = imports
                .iter()
                .filter(|i| i.from == a && i.to == b)
                .collect();
            let first = lines[0];
            let module = &krate.modules[a];
            let more = match lines.len() {
                1 => String::new(),
                n => format!(" (and {} more line(s))", n - 1),
            };
            let text = module.lines.get(first.line - 1).map_or("", String::as_str);
            explanation.push_str(&format!(
                "      {}:{}: {text}{more}\n",
                module.file.display(),
                first.line
            ));
        }
    }
    Circle { key, explanation }
}

/// The nodes from `start` to `goal` (both included) along the fewest
/// imports, staying inside `members`.
fn shortest_path(
    start: usize,
    goal: usize,
    members: &BTreeSet<usize>,
    next: &BTreeMap<usize, BTreeSet<usize>>,
) -> Vec<usize> {
    let mut came_from = BTreeMap::new();
    let mut queue = VecDeque::from([start]);
    came_from.insert(start, start);
    while let Some(v) = queue.pop_front() {
        if v == goal {
            break;
        }
        for &w in next.get(&v).into_iter().flatten() {
            if members.contains(&w) && !came_from.contains_key(&w) {
                came_from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    let mut path = vec![goal];
    let mut v = goal;
    while v != start {
        v = came_from[&v];
        path.push(v);
    }
    path.reverse();
    path
}
