//! The module tree of a crate from its root's `mod` declarations, and each file's
//! references to other modules of the crate, resolved to files.
//!
//! Modules: `mod x;` is `x.rs` or `x/mod.rs` beside a `lib.rs`, `main.rs` or `mod.rs` (or a
//! file loaded by `#[path]`), and in the folder named as the file otherwise (`foo.rs` +
//! `foo/`); an inline `mod x { }` nests that folder; `#[path = "..."]` is taken as rustc
//! takes it. A module declared under `#[cfg(test)]`, everything under it, and a
//! `*_tests.rs` file are test code: not read, their files known but no nodes. Other
//! `#[cfg(test)]` items are passed over too.
//!
//! References read, in every item and function body, macro bodies included (the path in
//! `write!(f, "{}", crate::units::format_size(n))` is code):
//! - `use` trees, grouped and nested (`use crate::{a::B, c::{D, E}}`), with `as`, `self`
//!   and globs, over several lines;
//! - paths in code: `crate::x::y::Z`, `super::...`, `self::...`, `$crate::...`;
//! - paths that start at a child module of the current one (`use discover::discover;` in
//!   a mod.rs, `run_loop::run(..)`) or at a module a `use` named (`use super::render;`
//!   then `render::human(..)`).
//!
//! A path resolves to the file of the longest module it names: `crate::a::b::Item` to
//! module `a::b`'s file, a path to a module to that module's file, and a name a mod.rs
//! re-exports to that mod.rs (which depends on the child it re-exports from). Except
//! towards the file's own ancestors (its parent mod.rs, the crate root): they hold the
//! file, so what they define themselves is no dependency (a child using its parent's
//! `RunOptions` while the parent calls the child is the tree the `mod` lines make, not a
//! circle); what they only import or re-export is, on the file the import leads to
//! (`use super::Session`, re-exported by the parent from session.rs, depends on
//! session.rs). Not read: visibility paths (`pub(in crate::x)`), attributes, and the names
//! a glob (`use super::*`) brings in when used bare; the glob itself refers to its module.

