//! End-to-end tests of `mmcab run` (the workload engine) on real loop devices over
//! files in /dev/shm, and on regular files. The loop-device tests need root and are
//! ignored in plain `cargo test` (`scripts/test-all` runs them). Every loop device and
//! mount is undone in Drop, also when a test fails. Nothing here touches the machine's
//! disks.
//!
//! This file holds the tests that need root or testbed/setup's tools on the host, no
//! guest (tier 2); the others are in tests/plain/engine.rs.

use crate::common::cli::mmcab;
use crate::common::engine::{dir_of, job, run_json, u, workload, write_plan};
use crate::common::loop_device;
use crate::common::watch::Watched;
use loop_device::LoopDevice;
use serde_json::Value;
use std::fs::{self, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;

const MIB: u64 = 1 << 20;

/// ext4 on a loop device, mounted in a temp dir under /dev/shm; unmounted on drop.
struct Mounted {
    dir: tempfile::TempDir,
    loopdev: LoopDevice,
}

impl Mounted {
    fn new(size: u64) -> Mounted {
        let loopdev = LoopDevice::new(size);
        let ok = Command::new("mkfs.ext4")
            .args(["-q", "-F"])
            .arg(&loopdev.dev)
            .status()
            .unwrap();
        assert!(ok.success(), "mkfs.ext4 failed");
        let dir = tempfile::Builder::new()
            .prefix("mmcab-mnt.")
            .tempdir_in("/dev/shm")
            .unwrap();
        let ok = Command::new("mount")
            .arg(&loopdev.dev)
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(ok.success(), "mount failed");
        Mounted { dir, loopdev }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
#[ignore = "needs root: loop devices"]
fn every_rw_mode_on_both_engines() {
    let dev = LoopDevice::new(32 * MIB);
    let mut plan = String::from("name = \"modes\"\n");
    for engine in ["sync", "io_uring"] {
        let depth = if engine == "sync" { 1 } else { 8 };
        for rw in ["read", "write", "randread", "randwrite", "randrw"] {
            plan += &format!(
                "[[workload]]\nname = \"{rw}-{engine}\"\n[[workload.job]]\nname = \"j\"\nrw = \"{rw}\"\n\
                 bs = \"16k\"\nsize = \"4M\"\nengine = \"{engine}\"\niodepth = {depth}\n"
            );
        }
    }
    let v = run_json(&plan, &dev.dev, &["--allow-write"]);
    for engine in ["sync", "io_uring"] {
        for rw in ["read", "write", "randread", "randwrite", "randrw"] {
            let w = workload(&v, &format!("{rw}-{engine}"));
            let j = job(w, "j");
            let dirs = j["directions"].as_array().unwrap();
            let total_ops: u64 = dirs.iter().map(|d| u(&d["ops"])).sum();
            let total_bytes: u64 = dirs.iter().map(|d| u(&d["bytes"])).sum();
            assert_eq!(total_ops, 256, "{rw}-{engine}: 4 MiB / 16 KiB");
            assert_eq!(total_bytes, 4 * MIB, "{rw}-{engine}");
            for d in dirs {
                if u(&d["ops"]) > 0 {
                    assert!(d["mb_per_s"].as_f64().unwrap() > 0.0);
                    let lat = &d["latency"];
                    assert!(lat["min_us"].as_f64().unwrap() <= lat["p50_us"].as_f64().unwrap());
                    assert!(lat["p50_us"].as_f64().unwrap() <= lat["max_us"].as_f64().unwrap());
                }
            }
            let names: Vec<&str> = dirs
                .iter()
                .map(|d| d["direction"].as_str().unwrap())
                .collect();
            let expected: &[&str] = match rw {
                "read" | "randread" => &["read"],
                "write" | "randwrite" => &["write"],
                _ => &["read", "write"],
            };
            assert_eq!(names, expected, "{rw}-{engine}");
        }
    }
    // Something was written by the write jobs: the zero-filled device changed.
    assert!(dev.contents()[..4 * MIB as usize].iter().any(|&b| b != 0));
}

#[test]
#[ignore = "needs root: loop devices"]
fn numjobs_and_mixed_jobs_group_per_direction() {
    let dev = LoopDevice::new(32 * MIB);
    let plan = r#"
name = "mixed"
[[workload]]
name = "mix"
[[workload.job]]
name = "readers"
rw = "randread"
size = "4M"
numjobs = 3
offset_increment = "4M"
[[workload.job]]
name = "writer"
rw = "write"
bs = "64k"
offset = "16M"
size = "4M"
engine = "io_uring"
iodepth = 4
"#;
    let v = run_json(plan, &dev.dev, &["--allow-write"]);
    let w = workload(&v, "mix");
    let jobs = w["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j["job"].as_str().unwrap()).collect();
    assert_eq!(names, ["readers.0", "readers.1", "readers.2", "writer"]);
    let group_read = w["group"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["direction"] == "read")
        .unwrap();
    let sum: u64 = ["readers.0", "readers.1", "readers.2"]
        .iter()
        .map(|n| u(&dir_of(job(w, n), "read")["bytes"]))
        .sum();
    assert_eq!(u(&group_read["bytes"]), sum);
    assert_eq!(sum, 12 * MIB);
    let group_write = w["group"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["direction"] == "write")
        .unwrap();
    assert_eq!(u(&group_write["bytes"]), 4 * MIB);
    assert!(w["cpu_seconds"].as_f64().unwrap() > 0.0);
}

#[test]
#[ignore = "needs root: loop devices"]
fn io_stays_inside_its_region() {
    const CANARY: u8 = 0xa5;
    let dev = LoopDevice::filled(16 * MIB, CANARY);
    let plan = r#"
name = "regions"
[[workload]]
name = "seq"
[[workload.job]]
name = "w"
rw = "write"
bs = "64k"
offset = "1M"
size = "1M"
numjobs = 2
offset_increment = "1M"
pattern = "zeros"
[[workload]]
name = "rand"
[[workload.job]]
name = "w"
rw = "randwrite"
offset = "8M"
size = "2M"
engine = "io_uring"
iodepth = 16
runtime = "300ms"
time_based = true
"#;
    run_json(plan, &dev.dev, &["--allow-write"]);
    let data = dev.contents();
    let inside = |o: usize| {
        (MIB as usize..3 * MIB as usize).contains(&o)
            || (8 * MIB as usize..10 * MIB as usize).contains(&o)
    };
    let stray = data
        .iter()
        .enumerate()
        .find(|(o, &b)| !inside(*o) && b != CANARY);
    assert!(
        stray.is_none(),
        "write outside the regions at byte {:?}",
        stray.map(|s| s.0)
    );
    // The sequential writers covered their regions completely, with zeros.
    assert!(data[MIB as usize..3 * MIB as usize].iter().all(|&b| b == 0));
}

/// What the block layer counted on a disk so far (/sys/block/<disk>/stat): I/Os and
/// flush requests.
#[derive(Debug, Clone, Copy)]
struct DiskStat {
    reads: u64,
    writes: u64,
    flushes: u64,
}

fn disk_stat(dev: &LoopDevice) -> DiskStat {
    let text = fs::read_to_string(format!("/sys/block/{}/stat", dev.name())).unwrap();
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(
        f.len() >= 17,
        "no flush counts in /sys/block/.../stat (Linux 5.5+): {text}"
    );
    DiskStat {
        reads: f[0],
        writes: f[4],
        flushes: f[15],
    }
}

/// Run `plan` on `dev` and return what the block layer counted meanwhile.
fn block_layer_during(plan: &str, dev: &LoopDevice) -> DiskStat {
    let before = disk_stat(dev);
    run_json(plan, &dev.dev, &["--allow-write"]);
    let after = disk_stat(dev);
    DiskStat {
        reads: after.reads - before.reads,
        writes: after.writes - before.writes,
        flushes: after.flushes - before.flushes,
    }
}

/// What `/sys/block/<dev>/inflight` showed while a plan ran, sampled as fast as sysfs
/// answers: the most I/Os seen in flight, and their mean over the samples with any.
/// (The diskstats ratio time_in_queue / io_ticks is not used: since 5.7 io_ticks counts
/// whole jiffies only when an I/O is in flight at a jiffy's first start or end, so on
/// sub-jiffy I/Os it undercounts, and the ratio at depth 1 came out 1.59 on a loaded
/// machine.)
struct InFlight {
    max: u64,
    mean_busy: f64,
    busy_samples: u64,
}

fn in_flight_during(plan: &str, dev: &LoopDevice) -> InFlight {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let path = format!("/sys/block/{}/inflight", dev.name());
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let (mut max, mut sum, mut busy) = (0u64, 0u64, 0u64);
            while !stop.load(Ordering::Relaxed) {
                let text = fs::read_to_string(&path).unwrap();
                let n: u64 = text
                    .split_whitespace()
                    .map(|x| x.parse::<u64>().unwrap())
                    .sum();
                max = max.max(n);
                if n > 0 {
                    sum += n;
                    busy += 1;
                }
            }
            InFlight {
                max,
                mean_busy: sum as f64 / busy.max(1) as f64,
                busy_samples: busy,
            }
        })
    };
    run_json(plan, &dev.dev, &["--allow-write"]);
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap()
}

/// `iodepth = 16` keeps I/Os in flight together in the block layer, not one at a time:
/// sampled from the disk's `inflight` while the job runs, never more than 1 at iodepth
/// 1, and at iodepth 16 at least half the depth on average while any is in flight.
#[test]
#[ignore = "needs root: loop devices"]
fn iodepth_has_that_many_ios_in_flight() {
    let dev = LoopDevice::new(64 * MIB);
    let mut seen = Vec::new();
    for depth in [1, 16] {
        let plan = format!(
            "name = \"t\"\n[[workload]]\nname = \"q\"\n[[workload.job]]\nname = \"q\"\n\
             rw = \"randread\"\nbs = \"4k\"\nengine = \"io_uring\"\niodepth = {depth}\n\
             runtime = \"1s\"\ntime_based = true\n"
        );
        let f = in_flight_during(&plan, &dev);
        assert!(
            f.busy_samples > 100,
            "iodepth {depth}: only {} samples saw an I/O in flight",
            f.busy_samples
        );
        seen.push(f);
    }
    assert!(
        seen[0].max <= 1,
        "iodepth 1: {} I/Os seen in flight at once",
        seen[0].max
    );
    assert!(
        seen[1].mean_busy >= 8.0,
        "iodepth 16: {:.2} I/Os in flight on average (max {})",
        seen[1].mean_busy,
        seen[1].max
    );
}

/// `iodepth_batch_complete_min = 8` makes every wait of the io_uring engine take at least
/// 8 completions: the block layer's reads per `io_uring_enter` (counted by strace) are at
/// least 8, less the last waits of the drain and one setup call. Without it the engine
/// waits for one, and the count is reported for comparison.
#[test]
#[ignore = "needs root: loop devices (and strace, which testbed/setup installs)"]
fn iodepth_batch_complete_min_waits_for_that_many() {
    let dev = LoopDevice::new(64 * MIB);
    let mut per_enter = Vec::new();
    for min in ["", "iodepth_batch_complete_min = 8\n"] {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let plan = write_plan(
            dir.path(),
            &format!(
                "name = \"t\"\n[[workload]]\nname = \"q\"\n[[workload.job]]\nname = \"q\"\n\
                 rw = \"randread\"\nbs = \"4k\"\nengine = \"io_uring\"\niodepth = 16\n{min}\
                 runtime = \"1s\"\ntime_based = true\n"
            ),
        );
        let counts = dir.path().join("strace");
        let before = disk_stat(&dev);
        let out = Command::new("strace")
            .args(["-f", "-c", "-e", "trace=io_uring_enter", "-o"])
            .arg(&counts)
            .arg(env!("CARGO_BIN_EXE_mmcab"))
            .args(["run", plan.to_str().unwrap(), "--device"])
            .arg(&dev.dev)
            .arg("--json")
            .output()
            .expect("strace (apt-get install strace)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let reads = disk_stat(&dev).reads - before.reads;
        let text = fs::read_to_string(&counts).unwrap();
        let enters: u64 = text
            .lines()
            .find(|l| l.trim_end().ends_with(" io_uring_enter"))
            .and_then(|l| l.split_whitespace().nth(3))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no io_uring_enter count in:\n{text}"));
        assert!(reads > 1000, "{min}: {reads} reads");
        per_enter.push(reads as f64 / enters as f64);
    }
    assert!(
        per_enter[1] >= 7.5,
        "reads per io_uring_enter: {:.1} waiting for 8, {:.1} waiting for 1",
        per_enter[1],
        per_enter[0]
    );
}

/// `fsync = N` fsyncs after every N writes: the device sees one flush per N writes
/// (and one more for end_fsync), with either engine. (A loop device passes each fsync
/// on as a flush request: it has a write cache when its backing file can fsync.)
#[test]
#[ignore = "needs root: loop devices"]
fn fsync_every_n_writes_flushes_that_often() {
    let dev = LoopDevice::new(8 * MIB);
    // 4 MiB of 16 KiB writes: 256 of them.
    for (engine, iodepth, fsync, end_fsync, flushes) in [
        ("sync", 1, 8, false, 32),
        ("sync", 1, 5, true, 51 + 1),
        ("io_uring", 8, 8, false, 32),
        ("io_uring", 4, 5, true, 51 + 1),
    ] {
        let plan = format!(
            "name = \"t\"\n[[workload]]\nname = \"f\"\n[[workload.job]]\nname = \"f\"\n\
             rw = \"randwrite\"\nbs = \"16k\"\nsize = \"4M\"\nengine = \"{engine}\"\n\
             iodepth = {iodepth}\nfsync = {fsync}\nend_fsync = {end_fsync}\n"
        );
        let d = block_layer_during(&plan, &dev);
        assert_eq!(
            d.flushes, flushes,
            "{engine} iodepth {iodepth} fsync = {fsync} end_fsync = {end_fsync}: {d:?}"
        );
        assert!(d.writes >= 256, "{engine}: {d:?}");
    }
}

#[test]
#[ignore = "needs root: loop devices and an ext4 mount"]
fn a_directory_gets_one_file_per_clone_removed_afterwards() {
    // A directory on a mounted ext4: one file per clone, O_DIRECT, removed afterwards.
    let mnt = Mounted::new(64 * MIB);
    let plan = r#"
name = "dir"
[[workload]]
name = "d"
[[workload.job]]
name = "r"
rw = "randread"
size = "2M"
numjobs = 2
[[workload.job]]
name = "iz"
rw = "iozone-random"
size = "1M"
"#;
    let v = run_json(plan, mnt.dir.path(), &[]);
    let w = workload(&v, "d");
    assert_eq!(u(&dir_of(job(w, "r.1"), "read")["ops"]), 512);
    assert_eq!(u(&dir_of(job(w, "iz"), "read")["ops"]), 256);
    assert_eq!(u(&dir_of(job(w, "iz"), "write")["ops"]), 256);
    let left: Vec<_> = fs::read_dir(mnt.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        left.iter()
            .all(|n| !n.to_string_lossy().starts_with("mmcab.")),
        "{left:?}"
    );
}

#[test]
#[ignore = "needs root: loop devices"]
fn iozone_mode_touches_every_record_once() {
    let dev = LoopDevice::new(8 * MIB);
    let plan = r#"
name = "iz"
[[workload]]
name = "iz"
[[workload.job]]
name = "iz"
rw = "iozone-random"
bs = "4k"
offset = "1M"
size = "2M"
end_fsync = true
"#;
    let v = run_json(plan, &dev.dev, &["--allow-write"]);
    let j = job(workload(&v, "iz"), "iz");
    let (r, w) = (dir_of(j, "read"), dir_of(j, "write"));
    assert_eq!((u(&r["ops"]), u(&w["ops"])), (512, 512));
    // 512 writes and every one of the 512 records written: each exactly once.
    let data = dev.contents();
    for (i, rec) in data[MIB as usize..3 * MIB as usize]
        .chunks(4096)
        .enumerate()
    {
        assert!(rec.iter().any(|&b| b != 0), "record {i} never written");
    }
    assert!(data[..MIB as usize]
        .iter()
        .chain(&data[3 * MIB as usize..])
        .all(|&b| b == 0));
    // Separate clocks per pass: ops/s of each pass over its own time.
    assert!(r["seconds"].as_f64().unwrap() > 0.0 && w["seconds"].as_f64().unwrap() > 0.0);
}

#[test]
#[ignore = "needs root: loop devices"]
fn verify_reports_a_block_corrupted_behind_our_back() {
    let dev = LoopDevice::new(16 * MIB);
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = write_plan(
        dir.path(),
        r#"
name = "verify"
[[workload]]
name = "fill"
[[workload.job]]
name = "w"
rw = "write"
bs = "4k"
size = "4M"
engine = "io_uring"
iodepth = 8
verify = true
[[workload]]
name = "check"
[[workload.job]]
name = "r"
rw = "read"
bs = "4k"
size = "4M"
verify = true
"#,
    );
    let p = plan.to_str().unwrap();
    let d = dev.dev.to_str().unwrap();
    let out = mmcab(&[
        "run",
        p,
        "--device",
        d,
        "--allow-write",
        "--workload",
        "fill",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("verify w: 1024 blocks checked, 0 bad"),
        "{table}"
    );

    // Corrupt one block through the loop device, as a buggy driver would.
    let bad_offset = 234 * 4096u64;
    let f = OpenOptions::new().write(true).open(&dev.dev).unwrap();
    f.write_all_at(&[0xff; 16], bad_offset + 100).unwrap();
    f.sync_all().unwrap();
    drop(f);

    let out = mmcab(&["run", p, "--device", d, "--workload", "check"]);
    assert_eq!(out.status.code(), Some(3), "verify errors exit with 3");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("verify r: 1024 blocks checked, 1 bad"),
        "{table}"
    );
    assert!(
        table.contains(&format!("bad block at offset {bad_offset}")),
        "{table}"
    );
    assert!(table.contains("checksum"), "{table}");
}

#[test]
#[ignore = "needs root: loop devices and an ext4 mount"]
fn writes_need_allow_write_and_mounted_devices_are_refused() {
    let dev = LoopDevice::new(8 * MIB);
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = write_plan(
        dir.path(),
        "name = \"p\"\n[[workload]]\nname = \"r\"\n[[workload.job]]\nname = \"r\"\nrw = \"read\"\nsize = \"1M\"\n\
         [[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"w\"\nrw = \"write\"\nsize = \"1M\"\n",
    );
    let p = plan.to_str().unwrap();
    let out = mmcab(&["run", p, "--device", dev.dev.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--allow-write") && err.contains(dev.dev.to_str().unwrap()),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran before the refusal");
    assert!(dev.contents().iter().all(|&b| b == 0));
    // Reading alone is fine without --allow-write.
    let out = mmcab(&[
        "run",
        p,
        "--device",
        dev.dev.to_str().unwrap(),
        "--workload",
        "r",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mnt = Mounted::new(32 * MIB);
    let out = mmcab(&[
        "run",
        p,
        "--device",
        mnt.loopdev.dev.to_str().unwrap(),
        "--allow-write",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("mounted at") && err.contains(mnt.dir.path().to_str().unwrap()),
        "{err}"
    );
}

#[test]
#[ignore = "needs root: loop devices"]
fn cancel_stops_a_run_promptly() {
    let dev = LoopDevice::new(8 * MIB);
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = write_plan(
        dir.path(),
        "name = \"p\"\n[[workload]]\nname = \"long\"\n[[workload.job]]\nname = \"r\"\nrw = \"randread\"\n\
         engine = \"io_uring\"\niodepth = 4\nruntime = \"1h\"\ntime_based = true\n",
    );
    let mut child = Watched::spawn(Command::new(env!("CARGO_BIN_EXE_mmcab")).args([
        "run",
        plan.to_str().unwrap(),
        "--device",
        dev.dev.to_str().unwrap(),
    ]));
    // The signal goes once the workload starts (its knobs are in place, the handlers
    // installed before them). An hour of I/O it is asked for: the run must end within
    // PROMPT of the signal (generous for a loaded machine; a stop that waited for the
    // runtime would take the hour).
    const PROMPT: std::time::Duration = std::time::Duration::from_secs(20);
    child.wait_for("the workload starting", |l| {
        l.starts_with("mmcab: running workload 'long'")
    });
    let signalled = std::time::Instant::now();
    child.signal(nix::sys::signal::Signal::SIGTERM);
    let (status, stderr) = child.finish();
    let took = signalled.elapsed();
    assert_eq!(status.code(), Some(128 + 15), "{stderr}");
    assert!(stderr.contains("cancelled"), "{stderr}");
    assert!(
        took < PROMPT,
        "the run ended {took:?} after SIGTERM (more than {PROMPT:?}): {stderr}"
    );
}

#[test]
#[ignore = "needs root: loop devices"]
fn the_seed_workload_files_run_scaled_down() {
    let dev = LoopDevice::new(40 * MIB);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    for (file, expect) in [
        ("dd-bus-width.toml", &["dd-write", "dd-read"][..]),
        (
            "packed-2012.toml",
            &[
                "long-write",
                "parallel-writes",
                "short-reads-short-writes",
                "iozone-256m",
            ][..],
        ),
        (
            "qd-sweep.toml",
            &["rand-4k-qd1", "rand-4k-qd32", "rand-1024k-qd1"][..],
        ),
    ] {
        let out = mmcab(&[
            "run",
            root.join(file).to_str().unwrap(),
            "--device",
            dev.dev.to_str().unwrap(),
            "--allow-write",
            "--scale-down",
            "16",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        for name in expect {
            let w = workload(&v, name);
            for d in w["group"].as_array().unwrap() {
                assert!(u(&d["ops"]) > 0, "{file} {name}: {d}");
            }
        }
    }
}

#[test]
#[ignore = "needs root: loop devices"]
fn ramp_time_is_run_but_not_measured() {
    let dev = LoopDevice::new(8 * MIB);
    let plan = r#"
name = "ramp"
[[workload]]
name = "ramp"
[[workload.job]]
name = "r"
rw = "randread"
ramp_time = "2s"
runtime = "300ms"
time_based = true
"#;
    let v = run_json(plan, &dev.dev, &[]);
    let r = dir_of(job(workload(&v, "ramp"), "r"), "read");
    let seconds = r["seconds"].as_f64().unwrap();
    // Measured: the 0.3 s after the ramp, not the 2.3 s of the whole run.
    assert!(seconds > 0.2 && seconds < 1.5, "{seconds}");
    assert_eq!(r["bytes_per_second"].as_array().unwrap().len(), 1);
    assert!(u(&r["ops"]) > 0);
}

/// Writes over data are refused with --allow-write alone, naming what is there and
/// its bytes: a filesystem nobody mounted (the whole device), a partition table the
/// kernel read and its partitions; nothing is written. A plan whose writes stay in free
/// space runs; --overwrite-data lets the rest go on.
#[test]
#[ignore = "needs root: loop devices"]
fn writes_over_data_need_overwrite_data() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let plan = |name: &str, offset: &str, size: &str| {
        let p = dir.path().join(format!("{name}.toml"));
        fs::write(
            &p,
            format!(
                "name = \"{name}\"\n[[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"w\"\n\
                 rw = \"write\"\noffset = \"{offset}\"\nsize = \"{size}\"\n"
            ),
        )
        .unwrap();
        p.to_str().unwrap().to_string()
    };
    let from_0 = plan("from-0", "0", "1M");
    let ext4 = LoopDevice::new(16 * MIB);
    assert!(Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(&ext4.dev)
        .status()
        .unwrap()
        .success());
    let dev = ext4.dev.to_str().unwrap();
    let before = ext4.contents();
    let out = mmcab(&["run", &from_0, "--device", dev, "--allow-write"]);
    assert_eq!(out.status.code(), Some(1), "a refusal");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "refusing to write to {dev}: the writes (bytes 0-1048575, 1MiB)"
        )) && err.contains("an ext2/3/4 filesystem (bytes 0-16777215)")
            && err.contains("--overwrite-data")
            && err.contains("wipefs -a"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(ext4.contents() == before, "nothing written");
    let out = mmcab(&[
        "run",
        &from_0,
        "--device",
        dev,
        "--allow-write",
        "--overwrite-data",
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(ext4.contents() != before, "written with --overwrite-data");

    // 1 MiB to 5 MiB and 5 MiB to the end (64 MiB).
    let parted = LoopDevice::partitioned(64 * MIB, &[(2048, 8192), (10240, 120832)]);
    let dev = parted.dev.to_str().unwrap();
    let name = parted.name();
    let before = parted.contents();
    let out = mmcab(&["run", &from_0, "--device", dev, "--allow-write"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("an MBR partition table (bytes 0-511)"),
        "{err}"
    );
    // open-au writes from 16 MiB: inside the second partition.
    let out = mmcab(&[
        "probe",
        "open-au",
        dev,
        "--erase-size",
        "1M",
        "--allow-write",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains(&format!("partition {name}p2 (bytes 5242880-67108863)"))
            && !err.contains("MBR partition table"),
        "{err}"
    );
    assert!(parted.contents() == before, "nothing written");
    // Between the table and the first partition: free space, no flag needed.
    let free = plan("free", "512k", "256k");
    let out = mmcab(&[
        "run",
        &free,
        "--device",
        dev,
        "--allow-write",
        "--out",
        dir.path().join("free").to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = parted.contents();
    assert!(after[..512 << 10] == before[..512 << 10]);
    assert!(after[768 << 10..] == before[768 << 10..]);
    assert!(after[512 << 10..768 << 10] != before[512 << 10..768 << 10]);
    let out = mmcab(&["run", &from_0, "--device", dev, "--overwrite-data"]);
    assert!(
        !out.status.success(),
        "--overwrite-data needs --allow-write"
    );
}
