//! Running the mmcab binary from end-to-end tests: the repository root, one command's
//! output, its stdout when it succeeded, and its one line when it failed.
//!
//! ```ignore
//! use crate::common::cli;
//! use cli::{mmcab, ok, root};
//! ```

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The calibration store the tests' mmcab reads: none, so no calibration of the user's
/// own boards takes part.
pub const NO_CALIBRATION: &str = "/nonexistent/mmcab-calibration";

/// `mmcab ARGS...` with calibration store `store`, waited for: the one runner of the
/// binary, which the helpers below shape for their callers.
pub fn mmcab_in<S: AsRef<OsStr>>(args: &[S], store: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .args(args)
        .env("MMCAB_CALIBRATION_DIR", store)
        .output()
        .expect("run mmcab")
}

/// `mmcab ARGS...`, waited for; no calibration of the user's own boards takes part.
pub fn mmcab(args: &[&str]) -> Output {
    mmcab_in(args, Path::new(NO_CALIBRATION))
}

/// [`mmcab`] with paths for arguments.
pub fn mmcab_paths(args: &[&Path]) -> Output {
    mmcab_in(args, Path::new(NO_CALIBRATION))
}

/// [`mmcab_paths`] with calibration store `store`.
pub fn mmcab_store(args: &[&Path], store: &Path) -> Output {
    mmcab_in(args, store)
}

/// stdout of `mmcab ARGS...`, which must succeed.
pub fn mmcab_stdout(args: &[&str]) -> String {
    ok(mmcab(args))
}

/// Exit code (`None`: killed by a signal) and stderr of `mmcab ARGS...`.
pub fn mmcab_code_stderr(args: &[&str]) -> (Option<i32>, String) {
    let out = mmcab(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit code (a signal panics), stdout bytes and stderr of `mmcab ARGS...`.
pub fn mmcab_code_bytes(args: &[String]) -> (i32, Vec<u8>, String) {
    let out = mmcab_in(args, Path::new(NO_CALIBRATION));
    let code = out.status.code().expect("exit code, not a signal");
    (
        code,
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into(),
    )
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

/// Fails unless the run failed with exactly one line on stderr, no stdout, no panic;
/// that line (`mmcab info`'s refusals: tests/plain/info.rs, tests/host/info.rs).
pub fn one_line_failure(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success(),
        "expected failure, got success: {stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "not one line: {stderr}"
    );
    assert!(stderr.starts_with("mmcab: error: "), "{stderr}");
    stderr
}