use super::tokens::{cfg_test, ident, item_end, path_at, path_attr, punct, starts_path, use_tree};
use proc_macro2::{Delimiter, TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// (from, to) -> the names `from` uses of `to`.
pub type Edges = BTreeMap<(PathBuf, PathBuf), BTreeSet<String>>;

/// A crate read from its root file.
#[derive(Default)]
pub struct Walk {
    /// Module path (from the crate root) -> the file that holds it (a file holds its
    /// inline modules too).
    modules: BTreeMap<Vec<String>, PathBuf>,
    /// Every file the tree declares: true for test code.
    pub files: BTreeMap<PathBuf, bool>,
    /// File -> the module it is.
    module_of: BTreeMap<PathBuf, Vec<String>>,
    /// Module -> the names its `use` items bind -> the path each names (as written).
    imports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>,
    /// (file, module the reference is in, path as written).
    references: Vec<(PathBuf, Vec<String>, Vec<String>)>,
}

/// Where a token stream stands: its module, file and the folders its `mod x;` look in.
struct Place {
    module: Vec<String>,
    file: PathBuf,
    /// Folder of `mod x;` without `#[path]`.
    children: PathBuf,
    /// Folder a `#[path]` is relative to.
    path_base: PathBuf,
    test: bool,
}

impl Walk {
    /// Reads the crate whose root file is `root` (`src/lib.rs`).
    pub fn read(root: &Path) -> Walk {
        let mut walk = Walk::default();
        let dir = root.parent().unwrap().to_path_buf();
        walk.file(Place {
            module: Vec::new(),
            file: root.to_path_buf(),
            children: dir.clone(),
            path_base: dir,
            test: false,
        });
        walk
    }

    fn file(&mut self, place: Place) {
        self.modules
            .insert(place.module.clone(), place.file.clone());
        self.module_of
            .insert(place.file.clone(), place.module.clone());
        let test = place.test || place.file.to_string_lossy().ends_with("_tests.rs");
        self.files.insert(place.file.clone(), test);
        if test {
            return;
        }
        let text = std::fs::read_to_string(&place.file)
            .unwrap_or_else(|e| panic!("{}: {e}", place.file.display()));
        let tokens: TokenStream = text
            .parse()
            .unwrap_or_else(|e| panic!("{}: does not tokenize: {e:?}", place.file.display()));
        self.stream(tokens, &place);
    }

    fn stream(&mut self, tokens: TokenStream, place: &Place) {
        let t: Vec<TokenTree> = tokens.into_iter().collect();
        let mut attrs: Vec<TokenStream> = Vec::new();
        let mut i = 0;
        while i < t.len() {
            if punct(&t[i], '#') {
                match (t.get(i + 1), t.get(i + 2)) {
                    (Some(TokenTree::Group(g)), _) if g.delimiter() == Delimiter::Bracket => {
                        attrs.push(g.stream());
                        i += 2;
                        continue;
                    }
                    (Some(bang), Some(TokenTree::Group(_))) if punct(bang, '!') => {
                        i += 3;
                        continue;
                    }
                    _ => {}
                }
            }
            let test = attrs.iter().any(cfg_test);
            if ident(&t[i], "pub") {
                if let Some(TokenTree::Group(g)) = t.get(i + 1) {
                    if g.delimiter() == Delimiter::Parenthesis {
                        i += 2; // pub(crate), pub(in crate::x): a visibility, not a reference
                        continue;
                    }
                }
                i += 1;
                continue;
            }
            if ident(&t[i], "mod") {
                if let Some(TokenTree::Ident(name)) = t.get(i + 1) {
                    let explicit = attrs.iter().find_map(path_attr);
                    self.module(place, &name.to_string(), t.get(i + 2), explicit, test);
                    attrs.clear();
                    i += 3;
                    continue;
                }
            }
            if test {
                i = item_end(&t, i); // a #[cfg(test)] item: test code
                attrs.clear();
                continue;
            }
            attrs.clear();
            if ident(&t[i], "use") {
                let end = (i..t.len()).find(|&j| punct(&t[j], ';')).unwrap_or(t.len());
                let mut leaves = Vec::new();
                use_tree(&t[i + 1..end], Vec::new(), &mut leaves);
                for (path, name) in leaves {
                    if let Some(name) = name {
                        self.imports
                            .entry(place.module.clone())
                            .or_default()
                            .insert(name, path.clone());
                    }
                    self.references
                        .push((place.file.clone(), place.module.clone(), path));
                }
                i = end + 1;
                continue;
            }
            match &t[i] {
                TokenTree::Group(g) => self.stream(g.stream(), place),
                TokenTree::Ident(_) if starts_path(&t, i) => {
                    let (path, end) = path_at(&t, i);
                    self.references
                        .push((place.file.clone(), place.module.clone(), path));
                    i = end;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// `mod name;` (a file) or `mod name { }` (inline) in `place`.
    fn module(
        &mut self,
        place: &Place,
        name: &str,
        next: Option<&TokenTree>,
        explicit: Option<String>,
        test: bool,
    ) {
        let mut module = place.module.clone();
        module.push(name.to_string());
        let test = test || place.test;
        match next {
            Some(TokenTree::Group(body)) if body.delimiter() == Delimiter::Brace => {
                self.modules.insert(module.clone(), place.file.clone());
                let inline = Place {
                    module,
                    file: place.file.clone(),
                    children: place.children.join(name),
                    path_base: place.children.join(name),
                    test,
                };
                if !test {
                    self.stream(body.stream(), &inline);
                }
            }
            _ => {
                let loaded_by_path = explicit.is_some();
                let file = match explicit {
                    Some(path) => place.path_base.join(path),
                    None => {
                        let flat = place.children.join(format!("{name}.rs"));
                        if flat.exists() {
                            flat
                        } else {
                            place.children.join(name).join("mod.rs")
                        }
                    }
                };
                let dir = file.parent().unwrap().to_path_buf();
                let stem = file.file_stem().unwrap().to_string_lossy().to_string();
                // A mod.rs, or a file loaded by #[path]: its `mod x;` look beside it.
                let children = if stem == "mod" || loaded_by_path {
                    dir.clone()
                } else {
                    dir.join(&stem)
                };
                self.file(Place {
                    module,
                    file,
                    children,
                    path_base: dir,
                    test,
                });
            }
        }
    }

    /// A path written in `module` from the crate root, if it starts at the crate's
    /// modules (`crate`, `self`, `super`, a child module, a module a `use` named).
    fn absolute(&self, module: &[String], path: &[String], depth: u8) -> Option<Vec<String>> {
        let (first, rest) = path.split_first()?;
        let mut abs: Vec<String> = match first.as_str() {
            "crate" | "$crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => module[..module.len().checked_sub(1)?].to_vec(),
            _ => {
                let mut child = module.to_vec();
                child.push(first.clone());
                if self.modules.contains_key(&child) {
                    child
                } else {
                    let named = self.imports.get(module)?.get(first)?;
                    let target = self.absolute(module, named, depth.checked_sub(1)?)?;
                    if !self.modules.contains_key(&target) {
                        return None; // an imported item, not a module: its `use` counted
                    }
                    target
                }
            }
        };
        for segment in rest {
            match segment.as_str() {
                "super" => {
                    abs.pop()?;
                }
                "self" => {}
                _ => abs.push(segment.clone()),
            }
        }
        Some(abs)
    }

    /// The file that `file`'s reference to `abs` depends on (see the top of this file).
    fn target(&self, file: &Path, mut abs: Vec<String>) -> Option<&PathBuf> {
        let own = &self.module_of[file];
        for _ in 0..8 {
            let n = (0..=abs.len())
                .rev()
                .find(|n| self.modules.contains_key(&abs[..*n]))?;
            let module = &abs[..n];
            if !(module.len() < own.len() && own.starts_with(module)) {
                return self.modules.get(module);
            }
            // An ancestor: only what it imports leads on.
            let named = self.imports.get(module)?.get(abs.get(n)?)?;
            let mut next = self.absolute(module, named, 4)?;
            next.extend_from_slice(&abs[n + 1..]);
            abs = next;
        }
        None
    }

    /// Every reference from one file to another, test files left out.
    pub fn edges(&self) -> Edges {
        let mut edges = Edges::new();
        for (file, module, path) in &self.references {
            let Some(to) = self
                .absolute(module, path, 4)
                .and_then(|abs| self.target(file, abs))
            else {
                continue;
            };
            if to != file && !self.files[to] {
                let name = path.last().cloned().unwrap_or_default();
                edges
                    .entry((file.clone(), to.clone()))
                    .or_default()
                    .insert(name);
            }
        }
        edges
    }
}
