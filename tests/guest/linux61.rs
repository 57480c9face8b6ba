//! Linux 6.1, Debian 12's own kernel (`testbed/run --kernel 6.1`, QEMU's eMMC, one
//! boot): the oldest kernel a board is likely to run, whose debugfs `caps`/`caps2` are
//! read-only (docs/kernel-facts.md, "Linux 6.1").
//! - A plan with a knob 6.1 cannot switch (`speed-mode`; the shipped
//!   `workloads/bus-width-ab.toml`'s `bus-width`) stops before any I/O: the device's
//!   sectors written do not move, no run is recorded, stderr is one line saying why
//!   (read-only caps) and the route (across boots, `mmcab compare`, docs/board.md
//!   section 9), even with `--force`.
//! - The same plan without the knob runs (the sync, io_uring and ioctl engines) and
//!   `mmcab report` shows its kernel evidence: every row traced, `err_stats` read.
//! - `mmcab knobs` says the same for every caps knob and offers `clock`.
//! - The simulated card's module, built for 6.1 (`testbed/build-emmcsim --kernel 6.1`),
//!   loads there (one sim-card boot): `hs200=1` comes up in HS200 at 200 MHz on 8 bits,
//!   and `knobs` lists its modes with the same refusal.

use crate::common::testbed;

use std::time::Duration;

/// The plan's head and its workloads; [`CONFIGS`] goes between them for the A/B.
const HEAD: &str = r#"name = "linux61"
description = "Linux 6.1: speed modes this kernel cannot switch at run time"
repetitions = 2
seed = 1
"#;

const CONFIGS: &str = r#"
[[config]]
name = "hs"
speed-mode = "hs"

[[config]]
name = "legacy"
speed-mode = "legacy"
"#;

const WORKLOADS: &str = r#"
[[workload]]
name = "seq-write"
description = "512 KiB sequential writes"
[[workload.job]]
name = "write"
rw = "write"
bs = "512KiB"
size = "2MiB"
end_fsync = true

[[workload]]
name = "rand-read-qd4"
description = "4 KiB random reads at depth 4 through io_uring"
[[workload.job]]
name = "randread"
rw = "randread"
bs = "4KiB"
size = "2MiB"
io_size = "256KiB"
engine = "io_uring"
iodepth = 4

[[workload]]
name = "seq-read-ioctl"
description = "64 KiB reads as CMD23 + CMD18 through the MMC ioctl"
[[workload.job]]
name = "read"
rw = "read"
bs = "64KiB"
size = "1MiB"
engine = "ioctl"
"#;

/// Field 7 of /sys/block/<disk>/stat: sectors written.
fn sectors_written(stat: &str) -> u64 {
    let fields: Vec<&str> = stat.split_whitespace().collect();
    fields[6]
        .parse()
        .unwrap_or_else(|e| panic!("stat {stat:?}: {e}"))
}

