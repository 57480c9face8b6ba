//! Every request of a 4 KiB random read at depth 1 on the simulated card takes the same
//! time (bench/SIM-QD1-JITTER.md): 5 runs of one second (sync engine, kernel evidence on,
//! as `mmcab run` does by default) on a card without jitter (`jitter_permille` 0), one
//! boot each of Linux 7.x and 6.12 under `--icount 1`. Per run, the kernel evidence's
//! request latency (mmc_request_start to mmc_request_done) has its p99 within
//! [`SPREAD_US`] of its p50.
//!
//! What it guards: the AST2600 timer that testbed/guest-init keeps running gives QEMU a
//! deadline every 20 us, so icount's round robin never runs one vCPU for long while the
//! other's interrupt waits. With a deadline only every 750 us (the timer written in the
//! wrong order, as before 2026-12-07) mmcab's trace reader, draining the buffer on the
//! other vCPU in the second half of a run, held the card's completion timer back by
//! ~300 us for 7-20% of the requests, in about half the runs: p99 ~400 us against a p50
//! of ~90.
//!
//! Five runs a boot, not ten: the fault is guest-init's, the same under both kernels, so
//! the two boots' ten runs guard it together (at 4-5 slow runs in 10, as recorded, a miss
//! of all ten has odds of ~0.25%, as one boot of ten had), and each kernel alone still
//! has one slow run of five at odds of ~95%. Ten runs a boot made the two boots 180 s of
//! the guest tier's time (2026-12-07).

use crate::common::testbed;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Widest p99 - p50 of a run, microseconds. With the 20 us deadline: 2-21 us (the reader
/// on the other vCPU halves the in-request software's speed and delays the completion
/// interrupt by up to 10 us); with 750 us: ~310 us in the runs it hit.
const SPREAD_US: f64 = 30.0;

/// The card of the finding: HS200/HS400 offered, 2 us per command, 60 us read access and
/// 600 ns per KiB, nothing else.
const CARD: &str = "sim,card_hs200=1,card_hs400=1,host_hs200=1,host_hs400=1,cmd_ns=2000,\
                    read_access_ns=60000,read_ns_per_kib=600";

const PLAN: &str = r#"
name = "qd1-jitter"
repetitions = 5
[[workload]]
name = "rand-read-4k-qd1"
[[workload.job]]
name = "r"
rw = "randread"
bs = "4KiB"
size = "64MiB"
runtime = "1s"
time_based = true
"#;

/// Per run with requests: (p50, p99) of the kernel evidence's request latency, us.
fn spreads(dir: &Path) -> BTreeMap<u32, (f64, f64)> {
    let mut out = BTreeMap::new();
    let mut rdr = csv::Reader::from_path(dir.join("evidence.csv")).unwrap();
    for row in rdr.deserialize::<mmcab::record::EvidenceRow>() {
        let row = row.unwrap();
        if row.requests.unwrap_or(0) == 0 {
            continue;
        }
        assert_eq!(row.trace, "ok", "run {}: the trace lost events", row.run);
        let (p50, p99) = (row.lat_p50_us.unwrap(), row.lat_p99_us.unwrap());
        out.insert(row.run, (p50, p99));
    }
    out
}

fn every_request_takes_the_models_time(kernel: &str) {
    let script = format!(
        "set -e\ncat > /tmp/j.toml <<'MMCAB_EOF'\n{PLAN}\nMMCAB_EOF\n\
         mmcab run /tmp/j.toml --device /dev/mmcblk0 --quiet --out /out/r >/dev/null\n"
    );
    let run = testbed::Guest::new(&format!("sim_qd1_jitter_{kernel}"))
        .kernel(kernel)
        .card(CARD)
        .icount(1)
        .timeout(Duration::from_secs(1200))
        .run(&script);
    run.assert_success();
    let runs = spreads(&run.out_dir.join("r"));
    assert_eq!(runs.len(), 5, "runs with requests: {runs:?}");
    let wide: Vec<_> = runs
        .iter()
        .filter(|(_, (p50, p99))| p99 - p50 > SPREAD_US)
        .collect();
    assert!(
        wide.is_empty(),
        "Linux {kernel}: runs whose p99 is over {SPREAD_US} us above their p50 \
         (run: (p50, p99) us): {wide:?}; all: {runs:?}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn qd1_reads_take_the_models_time_on_linux_7() {
    every_request_takes_the_models_time("7");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn qd1_reads_take_the_models_time_on_linux_6_12() {
    every_request_takes_the_models_time("6.12");
}
