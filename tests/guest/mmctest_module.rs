//! The kernel's mmc_test in the guest (`testbed/run --mmc-test`, testbed/README.md
//! "mmc_test in the guest"): one short boot each of Linux 6.12 and 7.x with the simulated
//! card (restored from its saved machine). `testbed/build-mmctest` built the module from
//! the kernel's own source; guest-init loaded it once mmc_block had the card and failed
//! the boot on a symbol-version complaint. Here: the module is live and the card still
//! with mmcblk; `mmcab info` says `mmc_test available: module loaded` (text and
//! `--json`); the card binds to mmc_test, test "Best-case read performance" (looked up by
//! name in `testlist`) passes with one result line whose numbers agree with each other
//! (docs/mmc-test.md, "Driving it"); and the card goes back to mmcblk with its disk.

use crate::common::testbed::Guest;

const SCRIPT: &str = r#"
set -e
C=$(basename /sys/bus/mmc/devices/mmc0:*)
D=/sys/kernel/debug/mmc0/$C
cat /sys/module/mmc_test/initstate > /out/initstate
readlink /sys/bus/mmc/devices/$C/driver > /out/driver-before
mmcab info /dev/mmcblk0 > /out/info.txt
mmcab info --json /dev/mmcblk0 > /out/info.json
echo $C > /sys/bus/mmc/drivers/mmcblk/unbind
echo $C > /sys/bus/mmc/drivers/mmc_test/bind
readlink /sys/bus/mmc/devices/$C/driver > /out/driver-bound
cat $D/testlist > /out/testlist
N=$(awk -F '\t' '$2 == "Best-case read performance" { sub(":", "", $1); print $1 }' $D/testlist)
echo "$N" > /out/number
echo "$N" > $D/test
cat $D/test > /out/result
dmesg | grep -E '^\[[ 0-9.]*\] mmc0: (Test case|Transfer of|Result)' > /out/dmesg || true
echo $C > /sys/bus/mmc/drivers/mmc_test/unbind
echo $C > /sys/bus/mmc/drivers/mmcblk/bind
i=0
until [ -b /dev/mmcblk0 ] && [ -e /sys/kernel/debug/mmc0/$C/status ]; do
    i=$((i + 1)); [ $i -le 100 ] || break; sleep 0.1
done
readlink /sys/bus/mmc/devices/$C/driver > /out/driver-after
[ -b /dev/mmcblk0 ] && echo yes > /out/disk-back
"#;

/// One transfer result line of the `test` file: `COUNT SECTORS SECONDS RATE IOPS`.
struct Measured {
    count: u64,
    sectors: u64,
    seconds: f64,
    rate: u64,
    iops: f64,
}

fn parse_line(line: &str) -> Option<Measured> {
    let f: Vec<&str> = line.split(' ').collect();
    if f.len() != 5 {
        return None;
    }
    let (secs, nanos) = f[2].split_once('.')?;
    (nanos.len() == 9 && f[4].split_once('.')?.1.len() == 2).then_some(())?;
    Some(Measured {
        count: f[0].parse().ok()?,
        sectors: f[1].parse().ok()?,
        seconds: secs.parse::<u64>().ok()? as f64 + nanos.parse::<u64>().ok()? as f64 * 1e-9,
        rate: f[3].parse().ok()?,
        iops: f[4].parse().ok()?,
    })
}

fn check(kernel: &str) {
    let run = Guest::new(&format!("mmctest-module-{kernel}"))
        .kernel(kernel)
        .card("sim")
        .mmc_test()
        .run(SCRIPT);
    run.assert_success();
    let text = |name: &str| run.out_text(name).trim_end().to_string();
    let report = |what: &str| format!("{what}\n{}", run.report());

    assert_eq!(text("initstate"), "live", "{}", report("mmc_test not live"));
    assert!(
        text("driver-before").ends_with("/mmcblk"),
        "{}",
        report("card not with mmcblk at the command")
    );
    assert!(
        text("info.txt")
            .contains("\n  mmc_test available: module loaded (/sys/bus/mmc/drivers/mmc_test "),
        "{}",
        report("info's mmc_test line")
    );
    let json = run.out_json("info.json");
    let m = &json["kernel_features"]["mmc_test"];
    assert_eq!(
        (m["available"].as_bool(), m["state"].as_str()),
        (Some(true), Some("loaded")),
        "{m}"
    );

    assert!(
        text("driver-bound").ends_with("/mmc_test"),
        "{}",
        report("bind to mmc_test")
    );
    let testlist = text("testlist");
    assert!(
        testlist.starts_with("0:\tRun all tests\n1:\tBasic write (no data verification)\n"),
        "{testlist}"
    );
    let number = text("number");
    assert!(
        testlist.contains(&format!("\n{number}:\tBest-case read performance\n")),
        "{}",
        report(&format!("test number {number:?} in\n{testlist}"))
    );

    // "Test N: 0" (OK), then one line: one transfer of the test area's largest transfer.
    let result = text("result");
    let lines: Vec<&str> = result.lines().collect();
    assert_eq!(
        lines.first().copied(),
        Some(format!("Test {number}: 0").as_str()),
        "{}",
        report(&result)
    );
    assert_eq!(lines.len(), 2, "{}", report(&result));
    let m = parse_line(lines[1]).unwrap_or_else(|| {
        panic!(
            "{}",
            report(&format!("not COUNT SECTORS SECONDS RATE IOPS: {result}"))
        )
    });
    let bytes = (m.count * m.sectors * 512) as f64;
    assert!(
        m.count == 1 && m.sectors >= 8 && m.seconds > 0.0,
        "{result}"
    );
    // mmc_test_rate(): bytes / time, truncated; iops: transfers / time with 2 decimals.
    let rate = bytes / m.seconds;
    assert!(
        (m.rate as f64 - rate).abs() <= rate * 1e-6 + 1.0,
        "rate {} for {bytes} B in {} s: {result}",
        m.rate,
        m.seconds
    );
    let iops = m.count as f64 / m.seconds;
    assert!(
        (m.iops - iops).abs() <= 0.011 + iops * 1e-6,
        "iops {} for {} in {} s: {result}",
        m.iops,
        m.count,
        m.seconds
    );
    // The kernel log has the same transfer.
    let dmesg = text("dmesg");
    assert!(
        dmesg.contains(&format!(
            "mmc0: Test case {number}. Best-case read performance..."
        )) && dmesg.contains("mmc0: Result: OK"),
        "{}",
        report(&dmesg)
    );

    assert!(
        text("driver-after").ends_with("/mmcblk"),
        "{}",
        report("card back with mmcblk")
    );
    assert_eq!(text("disk-back"), "yes", "{}", report("/dev/mmcblk0 back"));
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_loads_binds_and_runs_a_performance_test() {
    check("6.12");
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_7_loads_binds_and_runs_a_performance_test() {
    check("7");
}
