//! The testbed itself, end to end: boots the emulated eMMC under both kernels with both
//! bus widths and checks that `mmcab info --json` agrees with the kernel's own files;
//! the runtime bus-width switch of testbed/README.md (7.x accepts it, 6.12 refuses it); and
//! testbed/run's contract (guest status passed through with its output, timeout, bad
//! options). One boot per test, several checks per boot: each boot costs 20-40 s.
//!
//! This file holds the tests that boot QEMU guests (tier 3); the others are in
//! tests/plain/testbed.rs.

use crate::common::testbed;

use std::process::Command;
use std::time::{Duration, Instant};
use testbed::{hex_bytes, ios_bits, ios_label, parse_hex, Guest, GuestRun};

/// Collects, in one guest, `mmcab info --json` and the kernel files it must agree with.
const COLLECT: &str = r#"
set -e
D=/sys/kernel/debug/mmc0
mkdir -p /out/sysfs
mmcab info --json /dev/mmcblk0 > /out/info.json
cat $D/ios > /out/ios
cat $D/caps > /out/caps
cat $D/mmc0:0001/ext_csd > /out/ext_csd
uname -r > /out/uname
cat /sys/block/mmcblk0/size > /out/block_size
for f in /sys/block/mmcblk0/device/*; do
    n=${f##*/}
    [ -f "$f" ] || continue
    cat "$f" > /out/sysfs/$n 2>/dev/null || rm -f /out/sysfs/$n
done
set +e
"#;

/// Tries to change the bus-width bit of debugfs `caps` (and set MMC_CAP_AGGRESSIVE_PM),
/// the first step of the runtime switch; records rc, error text and caps after.
const CAPS_WRITE: &str = r#"
D=/sys/kernel/debug/mmc0
orig=$(cat $D/caps)
new=$(printf '0x%08x' $(( (orig ^ 0x40) | 0x80 )))
echo "$new" > /out/caps_written
if echo "$new" > $D/caps 2>/out/caps_write.err; then echo 0; else echo 1; fi > /out/caps_write.rc
cat $D/caps > /out/caps_after
"#;

/// testbed/README.md's runtime switch, booted 8-bit: narrow to 4 bits (caps without 0x40, with
/// aggressive PM, runtime suspend, resume), check I/O, then restore 8 bits and the caps.
const RUNTIME_SWITCH: &str = r#"
D=/sys/kernel/debug/mmc0
P=/sys/bus/mmc/devices/mmc0:0001/power
S=/out/switch
mkdir -p $S
orig=$(cat $D/caps)
# cycle DIR: suspend the card (runtime PM) and wake it, so it re-inits with the caps
cycle() {
    echo auto > $P/control
    # runtime_status has no event to wait on (the PM core does not sysfs_notify it): poll
    # it, as mmcab's knobs do, up to 15 s.
    i=0
    until [ "$(cat $P/runtime_status)" = suspended ] || [ $i -ge 150 ]; do sleep 0.1; i=$((i + 1)); done
    cat $P/runtime_status > $S/$1_suspended
    echo on > $P/control
    cat $P/runtime_status > $S/$1_active
    cat $D/ios > $S/$1_ios
}
printf '0x%08x' $(( (orig & ~0x40) | 0x80 )) > $D/caps || exit 20
cycle narrow
mmcab info --json /dev/mmcblk0 > $S/narrow_info.json || exit 21
dd if=/dev/urandom of=/tmp/pattern bs=4096 count=16 2>/dev/null
dd if=/tmp/pattern of=/dev/mmcblk0 bs=4096 seek=1000 conv=fsync 2>/dev/null || exit 22
echo 3 > /proc/sys/vm/drop_caches
dd if=/dev/mmcblk0 bs=4096 skip=1000 count=16 2>/dev/null | cmp - /tmp/pattern > $S/narrow_io 2>&1
echo $? > $S/narrow_io_rc
printf '0x%08x' $(( orig | 0x80 )) > $D/caps || exit 23
cycle restored
echo "$orig" > $D/caps || exit 24
cat $D/caps > $S/caps_final
echo "$orig" > $S/caps_orig
"#;

