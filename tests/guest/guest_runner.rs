//! `mmcab run` with built-in knobs on the emulated eMMC (testbed/run: QEMU ast2600-evb,
//! the real Linux MMC stack, Debian armmp 6.12 and 7.x):
//! - Linux 7.x, booted 8-bit: workloads/bus-width-ab.toml runs interleaved, bus width
//!   verified before every run, and the device ends as it began (caps, power/control, ios);
//! - Linux 6.12: the same plan stops before any I/O with the "not switchable at run time"
//!   message, and the across-boots A/B (DTB 4, then DTB 8, `--label`) gives two results
//!   directories.

use crate::common::testbed;

use std::collections::BTreeMap;
use std::time::Duration;

const CAPS: &str = "/sys/kernel/debug/mmc0/caps";
const IOS: &str = "/sys/kernel/debug/mmc0/ios";
const CONTROL: &str = "/sys/bus/mmc/devices/mmc0:0001/power/control";
const DELAY: &str = "/sys/bus/mmc/devices/mmc0:0001/power/autosuspend_delay_ms";

fn plan_file(name: &str) -> String {
    std::fs::read_to_string(testbed::repo_root().join("workloads").join(name)).unwrap()
}

/// Shell lines that write `text` to `path` in the guest.
fn put(path: &str, text: &str) -> String {
    assert!(!text.contains("\nMMCAB_EOF"));
    format!("cat > {path} <<'MMCAB_EOF'\n{text}\nMMCAB_EOF\n")
}

