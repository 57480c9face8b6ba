//! The seed plans reproduce their posts on a real block device (a loop device over a
//! file in /dev/shm; root): `workloads/qd-sweep.toml` gives IOPS and MB/s against queue
//! depth and against block size (seed 003), and `workloads/packed-2012.toml`'s iozone
//! and mixed workloads behave as iozone and the post did (seed 004), on files in
//! /dev/shm. The quick start's report stands alone: bus settings per config and a
//! throughput-over-time chart that reflects the data (a recorded run of it, and the
//! emulated eMMC: root and the QEMU testbed).

#[path = "common/charts.rs"]
mod charts;
#[path = "common/cli.rs"]
mod cli;
#[path = "common/loop_device.rs"]
mod loop_device;
#[path = "common/testbed.rs"]
mod testbed;

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

/// (ops, seconds) of `job`'s `direction` in the first workload of `mmcab run --json`.
fn job_dir(v: &serde_json::Value, job: &str, direction: &str) -> (u64, f64) {
    let jobs = v["workloads"][0]["jobs"].as_array().unwrap();
    let j = jobs
        .iter()
        .find(|j| j["job"] == job)
        .unwrap_or_else(|| panic!("no job {job}: {v}"));
    let d = j["directions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["direction"] == direction)
        .unwrap();
    (d["ops"].as_u64().unwrap(), d["seconds"].as_f64().unwrap())
}

const MIXED: &str = r#"
name = "mixed"
[[workload]]
name = "short-read-long-write"
WINDOW
[[workload.job]]
name = "read"
rw = "randread"
size = "1MiB"
io_size = "64KiB"
direct = false
[[workload.job]]
name = "write"
rw = "write"
bs = "64KiB"
offset = "1MiB"
size = "64MiB"
direct = false
end_fsync = true
"#;

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

/// The throughput bins of each measured write run (group rows, or the only job's)
/// integrate to the run's MB/s in runs.csv: the chart reflects the data.
fn bins_match_runs(dir: &Path, workload: &str) -> usize {
    let runs: Vec<mmcab::record::RunRow> =
        mmcab::record::writer::read_csv(&dir.join("runs.csv")).unwrap();
    let series: Vec<mmcab::record::SeriesRow> =
        mmcab::record::writer::read_rows(&dir.join("series.csv")).unwrap();
    let mut checked = 0;
    for r in runs.iter().filter(|r| {
        r.workload == workload
            && r.job == mmcab::record::GROUP_JOB
            && r.direction.as_str() == "write"
    }) {
        let bins: Vec<&mmcab::record::SeriesRow> = series
            .iter()
            .filter(|s| s.run == r.run && s.job == r.job && s.direction == r.direction)
            .collect();
        let (bytes, seconds) = bins.iter().fold((0.0, 0.0), |(b, t), s| {
            let (_, w) = s.bin();
            (b + s.mb_per_s * w, t + w)
        });
        assert!(
            (bytes / seconds - r.mb_per_s).abs() <= 0.01 * r.mb_per_s,
            "run {}: bins say {} MB/s over {seconds} s, runs.csv {} MB/s over {} s",
            r.run,
            bytes / seconds,
            r.mb_per_s,
            r.seconds
        );
        assert!(bins.len() >= 5, "run {}: {} bins", r.run, bins.len());
        checked += 1;
    }
    checked
}

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
    assert_eq!(bins_match_runs(&dir, "seq-write"), 6);
    charts::check_png(&dir.join("report/throughput-seq-write.png"));
}
