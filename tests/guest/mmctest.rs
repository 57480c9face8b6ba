//! The mmc_test engine (`engine = "mmc_test"`, docs/plans.md "mmc_test") in one boot of
//! Linux 6.12 (and, for the whole plan, the model and the A/B, one of 7.x) with the
//! simulated card and the kernel's mmc_test.ko (`testbed/run --mmc-test`),
//! tests/fixtures/mmctest/stops.sh: a plan of sync reads and mmc_test's
//! single-transfer reads (test 27, about a second a run) run whole; stopped by SIGTERM
//! while mmc_test holds the card in the second repetition; killed by SIGKILL there and
//! put back by restore.sh; failed by a bad spot over mmc_test's test area; refused while
//! another process holds the disk. Each leaves mmc_block bound and /dev/mmcblk0 back,
//! and every finished run in runs.csv.
//!
//! tests/fixtures/mmctest/model.sh (in the 7.x boot; `MMCAB_MMCTEST_MODEL_KERNEL=6.12`
//! gives it a 6.12 boot of its own, as bench/mmctest-model does): mmc_test's
//! consecutive reads and writes (tests 30 and 31) on the zero card and on the defaults
//! against the model of the commands mmc_test sends (`sim_model::Timing::mmc_test_ns`),
//! and the report's "mmc_test beside the block layer" with the sync engine's traced
//! runs beside mmc_test's single transfers (docs/mmc-test.md, "Against the simulated
//! card's model").

use crate::common::sim_model::{Bus, MmcTestModel, Mode, Timing, DEFAULTS};
use crate::common::testbed;
use std::sync::OnceLock;
use std::time::Duration;
use testbed::GuestRun;

fn boot() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| guest("mmctest_stops", "6.12", 0, ""))
}

/// 7.x: tests/fixtures/mmctest/model.sh, then the whole plan only.
fn boot_7() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let model = testbed::repo_root().join("tests/fixtures/mmctest/model.sh");
        let model = std::fs::read_to_string(model).unwrap();
        guest("mmctest_7", "7", 1, &format!("ONLY=ok\n{model}"))
    })
}

/// `icount`: 0 off (the stops: timing does not matter), else the shift.
fn guest(label: &str, kernel: &str, icount: u8, prefix: &str) -> GuestRun {
    let script = testbed::repo_root().join("tests/fixtures/mmctest/stops.sh");
    let guest = testbed::Guest::new(label).kernel(kernel).card("sim");
    let guest = match icount {
        0 => guest.icount_off(),
        shift => guest.icount(shift),
    };
    let run = guest
        .mmc_test()
        .timeout(Duration::from_secs(600))
        .run(&format!(
            "{prefix}{}",
            std::fs::read_to_string(script).unwrap()
        ));
    run.assert_success();
    run
}

/// `/out/<case>.txt` as key=value pairs.
fn state(run: &GuestRun, case: &str) -> Vec<(String, String)> {
    run.out_text(&format!("{case}.txt"))
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn value(run: &GuestRun, case: &str, key: &str) -> String {
    state(run, case)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("{case}.txt has no {key}\n{}", run.report()))
}

/// The card is back on mmc_block with its disk, mmc_test has let it go.
fn assert_back(run: &GuestRun, case: &str) {
    assert_eq!(
        (
            value(run, case, "mmcblk"),
            value(run, case, "disk"),
            value(run, case, "mmc_test")
        ),
        ("bound".into(), "back".into(), "unbound".into()),
        "{case}\n{}",
        run.report()
    );
}

/// (workload, job) of the measured rows in `<case>/runs.csv`, per run.
fn rows(run: &GuestRun, case: &str) -> Vec<(u32, String, String)> {
    run.out_text(&format!("{case}/runs.csv"))
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[3].to_string(), f[7].to_string())
        })
        .collect()
}