/// Group rows of runs.csv by run number: (config, label, mb_per_s).
fn runs(csv_text: &str) -> BTreeMap<u32, (String, String)> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let mut out = BTreeMap::new();
    for row in reader.deserialize::<mmcab::record::RunRow>() {
        let row = row.unwrap();
        if row.job == mmcab::record::GROUP_JOB {
            assert!(row.mb_per_s > 0.0, "{row:?}");
            assert!(
                out.insert(row.run, (row.config, row.label)).is_none(),
                "run twice"
            );
        }
    }
    out
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn bus_width_ab_runs_interleaved_on_linux_7_and_restores_the_width() {
    let script = format!(
        "{plan}cat {CAPS} > /out/caps-before; cat {CONTROL} > /out/control-before
cat {DELAY} > /out/delay-before
mmcab knobs /dev/mmcblk0 --json > /out/knobs.json
mmcab run plan.toml --device /dev/mmcblk0 --allow-write --repeat 2 --out /out/res 2> /out/run.err
echo $? > /out/run.status
cat {CAPS} > /out/caps-after; cat {CONTROL} > /out/control-after; cat {IOS} > /out/ios-after
cat {DELAY} > /out/delay-after
",
        plan = put("plan.toml", &plan_file("bus-width-ab.toml"))
    );
    let run = testbed::Guest::new("bus_width_ab_linux7")
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

    // Interleaved: bus8, bus4, bus8, ... over 2 configs x 3 workloads x 2 repetitions.
    let rows = runs(&run.out_text("res/runs.csv"));
    assert_eq!(
        rows.keys().copied().collect::<Vec<_>>(),
        (1..=12).collect::<Vec<_>>()
    );
    for (run_no, (config, _)) in &rows {
        let want = if run_no % 2 == 1 { "bus8" } else { "bus4" };
        assert_eq!(config, want, "run {run_no}");
    }
    // Verified before every run: each run's line names the width read back from ios.
    for (run_no, (config, _)) in &rows {
        let width = &config[3..];
        let line = format!("run {run_no}/12 {config} ");
        let found = err
            .lines()
            .find(|l| l.starts_with(&line))
            .unwrap_or_else(|| panic!("{line}\n{err}"));
        assert!(
            found.contains(&format!("[verified bus-width={width}]")),
            "{found}"
        );
    }
    // meta.json: ios and EXT_CSD as observed under each config.
    let meta = run.out_json("res/meta.json");
    assert_eq!(meta["configs"][0]["ios"]["bus_width_bits"], 8);
    assert_eq!(meta["configs"][1]["ios"]["bus_width_bits"], 4);
    assert_eq!(
        &meta["configs"][0]["ext_csd_hex"].as_str().unwrap()[366..368],
        "02"
    );
    assert_eq!(
        &meta["configs"][1]["ext_csd_hex"].as_str().unwrap()[366..368],
        "01"
    );
    assert!(meta["kernel_release"].as_str().unwrap().starts_with('7'));
    assert!(meta["finished_unix_s"].is_number());
    // The device ends as it began.
    assert_eq!(run.out_text("caps-after"), run.out_text("caps-before"));
    assert_eq!(
        run.out_text("control-after"),
        run.out_text("control-before")
    );
    // Each switch's power cycle sets the autosuspend delay to 0 and puts it back.
    assert_eq!(run.out_text("delay-before").trim(), "3000");
    assert_eq!(run.out_text("delay-after"), run.out_text("delay-before"));
    assert!(run.out_text("ios-after").contains("bus width:\t3 (8 bits)"));
    // Knobs listed: bus width switchable, packing unavailable with the reasons.
    let knobs = run.out_json("knobs.json");
    let knob = |name: &str| testbed::knob(&knobs, name);
    assert_eq!(knob("bus-width")["available"], true);
    assert_eq!(knob("bus-width")["value"], "8");
    let packing = knob("packing");
    assert_eq!(packing["available"], false);
    let why = packing["reason"].as_str().unwrap();
    assert!(
        why.contains("mainline never sent packed commands")
            && why.contains("the card does not support packed commands (EXT_CSD_REV 3, "),
        "{why}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_stops_before_io_and_the_ab_goes_across_boots() {
    let plans = put("ab.toml", &plan_file("bus-width-ab.toml"))
        + &put("boot.toml", &plan_file("bus-width-boot.toml"));
    let dtb4 = testbed::Guest::new("bus_width_612_dtb4")
        .kernel("6.12")
        .bus_width(4)
        .timeout(Duration::from_secs(400))
        .run(&format!(
            "{plans}cat /sys/block/mmcblk0/stat > /out/stat-before
mmcab run ab.toml --device /dev/mmcblk0 --allow-write --out /out/ab 2> /out/ab.err
echo $? > /out/ab.status
cat /sys/block/mmcblk0/stat > /out/stat-after
mmcab knobs /dev/mmcblk0 --json > /out/knobs.json
mmcab run boot.toml --device /dev/mmcblk0 --allow-write --repeat 2 --label dtb4 --out /out/dtb4
"
        ));
    dtb4.assert_success();
    let err = dtb4.out_text("ab.err");
    assert_ne!(dtb4.out_text("ab.status").trim(), "0");
    assert!(
        err.contains("not switchable at run time on this kernel"),
        "{err}"
    );
    assert!(err.contains("--label"), "{err}");
    assert!(
        !dtb4.out_dir.join("ab").exists(),
        "a results directory was made"
    );
    assert_eq!(
        dtb4.out_text("stat-after"),
        dtb4.out_text("stat-before"),
        "I/O happened"
    );
    let knobs = dtb4.out_json("knobs.json");
    let bus = testbed::knob(&knobs, "bus-width");
    assert_eq!(bus["available"], false);
    assert_eq!(bus["value"], "4");

    let dtb8 = testbed::Guest::new("bus_width_612_dtb8")
        .kernel("6.12")
        .bus_width(8)
        .timeout(Duration::from_secs(400))
        .run(&format!(
            "{plans}mmcab run boot.toml --device /dev/mmcblk0 --allow-write --repeat 2 --label dtb8 --out /out/dtb8\n"
        ));
    dtb8.assert_success();
    for (run, label, width) in [(&dtb4, "dtb4", 4), (&dtb8, "dtb8", 8)] {
        let rows = runs(&run.out_text(&format!("{label}/runs.csv")));
        assert_eq!(rows.len(), 6, "3 workloads x 2 repetitions");
        assert!(rows
            .values()
            .all(|(config, l)| config == "as-is" && l == label));
        let meta = run.out_json(&format!("{label}/meta.json"));
        assert_eq!(meta["label"], label);
        assert_eq!(
            meta["device"]["ios"]["bus_width"], width,
            "meta.json records the boot's width"
        );
        assert!(meta["finished_unix_s"].is_number());
    }
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn sigterm_restores_the_bus_width_and_an_ext_csd_knob_switches_through_cmd6() {
    let cache = r#"
name = "cache-ab"
repetitions = 1
[[knob]]
name = "cache-ctrl"
kind = "ext_csd"
field = "CACHE_CTRL"
[[config]]
name = "on"
cache-ctrl = 1
expect.ext_csd.CACHE_CTRL = 1
[[config]]
name = "off"
cache-ctrl = 0
[[workload]]
name = "r"
[[workload.job]]
name = "r"
rw = "read"
bs = "64KiB"
size = "1MiB""#;
    let term = r#"
name = "term"
repetitions = 6
[[config]]
name = "bus4"
bus-width = 4
[[config]]
name = "bus8"
bus-width = 8
[[workload]]
name = "r"
[[workload.job]]
name = "r"
rw = "read"
bs = "64KiB"
size = "2MiB""#;
    let script = format!(
        "{}{}mmcab info --raw /dev/mmcblk0 | sed -n 3p > /out/ext_csd-32-before
mmcab run cache.toml --device /dev/mmcblk0 --out /out/cache 2> /out/cache.err
echo $? > /out/cache.status
mmcab info --raw /dev/mmcblk0 | sed -n 3p > /out/ext_csd-32-after
cat {CAPS} > /out/caps-before
mkfifo /tmp/term.err
mmcab run term.toml --device /dev/mmcblk0 --out /out/term 2> /tmp/term.err & pid=$!
# SIGTERM once mmcab says run 2 is done (it says so once the run is in runs.csv).
while IFS= read -r line; do
    echo \"$line\" >> /out/term.err
    case $line in \"run 2/\"*) kill -TERM $pid ;; esac
done < /tmp/term.err
wait $pid; echo $? > /out/term.status
cp /out/term/runs.csv /out/runs-after-term.csv
cat {CAPS} > /out/caps-after; cat {IOS} > /out/ios-after
mmcab run --resume /out/term 2> /out/resume.err; echo $? > /out/resume.status
",
        put("cache.toml", cache),
        put("term.toml", term)
    );
    let run = testbed::Guest::new("sigterm_bus_width_and_ext_csd")
        .kernel("7")
        .bus_width(8)
        .timeout(Duration::from_secs(500))
        .run(&script);
    run.assert_success();

    // EXT_CSD knob: CMD6 SWITCH of CACHE_CTRL, verified by re-reading EXT_CSD, restored.
    let err = run.out_text("cache.err");
    assert_eq!(run.out_text("cache.status").trim(), "0", "{err}");
    assert!(
        err.contains("run 1/2 on r rep 1 [verified cache-ctrl=1]"),
        "{err}"
    );
    assert!(
        err.contains("run 2/2 off r rep 1 [verified cache-ctrl=0]"),
        "{err}"
    );
    assert_eq!(
        run.out_text("ext_csd-32-after"),
        run.out_text("ext_csd-32-before")
    );

    // SIGTERM mid-run: exit 143, bus width and caps back, finished runs recorded.
    let err = run.out_text("term.err");
    assert_eq!(run.out_text("term.status").trim(), "143", "{err}");
    assert!(err.contains("--resume"), "{err}");
    assert_eq!(run.out_text("caps-after"), run.out_text("caps-before"));
    assert!(run.out_text("ios-after").contains("bus width:\t3 (8 bits)"));
    let first = runs(&run.out_text("runs-after-term.csv"));
    assert!(first.len() >= 2 && first.len() < 12, "{} runs", first.len());
    // --resume finishes the matrix without repeating a run.
    assert_eq!(
        run.out_text("resume.status").trim(),
        "0",
        "{}",
        run.out_text("resume.err")
    );
    let all = runs(&run.out_text("term/runs.csv"));
    assert_eq!(
        all.keys().copied().collect::<Vec<_>>(),
        (1..=12).collect::<Vec<_>>()
    );
    for (n, (config, _)) in &all {
        assert_eq!(config, if n % 2 == 1 { "bus4" } else { "bus8" });
    }
}
