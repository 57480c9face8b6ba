//! No import circle between the files of src/: a file that imports another file which
//! (directly or through others) imports it back ties them into one piece that can be
//! neither understood nor changed alone, and the next change should not add one.
//!
//! The walk (imports/walk.rs says exactly what it reads and how it resolves it) follows
//! every reference a file of src/ makes to another module of the crate: `use crate::...`,
//! `use super::...`, `use self::...` and `use` of a child module, grouped and over
//! several lines, and the same paths inline in code and in macro bodies. A path counts on
//! the file of the module it names (`crate::a::b::Item`: module `a::b`'s file, a mod.rs
//! for what it re-exports), except that what a file's own parent mod.rs (or the crate
//! root) defines is no dependency of the file, while what the parent only re-exports
//! counts on the file it comes from. Test code (`#[cfg(test)]` items and modules,
//! `*_tests.rs`) is left out. A circle fails the test with each of its references as
//! file -> file and the names used.

mod graph;
mod tokens;
mod walk;

use graph::Graph;
use std::path::{Path, PathBuf};

fn roots(src: &Path) -> Vec<PathBuf> {
    vec![src.join("lib.rs"), src.join("main.rs")]
}

/// Every `.rs` file under `dir`.
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

/// The circles of the crate under `src`, described; and the `.rs` files there the walk
/// did not reach (a module it could not place would hide its references).
fn check(src: &Path) -> (Vec<String>, Vec<PathBuf>) {
    let graph = Graph::read(&roots(src));
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.retain(|f| !graph.files.contains_key(f));
    let base = src.parent().unwrap();
    let circles = graph
        .circles()
        .iter()
        .map(|c| graph.describe(c, base))
        .collect();
    (circles, files)
}

#[test]
fn no_import_circle_between_the_files_of_src() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (circles, unreached) = check(&src);
    assert!(
        unreached.is_empty(),
        "files under src/ that are no module of src/lib.rs or src/main.rs as the walk reads \
         them: {unreached:?}"
    );
    assert!(
        circles.is_empty(),
        "{} import circle(s) between files of src/ (each reference: file -> file: names \
         used); break each, e.g. by moving what both sides need below them:\n{}",
        circles.len(),
        circles.concat()
    );
}

/// A made-up crate with two circles: a.rs <-> b.rs (one side through a grouped, multi-line
/// `use`, the other through a path in a macro's body), and c/inner.rs <-> c/user.rs, where
/// user.rs reaches inner.rs only through its parent's re-export (`use super::Inner`).
/// What must not count: comments, strings, test modules, test items and test files, and
/// a child's use of what its parent defines (inner.rs's `super::Shared`, while c/mod.rs
/// imports inner.rs).
#[test]
fn the_walk_finds_the_circles_of_a_made_up_crate_and_no_others() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "lib.rs",
        "pub mod a;\npub mod b;\npub mod c;\npub mod d;\n\
         #[cfg(test)]\n#[path = \"lib_tests.rs\"]\nmod tests;\n",
    );
    write(
        "a.rs",
        "use crate::{\n    b::{B, Other},\n    d::D,\n};\npub struct A;\n",
    );
    write(
        "b.rs",
        "pub struct B;\npub struct Other;\n\
         pub fn f() -> String { format!(\"{:?}\", crate::a::A) }\n",
    );
    write(
        "c/mod.rs",
        "mod inner;\nmod user;\npub use inner::Inner;\npub struct Shared;\n\
         pub fn f() { user::g() }\n",
    );
    write(
        "c/inner.rs",
        "use super::Shared;\npub struct Inner;\npub fn h() { super::user::g() }\n",
    );
    write("c/user.rs", "use super::Inner;\npub fn g() {}\n");
    write(
        "d.rs",
        "// use crate::a::A;\n/// [`crate::b::B`]\npub struct D;\n\
         const S: &str = \"crate::a::A\";\nconst R: &str = r#\"crate::a::A\"#;\n\
         #[cfg(test)]\nfn helper() { let _ = crate::a::A; }\n\
         #[cfg(test)]\nmod tests { use crate::a::A; }\n\
         mod e { pub fn g<'a>(x: &'a str) { let _ = super::super::c::Shared; } }\n",
    );
    write("lib_tests.rs", "use crate::d::D;\nuse crate::a::A;\n");
    let (circles, unreached) = check(&src);
    assert!(unreached.is_empty(), "{unreached:?}");
    assert_eq!(
        circles,
        [
            "circle of 2 files: src/a.rs, src/b.rs\n  src/a.rs -> src/b.rs: B, Other\n  \
             src/b.rs -> src/a.rs: A\n",
            "circle of 2 files: src/c/inner.rs, src/c/user.rs\n  src/c/inner.rs -> \
             src/c/user.rs: g\n  src/c/user.rs -> src/c/inner.rs: Inner\n",
        ],
    );
    let graph = Graph::read(&roots(&src));
    let edges: Vec<String> = graph
        .edges
        .iter()
        .map(|((from, to), names)| {
            let short = |p: &PathBuf| p.strip_prefix(&src).unwrap().display().to_string();
            format!("{} -> {}: {names:?}", short(from), short(to))
        })
        .collect();
    assert_eq!(
        edges,
        [
            r#"a.rs -> b.rs: {"B", "Other"}"#,
            r#"a.rs -> d.rs: {"D"}"#,
            r#"b.rs -> a.rs: {"A"}"#,
            r#"c/inner.rs -> c/user.rs: {"g"}"#,
            r#"c/mod.rs -> c/inner.rs: {"Inner"}"#,
            r#"c/mod.rs -> c/user.rs: {"g"}"#,
            r#"c/user.rs -> c/inner.rs: {"Inner"}"#,
            r#"d.rs -> c/mod.rs: {"Shared"}"#,
        ]
    );
}
