//! `mmcab probe align` and `mmcab probe open-au` end to end: the published BeagleBone
//! output reported as the post concludes (plain), the refusals (no --allow-write: plain;
//! a mounted device: root), a loop device (root: no boundary, no collapse) and the
//! emulated eMMC (root and the QEMU testbed: no boundary claimed, the card's erase sizes
//! stated).
//!
//! `UPDATE_GOLDEN=1 cargo test --test plain probe::` rewrites the committed report of the
//! published output (results/reference/beaglebone-2013-flashbench/).
//!
//! This file holds the tests that boot QEMU guests (tier 3); the others are in
//! tests/host/probe.rs, tests/plain/probe.rs.

use crate::common::cli;
use crate::common::testbed;

use cli::assert_mail_text;

/// The emulated eMMC has no flash timing: probe align claims no boundary, and says so
/// against the erase sizes the card and the kernel report (HC erase group 512 KiB,
/// preferred_erase_size 1 MiB for 256 MiB).
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn on_the_emulated_emmc_align_claims_no_boundary() {
    let run = testbed::Guest::new("probe_align_emmc")
        .kernel("7")
        .bus_width(8)
        .run("mmcab probe align /dev/mmcblk0 --count 2 --out /out/align > /out/report.txt");
    run.assert_success();
    let text = run.out_text("report.txt");
    assert_mail_text(&text);
    assert!(text.contains("Erase block: none"), "{text}");
    assert!(
        text.contains("EXT_CSD HC_ERASE_GRP_SIZE: 512KiB")
            && text.contains("sysfs preferred_erase_size: 1MiB"),
        "{text}"
    );
    assert!(
        text.contains("The timing shows no boundary, so it neither confirms nor contradicts"),
        "{text}"
    );
}