/// `mmcab info --json` against the guest's own debugfs/sysfs files, field by field.
fn check_info_matches_kernel(run: &GuestRun, bus_width: u64) {
    let ctx = run.report();
    let info = run.out_json("info.json");
    let ios = run.out_text("ios");
    let ext_csd_hex = run.out_text("ext_csd");

    // The bus width the DTB asked for, as the kernel and as mmcab see it.
    assert_eq!(ios_bits(&ios), bus_width, "kernel ios:\n{ios}\n{ctx}");
    assert_eq!(info["ios"]["bus_width"], bus_width, "{ctx}");
    assert_eq!(info["type"], "MMC", "{ctx}");
    assert_eq!(info["device"], "/dev/mmcblk0", "{ctx}");
    assert_eq!(
        info["kernel_release"],
        run.out_text("uname").trim(),
        "{ctx}"
    );

    // ios, field by field.
    let clock: u64 = ios_label(&ios, "clock")
        .trim_end_matches(" Hz")
        .parse()
        .unwrap();
    assert_eq!(info["ios"]["clock_hz"], clock, "{ctx}");
    assert_eq!(
        info["ios"]["timing"],
        ios_label(&ios, "timing spec"),
        "{ctx}"
    );
    assert_eq!(
        info["ios"]["signal_voltage"],
        ios_label(&ios, "signal voltage"),
        "{ctx}"
    );
    assert_eq!(
        info["ios"]["bus_mode"],
        ios_label(&ios, "bus mode"),
        "{ctx}"
    );
    assert_eq!(
        info["ios"]["power_mode"],
        ios_label(&ios, "power mode"),
        "{ctx}"
    );

    // EXT_CSD: read by mmcab with CMD8, identical to the kernel's copy; every field of
    // mmcab's table equals the little-endian bytes at its offset.
    assert_eq!(info["ext_csd"]["source"], "ioctl", "{ctx}");
    assert_eq!(
        info["ext_csd"]["raw"].as_str().unwrap_or(""),
        ext_csd_hex.trim(),
        "{ctx}"
    );
    let bytes = hex_bytes(&ext_csd_hex);
    assert_eq!(info["ext_csd"]["rev"], bytes[192], "{ctx}");
    let layout = info["ext_csd"]["field_layout"]
        .as_object()
        .expect("ext_csd.field_layout");
    let fields_raw = info["ext_csd"]["fields_raw"]
        .as_object()
        .expect("ext_csd.fields_raw");
    for must in ["BUS_WIDTH", "EXT_CSD_REV", "SEC_COUNT", "CARD_TYPE"] {
        assert!(
            fields_raw.contains_key(must),
            "fields_raw lacks {must}\n{ctx}"
        );
    }
    let mut compared = 0;
    for (name, raw) in fields_raw {
        let l = &layout[name];
        let (offset, width) = (
            l["offset"].as_u64().unwrap() as usize,
            l["width"].as_u64().unwrap() as usize,
        );
        let expect = bytes[offset..offset + width]
            .iter()
            .rev()
            .fold(0u64, |acc, b| acc << 8 | u64::from(*b));
        assert_eq!(
            raw.as_u64(),
            Some(expect),
            "EXT_CSD field {name} at [{offset}]\n{ctx}"
        );
        compared += 1;
    }
    assert!(
        compared >= 20,
        "only {compared} EXT_CSD fields compared\n{ctx}"
    );
    // The model reports BUS_WIDTH[183]: 1 = 4-bit, 2 = 8-bit (testbed/README.md).
    assert_eq!(
        u64::from(bytes[183]),
        if bus_width == 8 { 2 } else { 1 },
        "{ctx}"
    );
    // SEC_COUNT = image size / 512 (testbed default 256 MiB), as the block layer says.
    let sectors: u64 = run.out_text("block_size").trim().parse().unwrap();
    assert_eq!(sectors, 256 * 1024 * 2, "{ctx}");
    assert_eq!(fields_raw["SEC_COUNT"], sectors, "{ctx}");
    assert_eq!(info["capacity_bytes"], sectors * 512, "{ctx}");

    // sysfs: the same attribute set and contents as the guest's `cat`.
    let sysfs = info["sysfs"].as_object().expect("sysfs");
    let dir = run.out_dir.join("sysfs");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}\n{ctx}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let keys: Vec<String> = sysfs.keys().cloned().collect();
    assert_eq!(keys, names, "sysfs attribute sets differ\n{ctx}");
    for name in &names {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert_eq!(sysfs[name], text.trim(), "sysfs {name}\n{ctx}");
    }

    // Identity decoded from the CID against the kernel's own decoding in sysfs.
    let id = &info["identity"];
    assert_eq!(id["name"], sysfs["name"], "{ctx}");
    assert_eq!(id["date"], sysfs["date"], "{ctx}");
    assert_eq!(id["cid"], sysfs["cid"], "{ctx}");
    for key in ["manfid", "oemid", "serial", "prv", "hwrev", "fwrev"] {
        let kernel = parse_hex(sysfs[key].as_str().unwrap());
        assert_eq!(
            id[key], kernel,
            "identity.{key} vs sysfs {}\n{ctx}",
            sysfs[key]
        );
    }
    assert_eq!(sysfs["name"], "QEMU!!", "{ctx}");

    // debugfs caps as read; the model has neither packed commands nor command queueing.
    assert_eq!(
        info["host_caps"]["caps"],
        run.out_text("caps").trim(),
        "{ctx}"
    );
    assert_eq!(info["capabilities"]["packed"]["supported"], false, "{ctx}");
    assert_eq!(info["capabilities"]["cmdq"]["supported"], false, "{ctx}");
}

