//! End-to-end tests of `mmcab run` (the A/B runner) on real loop devices over files in
//! /dev/shm, with custom knobs whose restore is observable: a real sysfs attribute of the
//! loop device (`queue/read_ahead_kb`) and a command knob that keeps its state in a file.
//! The loop-device tests need root (losetup) and are ignored in plain `cargo test`; the
//! loop devices are detached by a Drop guard.
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/host/runner.rs.

use crate::common::runner::plan;
use crate::common::watch::{Gate, Watched};
use std::process::Command;

const MMCAB: &str = env!("CARGO_BIN_EXE_mmcab");

#[test]
fn dry_run_prints_the_interleaved_matrix_without_a_device() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let plan = plan(dir.path(), &marker, 2, "100ms");
    let out = Command::new(MMCAB)
        .arg("run")
        .arg(&plan)
        .arg("--dry-run")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("2 config(s) x 1 workload(s) x 2 repetition(s) = 4 runs"),
        "{text}"
    );
    let order: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(order, ["A", "B", "A", "B"]);
    assert!(!marker.exists(), "--dry-run ran a knob command");
}

/// A real I/O error that comes with a signal is reported as the error it is (exit 4),
/// not taken for the cancel: the knob's apply sends SIGTERM to mmcab and turns the file
/// target into a directory, so the run's open fails while the stop flag is set. The
/// apply returns only once mmcab has said it got the signal (it sets the flag first): it
/// waits on a FIFO the test writes to when it reads that line.
#[test]
fn an_io_error_that_coincides_with_a_signal_is_not_swallowed() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let marker = dir.path().join("marker");
    let target = dir.path().join("target");
    std::fs::write(&marker, "orig\n").unwrap();
    let mut gate = Gate::new(dir.path());
    let (m, t, g) = (marker.display(), target.display(), gate.path.display());
    let text = format!(
        r#"
name = "signal-and-error"
[[knob]]
name = "trap"
kind = "command"
read = "cat {m}"
apply = "echo {{value}} > {m}; rm -f {t}; mkdir {t}; kill -TERM $PPID; read go < {g}"
restore = "echo {{value}} > {m}"
[[config]]
name = "A"
trap = "a"
[[workload]]
name = "r"
[[workload.job]]
name = "r"
rw = "read"
size = "64KiB"
direct = false
"#
    );
    let plan = dir.path().join("plan.toml");
    std::fs::write(&plan, text).unwrap();
    let mut child = Watched::spawn(
        Command::new(MMCAB)
            .arg("run")
            .arg(&plan)
            .arg("--device")
            .arg(&target)
            .arg("--out")
            .arg(dir.path().join("res"))
            .arg("--no-evidence"),
    );
    child.wait_for("the signal", |l| l.starts_with("mmcab: got SIGTERM: "));
    gate.open();
    let (status, stderr) = child.finish();
    assert_eq!(status.code(), Some(4), "{stderr}");
    assert!(
        stderr
            .lines()
            .last()
            .unwrap_or_default()
            .ends_with(&format!(
                "open of {t} failed: EISDIR (Is a directory) [job 'r']"
            )),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&marker).unwrap().trim(), "orig");
}
