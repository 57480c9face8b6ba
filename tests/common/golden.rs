//! Golden files: outputs compared with files committed beside the tests. Every comparer
//! goes through [`Goldens`], which holds one rule: with `UPDATE_GOLDEN` set, a golden
//! file whose content changed is rewritten and the test still fails, naming each file
//! it rewrote; one that is already right is left alone and the test passes. So a run
//! with `UPDATE_GOLDEN` is green only when it changed nothing: it cannot pass by
//! rewriting. After an intended change: run with `UPDATE_GOLDEN=1`, review the diff
//! (`git diff`), run again without it.
//!
//! ```ignore
//! use crate::common::golden::Goldens;
//! let mut goldens = Goldens::new("the mail text");
//! goldens.text(&path, &text);
//! goldens.finish();
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `UPDATE_GOLDEN` is set: golden files that differ are rewritten (and still fail).
pub fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some()
}

/// The golden files one test compares with. Differences (or, with `UPDATE_GOLDEN`, the
/// files rewritten) are collected, so one run names them all; [`Goldens::finish`] fails
/// the test if there is any. Dropping it unfinished fails too, so no comparison is lost.
#[must_use = "call finish(): it is what fails the test"]
pub struct Goldens {
    /// What the files hold, for the failure message ("the mail text").
    what: String,
    /// A failure per golden file that differs (not updating).
    differ: Vec<String>,
    /// Each file written, with what differed (updating).
    rewritten: Vec<String>,
    finished: bool,
}

impl Goldens {
    pub fn new(what: &str) -> Goldens {
        Goldens {
            what: what.to_string(),
            differ: Vec::new(),
            rewritten: Vec::new(),
            finished: false,
        }
    }

    /// The golden file `path` must hold `actual`; a failure shows both texts whole.
    pub fn text(&mut self, path: &Path, actual: &str) {
        let want = std::fs::read(path).ok();
        if want.as_deref() == Some(actual.as_bytes()) {
            return;
        }
        if updating() {
            write(path, actual.as_bytes());
            self.rewritten.push(path.display().to_string());
            return;
        }
        self.differ.push(match want {
            None => format!("{}: missing", path.display()),
            Some(want) => format!(
                "{} differs:\n--- expected\n{}\n--- actual\n{actual}",
                path.display(),
                String::from_utf8_lossy(&want)
            ),
        });
    }

    /// The directory `dir` must hold exactly `files` (name -> content) and no other file;
    /// a failure names each file that differs and where. Returns those problems (empty:
    /// the directory is right), for a caller that keeps what it got for a diff.
    pub fn dir(&mut self, dir: &Path, files: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
        let want = read_dir(dir);
        let mut problems = Vec::new();
        for name in want.keys().filter(|n| !files.contains_key(*n)) {
            problems.push(format!("{name}: pinned, no longer written"));
        }
        for (name, bytes) in files {
            match want.get(name) {
                None => problems.push(format!("{name}: written, not pinned")),
                Some(w) if w != bytes => {
                    problems.push(format!("{name}: differs at {}", first_difference(w, bytes)))
                }
                Some(_) => {}
            }
        }
        if problems.is_empty() {
            return problems;
        }
        let list = problems.join("\n  ");
        if updating() {
            if dir.exists() {
                std::fs::remove_dir_all(dir)
                    .unwrap_or_else(|e| panic!("removing {}: {e}", dir.display()));
            }
            for (name, bytes) in files {
                write(&dir.join(name), bytes);
            }
            self.rewritten
                .push(format!("{}/ (where it differed:\n  {list})", dir.display()));
        } else {
            self.differ.push(format!("{}/:\n  {list}", dir.display()));
        }
        problems
    }

    /// Fails the test if a golden file differed, or was rewritten (`UPDATE_GOLDEN`).
    pub fn finish(mut self) {
        self.finished = true;
        if !self.rewritten.is_empty() {
            panic!(
                "UPDATE_GOLDEN: rewrote {} golden file(s) of {}: {}\nreview the diff and run \
                 again without UPDATE_GOLDEN (a run that rewrites a golden file does not pass)",
                self.rewritten.len(),
                self.what,
                self.rewritten.join("\n")
            );
        }
        if !self.differ.is_empty() {
            panic!(
                "{} differs from its golden file(s) (UPDATE_GOLDEN=1 rewrites them after an \
                 intended change; review the diff):\n{}",
                self.what,
                self.differ.join("\n")
            );
        }
    }
}

impl Drop for Goldens {
    fn drop(&mut self) {
        if !self.finished && !std::thread::panicking() {
            panic!("Goldens of {} dropped without finish()", self.what);
        }
    }
}

fn write(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .unwrap_or_else(|e| panic!("creating {}: {e}", parent.display()));
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// The files directly in `dir` by name (none when it is missing).
pub fn read_dir(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries {
        let path: PathBuf = entry.expect("entry").path();
        if path.is_file() {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            files.insert(name, bytes);
        }
    }
    files
}

/// The first line where two texts differ (for binary files: their sizes).
pub fn first_difference(want: &[u8], got: &[u8]) -> String {
    let (Ok(want), Ok(got)) = (std::str::from_utf8(want), std::str::from_utf8(got)) else {
        return format!(
            "some byte: {} bytes pinned, {} bytes now",
            want.len(),
            got.len()
        );
    };
    let mut lines = want.lines().zip(got.lines()).enumerate();
    match lines.find(|(_, (w, g))| w != g) {
        Some((i, (w, g))) => format!("line {}:\n    pinned: {w}\n    now:    {g}", i + 1),
        None => format!(
            "the end: {} lines ({} bytes) pinned, {} lines ({} bytes) now",
            want.lines().count(),
            want.len(),
            got.lines().count(),
            got.len()
        ),
    }
}
