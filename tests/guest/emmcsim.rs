//! mmcab on the simulated eMMC 5.1 (testbed/emmcsim/: a software MMC host with a card
//! behind it, booted by `testbed/run --card sim`; EXT_CSD_REV 8, sector-addressed 4 GiB,
//! MAX_PACKED_WRITES 63, CID SIMEMC manfid 0xee), with `--icount 1` so the card's timing
//! does not follow the host's load. Two boots, several checks each, each asserted on its
//! own:
//! - Linux 7.x: `info --json` decodes the card and records the emmcsim host driver with
//!   its parameters; `probe packed` passes; with `fail_packed_entry=5` it fails naming
//!   entry 5 from PACKED_FAILURE_INDEX, exit 3, and EXCEPTION_EVENTS_CTRL is back; the
//!   ioctl engine and the block layer read each other's writes (sector addressing);
//!   workloads/packed-ioctl.toml runs, its packed configs sent packed commands, and the
//!   card counted exactly those;
//! - Linux 6.12, 4-bit bus, the card booted `hs200=1`: `probe packed` passes;
//!   workloads/bus-width-boot.toml runs with a `--label` and records the 4-bit bus;
//!   `info` shows it; `knobs` says hs200 (now) and hs are offered and switchable.
//!
//! And testbed/run's refusal of the module's parameters: an unknown name before any
//! boot, a value out of the module's range with the module's own message.

use crate::common::stamp;
use crate::common::testbed;

use stamp::check_stamp;
use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};
use testbed::{hex_bytes, ios_bits, Guest, GuestRun};

const EXT_CSD: &str = "/sys/kernel/debug/mmc0/mmc0:0001/ext_csd";
const PARAMS: &str = "/sys/module/emmcsim/parameters";
const STATS: &str = "/sys/kernel/debug/emmcsim/stats";
/// EXT_CSD[56..58]: EXCEPTION_EVENTS_CTRL (PACKED_EVENT_EN is bit 3 of byte 56).
const EXCEPTION_EVENTS_CTRL: usize = 56;

/// Shell lines that write `text` to `path` in the guest.
fn put(path: &str, text: &str) -> String {
    assert!(!text.contains("\nMMCAB_EOF"));
    format!("cat > {path} <<'MMCAB_EOF'\n{text}\nMMCAB_EOF\n")
}

fn plan_file(name: &str) -> String {
    std::fs::read_to_string(testbed::repo_root().join("workloads").join(name)).unwrap()
}

/// Says how long a boot took (shown with --nocapture and in a failing test's output).
fn timed(what: &str, run: GuestRun) -> GuestRun {
    eprintln!("{what}: {:.1} s wall", run.wall.as_secs_f64());
    run
}

/// The ioctl engine against the block layer, both ways. Offsets of the ioctl writes
/// (read back by dd and by the sync engine) and of the sync writes (read by the ioctl
/// engine).
const IOCTL_AT: u64 = 8 << 20;
const SYNC_AT: u64 = 16 << 20;
const BLOCKS: u64 = 16;

fn engines_plan() -> String {
    format!(
        r#"
name = "engines"
[[workload]]
name = "ioctl-write"
[[workload.job]]
name = "w"
rw = "write"
engine = "ioctl"
bs = "4KiB"
offset = {IOCTL_AT}
size = "64KiB"
pattern = "zeros"
verify = true
[[workload]]
name = "sync-read-of-ioctl"
[[workload.job]]
name = "r"
rw = "read"
bs = "4KiB"
offset = {IOCTL_AT}
size = "64KiB"
verify = true
[[workload]]
name = "sync-write"
[[workload.job]]
name = "w"
rw = "write"
bs = "16KiB"
offset = {SYNC_AT}
size = "256KiB"
verify = true
[[workload]]
name = "ioctl-read-of-sync"
[[workload.job]]
name = "r"
rw = "read"
engine = "ioctl"
bs = "16KiB"
offset = {SYNC_AT}
size = "256KiB"
verify = true
"#
    )
}

