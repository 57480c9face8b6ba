//! End-to-end tests of `mmcab info` on this machine: a real loop device over a file in
//! /dev/shm (needs root, like every block test of the project: ignored in plain `cargo
//! test`), missing paths, plain files. The emulated eMMC itself is covered by the testbed's in-guest tests.
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/host/info.rs.

use crate::common::cli::mmcab;
use crate::common::cli::one_line_failure;

#[test]
fn nonexistent_path_and_unknown_name_fail_with_one_line() {
    let err = one_line_failure(&mmcab(&["info", "/nonexistent"]));
    assert!(err.contains("/nonexistent: no such device"), "{err}");
    let err = one_line_failure(&mmcab(&["info", "mmcblk97"]));
    assert!(err.contains("mmcblk97: no such block device"), "{err}");
}

#[test]
fn regular_file_and_character_device_are_refused() {
    let file = format!("/dev/shm/mmcab-info-test-plain-{}", std::process::id());
    std::fs::write(&file, b"not a disk").unwrap();
    let out = mmcab(&["info", &file]);
    let _ = std::fs::remove_file(&file);
    let err = one_line_failure(&out);
    assert!(err.contains("it is a regular file"), "{err}");
    let err = one_line_failure(&mmcab(&["info", "/dev/null"]));
    assert!(err.contains("it is a character device"), "{err}");
}
