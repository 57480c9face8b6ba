//! Kernel evidence and the CMD23/CQE knobs on the emulated eMMC (testbed/run: QEMU
//! ast2600-evb, the real Linux MMC stack, Debian armmp 7.x and 6.12):
//! - Linux 7.x: workloads/cmd23-ab.toml, CMD23 on vs off through caps bit 30 and the
//!   mmcblk rebind: per config the request counts and sizes match the workload as the
//!   queue limits split it, CMD23 on every multi-block request in one config and on none
//!   in the other; throughput and evidence side by side in the report and mail text; the
//!   device ends as it began. `cqe` is unavailable with the reasons (no queue on the card
//!   or the host).
//! - Linux 7.x: the bus-width A/B gives identical request sizes for both widths.
//! - Linux 6.12: evidence is recorded the same way; `cmd23` is unavailable (its caps
//!   refuse the bit).
//!
//! The host parses the guest's CSV files with its own code, independent of mmcab's
//! report.

use crate::common::testbed;

use std::collections::BTreeMap;
use std::time::Duration;

const CAPS: &str = "/sys/kernel/debug/mmc0/caps";
const QUEUE: &str = "/sys/block/mmcblk0/queue";

/// evidence.csv rows as maps of column -> value.
fn evidence(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header: Vec<String> = reader.headers().unwrap().iter().map(String::from).collect();
    reader
        .records()
        .map(|r| {
            header
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

fn num(row: &BTreeMap<String, String>, key: &str) -> u64 {
    row[key]
        .parse()
        .unwrap_or_else(|e| panic!("{key} = {:?}: {e} in {row:?}", row[key]))
}

/// request_sizes.csv: (config, workload, direction) -> size -> requests, over all runs.
fn sizes(text: &str) -> BTreeMap<(String, String, String), BTreeMap<u64, u64>> {
    let mut out: BTreeMap<_, BTreeMap<u64, u64>> = BTreeMap::new();
    for row in evidence(text) {
        let key = (
            row["config"].clone(),
            row["workload"].clone(),
            row["direction"].clone(),
        );
        *out.entry(key)
            .or_default()
            .entry(num(&row, "bytes"))
            .or_insert(0) += num(&row, "requests");
    }
    out
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn cmd23_ab_on_linux_7_shows_the_driver_followed_and_restores() {
    let script = format!(
        "cat {CAPS} > /out/caps-before; cat {QUEUE}/max_sectors_kb > /out/max_sectors_kb
mmcab knobs /dev/mmcblk0 --json > /out/knobs.json
# Another process holds the disk open: the rebind that cmd23=off needs is refused.
sleep 600 < /dev/mmcblk0 & holder=$!
mmcab run /workloads/cmd23-ab.toml --device /dev/mmcblk0 --allow-write --repeat 1 \
    --out /out/held > /dev/null 2> /out/held.err
echo $? > /out/held.status
kill $holder; cat {CAPS} > /out/caps-held; ls /sys/block > /out/block-held
mmcab run /workloads/cmd23-ab.toml --device /dev/mmcblk0 --allow-write --repeat 2 \
    --out /out/res 2> /out/run.err
echo $? > /out/run.status
cat {CAPS} > /out/caps-after; ls /sys/block > /out/block-after
ls /sys/kernel/tracing/instances > /out/instances-after
mmcab report /out/res > /out/mail.txt 2> /out/report.err
"
    );
    let run = testbed::Guest::new("cmd23_ab_linux7")
        .kernel("7")
        .bus_width(8)
        .timeout(Duration::from_secs(500))
        .run(&script);
    run.assert_success();
    let err = run.out_text("run.err");
    assert_eq!(
        run.out_text("run.status").trim(),
        "0",
        "{err}\n{}",
        run.report()
    );

    // While another process holds the disk, switching CMD23 (an mmcblk rebind, which
    // deletes and re-creates the disk) is refused, naming the holder; nothing changed.
    let held = run.out_text("held.err");
    assert_ne!(run.out_text("held.status").trim(), "0", "{held}");
    assert!(
        held.contains("refusing to rebind the block driver of mmc0:0001")
            && held.contains("sleep (pid ")
            && held.contains("stop what uses it and retry"),
        "{held}"
    );
    assert_eq!(run.out_text("caps-held"), run.out_text("caps-before"));
    assert!(run.out_text("block-held").contains("mmcblk0"));

    // Verified before every run by a probe read through the trace.
    for (n, config, value) in [(1, "cmd23-on", "on"), (2, "cmd23-off", "off")] {
        let line = format!("run {n}/12 {config} seq-write rep 1 [verified cmd23={value}]");
        assert!(err.contains(&line), "{line}\n{err}");
    }
    // The device ends as it began: caps, the disk, no tracing instance left behind.
    assert_eq!(run.out_text("caps-after"), run.out_text("caps-before"));
    assert!(run.out_text("block-after").contains("mmcblk0"));
    assert!(
        !run.out_text("instances-after").contains("mmcab-"),
        "{}",
        run.out_text("instances-after")
    );
    let meta = run.out_json("res/meta.json");
    let trace = meta["evidence"]["trace"].as_str().unwrap();
    assert!(
        trace.contains("mmc_request_start") && trace.contains("mmc0"),
        "{trace}"
    );

    // Per config and run: requests and sizes as the workload and the queue limits say.
    let max_request = run
        .out_text("max_sectors_kb")
        .trim()
        .parse::<u64>()
        .unwrap()
        * 1024;
    let rows = evidence(&run.out_text("res/evidence.csv"));
    let runs: Vec<_> = rows.iter().filter(|r| r["direction"] != "none").collect();
    assert_eq!(runs.len(), 12 * 2, "read and write rows of 12 runs");
    for row in rows.iter().filter(|r| r["direction"] != "none") {
        assert_eq!(row["trace"], "ok", "{row:?}");
        let (workload, dir, config) = (&row["workload"], &row["direction"], &row["config"]);
        // At least the plan's amount (min_runtime: runs last 1 s at least), in whole
        // requests of the size the I/O is split into.
        let (least, size) = match (workload.as_str(), dir.as_str()) {
            // 4 MiB in 1 MiB O_DIRECT writes or reads, split at max_sectors_kb.
            ("seq-write", "write") | ("seq-read", "read") => (4 << 20, max_request.min(1 << 20)),
            // 512 KiB in 4 KiB reads.
            ("rand-read-4k", "read") => (512 << 10, 4096),
            _ => (0, 1),
        };
        let requests = num(row, "bytes") / size;
        assert!(num(row, "bytes") >= least, "{row:?}");
        assert_eq!(num(row, "requests"), requests, "{row:?}");
        assert_eq!(num(row, "bytes"), requests * size, "{row:?}");
        assert_eq!(num(row, "stat_ios"), requests, "block stat agrees: {row:?}");
        let multi = num(row, "multi_block");
        assert_eq!(multi, requests, "every request is multi-block: {row:?}");
        let (sbc, open) = (num(row, "sbc"), num(row, "open_ended"));
        if config == "cmd23-on" {
            assert_eq!((sbc, open), (multi, 0), "CMD23 on every one: {row:?}");
        } else {
            assert_eq!((sbc, open), (0, multi), "CMD23 on none: {row:?}");
        }
        assert_eq!(num(row, "errors"), 0, "{row:?}");
        if requests > 0 {
            assert!(row["lat_mean_us"].parse::<f64>().unwrap() > 0.0, "{row:?}");
        }
    }
    let by_size = sizes(&run.out_text("res/request_sizes.csv"));
    for config in ["cmd23-on", "cmd23-off"] {
        let key = (
            config.to_string(),
            "rand-read-4k".to_string(),
            "read".to_string(),
        );
        // 4 KiB requests only, at least the plan's 128 per run (min_runtime: 1 s).
        let sizes = &by_size[&key];
        assert!(
            sizes.keys().eq([&4096]) && sizes[&4096] >= 256,
            "{config}: {sizes:?}"
        );
    }

    // Throughput and evidence side by side in the mail text.
    let mail = run.out_text("mail.txt");
    assert!(mail.lines().all(|l| l.len() <= 72), "{mail}");
    let block = mail
        .split("\n\n")
        .find(|b| b.starts_with("seq-write: MB/s"))
        .unwrap_or_else(|| panic!("no seq-write block:\n{mail}"));
    assert!(block.contains("  kernel (trace) "), "{block}");
    let line = |config: &str| {
        block
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with(config))
            .unwrap_or_else(|| panic!("{config}:\n{block}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    let on = line("cmd23-on");
    let off = line("cmd23-off");
    assert_eq!(on[on.len() - 2], "100%", "{block}");
    assert_eq!(off[off.len() - 2], "0%", "{block}");
    let kib = max_request.min(1 << 20) / 1024;
    assert_eq!(on[on.len() - 4], format!("{kib}/{kib}"), "{block}");
    let md = run.out_text("res/report/report.md");
    assert!(md.contains("## Kernel evidence"), "{md}");
    assert!(run.out_dir.join("res/report/request-sizes.png").is_file());

    // Knobs: cmd23 switchable; cqe unavailable, saying why (card and host).
    let knobs = run.out_json("knobs.json");
    let knob = |name: &str| testbed::knob(&knobs, name);
    assert_eq!(knob("cmd23")["available"], true, "{knobs}");
    assert_eq!(knob("cmd23")["value"], "on");
    let cqe = knob("cqe");
    assert_eq!(cqe["available"], false);
    let why = cqe["reason"].as_str().unwrap();
    assert!(
        why.contains("the card has no command queue") && why.contains("CMDQ_SUPPORT = 0"),
        "{why}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn bus_width_ab_gives_identical_request_sizes_for_both_widths() {
    let run = testbed::Guest::new("bus_width_sizes_linux7")
        .kernel("7")
        .bus_width(8)
        .timeout(Duration::from_secs(500))
        .run(
            "mmcab run /workloads/bus-width-ab.toml --device /dev/mmcblk0 --allow-write \
             --repeat 1 --out /out/res --quiet",
        );
    run.assert_success();
    let by_size = sizes(&run.out_text("res/request_sizes.csv"));
    let mut compared = 0;
    for ((config, workload, dir), sizes) in &by_size {
        if config != "bus8" {
            continue;
        }
        let other = (String::from("bus4"), workload.clone(), dir.clone());
        // The same sizes; not the same counts: each run lasts at least 1 s
        // (min_runtime), so the faster width does more of them.
        assert_eq!(
            Some(sizes.keys().collect::<Vec<_>>()),
            by_size.get(&other).map(|s| s.keys().collect()),
            "{workload} {dir}"
        );
        compared += 1;
    }
    assert_eq!(compared, 3, "three workloads: {by_size:?}");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_records_evidence_and_cmd23_is_unavailable() {
    let run = testbed::Guest::new("evidence_linux612")
        .kernel("6.12")
        .bus_width(4)
        .run(
            "mmcab knobs /dev/mmcblk0 --json > /out/knobs.json
mmcab run /workloads/bus-width-boot.toml --device /dev/mmcblk0 --allow-write --repeat 1 \
    --workload seq-write --out /out/res --quiet
mmcab run /workloads/bus-width-boot.toml --device /dev/mmcblk0 --allow-write --repeat 1 \
    --workload seq-write --out /out/off --quiet --no-evidence",
        );
    run.assert_success();
    let knobs = run.out_json("knobs.json");
    let cmd23 = testbed::knob(&knobs, "cmd23");
    assert_eq!(cmd23["available"], false);
    let why = cmd23["reason"].as_str().unwrap();
    assert!(
        why.contains("not switchable at run time on this kernel"),
        "{why}"
    );
    let rows = evidence(&run.out_text("res/evidence.csv"));
    let write = rows.iter().find(|r| r["direction"] == "write").unwrap();
    assert_eq!(write["trace"], "ok");
    assert!(num(write, "requests") > 0 && num(write, "sbc") == num(write, "multi_block"));
    // --no-evidence: no evidence files, and meta.json says it was off.
    assert!(!run.out_dir.join("off/evidence.csv").exists());
    let meta = run.out_json("off/meta.json");
    assert!(meta["evidence"]["trace"]
        .as_str()
        .unwrap()
        .contains("--no-evidence"));
}
