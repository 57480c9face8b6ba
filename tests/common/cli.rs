//! Running the mmcab binary from end-to-end tests: the repository root, one command's
//! output, and its stdout when it succeeded.
//!
//! ```ignore
//! #[path = "common/cli.rs"]
//! mod cli;
//! use cli::{mmcab, ok, root};
//! ```

#![allow(dead_code)] // each test crate uses a different part of this module

use std::path::PathBuf;
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `mmcab ARGS...`, waited for; no calibration of the user's own boards takes part.
pub fn mmcab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .args(args)
        .env("MMCAB_CALIBRATION_DIR", "/nonexistent/mmcab-calibration")
        .output()
        .expect("run mmcab")
}

/// stdout of a command that must have succeeded (else panics with its stderr).
pub fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "mmcab failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Columns of a line of mail text (the report's `report.txt`).
pub const MAX_COLUMNS: usize = 72;

/// Mail text: every line at most [`MAX_COLUMNS`], ASCII, no trailing blanks.
pub fn assert_mail_text(text: &str) {
    for (i, line) in text.lines().enumerate() {
        assert!(
            line.len() <= MAX_COLUMNS,
            "line {} is {} columns (> {MAX_COLUMNS}): {line:?}",
            i + 1,
            line.len()
        );
        assert!(line.is_ascii(), "line {} is not ASCII: {line:?}", i + 1);
        assert_eq!(line, line.trim_end(), "trailing blanks on line {}", i + 1);
    }
}
