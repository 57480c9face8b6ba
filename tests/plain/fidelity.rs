//! The seed plans reproduce their posts on a real block device (a loop device over a
//! file in /dev/shm; root): `workloads/qd-sweep.toml` gives IOPS and MB/s against queue
//! depth and against block size (seed 003), and `workloads/packed-2012.toml`'s iozone
//! and mixed workloads behave as iozone and the post did (seed 004), on files in
//! /dev/shm. The quick start's report stands alone: bus settings per config and a
//! throughput-over-time chart that reflects the data (a recorded run of it, and the
//! emulated eMMC: root and the QEMU testbed).
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/host/fidelity.rs, tests/guest/fidelity.rs.

use crate::common::charts;
use crate::common::cli;
use crate::common::fidelity::{bins_match_runs, job_dir, MIXED};

use cli::{mmcab, ok, root};

/// `mmcab run PLAN --device FILE --json` on a scratch file in /dev/shm (RAM): the JSON.
fn run_on_shm_file(plan: &str) -> serde_json::Value {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan_path = dir.path().join("plan.toml");
    std::fs::write(&plan_path, plan).unwrap();
    let target = dir.path().join("target");
    let text = ok(mmcab(&[
        "run",
        plan_path.to_str().unwrap(),
        "--device",
        target.to_str().unwrap(),
        "--json",
    ]));
    serde_json::from_str(&text).unwrap()
}

/// Without a shared window the short reader stops at its 16 reads; with one it keeps
/// going until the writer is done, over the same stretch of time.
#[test]
fn a_shared_window_keeps_every_job_going_until_the_longest_is_done() {
    let own = run_on_shm_file(&MIXED.replace("WINDOW", ""));
    assert_eq!(job_dir(&own, "read", "read").0, 16);
    let shared = run_on_shm_file(&MIXED.replace("WINDOW", "shared_window = true"));
    let (reads, read_s) = job_dir(&shared, "read", "read");
    let (writes, write_s) = job_dir(&shared, "write", "write");
    assert!(writes >= 1024, "the writer did its 64 MiB: {writes}");
    assert!(reads > 16, "the reader kept going: {reads} reads");
    assert!(
        read_s >= write_s * 0.5,
        "the reader ran for most of the writer's window: {read_s} s vs {write_s} s"
    );
}

/// rw = "iozone" is iozone -i 0 -i 2: write and rewrite passes of every record (their
/// own rows, outside the group), then the random read and write passes (the job's rows
/// and the group's), each record once per pass.
#[test]
fn iozone_runs_the_write_and_rewrite_passes_first() {
    let v = run_on_shm_file(
        "name = \"iz\"\n[[workload]]\nname = \"iz\"\n[[workload.job]]\nname = \"iozone\"\n\
         rw = \"iozone\"\nbs = \"4k\"\nsize = \"1M\"\ndirect = false\nend_fsync = true\n",
    );
    for (job, direction) in [
        ("iozone:write", "write"),
        ("iozone:rewrite", "write"),
        ("iozone", "read"),
        ("iozone", "write"),
    ] {
        assert_eq!(job_dir(&v, job, direction).0, 256, "{job} {direction}");
    }
    let group = v["workloads"][0]["group"].as_array().unwrap();
    let ops: Vec<u64> = group.iter().map(|d| d["ops"].as_u64().unwrap()).collect();
    assert_eq!(ops, [256, 256], "the group is the random passes only");
}

/// The same on a recorded run of the quick start
/// (tests/fixtures/results-quickstart.README.md), without the testbed.
#[test]
fn a_recorded_quick_start_report_shows_bus_settings_and_throughput_over_time() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("quickstart");
    std::fs::create_dir(&dir).unwrap();
    let from = root().join("tests/fixtures/results-quickstart");
    for f in [
        "runs.csv",
        "series.csv",
        "latency.csv",
        "meta.json",
        "restore.sh",
    ] {
        std::fs::copy(from.join(f), dir.join(f)).unwrap();
    }
    let text = ok(mmcab(&["report", dir.to_str().unwrap()]));
    assert!(
        text.contains("  bus8: bus-width=8; 8-bit, mmc high-speed, 52 MHz\n")
            && text.contains("  bus4: bus-width=4; 4-bit, mmc high-speed, 52 MHz\n"),
        "{text}"
    );
    assert!(!text.contains("no throughput-over-time chart"), "{text}");
    assert_eq!(bins_match_runs(&dir, "seq-write", 5), 6);
    charts::check_png(&dir.join("report/throughput-seq-write.png"));
}
