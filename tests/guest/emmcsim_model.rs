//! The simulated eMMC's timing model against mmcab's measurements (testbed/emmcsim/
//! README.md, "Timing model"). One boot per parameter set and kernel, booted 8-bit, guest
//! clock tied to instructions (`--icount 1`): each boot runs the same plans first on a
//! card whose timing parameters are all 0 (what remains is the software's own time per
//! I/O and the bus), then on the parameter set, and checks for every workload that the
//! throughput mmcab measured lies within 5% of the formula's prediction:
//!
//! predicted time per I/O = model(set) - model(0) + measured time per I/O on the 0 card
//!
//! where model() is the README's formula (tests/common/sim_model.rs), computed from the
//! parameters and the bus (HS52, 8 or 4 bits, from the plan's configs). The workloads: sequential read and
//! write (512 KiB, one request each), 4 KiB random read and write (QD1), at 8 and 4 bits
//! (the bus-width knob, at run time on 7.x; 8 bits only on 6.12), and 16 KiB ioctl
//! writes unpacked, packed 4, 8 and the most one ioctl carries (31). mmcab's reports
//! must call 4 bits slower than 8 and packing faster than unpacked writes, significant,
//! with the sign and size the model gives.
//!
//! mmcab is told nothing of the model: it measures; this test holds the truth.

use crate::common::sim_model::{Bus, Io, Mode, Timing, DEFAULTS, ZERO};
use crate::common::testbed;

use std::collections::BTreeMap;
use std::path::Path;

/// A second set, far from the first: slow commands and access, fast flash, a read's
/// first page out of the die before its data (16 KiB pages: 40 us for a 4 KiB read,
/// 160 us for a 512 KiB one).
const OTHER: Timing = Timing {
    cmd_ns: 25000.0,
    read_access_ns: 150_000.0,
    read_ns_per_kib: 1500.0,
    write_access_ns: 300_000.0,
    program_ns_per_kib: 12000.0,
    packed_entry_ns: 60000.0,
    first_page_ns_per_kib: 10000.0,
    ..DEFAULTS
};

/// Entries of the packed-max config: 16 KiB entries and the 512-byte header in one
/// ioctl command of at most 512 KiB (MMC_IOC_MAX_BYTES).
const PACKED_MAX: f64 = 31.0;

/// The module's timing parameters as `NAME=VALUE` words for the guest's script.
fn sysfs_lines(t: &Timing, jitter_permille: u32) -> String {
    format!(
        "cmd_ns={} read_access_ns={} read_ns_per_kib={} write_access_ns={} \
         program_ns_per_kib={} packed_entry_ns={} first_page_ns_per_kib={} \
         jitter_permille={jitter_permille}",
        t.cmd_ns,
        t.read_access_ns,
        t.read_ns_per_kib,
        t.write_access_ns,
        t.program_ns_per_kib,
        t.packed_entry_ns,
        t.first_page_ns_per_kib
    )
}

/// The I/O of one of the plans' workloads on one of their configs, and the bus it runs
/// on: HS52 at 8 or 4 bits (the bus-width configs), 8 bits for the packed ones.
fn io_and_bus(workload: &str, config: &str) -> (Io, Bus) {
    let width = if config == "bus4" { 4 } else { 8 };
    let io = match workload {
        "seq-read" => Io::SEQ_READ_512K,
        "rand-read-4k" => Io::RAND_READ_4K,
        "seq-write" => Io::SEQ_WRITE_512K,
        "rand-write-4k" => Io::RAND_WRITE_4K,
        "packed-16k" => Io::PackedWrite {
            entries: match config {
                "unpacked" => 1.0,
                "packed4" => 4.0,
                "packed8" => 8.0,
                "packed-max" => PACKED_MAX,
                other => panic!("no such packed config {other}"),
            },
            entry_bytes: 16384.0,
        },
        other => panic!("no formula for workload {other}"),
    };
    (io, Bus::new(Mode::Hs, width))
}