fn runs_of(rows: &[(u32, String, String)], workload: &str) -> usize {
    let mut runs: Vec<u32> = rows
        .iter()
        .filter(|(_, w, _)| w == workload)
        .map(|(r, _, _)| *r)
        .collect();
    runs.dedup();
    runs.len()
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_whole_plan_records_every_transfer_size_and_gives_the_card_back() {
    whole_plan(boot());
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_whole_plan_on_7x() {
    whole_plan(boot_7());
}

fn whole_plan(run: &GuestRun) {
    assert_eq!(value(run, "ok", "status"), "0", "{}", run.report());
    assert_back(run, "ok");
    let rows = rows(run, "ok");
    assert_eq!(runs_of(&rows, "mmc-test-read-4k"), 3, "{rows:?}");
    assert_eq!(runs_of(&rows, "sync-read-4k"), 3, "{rows:?}");
    // Test 27 times one transfer of each size from 512 bytes up: the 4 KiB row is the
    // group's, and the sizes around it are there too.
    for job in ["read:512B", "read:4KiB", "read:512KiB", "all"] {
        assert_eq!(
            rows.iter()
                .filter(|(_, w, j)| w == "mmc-test-read-4k" && j == job)
                .count(),
            3,
            "{job}: {rows:?}"
        );
    }
    let restore = run.out_text("ok/restore.sh");
    assert!(
        restore.contains("/sys/bus/mmc/drivers/mmcblk/bind"),
        "{restore}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn sigterm_finishes_the_running_test_and_gives_the_card_back() {
    let run = boot();
    assert_ne!(value(run, "term", "status"), "0", "{}", run.report());
    assert_back(run, "term");
    let rows = rows(run, "term");
    // The run mmc_test was in when the signal came is recorded, the ones before too.
    assert_eq!(runs_of(&rows, "mmc-test-read-4k"), 2, "{rows:?}");
    assert!(runs_of(&rows, "sync-read-4k") >= 2, "{rows:?}");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn restore_sh_gives_the_card_back_after_sigkill() {
    let run = boot();
    assert_eq!(value(run, "kill", "status"), "137", "{}", run.report());
    assert_back(run, "kill");
    let rows = rows(run, "kill");
    assert_eq!(runs_of(&rows, "mmc-test-read-4k"), 1, "{rows:?}");
    assert_eq!(runs_of(&rows, "sync-read-4k"), 2, "{rows:?}");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn an_io_error_in_the_test_stops_the_plan_with_the_card_back() {
    let run = boot();
    assert_ne!(value(run, "err", "status"), "0", "{}", run.report());
    assert_back(run, "err");
    let stderr = run.out_text("err.stderr");
    assert!(stderr.contains("prepare stage"), "{stderr}");
    let rows = rows(run, "err");
    assert_eq!(runs_of(&rows, "sync-read-4k"), 1, "{rows:?}");
    assert_eq!(runs_of(&rows, "mmc-test-read-4k"), 0, "{rows:?}");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_held_disk_is_refused_before_the_card_is_unbound() {
    let run = boot();
    assert_ne!(value(run, "held", "status"), "0", "{}", run.report());
    assert_back(run, "held");
    let stderr = run.out_text("held.stderr");
    assert!(
        stderr.contains("boots from it") && stderr.lines().count() <= 2,
        "{stderr}"
    );
}

/// Mean over the measured runs of `config` of `job`'s mean time per transfer, us.
fn mean_us(run: &GuestRun, case: &str, config: &str, job: &str) -> f64 {
    let text = run.out_text(&format!("{case}/runs.csv"));
    let head: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let v: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[col("config")] == config && f[col("job")] == job)
        .map(|f| f[col("lat_mean_us")].parse().unwrap())
        .collect();
    assert_eq!(v.len(), 3, "{config} {job}: {v:?}");
    v.iter().sum::<f64>() / v.len() as f64
}

/// Bus width 8 against 4 through mmc_test's single 512 KiB read (test 27) on 7.x with
/// `--icount 1`: the report calls bus4 slower, and the difference of the two times per
/// transfer is the model's difference of 1024 blocks on 4 and 8 data lines at 52 MHz
/// within 5% (every other part of a transfer, commands and software, is the same in
/// both configs and cancels).
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_bus_width_ab_through_mmc_test_is_the_models_difference() {
    let run = boot_7();
    assert_eq!(value(run, "ab", "status"), "0", "{}", run.report());
    assert_back(run, "ab");
    let bus8 = mean_us(run, "ab", "bus8", "read:512KiB");
    let bus4 = mean_us(run, "ab", "bus4", "read:512KiB");
    let model_us =
        (Bus::new(Mode::Hs, 4).sectors_ns(1024.0) - Bus::new(Mode::Hs, 8).sectors_ns(1024.0)) / 1e3;
    let measured = bus4 - bus8;
    println!(
        "mmctest bus-width A/B (7.x, 512 KiB single read): bus8 {bus8:.0} us, bus4 {bus4:.0} us, \
         difference {measured:.0} us, model {model_us:.0} us"
    );
    assert!(
        (measured - model_us).abs() <= 0.05 * model_us,
        "bus4 - bus8 = {measured:.0} us, model {model_us:.0} us"
    );
    let text = report_text(run, "ab");
    let verdict = text
        .lines()
        .find(|l| l.trim_start().starts_with("bus4 vs A:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(verdict.trim_end().ends_with("slower"), "{text}");
}

/// The kernel of the model check and the report's check: `MMCAB_MMCTEST_MODEL_KERNEL`,
/// 7.x unless told (`6.12` or `7`). CI checks 7.x, whose boot also has the whole plan and
/// the A/B; bench/mmctest-model runs both kernels (bench/MMCTEST-MODEL.md).
fn model_kernel() -> String {
    std::env::var("MMCAB_MMCTEST_MODEL_KERNEL").unwrap_or_else(|_| "7".into())
}

/// The boot with tests/fixtures/mmctest/model.sh of [`model_kernel`] with `--icount 1`:
/// 7.x's shared boot, or one of model.sh only.
fn model_boot() -> (&'static GuestRun, String) {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    let kernel = model_kernel();
    if kernel == "7" {
        return (boot_7(), "7.x".into());
    }
    let run = RUN.get_or_init(|| {
        let script = testbed::repo_root().join("tests/fixtures/mmctest/model.sh");
        let run = testbed::Guest::new(&format!("mmctest_model_{kernel}"))
            .kernel(&kernel)
            .card("sim")
            .icount(1)
            .mmc_test()
            .timeout(Duration::from_secs(600))
            .run(&std::fs::read_to_string(script).unwrap());
        run.assert_success();
        run
    });
    (run, kernel)
}

/// Mean over the measured runs of `<case>/runs.csv` of `workload`'s `job` row, its
/// mean time per transfer, us.
fn per_transfer_us(run: &GuestRun, case: &str, workload: &str, job: &str) -> f64 {
    let text = run.out_text(&format!("{case}/runs.csv"));
    let head: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let v: Vec<f64> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect::<Vec<_>>())
        .filter(|f| f[col("workload")] == workload && f[col("job")] == job)
        .map(|f| f[col("lat_mean_us")].parse().unwrap())
        .collect();
    assert!(!v.is_empty(), "{case} {workload} {job}\n{}", run.report());
    v.iter().sum::<f64>() / v.len() as f64
}

/// The card of /out/model: the module's defaults with `cmd_ns` 50000 (model.sh), so that
/// one command more or less moves a 4 KiB read by about 15%.
const MODEL_CARD: Timing = Timing {
    cmd_ns: 50000.0,
    ..DEFAULTS
};

/// The sizes checked against the model: one block (CMD17/CMD24, no stop), and 4, 64 and
/// 512 KiB (the host's largest transfer).
const MODEL_SIZES: [(u64, &str); 4] = [
    (512, "512B"),
    (4096, "4KiB"),
    (65536, "64KiB"),
    (524288, "512KiB"),
];

/// measured / predicted of every direction and size of [`MODEL_SIZES`] for `model`:
/// (direction, size, measured us, predicted us).
fn against_model(
    run: &GuestRun,
    model: MmcTestModel,
) -> Vec<(&'static str, &'static str, f64, f64)> {
    let bus = Bus::new(Mode::Hs, 8);
    let mut rows = Vec::new();
    for (write, dir, workload, job) in [
        (false, "read", "mmc-test-read", "seq-read"),
        (true, "write", "mmc-test-write", "seq-write"),
    ] {
        for (bytes, size) in MODEL_SIZES {
            let name = format!("{job}:{size}");
            let zero = per_transfer_us(run, "zero", workload, &name);
            let measured = per_transfer_us(run, "model", workload, &name);
            let predicted =
                MODEL_CARD.predict_mmc_test(write, bytes as f64, &bus, model, zero * 1e3) / 1e3;
            rows.push((dir, size, measured, predicted));
        }
    }
    rows
}

/// mmc_test's consecutive reads and writes (tests 30 and 31) on [`MODEL_CARD`] within 5% of the model of the commands mmc_test sends, plus its own part measured on
/// the zero card; the same model without the CMD13 after each transfer, or without the
/// CMD12 of a multi-block transfer, is more than 5% off in some row.
fn seq_within_the_model(run: &GuestRun, kernel: &str) {
    let status = run.out_text("model.txt");
    assert!(
        ["zero=0", "model=0", "card=0"]
            .iter()
            .all(|s| status.contains(s)),
        "{status}\n{}",
        run.report()
    );
    let rows = against_model(run, MmcTestModel::Right);
    for (dir, size, measured, predicted) in &rows {
        println!(
            "mmc_test {kernel} {dir} {size}: measured {measured:.1} us, predicted \
             {predicted:.1} us, ratio {:.3}",
            measured / predicted
        );
    }
    for (dir, size, measured, predicted) in &rows {
        assert!(
            (measured / predicted - 1.0).abs() <= 0.05,
            "{kernel} {dir} {size}: measured {measured:.1} us, model {predicted:.1} us"
        );
    }
    for wrong in [MmcTestModel::NoStatus, MmcTestModel::NoStop] {
        let worst = against_model(run, wrong)
            .iter()
            .map(|(_, _, m, p)| (m / p - 1.0).abs())
            .fold(0.0, f64::max);
        println!(
            "mmc_test {kernel}: a model {wrong:?} is {:.1}% off at worst",
            worst * 100.0
        );
        assert!(
            worst > 0.05,
            "{kernel}: {wrong:?} only {:.1}% off",
            worst * 100.0
        );
    }
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn consecutive_reads_and_writes_are_the_model() {
    let (run, kernel) = model_boot();
    seq_within_the_model(run, &kernel);
}

/// `mmcab report` on the host of the guest's results directory `/out/<case>`: its
/// report.txt.
fn report_text(run: &GuestRun, case: &str) -> String {
    let dir = run.out_dir.join(case);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .arg("report")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{case}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(dir.join("report/report.txt")).unwrap()
}

/// The report of the defaults' run (`/out/card`): "mmc_test beside the block layer" has
/// mmc_test's time per transfer, the sync engine's and the block layer's share from the
/// trace at 4 KiB and 512 KiB, reads and writes; the share is positive, and at 512 KiB
/// mmc_test, which skips the block layer, is the faster.
fn report_sets_mmc_test_beside_sync(run: &GuestRun, kernel: &str) {
    let text = report_text(run, "card");
    let start = text
        .find("mmc_test beside the block layer")
        .unwrap_or_else(|| panic!("{kernel}: no mmc_test section\n{text}"));
    // `config dir size mmc_test I/O request block`, times in us.
    let rows: Vec<Vec<&str>> = text[start..]
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|c| c.len() == 7 && (c[1] == "read" || c[1] == "write"))
        .collect();
    for dir in ["read", "write"] {
        for size in ["4KiB", "512KiB"] {
            let row = rows
                .iter()
                .find(|c| c[1] == dir && c[2] == size)
                .unwrap_or_else(|| panic!("{kernel}: no {dir} {size} row\n{text}"));
            let n = |i: usize| -> f64 {
                row[i]
                    .parse()
                    .unwrap_or_else(|_| panic!("{kernel} {dir} {size}: {row:?}\n{text}"))
            };
            let (mmc_test, io, request, block) = (n(3), n(4), n(5), n(6));
            println!(
                "report {kernel} {dir} {size}: mmc_test {mmc_test} us, sync {io} us, traced \
                 request {request} us, block layer {block} us"
            );
            assert!(
                block > 0.0 && request > 0.0,
                "{kernel} {dir} {size}\n{text}"
            );
            // At 512 KiB mmc_test, without the block layer, is the faster. At 4 KiB
            // either may be: mmc_test's CMD13 after each transfer, a request of its own,
            // costs about as much as the block layer's share (docs/mmc-test.md).
            if size == "512KiB" {
                assert!(mmc_test < io, "{kernel} {dir} {size}\n{text}");
            }
        }
    }
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn the_report_sets_mmc_test_beside_sync() {
    let (run, kernel) = model_boot();
    report_sets_mmc_test_beside_sync(run, &kernel);
}
