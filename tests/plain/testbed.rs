//! The testbed itself, end to end: boots the emulated eMMC under both kernels with both
//! bus widths and checks that `mmcab info --json` agrees with the kernel's own files;
//! the runtime bus-width switch of testbed/README.md (7.x accepts it, 6.12 refuses it); and
//! testbed/run's contract (guest status passed through with its output, timeout, bad
//! options). One boot per test, several checks per boot: each boot costs 20-40 s.
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/guest/testbed.rs.

use crate::common::testbed;

use std::process::Command;

/// testbed/run with `args`: (exit status, stderr).
fn run_script(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(testbed::repo_root().join("testbed/run"))
        .args(args)
        .env("MMCAB_TESTBED_MMCAB", "/nonexistent-not-needed")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Option checks come before anything else: they need neither the testbed nor root.
#[test]
fn bad_options_fail_before_booting() {
    let (code, err) = run_script(&["--bus-width", "5", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("--bus-width must be 4 or 8"), "{err}");
    let (code, err) = run_script(&["--timeout", "soon", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("--timeout must be whole seconds"), "{err}");
    let (code, err) = run_script(&["--throttle-bps", "0", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(
        err.contains("--throttle-bps must be a positive number"),
        "{err}"
    );
    let (code, err) = run_script(&["--bus-width", "8"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(err.contains("no command line"), "{err}");
}