/// ioctl reads of a region nobody wrote: verify must find every block bad.
const NEVER_WRITTEN: &str = r#"
name = "unwritten"
[[workload]]
name = "ioctl-read"
[[workload.job]]
name = "r"
rw = "randread"
engine = "ioctl"
bs = "4KiB"
offset = "40MiB"
size = "1MiB"
io_size = "64KiB"
verify = true
"#;

/// (blocks_checked, bad_blocks) of the first job of `workload` in `mmcab run --json`.
fn job_verify(json: &serde_json::Value, workload: &str) -> (u64, u64) {
    let w = json["workloads"]
        .as_array()
        .unwrap_or_else(|| panic!("no workloads in {json}"))
        .iter()
        .find(|w| w["workload"] == workload)
        .unwrap_or_else(|| panic!("no workload {workload} in {json}"));
    let v = &w["jobs"][0]["verify"];
    (
        v["blocks_checked"].as_u64().unwrap(),
        v["bad_blocks"].as_u64().unwrap(),
    )
}

/// `NAME VALUE` lines (the module's stats, the parameters as the script lists them).
fn pairs(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

fn stat(text: &str, name: &str) -> u64 {
    pairs(text)
        .into_iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no {name} in emmcsim stats:\n{text}"))
        .1
        .parse()
        .unwrap()
}

/// Boot 1 (Linux 7.x): every check of the module doc's first item, in order; each step
/// leaves its status and output in /out for the host to assert. It starts as a board
/// without debugfs mounted: `info` mounts it, and the knob run at the end (cmd23, which
/// writes debugfs `caps`) works on that mount.
fn linux_7_script() -> String {
    put("engines.toml", &engines_plan())
        + &put("unwritten.toml", NEVER_WRITTEN)
        + &format!(
            "cut -d' ' -f1 /proc/uptime > /out/uptime-start
umount /sys/kernel/debug
grep -c ' debugfs ' /proc/mounts > /out/debugfs-before
mmcab info --json /dev/mmcblk0 > /out/info.json 2> /out/info.err
grep ' debugfs ' /proc/mounts > /out/debugfs-after
for f in {PARAMS}/*; do echo \"${{f##*/}} $(cat $f)\"; done > /out/params
cat {EXT_CSD} > /out/ext_csd
mmcab probe packed /dev/mmcblk0 --allow-write --offset 32M --json > /out/probe.json 2> /out/probe.err
echo $? > /out/probe.status
echo 5 > {PARAMS}/fail_packed_entry
mmcab info --json /dev/mmcblk0 > /out/fail-info-before.json
mmcab probe packed /dev/mmcblk0 --allow-write --offset 32M --entries 8 --json > /out/fail.json 2> /out/fail.err
echo $? > /out/fail.status
mmcab info --json /dev/mmcblk0 > /out/fail-info-after.json
cat {EXT_CSD} > /out/fail-ext_csd-after
echo 0 > {PARAMS}/fail_packed_entry
cat {PARAMS}/fail_packed_entry > /out/fail-param-after
mmcab run engines.toml --device /dev/mmcblk0 --allow-write --json > /out/engines.json 2> /out/engines.err
echo $? > /out/engines.status
dd if=/dev/mmcblk0 iflag=direct bs=4096 skip={skip} count={BLOCKS} of=/out/ioctl-blocks.bin 2>/dev/null
mmcab run unwritten.toml --device /dev/mmcblk0 --json > /out/unwritten.json 2> /out/unwritten.err
echo $? > /out/unwritten.status
cat {STATS} > /out/stats-before
cut -d' ' -f1 /proc/uptime > /out/uptime-packed
mmcab run /workloads/packed-ioctl.toml --device /dev/mmcblk0 --allow-write --scale-down 16 --repeat 1 --out /out/packed > /out/packed.txt 2> /out/packed.err
echo $? > /out/packed.status
cut -d' ' -f1 /proc/uptime > /out/uptime-end
cat {STATS} > /out/stats-after
mmcab run /workloads/cmd23-ab.toml --device /dev/mmcblk0 --allow-write --repeat 1 --workload seq-write,seq-read --out /out/cmd23 > /out/cmd23.txt 2> /out/cmd23.err
echo $? > /out/cmd23.status
",
            skip = IOCTL_AT / 4096
        )
}

