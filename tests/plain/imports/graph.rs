//! The file graph of a crate's roots and its circles.

use super::walk::{Edges, Walk};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The file graph of a crate's roots (`lib.rs` and `main.rs`, each a crate of its own).
pub struct Graph {
    /// Every file the roots declare: true for test code.
    pub files: BTreeMap<PathBuf, bool>,
    /// (from, to) -> the names `from` uses of `to`.
    pub edges: Edges,
}

impl Graph {
    /// The crates whose roots are `roots` (files that do not exist are passed over).
    pub fn read(roots: &[PathBuf]) -> Graph {
        let mut graph = Graph {
            files: BTreeMap::new(),
            edges: BTreeMap::new(),
        };
        for root in roots.iter().filter(|r| r.exists()) {
            let walk = Walk::read(root);
            graph.files.extend(walk.files.clone());
            for (edge, names) in walk.edges() {
                graph.edges.entry(edge).or_default().extend(names);
            }
        }
        graph
    }

    /// Each set of two files or more that reach each other through their references,
    /// sorted: the circles.
    pub fn circles(&self) -> Vec<Vec<PathBuf>> {
        let mut next: BTreeMap<&PathBuf, Vec<&PathBuf>> = BTreeMap::new();
        for (from, to) in self.edges.keys() {
            next.entry(from).or_default().push(to);
        }
        let reach = |start: &PathBuf| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![start];
            while let Some(file) = todo.pop() {
                for to in next.get(file).into_iter().flatten() {
                    if seen.insert(*to) {
                        todo.push(to);
                    }
                }
            }
            seen
        };
        let reaches: BTreeMap<&PathBuf, BTreeSet<&PathBuf>> =
            next.keys().map(|f| (*f, reach(f))).collect();
        let mut placed = BTreeSet::new();
        let mut circles = Vec::new();
        for (file, reached) in &reaches {
            if placed.contains(*file) || !reached.contains(file) {
                continue;
            }
            let circle: Vec<PathBuf> = reached
                .iter()
                .filter(|other| reaches.get(*other).is_some_and(|r| r.contains(file)))
                .map(|other| (*other).clone())
                .collect();
            placed.extend(circle.iter().cloned());
            circles.push(circle);
        }
        circles
    }

    /// A circle's references, one `from -> to: names` line each, paths below `base`.
    pub fn describe(&self, circle: &[PathBuf], base: &Path) -> String {
        let short = |p: &PathBuf| p.strip_prefix(base).unwrap_or(p).display().to_string();
        let mut text = format!(
            "circle of {} files: {}\n",
            circle.len(),
            circle.iter().map(short).collect::<Vec<_>>().join(", ")
        );
        for ((from, to), names) in &self.edges {
            if circle.contains(from) && circle.contains(to) {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                text += &format!("  {} -> {}: {}\n", short(from), short(to), names.join(", "));
            }
        }
        text
    }
}
