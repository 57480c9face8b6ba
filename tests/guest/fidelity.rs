//! The seed plans reproduce their posts on a real block device (a loop device over a
//! file in /dev/shm; root): `workloads/qd-sweep.toml` gives IOPS and MB/s against queue
//! depth and against block size (seed 003), and `workloads/packed-2012.toml`'s iozone
//! and mixed workloads behave as iozone and the post did (seed 004), on files in
//! /dev/shm. The quick start's report stands alone: bus settings per config and a
//! throughput-over-time chart that reflects the data (a recorded run of it, and the
//! emulated eMMC: root and the QEMU testbed).
//!
//! This file holds the tests that boot QEMU guests (tier 3); the others are in
//! tests/host/fidelity.rs, tests/plain/fidelity.rs.

use crate::common::charts;
use crate::common::cli;
use crate::common::fidelity::bins_match_runs;
use crate::common::testbed;

use cli::{mmcab, ok};

/// What the quick start does (bus-width-ab.toml on a fresh 64 MiB emulated eMMC under
/// Linux 7.x, booted 8-bit, the report made by the guest's armv7 mmcab), then its
/// report: the same text from this machine's mmcab, a line per config with the bus
/// width, timing and clock verified before the runs, and a throughput-over-time chart
/// whose bins integrate to each run's MB/s.
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn the_quick_start_report_shows_bus_settings_and_throughput_over_time() {
    let run = testbed::Guest::new("quickstart_report")
        .kernel("7")
        .bus_width(8)
        .image_size("64M")
        .timeout(std::time::Duration::from_secs(500))
        .run(
            "mmcab info /dev/mmcblk0 > /dev/null && mmcab run /workloads/bus-width-ab.toml \
             --device /dev/mmcblk0 --allow-write --out /out/ab && mmcab report /out/ab",
        );
    run.assert_success();
    let dir = run.out_dir.join("ab");
    let text = ok(mmcab(&["report", dir.to_str().unwrap()]));
    // The guest's stdout is the run's table, then the report's mail text.
    assert!(
        run.stdout.ends_with(&text),
        "the guest's report and this machine's differ:\n{}\n---\n{text}",
        run.stdout
    );
    assert!(
        text.contains("  bus8: bus-width=8; 8-bit, mmc high-speed, 52 MHz\n")
            && text.contains("  bus4: bus-width=4; 4-bit, mmc high-speed, 52 MHz\n"),
        "{text}"
    );
    assert!(
        text.contains("seq-write: dd-write: rw=write bs=1M size=4M ioengine=psync iodepth=1"),
        "{text}"
    );
    assert_eq!(
        bins_match_runs(&dir, "seq-write"),
        6,
        "2 configs x 3 repetitions"
    );
    charts::check_png(&dir.join("report/throughput-seq-write.png"));
}