/// 6.12 refuses the bus-width caps bits (EINVAL) and leaves caps as they were.
fn check_caps_write_refused(run: &GuestRun) {
    let ctx = run.report();
    let rc = run.out_text("caps_write.rc");
    let err = run.out_text("caps_write.err");
    assert_eq!(
        rc.trim(),
        "1",
        "Linux {} accepted caps {} (docs/kernel-facts.md: 6.12 refuses the bus-width bits)\n{ctx}",
        run.out_text("uname").trim(),
        run.out_text("caps_written").trim()
    );
    assert!(
        err.contains("Invalid argument"),
        "not EINVAL: {err:?}\n{ctx}"
    );
    assert_eq!(run.out_text("caps_after"), run.out_text("caps"), "{ctx}");
    let info = run.out_json("info.json");
    assert_eq!(
        info["capabilities"]["bus_width_runtime_switch"]["supported"], false,
        "{ctx}"
    );
}

fn boot_and_check(kernel: &str, bus_width: u8, extra: &str) -> GuestRun {
    let run = Guest::new(&format!("linux{kernel}-bus{bus_width}"))
        .kernel(kernel)
        .bus_width(bus_width)
        .run(&format!("{COLLECT}{extra}"));
    run.assert_success();
    check_info_matches_kernel(&run, u64::from(bus_width));
    run
}

/// Reads 2 MiB with O_DIRECT (throttled: time it), then writes a pattern to sectors
/// 65536-65543 and reads it back (the blkdebug rule below fails I/O at sector 65536).
const THROTTLE_AND_BLKDEBUG: &str = r#"
t0=$(cut -d' ' -f1 /proc/uptime)
dd if=/dev/mmcblk0 of=/dev/null bs=64k count=32 iflag=direct 2>/dev/null
t1=$(cut -d' ' -f1 /proc/uptime)
echo "$t0 $t1" > /out/throttled_read_uptime
dd if=/dev/zero bs=512 count=8 2>/dev/null | tr '\0' 'U' > /tmp/pattern
dd if=/tmp/pattern of=/dev/mmcblk0 bs=512 seek=65536 oflag=direct conv=fsync 2>/dev/null
dd if=/dev/mmcblk0 of=/out/injected_read bs=512 skip=65536 count=8 iflag=direct 2>/dev/null
echo $? > /out/injected_read.rc
"#;

