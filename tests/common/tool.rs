//! Programs a test needs from the machine (groff, man, fio): where one is missing the test
//! says so loudly and skips that part, except where every tool is meant to be installed
//! (CI, and scripts/test-all, which installs them with testbed/setup first): there a
//! missing tool fails the test, so nothing passes there without having been checked.
//!
//! ```ignore
//! use crate::common::tool;
//! if tool::need("fio", "apt-get install fio") { ... }
//! ```

// Also the lib's unit tests take this file (src/lib.rs, test_tool).
#![allow(dead_code)]

use std::io::Write;
use std::path::Path;

/// A missing tool fails the test: `CI` is set (and not `false` or `0`; .ci/run sets
/// `CI=true`), or `MMCAB_TEST_REQUIRE_TOOLS=1` (scripts/test-all sets it).
pub fn required() -> bool {
    let set =
        |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    set("CI") || set("MMCAB_TEST_REQUIRE_TOOLS")
}

/// `program` is an executable file in a directory of `PATH`.
pub fn installed(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| {
        Path::new(&dir)
            .join(program)
            .metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// True when `program` is installed. When it is not: under CI (see [`required`]) the
/// test fails; elsewhere `SKIPPED: <test> needs <program> (<install>)` goes to stderr,
/// past the test harness's capture so that it shows in a passing run, and false comes
/// back for the test to leave out what needs the program.
pub fn need(program: &str, install: &str) -> bool {
    if installed(program) {
        return true;
    }
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let line = format!("SKIPPED: {test} needs {program} ({install})");
    if required() {
        panic!("{line}: a missing tool fails here (CI or MMCAB_TEST_REQUIRE_TOOLS)");
    }
    // Not eprintln!: the harness captures that and shows it only when a test fails.
    let _ = writeln!(std::io::stderr(), "{line}");
    false
}
