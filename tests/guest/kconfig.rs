//! The kernel features of docs/kernel-config.md on a real kernel: one boot of the
//! emulated eMMC under Linux 6.12, where `mmcab info` first finds everything there (the
//! guest has no kernel config to read: Debian builds without CONFIG_IKCONFIG and the
//! initramfs has no /boot, which it says), then takes gates away as a user would, one at
//! a time, and `mmcab info` (text and `--json`) and `mmcab knobs` must name each with the
//! feature it costs:
//! - `kernel.io_uring_disabled` set to 2: the io_uring engine;
//! - the kernel locked down to integrity through securityfs: the debugfs files mmcab
//!   opens read-write (`caps`, `caps2`, `clock`, `err_stats`) and unsigned modules, while
//!   `ios` and `ext_csd` stay readable (the summary still has the bus);
//! - then to confidentiality: the mmc trace events as well.
//!
//! Beside mmcab's words, what the kernel does at each level, as docs/kernel-config.md
//! says from the source: under integrity debugfs `caps` cannot be opened and `ios` can,
//! and a tracefs instance can be made; under confidentiality neither an instance nor
//! reading `trace`.
//!
//! Lockdown cannot be lifted again, so it comes last.

use crate::common::testbed::{self, Guest, GuestRun};
use serde_json::Value;

const SCRIPT: &str = r#"
M=/dev/mmcblk0
run() { # NAME ARGS...: stdout, stderr and status of `mmcab ARGS` in /out
    name=$1; shift
    mmcab "$@" > /out/$name.out 2> /out/$name.err; echo $? > /out/$name.rc
}
run info-0 info $M
run knobs-0 knobs $M
echo 2 > /proc/sys/kernel/io_uring_disabled
run info-uring info $M
run json-uring info --json $M
echo 0 > /proc/sys/kernel/io_uring_disabled
mount -t securityfs securityfs /sys/kernel/security
cat /sys/kernel/security/lockdown > /out/lockdown-before
echo integrity > /sys/kernel/security/lockdown
run info-integrity info $M
run knobs-integrity knobs $M
run json-integrity info --json $M
# What the kernel refuses at each level: debugfs by mode, tracefs as a whole.
try() { # NAME COMMAND...: its status in /out/NAME.rc
    name=$1; shift
    "$@" > /dev/null 2>&1; echo $? > /out/$name.rc
}
T=/sys/kernel/tracing
try integrity-caps cat /sys/kernel/debug/mmc0/caps
try integrity-ios cat /sys/kernel/debug/mmc0/ios
try integrity-instance mkdir $T/instances/kconfig-integrity
rmdir $T/instances/kconfig-integrity 2>/dev/null
echo confidentiality > /sys/kernel/security/lockdown
cat /sys/kernel/security/lockdown > /out/lockdown-after
run json-confidentiality info --json $M
try confidentiality-instance mkdir $T/instances/kconfig-confidentiality
try confidentiality-trace cat $T/trace
"#;

/// The output of one `mmcab` call of [`SCRIPT`], which must have exited 0.
fn output(run: &GuestRun, name: &str) -> String {
    let rc = run.out_text(&format!("{name}.rc"));
    let err = run.out_text(&format!("{name}.err"));
    assert_eq!(
        rc.trim(),
        "0",
        "{name}: exit {rc}, stderr:\n{err}\n{}",
        run.report()
    );
    run.out_text(&format!("{name}.out"))
}

/// The "missing ..." lines of the Kernel features block.
fn missing_lines(text: &str) -> Vec<&str> {
    let block = text
        .split("\nKernel features (")
        .nth(1)
        .unwrap_or_else(|| panic!("no Kernel features block in\n{text}"));
    block
        .lines()
        .filter(|l| l.starts_with("  missing "))
        .collect()
}

/// The features `kernel_features` says are not available, with their `missing[].what`.
fn unavailable(doc: &Value) -> Vec<(String, Vec<String>)> {
    doc["kernel_features"]["features"]
        .as_array()
        .unwrap_or_else(|| panic!("no kernel_features.features in {doc}"))
        .iter()
        .filter(|f| f["available"] == false)
        .map(|f| {
            let what = f["missing"].as_array().unwrap().iter();
            let what = what.map(|m| m["what"].as_str().unwrap().to_string());
            (f["feature"].as_str().unwrap().to_string(), what.collect())
        })
        .collect()
}

