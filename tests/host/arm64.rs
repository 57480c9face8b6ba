//! The static aarch64 build on a real arm64 Linux MMC stack: testbed/run --arch arm64
//! (QEMU virt, an SD card on sdhci-pci, Debian's arm64 6.12 kernel). One boot runs
//! `mmcab info` (text and JSON), a one-pass `mmcab run`, a knob A/B that an SD card
//! allows (the block queue's max_sectors_kb, a custom attribute knob), and `mmcab report`
//! on the result, all with the aarch64 binary. What is and is not covered on arm64:
//! testbed/README.md, "The arm64 guest".
//!
//! This file holds the tests that need root or testbed/setup's tools on the host, no
//! guest (tier 2); the others are in tests/guest/arm64.rs.

use crate::common::testbed;

use std::process::Command;

#[test]
#[ignore = "needs testbed/setup: Debian's rustc 1.85 with the aarch64 std and the cross linker"]
fn aarch64_binary_is_static() {
    let binary = testbed::mmcab_aarch64();
    let out = Command::new("file")
        .arg("-b")
        .arg(&binary)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("ARM aarch64") && text.contains("statically linked"),
        "{}: {text}",
        binary.display()
    );
}
