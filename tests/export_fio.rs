//! `mmcab export fio` round trip: fio runs the exported job file against the same loop
//! device as `mmcab run` runs the plan, in rounds of mmcab, fio, mmcab. fio must parse
//! the job options mmcab meant (bs, rw, engine, depth), and the workload with a fixed
//! amount of I/O must do exactly as many I/Os under fio as under mmcab. For the timed
//! workloads "within noise" is measured, not assumed: the median distance (|ln| of the
//! ratio) between mmcab and the fio run after it must not exceed three times the median
//! distance between the two mmcab runs of a round, nor ln 1.5 when the machine is quiet.
//! The device is a loop device over an allocated file in /dev/shm (RAM): fast, and very
//! noisy on a busy shared machine (single runs here varied from 80 to 1900 MB/s).

#[path = "common/loop_device.rs"]
mod loop_device;

use std::process::Command;

const PLAN: &str = r#"
name = "fio-round-trip"
[[workload]]
name = "seq-read-1m"
[[workload.job]]
name = "r"
rw = "read"
bs = "1M"
size = "128M"
runtime = "2s"
time_based = true

[[workload]]
name = "randread-4k-qd8"
[[workload.job]]
name = "r"
rw = "randread"
bs = "4k"
size = "128M"
engine = "io_uring"
iodepth = 8
runtime = "2s"
time_based = true

[[workload]]
name = "randwrite-4k-fixed"
[[workload.job]]
name = "w"
rw = "randwrite"
bs = "4k"
size = "16M"
io_size = "1M"
end_fsync = true
"#;

const ROUNDS: usize = 7;
/// Allowed distance, in multiples of mmcab's own run-to-run distance.
const NOISE_FACTOR: f64 = 3.0;
/// The smallest allowed ratio band (a quiet machine).
const MIN_BAND: f64 = 1.5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn run_json(cmd: &mut Command) -> serde_json::Value {
    let out = cmd.output().expect("run");
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{cmd:?}: not JSON: {e}\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

#[test]
#[ignore = "needs root: loop devices (and fio, which testbed/setup installs)"]
fn fio_on_the_export_agrees_with_mmcab_run_on_a_loop_device() {
    let dev = loop_device::LoopDevice::filled(256 << 20, 0x5a);
    let tmp = tempfile::tempdir().unwrap();
    let plan = tmp.path().join("plan.toml");
    std::fs::write(&plan, PLAN).unwrap();
    let job = tmp.path().join("plan.fio");
    let mmcab = env!("CARGO_BIN_EXE_mmcab");
    let out = Command::new(mmcab)
        .args(["export", "fio"])
        .arg(&plan)
        .arg("--device")
        .arg(&dev.dev)
        .arg("-o")
        .arg(&job)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Per timed workload and round: |ln(mmcab / fio)| and |ln(mmcab / mmcab again)|.
    let mut to_fio = vec![Vec::new(); 2];
    let mut to_self = vec![Vec::new(); 2];
    let mmcab_run = || {
        run_json(
            Command::new(mmcab)
                .arg("run")
                .arg(&plan)
                .arg("--device")
                .arg(&dev.dev)
                .args(["--allow-write", "--json", "--quiet"]),
        )
    };
    let mb = |m: &serde_json::Value, i: usize| {
        m["workloads"][i]["group"][0]["mb_per_s"].as_f64().unwrap()
    };
    let want = [
        ("1048576", "read", "psync", "1", "read"),
        ("4096", "randread", "io_uring", "8", "read"),
        ("4096", "randwrite", "psync", "1", "write"),
    ];
    for _ in 0..ROUNDS {
        let m = mmcab_run();
        let f = run_json(Command::new("fio").arg("--output-format=json").arg(&job));
        let again = mmcab_run();
        let fio_jobs = f["jobs"].as_array().expect("fio jobs");
        assert_eq!(fio_jobs.len(), 3, "one reporting group per workload: {f}");
        let workloads = m["workloads"].as_array().unwrap();
        for (i, (w, j)) in workloads.iter().zip(fio_jobs).enumerate() {
            let (bs, rw, engine, depth, dir) = want[i];
            let opts = &j["job options"];
            let got = ["bs", "rw", "ioengine", "iodepth"].map(|k| opts[k].as_str().unwrap_or(""));
            assert_eq!(got, [bs, rw, engine, depth], "{j}");
            let group = &w["group"][0];
            assert_eq!(group["direction"], dir);
            let fio_mb = j[dir]["bw_bytes"].as_f64().unwrap() / 1e6;
            if i < 2 {
                to_fio[i].push((mb(&m, i) / fio_mb).ln().abs());
                to_self[i].push((mb(&m, i) / mb(&again, i)).ln().abs());
            } else {
                // 1 MiB of 4 KiB writes: 256 I/Os for both.
                assert_eq!(group["ops"], 256, "{w}");
                assert_eq!(j[dir]["total_ios"], 256, "{j}");
            }
        }
    }
    for (i, name) in ["seq-read-1m", "randread-4k-qd8"].iter().enumerate() {
        let (distance, noise) = (median(to_fio[i].clone()), median(to_self[i].clone()));
        let allowed = (NOISE_FACTOR * noise).max(MIN_BAND.ln());
        assert!(
            distance <= allowed,
            "{name}: mmcab and fio differ by a factor {:.2} (median), more than the noise \
             allows ({:.2}: mmcab's own run-to-run factor {:.2}); |ln| per round: fio {:?}, self {:?}",
            distance.exp(),
            allowed.exp(),
            noise.exp(),
            to_fio[i],
            to_self[i]
        );
    }
}