#[test]
#[ignore = "needs root and the QEMU testbed (testbed/setup)"]
fn linux_6_12_info_names_each_gate_taken_away() {
    let run = Guest::new("kconfig").kernel("6.12").run(SCRIPT);
    run.assert_success();
    let release = testbed::kernel_release("6.12");

    // Everything there; no config to read, and lockdown not known without securityfs.
    let info = output(&run, "info-0");
    let no_config = format!(
        "\nKernel features (no kernel config: neither /proc/config.gz (CONFIG_IKCONFIG_PROC) \
         nor /boot/config-{release}; options not checked, only what is there)\n"
    );
    assert!(info.contains(&no_config), "{info}");
    assert!(
        info.contains("\n  lockdown: not known: securityfs is not mounted"),
        "{info}"
    );
    assert!(
        info.contains("\n  all there: mmc block driver, debugfs, "),
        "{info}"
    );
    assert_eq!(missing_lines(&info), Vec::<&str>::new());
    assert!(output(&run, "knobs-0").contains("\n  all there: "));

    // io_uring off for every process.
    let info = output(&run, "info-uring");
    assert_eq!(
        missing_lines(&info),
        [
            "  missing io_uring: kernel.io_uring_disabled is 2: io_uring is off for every \
          process; costs the io_uring engine (engine = \"io_uring\" in a plan); fix: sysctl \
          -w kernel.io_uring_disabled=0, or use engine = \"sync\""
        ]
    );
    let doc: Value = serde_json::from_str(&output(&run, "json-uring")).unwrap();
    assert_eq!(
        unavailable(&doc),
        [(
            "io_uring".to_string(),
            vec!["kernel.io_uring_disabled is 2: io_uring is off for every process".to_string()]
        )]
    );
    assert_eq!(doc["kernel_features"]["config"], Value::Null);

    // Locked down to integrity: the 0600 debugfs files and unsigned modules.
    assert_eq!(
        run.out_text("lockdown-before").trim(),
        "[none] integrity confidentiality"
    );
    for name in ["info-integrity", "knobs-integrity"] {
        let text = output(&run, name);
        let lines = missing_lines(&text);
        assert_eq!(lines.len(), 2, "{name}: {lines:#?}");
        assert!(
            lines[0].starts_with(
                "  missing debugfs read-write files: the kernel is locked down (integrity): \
                 debugfs access is restricted; costs the bus-width, speed-mode, clock, cmd23 \
                 and cqe knobs"
            ),
            "{name}: {}",
            lines[0]
        );
        assert!(
            lines[1].starts_with(
                "  missing unsigned modules: the kernel is locked down (integrity): unsigned \
                 module loading is restricted"
            ),
            "{name}: {}",
            lines[1]
        );
        assert!(text.contains("\n  lockdown: integrity\n"), "{name}: {text}");
    }
    // What lockdown leaves: ios (0400) gives the bus, caps (0600) cannot be opened.
    let doc: Value = serde_json::from_str(&output(&run, "json-integrity")).unwrap();
    assert_eq!(doc["kernel_features"]["lockdown"], "integrity");
    assert!(
        doc["ios"]["bus_width"].is_u64(),
        "ios unreadable: {}",
        doc["ios_error"]
    );
    assert_eq!(
        doc["host_caps"]["caps"],
        Value::Null,
        "caps read under lockdown"
    );

    // The kernel's side of it: caps (0600) refused, ios (0400) read, tracefs untouched.
    let rc = |name: &str| run.out_text(&format!("{name}.rc")).trim().to_string();
    assert_ne!(
        rc("integrity-caps"),
        "0",
        "debugfs caps opened under integrity"
    );
    assert_eq!(
        rc("integrity-ios"),
        "0",
        "debugfs ios refused under integrity"
    );
    assert_eq!(
        rc("integrity-instance"),
        "0",
        "no tracefs instance under integrity"
    );

    // Confidentiality: tracefs too.
    assert_ne!(rc("confidentiality-instance"), "0");
    assert_ne!(rc("confidentiality-trace"), "0");
    assert_eq!(
        run.out_text("lockdown-after").trim(),
        "none integrity [confidentiality]"
    );
    let doc: Value = serde_json::from_str(&output(&run, "json-confidentiality")).unwrap();
    let names: Vec<String> = unavailable(&doc).into_iter().map(|(f, _)| f).collect();
    assert_eq!(
        names,
        [
            "debugfs read-write files",
            "mmc trace events",
            "unsigned modules"
        ],
        "{}",
        doc["kernel_features"]
    );
}
