//! The ioctl engine and `mmcab probe packed` on the emulated eMMC (testbed/run: QEMU
//! ast2600-evb, the real Linux MMC stack, Debian armmp 6.12 and 7.x; the card is EXT_CSD
//! rev 3, byte addressed, without packed commands):
//! - unpacked ioctl writes land where the block layer finds them: blocks copied out with
//!   `dd iflag=direct` are checked here by a parser of the verify stamp written for this
//!   test (not mmcab's), and mmcab's own read-back verify agrees;
//! - ioctl reads verify what the block layer wrote, and find nothing on a region nobody
//!   wrote (the check is not vacuous);
//! - the card's node the ioctl engine cannot open (a node of mmcblk0 on a `nodev` mount:
//!   EACCES even for root) is a failed I/O, exit status 4, named in the one line of one;
//! - workloads/packed-ioctl.toml and `probe packed` are refused with the card's reason,
//!   before any I/O; `probe packed --force` sees the kernel's CMD23 pass-through in
//!   tracefs, sees that this card stores a packed command as plain data, and puts the
//!   region back; a packed ioctl write job with `--force` runs, and its verify finds
//!   every block wrong (the card stored headers and shifted data).
//!
//! This file holds the tests that boot QEMU guests (tier 3); the others are in
//! tests/plain/ioctl_engine.rs.

use crate::common::stamp;
use crate::common::testbed;

use stamp::check_stamp;

use std::time::Duration;

/// Shell lines that write `text` to `path` in the guest.
fn put(path: &str, text: &str) -> String {
    assert!(!text.contains("\nMMCAB_EOF"));
    format!("cat > {path} <<'MMCAB_EOF'\n{text}\nMMCAB_EOF\n")
}

/// Offsets of the blocks the ioctl write job writes, and of the sync writes the ioctl
/// reads check.
const IOCTL_AT: u64 = 8 << 20;
const SYNC_AT: u64 = 16 << 20;
const BLOCKS: u64 = 16;