/// A CSV file of /out.
fn out_csv(run: &GuestRun, name: &str) -> csv::Reader<std::io::Cursor<Vec<u8>>> {
    csv::Reader::from_reader(std::io::Cursor::new(run.out_text(name).into_bytes()))
}

/// The trimmed text of /out/`name`.
fn text(run: &GuestRun, name: &str) -> String {
    run.out_text(name).trim().to_string()
}

/// Guest seconds between two /proc/uptime readings the script saved.
fn guest_seconds(run: &GuestRun, from: &str, to: &str) -> f64 {
    let t = |f: &str| text(run, f).parse::<f64>().unwrap();
    t(to) - t(from)
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_info_probe_fault_engines_and_packed_plan_on_the_sim_card() {
    let run = timed(
        "Linux 7.x, sim card, icount 1",
        Guest::new("emmcsim_linux7")
            .kernel("7")
            .card("sim")
            .icount(1)
            .timeout(Duration::from_secs(240))
            .run(&linux_7_script()),
    );
    run.assert_success();
    let ctx = run.report();
    eprintln!(
        "  guest: {:.1} s of checks, of which packed-ioctl.toml {:.1} s",
        guest_seconds(&run, "uptime-start", "uptime-end"),
        guest_seconds(&run, "uptime-packed", "uptime-end")
    );

    // (a) info --json decodes the simulated card and records its host driver.
    let info = run.out_json("info.json");
    let err = run.out_text("info.err");
    assert_eq!(info["ext_csd"]["rev"], 8, "EXT_CSD_REV\n{err}\n{ctx}");
    assert_eq!(
        info["ext_csd"]["raw"].as_str().unwrap_or(""),
        text(&run, "ext_csd"),
        "info's EXT_CSD (CMD8 via ioctl) differs from the kernel's debugfs copy\n{ctx}"
    );
    assert_eq!(info["identity"]["name"], "SIMEMC", "CID name\n{ctx}");
    assert_eq!(info["identity"]["manfid"], 0xee, "CID manfid\n{ctx}");
    // mmcab has no entry for 0xee (it never names the simulated card itself): the card
    // is recognisable by what it reports, its name and its host driver (below).
    let maker = info["identity"]["manufacturer"].as_str().unwrap_or("");
    assert!(
        maker.starts_with("unknown") && maker.contains("0xee"),
        "manfid 0xee should be an unknown manufacturer to mmcab: {maker:?}\n{ctx}"
    );
    assert_eq!(
        info["capacity_bytes"],
        4u64 << 30,
        "the module's default capacity_mb 4096\n{ctx}"
    );
    assert_eq!(
        info["ios"]["bus_width"], 8,
        "the module's default bus\n{ctx}"
    );
    assert_eq!(
        info["capabilities"]["packed"]["supported"], true,
        "packed capability\n{ctx}"
    );
    assert_eq!(
        info["capabilities"]["packed"]["max_packed_writes"], 63,
        "MAX_PACKED_WRITES\n{ctx}"
    );
    let driver = &info["host_driver"];
    assert_eq!(driver["driver"], "emmcsim", "host_driver.driver\n{ctx}");
    assert_eq!(driver["module"], "emmcsim", "host_driver.module\n{ctx}");
    assert_eq!(driver["builtin"], false, "host_driver.builtin\n{ctx}");
    // Every parameter as the module's own files say, no more, no fewer.
    let recorded = driver["parameters"]
        .as_object()
        .unwrap_or_else(|| panic!("host_driver.parameters is not an object\n{ctx}"));
    let files = pairs(&run.out_text("params"));
    assert!(
        files.len() >= 17,
        "the module's parameters: {files:?}\n{ctx}"
    );
    assert_eq!(
        recorded.len(),
        files.len(),
        "host_driver.parameters vs {PARAMS}\n{ctx}"
    );
    for (name, value) in &files {
        assert_eq!(
            recorded.get(name).and_then(|v| v.as_str()),
            Some(value.as_str()),
            "host_driver.parameters.{name} vs {PARAMS}/{name}\n{ctx}"
        );
    }
    assert_eq!(recorded["max_packed_writes"], "63", "{ctx}");

    // (b) probe packed passes: every entry and canary read back right.
    let probe = run.out_json("probe.json");
    let err = run.out_text("probe.err");
    assert_eq!(
        text(&run, "probe.status"),
        "0",
        "probe packed\n{err}\n{ctx}"
    );
    assert_eq!(probe["schema"], 1, "probe packed --json: {probe}");
    assert_eq!(probe["passed"], true, "probe packed: {probe}\n{ctx}");
    assert_eq!(probe["max_packed_writes"], 63, "{ctx}");
    let blocks = probe["blocks"].as_array().unwrap();
    assert_eq!(
        blocks.len(),
        2 * 63 + 1,
        "63 entries and their canaries\n{ctx}"
    );
    assert!(
        blocks.iter().all(|b| b["problem"].is_null()),
        "a block read back wrong: {probe}\n{ctx}"
    );
    assert!(
        probe["not_restored"].as_array().unwrap().is_empty(),
        "{probe}\n{ctx}"
    );

    // (c) fail_packed_entry=5: the card fails entry 5 and says so in PACKED_FAILURE_INDEX;
    // exit 3; the entries before it landed; EXCEPTION_EVENTS_CTRL is put back.
    let fail = run.out_json("fail.json");
    let err = run.out_text("fail.err");
    assert_eq!(
        text(&run, "fail.status"),
        "3",
        "probe packed with a failed entry: the documented exit status 3\n{err}\n{ctx}"
    );
    assert_eq!(fail["passed"], false, "{fail}\n{ctx}");
    assert_eq!(
        fail["card_status"]["failure_index"], 5,
        "PACKED_FAILURE_INDEX\n{fail}\n{ctx}"
    );
    let verdict = fail["verdict"].as_str().unwrap_or("");
    assert!(
        verdict.contains("the card failed entry 5") && verdict.contains("PACKED_FAILURE_INDEX 5"),
        "the verdict does not name entry 5 from PACKED_FAILURE_INDEX: {verdict:?}\n{ctx}"
    );
    let entry = |n: u32| {
        fail["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["what"] == format!("entry {n}"))
            .unwrap_or_else(|| panic!("no entry {n} in {fail}"))
    };
    for n in 1..=4 {
        assert!(entry(n)["problem"].is_null(), "entry {n}: {fail}\n{ctx}");
    }
    assert!(!entry(5)["problem"].is_null(), "entry 5: {fail}\n{ctx}");
    assert_eq!(
        fail["packed_event_enabled_by_mmcab"], true,
        "the probe did not set PACKED_EVENT_EN (the restore check below would be vacuous)\n{ctx}"
    );
    let events = |json: &serde_json::Value| {
        let raw = json["ext_csd"]["raw"].as_str().unwrap_or("");
        hex_bytes(raw)[EXCEPTION_EVENTS_CTRL..EXCEPTION_EVENTS_CTRL + 2].to_vec()
    };
    let before = events(&run.out_json("fail-info-before.json"));
    assert_eq!(
        events(&run.out_json("fail-info-after.json")),
        before,
        "EXCEPTION_EVENTS_CTRL (EXT_CSD[56]) not put back (info --json)\n{ctx}"
    );
    assert_eq!(
        hex_bytes(&run.out_text("fail-ext_csd-after"))[EXCEPTION_EVENTS_CTRL],
        before[0],
        "EXCEPTION_EVENTS_CTRL (EXT_CSD[56]) not put back (debugfs ext_csd)\n{ctx}"
    );
    assert_eq!(text(&run, "fail-param-after"), "0", "{ctx}");

    // (d) The ioctl engine and the block layer read each other's writes on a
    // sector-addressed card: ioctl writes checked by mmcab's sync verify and by this
    // test's own parser of the blocks dd read; sync writes verified by ioctl reads.
    let err = run.out_text("engines.err");
    assert_eq!(text(&run, "engines.status"), "0", "{err}\n{ctx}");
    let engines = run.out_json("engines.json");
    assert_eq!(
        job_verify(&engines, "ioctl-write"),
        (BLOCKS, 0),
        "ioctl writes, read back by the ioctl engine\n{ctx}"
    );
    assert_eq!(
        job_verify(&engines, "sync-read-of-ioctl"),
        (BLOCKS, 0),
        "ioctl writes, read back by the block layer (sync engine, O_DIRECT)\n{ctx}"
    );
    assert_eq!(
        job_verify(&engines, "ioctl-read-of-sync"),
        (16, 0),
        "block-layer writes, read back by the ioctl engine\n{ctx}"
    );
    let bin = std::fs::read(run.out_dir.join("ioctl-blocks.bin")).unwrap();
    assert_eq!(
        bin.len() as u64,
        BLOCKS * 4096,
        "dd iflag=direct of the ioctl-written blocks\n{ctx}"
    );
    let ids: Vec<u64> = bin
        .chunks(4096)
        .enumerate()
        .map(|(i, b)| check_stamp(b, IOCTL_AT + i as u64 * 4096))
        .collect();
    assert!(
        ids.iter().all(|&id| id == ids[0]),
        "the ioctl-written blocks come from more than one run: {ids:?}\n{ctx}"
    );
    assert_eq!(
        text(&run, "unwritten.status"),
        "3",
        "ioctl reads of never-written blocks must fail verify (exit 3)\n{}\n{ctx}",
        run.out_text("unwritten.err")
    );
    assert_eq!(
        job_verify(&run.out_json("unwritten.json"), "ioctl-read"),
        (16, 16),
        "ioctl reads of never-written blocks: every one bad\n{ctx}"
    );

    // (e) packed-ioctl.toml runs to completion; its packed configs sent packed commands
    // (CMD23 with bit 30 in the mmc trace), the unpacked one none.
    let err = run.out_text("packed.err");
    assert_eq!(
        text(&run, "packed.status"),
        "0",
        "workloads/packed-ioctl.toml\n{err}\n{ctx}"
    );
    let mut reader = out_csv(&run, "packed/runs.csv");
    let mut configs = std::collections::BTreeMap::<String, u32>::new();
    for row in reader.deserialize::<mmcab::record::RunRow>() {
        let row = row.unwrap();
        if row.job == mmcab::record::GROUP_JOB {
            assert!(row.mb_per_s > 0.0, "{row:?}\n{ctx}");
            *configs.entry(row.config).or_default() += 1;
        }
    }
    let want: std::collections::BTreeMap<String, u32> =
        ["packed-max", "packed4", "packed8", "unpacked"]
            .iter()
            .map(|c| (c.to_string(), 9))
            .collect();
    assert_eq!(
        configs, want,
        "runs.csv: 9 workloads per config, once\n{ctx}"
    );
    let mut reader = out_csv(&run, "packed/evidence.csv");
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("evidence.csv has no {name} column: {headers:?}"))
    };
    let (config, direction, sbc_packed) = (col("config"), col("direction"), col("sbc_packed"));
    let mut packed_cmds = std::collections::BTreeMap::<String, u64>::new();
    for record in reader.records() {
        let record = record.unwrap();
        if &record[direction] == "write" {
            *packed_cmds.entry(record[config].to_string()).or_default() +=
                record[sbc_packed].parse::<u64>().unwrap_or(0);
        }
    }
    assert_eq!(
        packed_cmds.get("unpacked"),
        Some(&0),
        "the unpacked config sent packed commands: {packed_cmds:?}\n{ctx}"
    );
    for c in ["packed4", "packed8", "packed-max"] {
        assert!(
            packed_cmds.get(c).is_some_and(|&n| n > 0),
            "config {c} sent no packed command (evidence.csv sbc_packed): {packed_cmds:?}\n{ctx}"
        );
    }

    // (f) The card counted packed writes: exactly the packed commands the kernel's trace
    // saw during the plan.
    let before = run.out_text("stats-before");
    let after = run.out_text("stats-after");
    let card = stat(&after, "packed_writes") - stat(&before, "packed_writes");
    assert!(
        stat(&after, "packed_writes") > 0,
        "emmcsim stats: packed_writes 0\n{after}\n{ctx}"
    );
    assert_eq!(
        card,
        packed_cmds.values().sum::<u64>(),
        "packed writes the card counted during packed-ioctl.toml vs the trace's \
         (evidence.csv sbc_packed): {packed_cmds:?}\nbefore:\n{before}\nafter:\n{after}\n{ctx}"
    );
    assert_eq!(
        stat(&after, "packed_failures") - stat(&before, "packed_failures"),
        0,
        "a packed write failed during the plan\n{ctx}"
    );

    // (g) Open-ended transfers (cmd23 = off: CMD18/CMD25 ended by CMD12) move the same
    // bytes at the model's speed: one command per request either way (CMD23 or CMD12).
    // The knob run works on the debugfs mount `info` made (the boot started without).
    assert_eq!(
        text(&run, "debugfs-before"),
        "0",
        "debugfs unmounted\n{ctx}"
    );
    assert!(
        text(&run, "debugfs-after").contains(" /sys/kernel/debug debugfs rw,"),
        "info mounts debugfs read-write: {}\n{ctx}",
        text(&run, "debugfs-after")
    );
    assert_eq!(
        text(&run, "cmd23.status"),
        "0",
        "cmd23-ab.toml on the sim card, debugfs as info mounted it\n{}\n{ctx}",
        text(&run, "cmd23.err")
    );
    let mut mbps: BTreeMap<(String, String), f64> = BTreeMap::new();
    for row in out_csv(&run, "cmd23/runs.csv").deserialize::<BTreeMap<String, String>>() {
        let row = row.unwrap();
        if row["job"] != "all" {
            continue;
        }
        assert_eq!(row["verify_errors"], "0", "{row:?}\n{ctx}");
        // At least the plan's 4 MiB, in whole 1 MiB I/Os (min_runtime: 1 s at least).
        let bytes: u64 = row["bytes"].parse().unwrap();
        assert!(bytes >= 4 << 20 && bytes % (1 << 20) == 0, "{row:?}\n{ctx}");
        let key = (row["workload"].clone(), row["config"].clone());
        mbps.insert(key, row["mb_per_s"].parse().unwrap());
    }
    for workload in ["seq-write", "seq-read"] {
        let on = mbps[&(workload.to_string(), "cmd23-on".to_string())];
        let off = mbps[&(workload.to_string(), "cmd23-off".to_string())];
        assert!(
            (off / on - 1.0).abs() < 0.05,
            "{workload}: cmd23 off {off:.2} MB/s vs on {on:.2}: the model gives both one \
             command per request\n{ctx}"
        );
    }
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_bus_4_probe_and_bus_width_boot_plan_on_the_sim_card() {
    let label = "sim-bus4";
    let script = put("boot.toml", &plan_file("bus-width-boot.toml"))
        + &format!(
            "uname -r > /out/uname
cat /sys/kernel/debug/mmc0/ios > /out/ios
mmcab info /dev/mmcblk0 > /out/info.txt 2> /out/info.err
mmcab info --json /dev/mmcblk0 > /out/info.json
mmcab knobs /dev/mmcblk0 > /out/knobs.txt 2> /out/knobs.err
mmcab knobs --json /dev/mmcblk0 > /out/knobs.json 2>> /out/knobs.err
mmcab probe packed /dev/mmcblk0 --allow-write --offset 32M --json > /out/probe.json 2> /out/probe.err
echo $? > /out/probe.status
mmcab run boot.toml --device /dev/mmcblk0 --allow-write --label {label} --scale-down 4 --out /out/boot 2> /out/boot.err
echo $? > /out/boot.status
"
        );
    let run = timed(
        "Linux 6.12, sim card bus 4 hs200, icount 1",
        Guest::new("emmcsim_linux612_bus4")
            .kernel("6.12")
            .card("sim,hs200=1")
            .bus_width(4)
            .icount(1)
            .timeout(Duration::from_secs(240))
            .run(&script),
    );
    run.assert_success();
    let ctx = run.report();
    assert!(
        text(&run, "uname").starts_with("6.12."),
        "not Linux 6.12\n{ctx}"
    );
    assert_eq!(ios_bits(&run.out_text("ios")), 4, "kernel ios\n{ctx}");

    // probe packed passes on 6.12 too (it passes a user CMD23 on since 6.8).
    let probe = run.out_json("probe.json");
    assert_eq!(
        text(&run, "probe.status"),
        "0",
        "probe packed on 6.12\n{}\n{ctx}",
        run.out_text("probe.err")
    );
    assert_eq!(
        probe["passed"], true,
        "probe packed on 6.12: {probe}\n{ctx}"
    );
    assert_eq!(probe["sbc"]["passthrough"], "yes", "{probe}\n{ctx}");

    // bus-width-boot.toml, as its header says: one --label per boot; meta.json records
    // the label and the boot's 4-bit bus. A quarter of its runs (`--scale-down 4`: runs
    // of at least 0.25 s instead of 1 s): nothing here is timed, and an --icount boot
    // costs its guest time (9 runs of 1 s made this boot 73 s of the tier's time).
    let err = run.out_text("boot.err");
    assert_eq!(
        text(&run, "boot.status"),
        "0",
        "workloads/bus-width-boot.toml\n{err}\n{ctx}"
    );
    let meta = run.out_json("boot/meta.json");
    assert_eq!(meta["label"], label, "meta.json label\n{ctx}");
    assert_eq!(
        meta["device"]["ios"]["bus_width"], 4,
        "meta.json does not record the boot's 4-bit bus\n{ctx}"
    );
    assert!(meta["finished_unix_s"].is_number(), "{ctx}");
    let mut reader = out_csv(&run, "boot/runs.csv");
    let groups: Vec<mmcab::record::RunRow> = reader
        .deserialize::<mmcab::record::RunRow>()
        .map(Result::unwrap)
        .filter(|r| r.job == mmcab::record::GROUP_JOB)
        .collect();
    assert_eq!(groups.len(), 9, "3 workloads x 3 repetitions\n{ctx}");
    assert!(
        groups
            .iter()
            .all(|r| r.label == label && r.config == "as-is" && r.mb_per_s > 0.0),
        "runs.csv rows: {groups:?}\n{ctx}"
    );

    // info shows the 4-bit bus: the summary, the Bus section, --json.
    let info = run.out_text("info.txt");
    let first = info.lines().next().unwrap_or("");
    assert!(
        first.contains("SIMEMC") && first.contains(", 4-bit "),
        "info's summary line: {first:?}\n{ctx}"
    );
    assert!(
        info.lines().any(|l| {
            let l = l.trim();
            l.starts_with("bus width") && l.ends_with(" 4 bits")
        }),
        "info's Bus section has no 'bus width 4 bits':\n{info}\n{ctx}"
    );
    assert_eq!(
        run.out_json("info.json")["ios"]["bus_width"],
        4,
        "info --json ios.bus_width\n{ctx}"
    );

    // knobs: on 6.12 (speed bits writable since 6.7) the card booted hs200=1 runs HS200
    // on its 4 bits, and hs is offered by card and host and switchable; the card has no
    // DDR52 or HS400 (CARD_TYPE 0x13).
    let knobs = run.out_json("knobs.json");
    let err = run.out_text("knobs.err");
    let speed = &knobs["speed_modes"];
    assert_eq!(speed["now"]["mode"], "hs200", "{speed}\n{err}\n{ctx}");
    assert_eq!(speed["inputs"]["card_type"], 0x13, "{speed}\n{ctx}");
    let mode = |name: &str| {
        let m = speed["modes"]
            .as_array()
            .and_then(|modes| modes.iter().find(|m| m["mode"] == name));
        m.cloned()
            .unwrap_or_else(|| panic!("knobs --json has no mode {name}: {knobs}\n{ctx}"))
    };
    for (name, switch) in [("hs200", "now"), ("hs", "yes")] {
        let m = mode(name);
        assert_eq!(m["offered"], true, "{name}: {m}\n{ctx}");
        assert_eq!(m["switch"], switch, "{name}: {m}\n{ctx}");
    }
    for name in ["ddr52", "hs400"] {
        let m = mode(name);
        assert_eq!(
            (&m["offered"], &m["switch"]),
            (&false.into(), &"no".into()),
            "{m}\n{ctx}"
        );
        assert!(
            m["reason"]
                .as_str()
                .unwrap_or("")
                .contains("CARD_TYPE 0x13"),
            "{m}\n{ctx}"
        );
    }
    let text = run.out_text("knobs.txt");
    assert!(
        text.contains("\nhs         yes        yes\n")
            && text.contains("\nhs200      yes        now\n"),
        "mmcab knobs:\n{text}\n{ctx}"
    );
}

/// An unknown parameter is refused by testbed/run before any boot, in one line naming it;
/// a value outside the module's range boots, fails the module's init, and testbed/run
/// passes on the module's own line. Both exit 125.
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn sim_card_parameters_are_refused_in_one_line() {
    testbed::require_setup();
    // The module's build (cached) first, so the refusal's time is testbed/run's own.
    let build = Command::new(testbed::repo_root().join("testbed/build-emmcsim"))
        .args(["--kernel", "6.12"])
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "testbed/build-emmcsim --kernel 6.12:\n{}",
        String::from_utf8_lossy(&build.stderr)
    );
    let started = Instant::now();
    let out = Command::new(testbed::repo_root().join("testbed/run"))
        .args(["--card", "sim,no_such_param=1", "--", "true"])
        .env("MMCAB_TESTBED_MMCAB", "/nonexistent-not-needed")
        .output()
        .unwrap();
    let took = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("unknown parameter refused in {:.2} s", took.as_secs_f64());
    assert_eq!(out.status.code(), Some(125), "unknown parameter: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "unknown parameter: one line, got:\n{err}");
    assert!(
        lines[0].starts_with("testbed/run: error: ") && lines[0].contains("'no_such_param'"),
        "the line does not name no_such_param: {err}"
    );
    // It did not boot: the refusal is testbed/run's first error, and past it the run
    // would stop at the missing mmcab (MMCAB_TESTBED_MMCAB), before any boot, with
    // another line. (How long the refusal took is printed above, not bounded: a loaded
    // machine is slow without being wrong.)

    let run = timed(
        "Linux 7.x, sim,max_packed_writes=300, icount off (refused by the module)",
        Guest::new("emmcsim_param_refused")
            .kernel("7")
            .card("sim,max_packed_writes=300")
            .icount_off()
            .timeout(Duration::from_secs(120))
            .run("echo the module loaded > /out/loaded"),
    );
    let ctx = run.report();
    assert_eq!(run.status, Some(125), "max_packed_writes=300\n{ctx}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "max_packed_writes=300: one line\n{ctx}");
    assert!(
        lines[0]
            .starts_with("testbed/run: error: emmcsim: invalid parameter max_packed_writes=300: "),
        "not the module's own message\n{ctx}"
    );
}