/// ns per I/O of one workload on one config, as the README's formula gives it.
fn per_io(set: &Timing, workload: &str, config: &str) -> f64 {
    let (io, bus) = io_and_bus(workload, config);
    set.per_io(io, &bus)
}

const BUS_PLAN: &str = r#"
name = "model-bus"
repetitions = 3
order = "interleaved"
seed = 1
[[config]]
name = "bus8"
bus-width = 8
expect.bus_width = 8
[[config]]
name = "bus4"
bus-width = 4
expect.bus_width = 4
[[workload]]
name = "seq-read"
[[workload.job]]
name = "read"
rw = "read"
bs = "512KiB"
size = "8MiB"
[[workload]]
name = "seq-write"
[[workload.job]]
name = "write"
rw = "write"
bs = "512KiB"
size = "8MiB"
[[workload]]
name = "rand-read-4k"
[[workload.job]]
name = "randread"
rw = "randread"
bs = "4KiB"
size = "8MiB"
io_size = "1MiB"
[[workload]]
name = "rand-write-4k"
[[workload.job]]
name = "randwrite"
rw = "randwrite"
bs = "4KiB"
size = "8MiB"
io_size = "1MiB"
"#;

/// Linux 6.12 cannot switch the bus width at run time (its debugfs caps refuses the
/// bits): the same workloads on the 8-bit bus it booted with.
fn bus_plan_8_bit_only() -> String {
    let (head, rest) = BUS_PLAN.split_once("[[config]]").unwrap();
    let workloads = &rest[rest.find("[[workload]]").unwrap()..];
    format!("{head}[[config]]\nname = \"bus8\"\nexpect.bus_width = 8\n{workloads}")
}

const PACKED_PLAN: &str = r#"
name = "model-packed"
repetitions = 3
order = "interleaved"
seed = 1
[[config]]
name = "unpacked"
packed = 0
[[config]]
name = "packed4"
packed = 4
[[config]]
name = "packed8"
packed = 8
[[config]]
name = "packed-max"
packed = "max"
[[workload]]
name = "packed-16k"
[[workload.job]]
name = "write"
rw = "write"
engine = "ioctl"
bs = "16KiB"
offset = "64MiB"
size = "3968KiB"
"#;

