//! The seed plans reproduce their posts on a real block device (a loop device over a
//! file in /dev/shm; root): `workloads/qd-sweep.toml` gives IOPS and MB/s against queue
//! depth and against block size (seed 003), and `workloads/packed-2012.toml`'s iozone
//! and mixed workloads behave as iozone and the post did (seed 004).

#[path = "common/charts.rs"]
mod charts;
#[path = "common/loop_device.rs"]
mod loop_device;

use loop_device::LoopDevice;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn mmcab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .args(args)
        .output()
        .expect("run mmcab")
}

fn ok(out: Output) -> String {
    assert!(
        out.status.success(),
        "mmcab failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

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
        text.contains("rand-4k-qd32: randread: rw=randread bs=4k direct=1 ioengine=io_uring")
            && text.contains("iodepth=32 runtime=10s"),
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