/// 262144 B/s for 2 MiB: 8 s (QEMU lets a short burst through: 7.4 s seen); the guest
/// reads it in under 1 s unthrottled.
const THROTTLE_BPS: u64 = 262_144;

/// Also `--throttle-bps` and `--blkdebug`: both reach QEMU's eMMC drive. Note what the
/// model does with an injected error (QEMU 10.0): it logs "sd_blk_read/sd_blk_write:
/// ... error on host side" and the guest never sees an error: a failed read returns the
/// model's stale buffer, a failed write is dropped (testbed/README.md, "Limits of the emulation").
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_bus_width_4_info_caps_refused_throttle_blkdebug() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("read-error.cfg");
    std::fs::write(
        &rules,
        "[inject-error]\nevent = \"read_aio\"\nerrno = \"5\"\nsector = \"65536\"\n",
    )
    .unwrap();
    let image = dir.path().join("emmc.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let run = Guest::new("linux6.12-bus4")
        .kernel("6.12")
        .bus_width(4)
        .image(&image)
        .throttle_bps(THROTTLE_BPS)
        .blkdebug(&rules)
        .run(&format!("{COLLECT}{CAPS_WRITE}{THROTTLE_AND_BLKDEBUG}"));
    run.assert_success();
    check_info_matches_kernel(&run, 4);
    let ctx = run.report();
    assert!(run.out_text("uname").starts_with("6.12."), "{ctx}");
    check_caps_write_refused(&run);

    let times: Vec<f64> = run
        .out_text("throttled_read_uptime")
        .split_whitespace()
        .map(|t| t.parse().unwrap())
        .collect();
    let seconds = times[1] - times[0];
    let floor = 0.75 * (2u64 << 20) as f64 / THROTTLE_BPS as f64;
    assert!(
        seconds >= floor,
        "2 MiB read in {seconds:.2} s at --throttle-bps {THROTTLE_BPS}: not throttled\n{ctx}"
    );

    assert!(
        run.stderr
            .contains("testbed/run: qemu: sd_blk_read: read error on host side"),
        "the blkdebug rule did not fire\n{ctx}"
    );
    // The model hides the error from the guest: the read "succeeds" (with stale data).
    assert_eq!(
        run.out_text("injected_read.rc").trim(),
        "0",
        "the guest now sees the injected error: update testbed/README.md's limits\n{ctx}"
    );
    // Once active the rule fails every I/O touching sector 65536, the write too: in the
    // image that block stayed zero while the next 7 blocks of the write landed.
    let img = std::fs::read(&image).unwrap();
    let block = |n: usize| &img[n * 512..(n + 1) * 512];
    assert!(
        block(65536).iter().all(|b| *b == 0),
        "sector 65536 written\n{ctx}"
    );
    for n in 65537..65544 {
        assert!(
            block(n).iter().all(|b| *b == b'U'),
            "sector {n} not written\n{ctx}"
        );
    }
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_bus_width_8_info_and_caps_refused() {
    let run = boot_and_check("6.12", 8, CAPS_WRITE);
    check_caps_write_refused(&run);
}

/// The `7` alias is whatever sid had at setup time: assert only that it is 7 or newer.
fn assert_linux_7_or_newer(release: &str, ctx: &str) {
    let major: u32 = release
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("kernel release {release:?}\n{ctx}"));
    assert!(major >= 7, "kernel alias 7 resolves to {release}\n{ctx}");
}