/// A refusal: a non-zero status, one line on stderr naming the knob, the read-only caps
/// and the route, no results recorded and no sector written.
fn assert_refused(run: &testbed::GuestRun, name: &str, knob: &str, route: &str) {
    let status = run.out_text(&format!("{name}.rc"));
    assert_eq!(status.trim(), "1", "{name}: exit status");
    let err = run.out_text(&format!("{name}.err"));
    assert_eq!(err.trim_end().lines().count(), 1, "{name}: one line\n{err}");
    for want in [
        &format!("knob {knob} is unavailable"),
        "Linux 6.1",
        "read-only",
        "mode 0400",
        "across boots",
        "--label",
        "then mmcab compare (docs/board.md, section 9)",
        route,
    ] {
        assert!(err.contains(want), "{name}: wants {want:?}\n{err}");
    }
    assert!(
        !err.contains("--force tries"),
        "{name}: no flag helps\n{err}"
    );
    let before = sectors_written(&run.out_text(&format!("{name}.stat0")));
    let after = sectors_written(&run.out_text(&format!("{name}.stat1")));
    assert_eq!(before, after, "{name}: sectors written before the refusal");
    assert!(
        !run.out_dir.join(name).join("runs.csv").exists(),
        "{name}: a run was recorded"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_1_refuses_caps_knobs_before_io_and_runs_the_plan_without_them() {
    let refuse = |name: &str, cmd: &str| {
        format!(
            "cat /sys/block/mmcblk0/stat > /out/{name}.stat0
{cmd} --device /dev/mmcblk0 --allow-write --out /out/{name} 2> /out/{name}.err
echo $? > /out/{name}.rc
cat /sys/block/mmcblk0/stat > /out/{name}.stat1
"
        )
    };
    let script = format!(
        "cat > /root/ab.toml <<'EOF'
{HEAD}{CONFIGS}{WORKLOADS}EOF
cat > /root/plain.toml <<'EOF'
{HEAD}{WORKLOADS}EOF
uname -r > /out/uname
mmcab knobs /dev/mmcblk0 --json > /out/knobs.json
{}{}{}mmcab run /root/plain.toml --device /dev/mmcblk0 --allow-write --out /out/plain --quiet
mmcab report /out/plain > /out/report.txt",
        refuse("speed", "mmcab run /root/ab.toml"),
        refuse("forced", "mmcab run /root/ab.toml --force"),
        refuse("bus", "mmcab run /workloads/bus-width-ab.toml"),
    );
    let run = testbed::Guest::new("linux61")
        .kernel("6.1")
        .timeout(Duration::from_secs(600))
        .run(&script);
    run.assert_success();
    let release = run.out_text("uname");
    assert!(release.starts_with("6.1."), "{release}");

    let devicetree = "one boot per device tree (mmc-ddr-1_8v, mmc-hs200-1_8v";
    assert_refused(&run, "speed", "speed-mode", devicetree);
    assert_refused(&run, "forced", "speed-mode", devicetree);
    assert_refused(
        &run,
        "bus",
        "bus-width",
        "one boot per device-tree bus-width",
    );

    let knobs = run.out_json("knobs.json");
    for name in ["bus-width", "speed-mode", "cmd23"] {
        let knob = testbed::knob(&knobs, name);
        assert_eq!(knob["available"], false, "{name}: {knob}");
        let why = knob["reason"].as_str().unwrap();
        assert!(
            why.contains("read-only") && why.contains("mmcab compare"),
            "{name}: {why}"
        );
    }
    assert_eq!(testbed::knob(&knobs, "clock")["available"], true);

    // The plan without the knob: both engines ran, every run traced, err_stats read.
    let runs = run.out_text("plain/runs.csv");
    for workload in ["seq-write", "rand-read-qd4", "seq-read-ioctl"] {
        assert!(runs.contains(workload), "{workload} missing:\n{runs}");
    }
    let meta = run.out_json("plain/meta.json");
    assert!(
        meta.to_string().contains(release.trim()),
        "meta.json names the kernel"
    );
    let evidence = run.out_text("plain/evidence.csv");
    let mut reader = csv::Reader::from_reader(evidence.as_bytes());
    let header = reader.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (trace, err_stats, requests) = (col("trace"), col("err_stats"), col("requests"));
    let (workload, direction) = (col("workload"), col("direction"));
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let mut measured = 0;
    for row in &rows {
        assert_eq!(&row[trace], "ok", "{row:?}");
        assert_eq!(&row[err_stats], "none", "{row:?}");
        let moved = matches!(
            (&row[workload], &row[direction]),
            ("seq-write", "write") | ("rand-read-qd4", "read") | ("seq-read-ioctl", "read")
        );
        if moved {
            assert!(row[requests].parse::<u64>().unwrap() > 0, "{row:?}");
            measured += 1;
        }
    }
    assert_eq!(measured, 6, "2 runs of each workload:\n{rows:?}");
    let report = run.out_text("report.txt");
    for want in [
        "Kernel: 6.1.",
        "Host errors (debugfs err_stats",
        "kernel (trace)",
    ] {
        assert!(
            report.contains(want),
            "the report wants {want:?}:\n{report}"
        );
    }
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_1_loads_the_simulated_card() {
    let run = testbed::Guest::new("linux61_sim")
        .kernel("6.1")
        .card("sim,hs200=1")
        .timeout(Duration::from_secs(600))
        .run(
            "mmcab info --json /dev/mmcblk0 > /out/info.json
mmcab knobs --json /dev/mmcblk0 > /out/knobs.json",
        );
    run.assert_success();
    let info = run.out_json("info.json");
    assert_eq!(info["host_driver"]["driver"], "emmcsim", "{info}");
    assert_eq!(info["ios"]["bus_width"], 8, "{info}");
    assert_eq!(info["ios"]["clock_hz"], 200_000_000u64, "{info}");
    assert!(
        info["ios"]["timing"].as_str().unwrap().contains("HS200"),
        "{info}"
    );
    let knobs = run.out_json("knobs.json");
    let speed = testbed::knob(&knobs, "speed-mode");
    assert_eq!(speed["available"], false, "{speed}");
    let why = speed["reason"].as_str().unwrap();
    assert!(
        why.contains("read-only") && why.contains("mmc-hs200-1_8v"),
        "{why}"
    );
}
