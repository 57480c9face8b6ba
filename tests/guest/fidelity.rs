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

/// What the quick start does (bus-width-ab.toml on the simulated eMMC under Linux 7.x,
/// 8-bit host, `--icount 1`, the report made by the guest's armv7 mmcab), then its
/// report: the same text from this machine's mmcab, a line per config with the bus
/// width, timing and clock verified before the runs, the 4-bit bus slower at sequential
/// writes (the card's bus time doubles), and throughput bins that integrate to each
/// run's MB/s. The runs are too short for a throughput-over-time chart (0.3 s): the
/// report says so. The chart itself is checked on a recorded run of the quick start on
/// QEMU's card (tests/plain/fidelity.rs).
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn the_quick_start_report_shows_bus_settings_and_the_bus_width_change() {
    let run = testbed::Guest::new("quickstart_report")
        .kernel("7")
        .card("sim")
        .bus_width(8)
        .icount(1)
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
        // The bus each config ran at, then what the switch to it traced (a bus-width
        // switch at high speed tunes nothing).
        text.contains("  bus8: bus-width=8; 8-bit, mmc high-speed, 52 MHz; no tuning traced at")
            && text.contains(
                "  bus4: bus-width=4; 4-bit, mmc high-speed, 52 MHz; no tuning traced at"
            ),
        "{text}"
    );
    assert!(
        text.contains("seq-write: dd-write: rw=write bs=1M size=4M ioengine=psync iodepth=1"),
        "{text}"
    );
    let verdict = text
        .lines()
        .skip_while(|l| !l.starts_with("seq-write: MB/s"))
        .find(|l| l.trim_start().starts_with("bus4 vs A:"))
        .unwrap_or_default();
    assert!(verdict.ends_with(": slower"), "{verdict}\n{text}");
    assert_eq!(
        // 4 MiB at the simulated card's 8-bit and 4-bit rates: 0.27-0.35 s, 3-4 bins.
        bins_match_runs(&dir, "seq-write", 3),
        6,
        "2 configs x 3 repetitions"
    );
    assert!(
        text.contains("- seq-write: no throughput-over-time chart: its write runs last"),
        "{text}"
    );
    assert!(!dir.join("report/throughput-seq-write.png").exists());
    charts::check_png(&dir.join("report/bars-mb_per_s.png"));
}