/// Also the failure contract: a guest command that fails makes testbed/run exit with
/// its status, with the guest's stdout and stderr shown and /out still copied.
#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_bus_width_4_info_and_failing_command() {
    let release = testbed::kernel_release("7");
    assert_linux_7_or_newer(&release, "");
    let run = Guest::new("linux7-bus4-failing")
        .kernel("7")
        .bus_width(4)
        .run(&format!(
        "{COLLECT}\necho guest-stdout-before-failure\necho guest-stderr-before-failure >&2\nexit 7"
    ));
    let ctx = run.report();
    assert_eq!(run.status, Some(7), "{ctx}");
    assert!(run.stdout.contains("guest-stdout-before-failure"), "{ctx}");
    assert!(run.stderr.contains("guest-stderr-before-failure"), "{ctx}");
    assert!(
        run.stderr.contains("guest command exited with status 7"),
        "{ctx}"
    );
    assert_eq!(run.out_text("uname").trim(), release, "{ctx}");
    check_info_matches_kernel(&run, 4);
    let info = run.out_json("info.json");
    assert_eq!(
        info["capabilities"]["bus_width_runtime_switch"]["supported"], true,
        "{ctx}"
    );
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_bus_width_8_info_and_runtime_switch_to_4_and_back() {
    let run = boot_and_check("7", 8, RUNTIME_SWITCH);
    let ctx = run.report();
    let release = run.out_text("uname");
    assert_linux_7_or_newer(release.trim(), &ctx);
    let text = |f: &str| run.out_text(&format!("switch/{f}")).trim().to_string();
    let changed = format!(
        "Linux {}: the runtime bus-width switch of testbed/README.md no longer behaves as on 7.2 \
         (debugfs caps without 0x40 + aggressive PM, runtime suspend/resume -> 4 bits)",
        release.trim()
    );
    assert_eq!(text("narrow_suspended"), "suspended", "{changed}\n{ctx}");
    assert_eq!(text("narrow_active"), "active", "{changed}\n{ctx}");
    assert_eq!(ios_bits(&text("narrow_ios")), 4, "{changed}\n{ctx}");
    let narrow = run.out_json("switch/narrow_info.json");
    assert_eq!(narrow["ios"]["bus_width"], 4, "{changed}\n{ctx}");
    assert_eq!(narrow["ext_csd"]["fields_raw"]["BUS_WIDTH"], 1, "{ctx}");
    assert_eq!(text("narrow_io_rc"), "0", "I/O after narrowing\n{ctx}");
    assert_eq!(text("restored_suspended"), "suspended", "{ctx}");
    assert_eq!(text("restored_active"), "active", "{ctx}");
    assert_eq!(ios_bits(&text("restored_ios")), 8, "back to 8 bits\n{ctx}");
    assert_eq!(
        text("caps_final"),
        text("caps_orig"),
        "caps restored\n{ctx}"
    );
}

/// No processes of ours left: no QEMU whose command line names `needle`.
fn qemu_running_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.starts_with("qemu-system-arm") && cmdline.contains(needle) {
            found.push(format!(
                "{}: {cmdline}",
                entry.file_name().to_string_lossy()
            ));
        }
    }
    found
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn timeout_stops_the_guest_and_kills_qemu() {
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("timeout-emmc.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let started = Instant::now();
    // The guest's command hangs (a sleep far longer than the timeout: the thing under
    // test); testbed/run's timeout must end it, within a margin for QEMU to go.
    let run = Guest::new("timeout")
        .image(&image)
        .timeout(Duration::from_secs(6))
        .run("sleep 600");
    let ctx = run.report();
    assert_eq!(run.status, Some(124), "{ctx}");
    assert!(run.stderr.contains("timeout"), "{ctx}");
    // The armv7 build happens before the boot and is not part of the timeout.
    assert!(
        run.wall < Duration::from_secs(6 + 30),
        "took {:?}\n{ctx}",
        started.elapsed()
    );
    let left = qemu_running_with(image.to_str().unwrap());
    assert!(left.is_empty(), "QEMU still running: {left:?}\n{ctx}");
}

/// testbed/run with `args`: (exit status, stderr).
fn run_script(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(testbed::repo_root().join("testbed/run"))
        .args(args)
        .env("MMCAB_TESTBED_MMCAB", "/nonexistent-not-needed")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A kernel the cache does not have is named, with the fix, before any boot.
#[test]
#[ignore = "needs the QEMU testbed (testbed/setup)"]
fn an_unknown_kernel_is_refused_naming_testbed_setup() {
    testbed::require_setup();
    let (code, err) = run_script(&["--kernel", "2.6", "--", "true"]);
    assert_eq!(code, Some(125), "{err}");
    assert!(
        err.contains("no kernel '2.6'") && err.contains("testbed/setup"),
        "{err}"
    );
}