fn plan() -> String {
    format!(
        r#"
name = "ioctl"
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
name = "ioctl-randwrite"
[[workload.job]]
name = "w"
rw = "randwrite"
engine = "ioctl"
bs = "8KiB"
offset = "24MiB"
size = "1MiB"
io_size = "128KiB"
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
name = "ioctl-read"
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

const FORCED: &str = r#"
name = "forced"
[[workload]]
name = "packed-forced"
[[workload.job]]
name = "w"
rw = "write"
engine = "ioctl"
bs = "4KiB"
offset = "40MiB"
size = "64KiB"
packed = 4
verify = true
"#;

const NEVER_WRITTEN: &str = r#"
name = "unwritten"
[[workload]]
name = "ioctl-read"
[[workload.job]]
name = "r"
rw = "randread"
engine = "ioctl"
bs = "4KiB"
offset = "100MiB"
size = "1MiB"
io_size = "64KiB"
verify = true
"#;

fn job_verify(json: &serde_json::Value, workload: &str) -> (u64, u64) {
    let w = json["workloads"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["workload"] == workload)
        .unwrap_or_else(|| panic!("no workload {workload} in {json}"));
    let v = &w["jobs"][0]["verify"];
    (
        v["blocks_checked"].as_u64().unwrap(),
        v["bad_blocks"].as_u64().unwrap(),
    )
}

const STAT: &str = "/sys/block/mmcblk0/stat";

/// The guest script shared by both kernels.
fn script() -> String {
    let skip = IOCTL_AT / 4096;
    put("plan.toml", &plan())
        + &put("unwritten.toml", NEVER_WRITTEN)
        + &put("forced.toml", FORCED)
        + &format!(
            "mmcab run plan.toml --device /dev/mmcblk0 --allow-write --json > /out/run.json 2> /out/run.err
echo $? > /out/run.status
dd if=/dev/mmcblk0 iflag=direct bs=4096 skip={skip} count={BLOCKS} of=/out/blocks.bin 2>/dev/null
mmcab run unwritten.toml --device /dev/mmcblk0 --json > /out/unwritten.json 2>/dev/null
echo $? > /out/unwritten.status
mkdir /nodev && mount -t tmpfs -o nodev tmpfs /nodev
mknod /nodev/card b $(tr : ' ' < /sys/block/mmcblk0/dev)
mmcab run unwritten.toml --device /nodev/card 2> /out/nodev.err
echo $? > /out/nodev.status
cat {STAT} > /out/stat-before
mmcab run /workloads/packed-ioctl.toml --device /dev/mmcblk0 --allow-write 2> /out/plan.err
echo $? > /out/plan.status
mmcab probe packed /dev/mmcblk0 --allow-write --offset 32M 2> /out/probe.err
echo $? > /out/probe.status
cat {STAT} > /out/stat-after
dd if=/dev/mmcblk0 iflag=direct bs=4096 skip=8192 count=17 2>/dev/null | md5sum > /out/region-before
mmcab probe packed /dev/mmcblk0 --allow-write --force --offset 32M --json > /out/force.json 2> /out/force.err
echo $? > /out/force.status
dd if=/dev/mmcblk0 iflag=direct bs=4096 skip=8192 count=17 2>/dev/null | md5sum > /out/region-after
dd if=/dev/mmcblk0 iflag=direct bs=4096 skip=10256 count=1 2>/dev/null | md5sum > /out/past-before
mmcab run forced.toml --device /dev/mmcblk0 --allow-write --force --json > /out/forced.json 2> /out/forced.err
echo $? > /out/forced.status
dd if=/dev/mmcblk0 iflag=direct bs=4096 skip=10256 count=1 2>/dev/null | md5sum > /out/past-after
"
        )
}

fn check(run: &testbed::GuestRun) {
    run.assert_success();
    // Unpacked ioctl writes: mmcab's verify and an independent look at the blocks.
    let err = run.out_text("run.err");
    assert_eq!(run.out_text("run.status").trim(), "0", "{err}");
    let json = run.out_json("run.json");
    assert_eq!(job_verify(&json, "ioctl-write"), (BLOCKS, 0));
    let (checked, bad) = job_verify(&json, "ioctl-randwrite");
    assert!(checked > 0 && bad == 0, "{checked} {bad}");
    // The ioctl engine reads what the block layer wrote, every block checked.
    assert_eq!(job_verify(&json, "ioctl-read"), (16, 0));
    let blocks = std::fs::read(run.out_dir.join("blocks.bin")).unwrap();
    assert_eq!(blocks.len() as u64, BLOCKS * 4096, "{}", run.report());
    let ids: Vec<u64> = blocks
        .chunks(4096)
        .enumerate()
        .map(|(i, b)| check_stamp(b, IOCTL_AT + i as u64 * 4096))
        .collect();
    assert!(ids.iter().all(|&id| id == ids[0]), "one run wrote them all");
    // Reads of blocks nobody wrote: every one is reported bad, exit status 3.
    assert_eq!(run.out_text("unwritten.status").trim(), "3");
    let (checked, bad) = job_verify(&run.out_json("unwritten.json"), "ioctl-read");
    assert_eq!((checked, bad), (16, 16));

    // The node the ioctl engine opens cannot be opened: a failed I/O (exit 4), not a
    // refusal, in the one line of every failed I/O.
    let err = run.out_text("nodev.err");
    assert_eq!(run.out_text("nodev.status").trim(), "4", "{err}");
    assert_eq!(
        err.trim(),
        "mmcab: error: workload 'ioctl-read': open of /nodev/card failed: EACCES (Permission \
         denied) [job 'r']"
    );

    // Packed: refused with the card's reason before any I/O.
    for (what, status) in [("plan", "plan.status"), ("probe", "probe.status")] {
        let err = run.out_text(&format!("{what}.err"));
        assert_eq!(run.out_text(status).trim(), "1", "{what}: {err}");
        assert!(
            err.contains("does not support packed commands (EXT_CSD_REV 3"),
            "{what}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    assert_eq!(
        run.out_text("stat-after"),
        run.out_text("stat-before"),
        "a refusal did I/O"
    );

    // --force: the kernel's pass-through seen in tracefs; the card ignored the packed bit.
    assert_eq!(
        run.out_text("force.status").trim(),
        "3",
        "{}",
        run.out_text("force.err")
    );
    let probe = run.out_json("force.json");
    assert_eq!(probe["sbc"]["passthrough"], "yes", "{probe}");
    assert!(probe["sbc"]["evidence"]
        .as_str()
        .unwrap()
        .contains("sbc_opcode=23"));
    assert_eq!(probe["passed"], false);
    assert!(
        probe["blocks"][1]["problem"]
            .as_str()
            .unwrap()
            .contains("holds the packed header"),
        "{probe}"
    );
    assert_eq!(probe["blocks"][0]["problem"], serde_json::Value::Null);
    assert_eq!(
        probe["packed_event_enabled_by_mmcab"], false,
        "rev 3: no EXP_EVENTS_CTRL"
    );
    assert_eq!(
        run.out_text("region-after"),
        run.out_text("region-before"),
        "the region was not put back"
    );

    // A packed write job on this card with --force: packed commands of 4 writes, each
    // write recorded; the card stored each command as plain data (header first), which
    // verify sees. The last command, read as plain data from 40 MiB + 48 KiB, would pass
    // the region's end (40 MiB + 64 KiB) by the header: it goes as 3 packed and 1 plain
    // write, which lands right, and the block after the region is untouched.
    assert_eq!(
        run.out_text("forced.status").trim(),
        "3",
        "{}",
        run.out_text("forced.err")
    );
    let forced = run.out_json("forced.json");
    assert_eq!(forced["workloads"][0]["group"][0]["ops"], 16, "{forced}");
    assert_eq!(job_verify(&forced, "packed-forced"), (16, 15));
    assert_eq!(
        run.out_text("past-after"),
        run.out_text("past-before"),
        "a forced packed write reached past the job's region"
    );
}

/// Boots `kernel` with the eMMC on a `bus_width`-bit bus, runs [`script`], checks it.
fn boot_and_check(label: &str, kernel: &str, bus_width: u8) {
    let run = testbed::Guest::new(label)
        .kernel(kernel)
        .bus_width(bus_width)
        .timeout(Duration::from_secs(400))
        .run(&script());
    check(&run);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_ioctl_engine_and_packed_refusals() {
    boot_and_check("ioctl_engine_linux7", "7", 8);
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_ioctl_engine_and_packed_refusals() {
    // 6.12 polls CMD13 after ioctl writes too and has the pass-through (6.8+).
    boot_and_check("ioctl_engine_linux612", "6.12", 4);
}
