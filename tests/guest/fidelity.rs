//! The seed plans reproduce their posts on a real block device (a loop device over a
//! file in /dev/shm; root): `workloads/qd-sweep.toml` gives IOPS and MB/s against queue
//! depth and against block size (seed 003), and `workloads/packed-2012.toml`'s iozone
//! and mixed workloads behave as iozone and the post did (seed 004), on files in
//! /dev/shm. The quick start's report stands alone: a throughput-over-time chart that
//! reflects the data (a recorded run of its bus-width A/B on QEMU's card), and on the
//! simulated eMMC (root and the QEMU testbed) the one setting compared, the bus of each
//! config and its effect at the size the card's model gives it.
//!
//! This file holds the tests that boot QEMU guests (tier 3); the others are in
//! tests/host/fidelity.rs, tests/plain/fidelity.rs.

use crate::common::charts;
use crate::common::cli;
use crate::common::sim_model::{Bus, Io, Mode};
use crate::common::testbed;

use cli::{mmcab, ok};
use std::collections::BTreeMap;
use std::path::Path;

/// The card `./quickstart` boots by default: its `modern_card=` line.
fn quickstart_card() -> String {
    let script = std::fs::read_to_string(testbed::repo_root().join("quickstart")).unwrap();
    script
        .lines()
        .find_map(|l| l.strip_prefix("modern_card="))
        .expect("./quickstart has a modern_card= line")
        .trim()
        .to_string()
}

/// Median over the measured runs of seconds per I/O of each (workload, config).
fn per_op(dir: &Path) -> BTreeMap<(String, String), f64> {
    let runs: Vec<mmcab::record::RunRow> =
        mmcab::record::writer::read_csv(&dir.join("runs.csv")).unwrap();
    let mut by: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for row in runs
        .into_iter()
        .filter(|r| r.job == mmcab::record::GROUP_JOB && !r.warmup)
    {
        by.entry((row.workload, row.config))
            .or_default()
            .push(row.seconds / row.ops as f64);
    }
    by.into_iter()
        .map(|(k, v)| (k, mmcab::stats::median(&v)))
        .collect()
}

/// The I/O of a workload of workloads/speed-mode-ab.toml.
fn io_of(workload: &str) -> Io {
    match workload {
        "seq-read" => Io::SEQ_READ_512K,
        other => panic!("workload {other} is not in workloads/speed-mode-ab.toml"),
    }
}

/// The model's time per I/O in HS400 from the time measured in HS200: the two configs
/// differ only in the bits per clock on the data lines (tests/common/sim_model.rs), so
/// HS400 takes the HS200 time minus the difference of the two buses' data time. The
/// commands (SDR on the CMD line at the same clock), the card's flash time and the
/// software's own time are the same in both.
fn hs400_predicted_ns(io: Io, hs200_ns: f64) -> f64 {
    let blocks = io.bytes() / 512.0;
    let (hs200, hs400) = (Bus::new(Mode::Hs200, 8), Bus::new(Mode::Hs400, 8));
    hs200_ns - (hs200.sectors_ns(blocks) - hs400.sectors_ns(blocks))
}

/// What `./quickstart` does (workloads/speed-mode-ab.toml on its modern simulated eMMC,
/// the emmc51 preset with its guest CPU, under Linux 7.x, 8-bit host, the report made by
/// the guest's armv7 mmcab), then its report: the same text from this machine's mmcab, a line per config
/// with the speed mode and clock asked for and the bus verified before the runs (8 bits,
/// 200 MHz, HS200 or HS400, a tuning traced at each switch), HS400 faster at 512 KiB
/// sequential reads, significant, by the model's ratio within 5%, and its charts.
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn the_quick_start_report_calls_the_speed_mode_effect_at_the_model_size() {
    let run = testbed::Guest::new("quickstart_report")
        .kernel("7")
        .card(&quickstart_card())
        .bus_width(8)
        .timeout(std::time::Duration::from_secs(600))
        .run(
            "mmcab info /dev/mmcblk0 > /dev/null && mmcab run /workloads/speed-mode-ab.toml \
             --device /dev/mmcblk0 --out /out/ab && mmcab report /out/ab",
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
    for (config, timing) in [("hs200", "HS200"), ("hs400", "HS400")] {
        let line =
            format!("  {config}: clock=200 MHz speed-mode={config}; 8-bit, mmc {timing}, 200 MHz;");
        assert!(text.contains(&line), "no line '{line}' in:\n{text}");
    }
    let measured = per_op(&dir);
    let report = run.out_json("ab/report/report.json");
    let mut table = String::new();
    let mut compared = 0;
    for block in report["blocks"].as_array().unwrap() {
        if block["headline"] != true {
            continue;
        }
        let workload = block["workload"].as_str().unwrap();
        let op = |config: &str| measured[&(workload.to_string(), config.to_string())] * 1e9;
        let predicted = hs400_predicted_ns(io_of(workload), op("hs200"));
        // Throughput ratio hs400 / hs200, as the report's change gives it.
        let model = op("hs200") / predicted;
        let row = block["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["config"] == "hs400" && r["baseline"] == "hs200")
            .unwrap_or_else(|| panic!("{workload}: no hs400 vs hs200 row in {block}"));
        let change = 1.0 + row["change"]["rel"].as_f64().unwrap();
        table += &format!(
            "{workload}: hs200 {:.1} us, hs400 {:.1} us, predicted {:.1} us; \
             model x{model:.3}, report x{change:.3} {} (q {})\n",
            op("hs200") / 1e3,
            op("hs400") / 1e3,
            predicted / 1e3,
            row["verdict"],
            row["q"]
        );
        assert_eq!(row["verdict"], "faster", "{workload}\n{table}\n{text}");
        assert!(
            (0.95..=1.05).contains(&(change / model)),
            "{workload}: the report's x{change:.3} against the model's x{model:.3}\n{table}"
        );
        compared += 1;
    }
    assert_eq!(compared, 1, "seq-read\n{table}\n{text}");
    eprintln!("{table}");
    charts::check_png(&dir.join("report/latency-cdf-seq-read-read.png"));
    charts::check_png(&dir.join("report/bars-mb_per_s.png"));
}