/// The guest's script: plans, the zero card, the set, results in /out.
fn script(set: &Timing, jitter_permille: u32, repeat: u32, bus_plan: &str) -> String {
    let set_params = |t: &Timing, j: u32| {
        sysfs_lines(t, j)
            .split(' ')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                format!("echo {v} > $P/{k} || exit 90")
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let run = |name: &str, repeat: u32| {
        format!(
            "mmcab run /tmp/bus.toml --device /dev/mmcblk0 --allow-write --no-evidence \
             --quiet --repeat {repeat} --out /out/{name}-bus >/dev/null || exit 91; \
             mmcab run /tmp/packed.toml --device /dev/mmcblk0 --allow-write --no-evidence \
             --quiet --repeat {repeat} --out /out/{name}-packed >/dev/null || exit 92"
        )
    };
    format!(
        "set -e; P=/sys/module/emmcsim/parameters; \
         cat > /tmp/bus.toml <<'EOF'\n{bus_plan}\nEOF\n\
         cat > /tmp/packed.toml <<'EOF'\n{PACKED_PLAN}\nEOF\n\
         for f in $P/*; do echo \"${{f##*/}} $(cat $f)\"; done > /out/defaults.txt; \
         {zero}; {run_zero}; {set}; {run_set}; \
         mmcab report /out/set-bus >/dev/null; mmcab report /out/set-packed >/dev/null; \
         cat /sys/kernel/debug/emmcsim/stats > /out/stats.txt",
        zero = set_params(&ZERO, 0),
        run_zero = run("zero", 3),
        set = set_params(set, jitter_permille),
        run_set = run("set", repeat),
    )
}

/// Median over the runs of seconds per op of each (workload, config) in a results
/// directory's runs.csv. The median, not the mean: a one-off stall of the guest's
/// software (seen once in CI: one zero-card run of 3 took 0.260 s where the others took
/// 0.093 s) must not move the software time the formula adds to.
pub(crate) fn per_op(dir: &Path) -> BTreeMap<(String, String), f64> {
    let text = std::fs::read_to_string(dir.join("runs.csv"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (c_config, c_workload, c_job, c_ops, c_seconds, c_warm) = (
        col("config"),
        col("workload"),
        col("job"),
        col("ops"),
        col("seconds"),
        col("warmup"),
    );
    let mut per_run: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        if f[c_job] != "all" || f[c_warm] == "true" {
            continue;
        }
        let ops: f64 = f[c_ops].parse().unwrap();
        let seconds: f64 = f[c_seconds].parse().unwrap();
        per_run
            .entry((f[c_workload].to_string(), f[c_config].to_string()))
            .or_default()
            .push(seconds / ops);
    }
    per_run
        .into_iter()
        .map(|(k, v)| (k, mmcab::stats::median(&v)))
        .collect()
}

/// The measured runs of the set-* results whose slowest I/O took over 20 ms more than
/// the run's own p99: "set-KIND run N WORKLOAD/CONFIG max/p99 us".
fn stalls(out: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for kind in ["bus", "packed"] {
        let path = out.join(format!("set-{kind}/runs.csv"));
        let mut rdr =
            csv::Reader::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for row in rdr.deserialize::<mmcab::record::RunRow>() {
            let row = row.unwrap();
            if row.job != mmcab::record::GROUP_JOB || row.warmup {
                continue;
            }
            let (max, p99) = (row.lat_max_us, row.lat_p99_us);
            if max > p99 + 20_000.0 {
                found.push(format!(
                    "set-{kind} run {} {}/{} {max:.0}/{p99:.0} us",
                    row.run, row.workload, row.config
                ));
            }
        }
    }
    found
}

/// Boots, runs, and checks every (workload, config) against the formula; returns the
/// table it printed.
fn check_set(label: &str, kernel: &str, set: &Timing, jitter_permille: u32) -> String {
    let bus_plan = if kernel == "6.12" {
        bus_plan_8_bit_only()
    } else {
        BUS_PLAN.to_string()
    };
    let boot = || {
        let run = testbed::Guest::new(label)
            .kernel(kernel)
            .card("sim")
            .icount(1)
            .bus_width(8)
            .timeout(std::time::Duration::from_secs(1500))
            .run(&script(set, jitter_permille, 3, &bus_plan));
        run.assert_success();
        run
    };
    // The verdicts come from mmcab's report, on the means of 3 runs a config: one run
    // with the guest's one-off stall (testbed/emmcsim/README.md, "Limits": one request
    // ~45 ms late, seen in CI as a 4 KiB random-write run of 0.213 s among 0.169 s ones)
    // leaves a real 12% change without significance. Such a boot is done once more;
    // the second one is checked whatever it shows.
    let mut run = boot();
    let mut stalled = stalls(&run.out_dir);
    if !stalled.is_empty() {
        eprintln!("{label}: the guest stalled in {stalled:?}; booting once more");
        run = boot();
        stalled = stalls(&run.out_dir);
    }
    let defaults = run.out_text("defaults.txt");
    for (name, value) in [
        ("cmd_ns", DEFAULTS.cmd_ns),
        ("read_access_ns", DEFAULTS.read_access_ns),
        ("read_ns_per_kib", DEFAULTS.read_ns_per_kib),
        ("write_access_ns", DEFAULTS.write_access_ns),
        ("program_ns_per_kib", DEFAULTS.program_ns_per_kib),
        ("packed_entry_ns", DEFAULTS.packed_entry_ns),
    ] {
        assert!(
            defaults.contains(&format!("{name} {value}\n")),
            "the module's default {name} is not {value} as this test and the README say:\n{defaults}"
        );
    }
    let mut table = format!("{label}: {set:?}, jitter {jitter_permille} permille\n");
    if !stalled.is_empty() {
        table += &format!("runs with the guest's stall: {stalled:?}\n");
    }
    table += "workload      config      measured   predicted  meas/pred  (per I/O)\n";
    let mut bad = Vec::new();
    for kind in ["bus", "packed"] {
        let zero = per_op(&run.out_dir.join(format!("zero-{kind}")));
        let measured = per_op(&run.out_dir.join(format!("set-{kind}")));
        for ((workload, config), seconds) in &measured {
            let zero_s = zero[&(workload.clone(), config.clone())];
            let predicted_ns =
                per_io(set, workload, config) - per_io(&ZERO, workload, config) + zero_s * 1e9;
            let ratio = predicted_ns / (seconds * 1e9); // = measured / predicted throughput
            table += &format!(
                "{workload:<13} {config:<11} {:>9.1} us {:>9.1} us  {ratio:>8.4}\n",
                seconds * 1e6,
                predicted_ns / 1e3
            );
            if !(0.95..=1.05).contains(&ratio) {
                bad.push(format!("{workload}/{config}: {ratio:.4}"));
            }
        }
    }
    eprintln!("{table}");
    assert!(
        bad.is_empty(),
        "measured/predicted throughput outside 0.95..1.05 for {bad:?}:\n{table}\nstats:\n{}",
        run.out_text("stats.txt")
    );
    let blocks = if kernel == "6.12" { 0 } else { 4 };
    check_verdicts(&run.out_dir, "bus", set, blocks, &table);
    check_verdicts(&run.out_dir, "packed", set, 1, &table);
    table
}

/// mmcab's report calls every config significantly different from the baseline (the
/// first config: bus8, unpacked), with the model's sign, and the change it measured is
/// the model's (within 5% of the ratio). `blocks`: the headline blocks (MB/s or IOPS)
/// that must have such rows.
fn check_verdicts(out: &Path, kind: &str, set: &Timing, blocks: usize, table: &str) {
    let dir = out.join(format!("set-{kind}"));
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("report/report.json")).expect("report.json"),
    )
    .unwrap();
    let zero = per_op(&out.join(format!("zero-{kind}")));
    let mut seen = 0;
    for block in report["blocks"].as_array().unwrap() {
        if block["headline"] != true {
            continue;
        }
        let workload = block["workload"].as_str().unwrap();
        let t = |config: &str| {
            per_io(set, workload, config) - per_io(&ZERO, workload, config)
                + zero[&(workload.to_string(), config.to_string())] * 1e9
        };
        let rows = block["rows"].as_array().unwrap();
        let compared: Vec<_> = rows.iter().filter(|r| r["baseline"].is_string()).collect();
        if !compared.is_empty() {
            seen += 1;
        }
        for row in compared {
            let (config, baseline) = (
                row["config"].as_str().unwrap(),
                row["baseline"].as_str().unwrap(),
            );
            // the throughput change of config against the baseline
            let model_change = t(baseline) / t(config) - 1.0;
            let measured = row["change"]["rel"].as_f64().unwrap();
            let want = if model_change < 0.0 {
                "slower"
            } else {
                "faster"
            };
            assert_eq!(
                row["verdict"],
                want,
                "{workload}: {config} vs {baseline} is {:?} (q {}), the model says {:+.1}%\n{table}",
                row["verdict"],
                row["q"],
                model_change * 100.0
            );
            let ratio = (1.0 + measured) / (1.0 + model_change);
            assert!(
                (0.95..=1.05).contains(&ratio),
                "{workload}: {config}/{baseline} measured {:.3}, model {:.3}\n{table}",
                1.0 + measured,
                1.0 + model_change
            );
        }
    }
    assert_eq!(
        seen,
        blocks,
        "headline blocks with a comparison in {}",
        dir.display()
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn default_timing_matches_the_formula_and_bus_width_and_packing_are_significant() {
    check_set("model_defaults", "7", &DEFAULTS, 20);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn another_timing_set_matches_the_formula() {
    check_set("model_other", "7", &OTHER, 50);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_matches_the_formula_and_packing_is_significant() {
    check_set("model_6_12", "6.12", &DEFAULTS, 20);
}
