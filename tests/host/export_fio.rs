//! `mmcab export fio` round trip: fio runs the exported job file against the same loop
//! device as `mmcab run` runs the plan, in rounds of mmcab, fio, mmcab. fio must parse
//! the job options mmcab meant (bs, rw, engine, depth), and the workload with a fixed
//! amount of I/O must do exactly as many I/Os under fio as under mmcab, also for a
//! workload of two jobs at once (one reporting group in fio, summed per direction). For
//! the timed workloads "within noise" is measured, not assumed: over the rounds, the
//! distance (|ln| of the ratio) between mmcab's median and fio's median must not exceed
//! three times the distance between the medians of mmcab's first and second runs of the
//! rounds, nor ln 2 when the machine is quiet (see MIN_BAND), and never a factor beyond
//! 3 however noisy the machine: noise that large fails the test instead of letting any
//! difference through (a buffered instead of a direct job, the wrong depth or block
//! size, is a larger factor on this device).
//! The device is a loop device over an allocated file in /dev/shm (RAM): fast, and very
//! noisy on a busy shared machine (single runs here varied from 80 to 1900 MB/s).

use crate::common::cli;
use crate::common::loop_device;

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
runtime = "1s"
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
runtime = "1s"
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

[[workload]]
name = "read-and-write-fixed"
[[workload.job]]
name = "r"
rw = "read"
bs = "64k"
size = "32M"
[[workload.job]]
name = "w"
rw = "randwrite"
bs = "4k"
size = "32M"
offset = "32M"
io_size = "1M"
"#;

const ROUNDS: usize = 5;
/// Allowed distance, in multiples of mmcab's own run-to-run distance.
const NOISE_FACTOR: f64 = 3.0;
/// The smallest allowed ratio band (a quiet machine). At RAM speed the rate is bound by
/// the CPU time per I/O, and there the engines differ by themselves: mmcab's debug build
/// (what `cargo test` runs) measured 1.57x below fio 3.33 for 4 KiB random reads at
/// depth 8, with its own runs 1.02x apart. The mistakes the test is for are larger on
/// this device (fio measured: depth 1 instead of 8 is 3.6x slower, buffered instead of
/// direct 2.8x faster, 64 KiB instead of 4 KiB blocks 10x faster).
const MIN_BAND: f64 = 2.0;
/// The largest allowed ratio band, whatever mmcab's own noise.
const MAX_BAND: f64 = 3.0;

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
    let (plan_s, dev_s) = (plan.to_str().unwrap(), dev.dev.to_str().unwrap());
    cli::ok(cli::mmcab(&[
        "export",
        "fio",
        plan_s,
        "--device",
        dev_s,
        "-o",
        job.to_str().unwrap(),
    ]));

    // Per timed workload, MB/s of every round: mmcab, fio, mmcab again.
    let (mut first, mut fio, mut second) = (
        vec![Vec::new(); 2],
        vec![Vec::new(); 2],
        vec![Vec::new(); 2],
    );
    let mmcab_run = || {
        let out = cli::ok(cli::mmcab(&[
            "run",
            plan_s,
            "--device",
            dev_s,
            "--allow-write",
            "--json",
            "--quiet",
        ]));
        serde_json::from_str::<serde_json::Value>(&out)
            .unwrap_or_else(|e| panic!("mmcab run --json: not JSON: {e}\n{out}"))
    };
    let mb = |m: &serde_json::Value, i: usize| {
        m["workloads"][i]["group"][0]["mb_per_s"].as_f64().unwrap()
    };
    let want = [
        ("1048576", "read", "psync", "1", "read"),
        ("4096", "randread", "io_uring", "8", "read"),
        ("4096", "randwrite", "psync", "1", "write"),
        // fio's summed group carries its first job's name and its last job's options.
        ("4096", "randwrite", "psync", "1", "read"),
    ];
    for _ in 0..ROUNDS {
        let m = mmcab_run();
        let f = run_json(Command::new("fio").arg("--output-format=json").arg(&job));
        let again = mmcab_run();
        let fio_jobs = f["jobs"].as_array().expect("fio jobs");
        assert_eq!(fio_jobs.len(), 4, "one reporting group per workload: {f}");
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
                first[i].push(mb(&m, i));
                fio[i].push(fio_mb);
                second[i].push(mb(&again, i));
            } else if i == 2 {
                // 1 MiB of 4 KiB writes: 256 I/Os for both.
                assert_eq!(group["ops"], 256, "{w}");
                assert_eq!(j[dir]["total_ios"], 256, "{j}");
            } else {
                // Two jobs at once, summed per direction: 32 MiB of 64 KiB reads (512)
                // and 1 MiB of 4 KiB writes (256), under mmcab and in fio's group.
                let ops = |d: &str| {
                    w["group"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|g| g["direction"] == d)
                        .unwrap_or_else(|| panic!("no {d} row: {w}"))["ops"]
                        .clone()
                };
                assert_eq!((ops("read"), ops("write")), (512.into(), 256.into()), "{w}");
                assert_eq!(j["jobname"], "read-and-write-fixed.r", "one group: {f}");
                assert_eq!(j["read"]["total_ios"], 512, "{j}");
                assert_eq!(j["write"]["total_ios"], 256, "{j}");
            }
        }
    }
    for (i, name) in ["seq-read-1m", "randread-4k-qd8"].iter().enumerate() {
        let all_mmcab: Vec<f64> = first[i].iter().chain(&second[i]).copied().collect();
        let distance = (median(all_mmcab) / median(fio[i].clone())).ln().abs();
        let noise = (median(first[i].clone()) / median(second[i].clone()))
            .ln()
            .abs();
        let allowed = (NOISE_FACTOR * noise).max(MIN_BAND.ln()).min(MAX_BAND.ln());
        assert!(
            distance <= allowed,
            "{name}: mmcab's and fio's medians differ by a factor {:.2}, more than the noise \
             allows ({:.2}: mmcab's first and second runs differ by {:.2}, the band is \
             {MIN_BAND} to {MAX_BAND}); MB/s per round: mmcab {:?}, fio {:?}, mmcab again {:?}",
            distance.exp(),
            allowed.exp(),
            noise.exp(),
            first[i],
            fio[i],
            second[i]
        );
    }
}
