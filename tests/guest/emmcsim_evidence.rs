//! The evidence a speed change needs, on the simulated card (testbed/emmcsim) booted in
//! HS200 on Linux 7.x (one boot, tests/fixtures/faults/sim_evidence.sh): a plan that
//! switches between HS200 and high speed with the speed-mode knob, six runs interleaved,
//! a data CRC error and a command timeout injected into run 4 (each once; the kernel's
//! retry recovers):
//!
//! - evidence.csv's `err_stats` shows both in run 4 and `none` in every other run, and
//!   the report's host-errors section names run 4 and nothing else;
//! - meta.json's `switches`: each switch to hs200 traced its tuning (the module's
//!   `tuning_cmds`, 40, CMD21s), each switch to hs none, and the report's config lines
//!   say so;
//! - the report's header names the mmcab and the command line.

use crate::common::scenario::Scenario;
use crate::common::testbed;
use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;
use testbed::GuestRun;

fn evidence_boot() -> &'static GuestRun {
    static RUN: OnceLock<GuestRun> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = testbed::repo_root().join("tests/fixtures/faults");
        let read = |f: &str| std::fs::read_to_string(dir.join(f)).unwrap();
        let run = testbed::Guest::new("evidence_sim")
            .kernel("7")
            .card("sim,hs200=1")
            .icount(1)
            .timeout(Duration::from_secs(1200))
            .run(&format!("{}\n{}", read("lib.sh"), read("sim_evidence.sh")));
        run.assert_success();
        run
    })
}

fn scenario() -> Scenario<'static> {
    Scenario {
        run: evidence_boot(),
        name: "evidence",
    }
}

/// The lines of the report's setup section whose title starts with `title`
/// (report/report.json: the text of report.txt is wrapped to fit a mail).
fn section(s: &Scenario, title: &str) -> Vec<String> {
    let report = s.run.out_json("evidence/res/report/report.json");
    report["setup"]
        .as_array()
        .unwrap()
        .iter()
        .find(|sec| sec["title"].as_str().unwrap().starts_with(title))
        .map(|sec| {
            sec["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// evidence.csv's `err_stats` per run (the same on each of a run's rows).
fn err_stats_by_run(s: &Scenario) -> BTreeMap<u32, String> {
    let text = s.text("res/evidence.csv");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (run, err_stats) = (col("run"), col("err_stats"));
    let mut by_run = BTreeMap::new();
    for record in reader.records() {
        let record = record.unwrap();
        let n: u32 = record[run].parse().unwrap();
        let value = record[err_stats].to_string();
        let before = by_run.insert(n, value.clone());
        assert!(before.is_none_or(|b| b == value), "run {n}: {text}");
    }
    by_run
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn the_run_with_injected_crc_errors_and_timeouts_shows_them_in_err_stats_and_no_other() {
    let s = scenario();
    let err = s.err();
    assert_eq!(s.status("run.status"), 0, "{err}");
    assert_eq!(s.recorded_runs(), (1..=6).collect(), "{err}");
    let stats = s.text("stats");
    let by_run = err_stats_by_run(&s);
    assert_eq!(by_run.len(), 6, "{by_run:?}");
    let run4 = &by_run[&4];
    assert!(
        run4.contains("Data CRC Errors Occurred:1") && run4.contains("Command Timeout Occurred:"),
        "run 4: {run4}\n{stats}\n{}",
        s.text("res.log")
    );
    for (run, value) in &by_run {
        if *run != 4 {
            assert_eq!(value, "none", "run {run}: {by_run:?}");
        }
    }
    let report = s.text("report.txt");
    let errors = section(&s, "Host errors (debugfs err_stats");
    assert!(
        errors.first().is_some_and(|l| l
            .starts_with("run 4 (hs, seq-write): Command Timeout Occurred ")
            && l.ends_with(", Data CRC Errors Occurred 1")),
        "{errors:?}\n{report}"
    );
    assert!(
        errors.iter().skip(1).all(|l| !l.starts_with("run ")),
        "{errors:?}"
    );
    // mmcab knows the simulated host by nothing but what sysfs says of any driver: one
    // out of the tree, not known to count, seen counting once its counters moved.
    assert!(
        errors
            .iter()
            .any(|l| l.starts_with("seen counting: the host driver emmcsim counted these")),
        "{errors:?}"
    );
    let meta = s.run.out_json("evidence/res/meta.json");
    let counting = meta["evidence"]["err_stats_counting"].as_str().unwrap();
    assert!(
        counting.starts_with("not known to count: the host driver emmcsim uses none of"),
        "{counting}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn a_switch_to_hs200_shows_its_tuning_and_a_switch_to_hs_none() {
    let s = scenario();
    assert_eq!(s.status("run.status"), 0, "{}", s.err());
    let meta = s.run.out_json("evidence/res/meta.json");
    let switches = meta["switches"].as_array().unwrap();
    let of = |config: &str| -> Vec<(u64, u64, String)> {
        switches
            .iter()
            .filter(|sw| sw["config"] == config)
            .map(|sw| {
                (
                    sw["run"].as_u64().unwrap(),
                    sw["trace"]["cmd21"].as_u64().unwrap(),
                    sw["ios"]["timing"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    // hs200 was in place at boot: its first run needed no switch.
    assert_eq!(
        of("hs200"),
        [(3, 40, "mmc HS200".into()), (5, 40, "mmc HS200".into())],
        "{switches:#?}"
    );
    let hs = "mmc high-speed".to_string();
    assert_eq!(
        of("hs"),
        [(2, 0, hs.clone()), (4, 0, hs.clone()), (6, 0, hs)],
        "{switches:#?}"
    );
    for sw in switches.iter().filter(|sw| sw["config"] == "hs200") {
        let span = sw["trace"]["tuning_span_us"].as_f64().unwrap();
        let sum = sw["trace"]["tuning_sum_us"].as_f64().unwrap();
        assert!(sum > 0.0 && sum <= span, "{sw:#}");
    }
    let configs = section(&s, "Configs (");
    let line = |config: &str| {
        configs
            .iter()
            .find(|l| l.starts_with(&format!("{config}: speed-mode=")))
            .cloned()
            .unwrap_or_default()
    };
    assert!(
        line("hs200").contains("8-bit, mmc HS200, 200 MHz; tuned: 40 x CMD21 in ")
            && line("hs200").ends_with(" at each of 2 switches"),
        "{configs:?}"
    );
    assert!(
        line("hs")
            .ends_with("8-bit, mmc high-speed, 52 MHz; no tuning traced at each of 3 switches"),
        "{configs:?}"
    );
    let report = s.run.out_json("evidence/res/report/report.json");
    let made_by = report["header"]
        .as_array()
        .unwrap()
        .iter()
        .find(|kv| kv[0] == "Made by")
        .and_then(|kv| kv[1].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        made_by.starts_with("mmcab ")
            && made_by.ends_with(
                ": mmcab run evidence.toml --device /dev/mmcblk0 --allow-write --out \
                 /out/evidence/res"
            ),
        "{made_by}"
    );
}
