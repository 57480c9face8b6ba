//! The seed plans reproduce their posts on a real block device (a loop device over a
//! file in /dev/shm; root): `workloads/qd-sweep.toml` gives IOPS and MB/s against queue
//! depth and against block size (seed 003), and `workloads/packed-2012.toml`'s iozone
//! and mixed workloads behave as iozone and the post did (seed 004), on files in
//! /dev/shm. The quick start's report stands alone: bus settings per config and a
//! throughput-over-time chart that reflects the data (a recorded run of it, and the
//! emulated eMMC: root and the QEMU testbed).
//!
//! This file holds the tests that need root or testbed/setup's tools on the host, no
//! guest (tier 2); the others are in tests/guest/fidelity.rs, tests/plain/fidelity.rs.

use crate::common::charts;
use crate::common::cli;
use crate::common::fidelity::{job_dir, MIXED};
use crate::common::loop_device;

use cli::{mmcab, ok, root};
use loop_device::LoopDevice;
use std::path::Path;

fn report_json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report/report.json")).unwrap()).unwrap()
}

/// qd-sweep.toml on a 16 MiB loop device: two sweep charts, one against iodepth (the
/// post's QD1 and QD32 and the depths between), one against block size (4k..1M at QD1),
/// x values taken from the plan.
#[test]
#[ignore = "needs root: loop devices"]
fn qd_sweep_on_a_loop_device_charts_iops_against_depth_and_block_size() {
    let dev = LoopDevice::new(16 << 20);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("qd");
    let plan = root().join("workloads/qd-sweep.toml");
    ok(mmcab(&[
        "run",
        plan.to_str().unwrap(),
        "--device",
        dev.dev.to_str().unwrap(),
        "--repeat",
        "2",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]));
    let text = ok(mmcab(&["report", out.to_str().unwrap()]));
    assert!(
        text.contains("rand-4k-qd32: randread: rw=randread bs=4k ioengine=io_uring iodepth=32")
            && text.contains("      direct=1 runtime=10s norandommap=1"),
        "{text}"
    );
    let json = report_json(&out);
    let mut depth: Vec<f64> = Vec::new();
    let mut size: Vec<f64> = Vec::new();
    for b in json["blocks"].as_array().unwrap() {
        if b["metric"]["key"] != "iops" {
            continue;
        }
        for p in b["sweeps"].as_array().unwrap() {
            let x = p["x"].as_f64().unwrap();
            match p["over"].as_str().unwrap() {
                "iodepth" => depth.push(x),
                "bs" => size.push(x),
                other => panic!("sweep over {other}"),
            }
        }
    }
    assert_eq!(depth, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
    assert_eq!(
        size,
        [4096.0, 16384.0, 65536.0, 262144.0, 1048576.0],
        "4k QD1 is on both axes"
    );
    for chart in [
        "sweep-randread-4k-by-depth-read",
        "sweep-randread-qd1-by-size-read",
    ] {
        let png = out.join("report").join(format!("{chart}.png"));
        charts::check_png(&png);
        let svg = std::fs::read_to_string(png.with_extension("svg")).unwrap();
        assert!(svg.contains("IOPS") && svg.contains("MB/s"), "{chart}");
    }
    let svg =
        std::fs::read_to_string(out.join("report/sweep-randread-4k-by-depth-read.svg")).unwrap();
    assert!(svg.contains("queue depth"), "x axis names the depth");
}

/// (start, end) of `job`'s `direction` clock, seconds after the measured phase began.
fn window_of(v: &serde_json::Value, job: &str, direction: &str) -> (f64, f64) {
    let jobs = v["workloads"][0]["jobs"].as_array().unwrap();
    let d = jobs
        .iter()
        .find(|j| j["job"] == job)
        .and_then(|j| {
            j["directions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["direction"] == direction)
        })
        .unwrap_or_else(|| panic!("no {job} {direction}: {v}"));
    let start = d["start_s"].as_f64().unwrap();
    (start, start + d["seconds"].as_f64().unwrap())
}

/// A buffered writer's data reaches the device mostly during its end_fsync (64 MiB
/// through a loop device: about 0.1 s): a reader sharing its window keeps reading until
/// that fsync returns, so the reads are measured while the device writes.
#[test]
#[ignore = "needs root: loop devices"]
fn a_shared_window_covers_the_last_writers_end_fsync() {
    let dev = LoopDevice::new(80 << 20);
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = dir.path().join("plan.toml");
    std::fs::write(
        &plan,
        MIXED.replace("WINDOW", "shared_window = true").replace(
            "direct = false\n[[workload.job]]",
            "direct = true\n[[workload.job]]",
        ),
    )
    .unwrap();
    let text = ok(mmcab(&[
        "run",
        plan.to_str().unwrap(),
        "--device",
        dev.dev.to_str().unwrap(),
        "--allow-write",
        "--json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let (_, read_end) = window_of(&v, "read", "read");
    let (_, write_end) = window_of(&v, "write", "write");
    assert!(
        job_dir(&v, "write", "write").0 >= 1024,
        "the writer did its 64 MiB"
    );
    // The reader's last read completes just before the writer counts its fsync done,
    // which is after the writer's clock stops; 5 ms covers the threads' scheduling.
    assert!(
        read_end >= write_end - 0.005,
        "the reader stopped at {read_end:.3} s, before the writer's end_fsync returned at \
         {write_end:.3} s"
    );
}
