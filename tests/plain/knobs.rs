//! Built-in knobs against sysfs/debugfs trees: the real captures of the emulated eMMC
//! (tests/fixtures/qemu-emmc, Linux 6.12 and 7.2) laid out as the kernel shows them, and
//! the vendor-kernel layout with packed commands (tests/fixtures/vendor-packing, labelled
//! there as a stand-in). The same knobs run against the live kernel in tests/guest/guest_runner.rs.

use mmcab::device::MmcPaths;
use mmcab::knob::builtin::{resolve, status, KnobEnv, KnobStatus};
use std::path::{Path, PathBuf};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

fn paths_under(root: &Path, card_sysfs: &str) -> MmcPaths {
    MmcPaths {
        dev_node: root.join("dev/mmcblk0"),
        disk: "mmcblk0".into(),
        block_sysfs: root.join("sys/block/mmcblk0"),
        card_sysfs: root.join(card_sysfs),
        card: "mmc0:0001".into(),
        host: "mmc0".into(),
        host_debugfs: root.join("sys/kernel/debug/mmc0"),
        card_debugfs: root.join("sys/kernel/debug/mmc0/mmc0:0001"),
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Lay out a capture (`@@@ name` sections) the way the kernel shows those files.
fn tree_from_capture(name: &str, root: &Path) -> (MmcPaths, String) {
    let text = std::fs::read_to_string(format!("{FIXTURES}/qemu-emmc/{name}")).unwrap();
    let paths = paths_under(root, "sys/bus/mmc/devices/mmc0:0001");
    let mut release = String::new();
    for section in text.split("@@@ ").skip(1) {
        let (key, body) = section.split_once('\n').unwrap();
        let file: Option<PathBuf> = match key.trim() {
            "uname" => {
                release = body.trim().to_string();
                None
            }
            "ios" | "caps" | "caps2" => Some(paths.host_debugfs.join(key.trim())),
            "ext_csd" | "status" => Some(paths.card_debugfs.join(key.trim())),
            k if k.starts_with("device/") => Some(paths.card_sysfs.join(&k[7..])),
            k if k.starts_with("queue/") || k == "size" => Some(paths.block_sysfs.join(k)),
            _ => None,
        };
        if let Some(file) = file {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, body).unwrap();
        }
    }
    // What the capture leaves out but every such kernel has: runtime PM of the card, and
    // cmdq_en read-only (0444) as mainline declares it.
    let power = paths.card_sysfs.join("power");
    std::fs::create_dir_all(&power).unwrap();
    std::fs::write(power.join("control"), "auto\n").unwrap();
    std::fs::write(power.join("runtime_status"), "active\n").unwrap();
    std::fs::write(power.join("autosuspend_delay_ms"), "3000\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        paths.card_sysfs.join("cmdq_en"),
        std::fs::Permissions::from_mode(0o444),
    )
    .unwrap();
    (paths, release)
}

fn find<'a>(statuses: &'a [KnobStatus], name: &str) -> &'a KnobStatus {
    statuses.iter().find(|s| s.name == name).unwrap()
}

#[test]
fn emulated_emmc_on_linux_7_has_bus_width_and_explains_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, release) = tree_from_capture("cap-linux7-bus8.txt", dir.path());
    assert!(release.starts_with('7'));
    let statuses = status(&KnobEnv {
        paths,
        kernel_release: release,
    });
    let bus = find(&statuses, "bus-width");
    assert!(bus.available, "{bus:?}");
    assert_eq!(bus.value.as_deref(), Some("8"));
    assert!(bus.reason.contains("came up with 8 bits"), "{bus:?}");

    let packing = find(&statuses, "packing");
    assert!(!packing.available);
    assert!(
        packing
            .reason
            .contains("mainline never sent packed commands"),
        "{packing:?}"
    );
    assert!(
        packing
            .reason
            .contains("does not support packed commands (EXT_CSD_REV 3"),
        "{packing:?}"
    );
    assert!(
        packing.reason.contains("engine = \"ioctl\"")
            && packing.reason.contains("packed-ioctl.toml"),
        "{packing:?}"
    );

    let cqe = find(&statuses, "cqe");
    assert!(
        !cqe.available && cqe.reason.contains("CMDQ_SUPPORT = 0"),
        "{cqe:?}"
    );
    assert_eq!(cqe.value.as_deref(), Some("off"), "cmdq_en 0");
    assert!(
        cqe.reason.contains("the host has no command queue engine")
            && cqe.reason.contains("MMC_CAP2_CQE"),
        "{cqe:?}"
    );
    // The card can do CMD23 and the host came up with it (caps bit 30).
    let cmd23 = find(&statuses, "cmd23");
    assert_eq!(cmd23.value.as_deref(), Some("on"), "{cmd23:?}");
    let cache = find(&statuses, "cache");
    assert!(
        !cache.available && cache.reason.contains("CACHE_SIZE = 0"),
        "{cache:?}"
    );
}

#[test]
fn cmd23_is_refused_while_the_cards_command_queue_is_on() {
    // With the queue on, reads and writes are queue tasks without CMD23: an A/B of
    // CMD23 would compare nothing (workloads/cmd23-ab.toml on an eMMC 5.1 with CQE).
    let dir = tempfile::tempdir().unwrap();
    let (paths, release) = tree_from_capture("cap-linux7-bus8.txt", dir.path());
    let cmdq_en = paths.card_sysfs.join("cmdq_en");
    let env = KnobEnv {
        paths,
        kernel_release: release,
    };
    let without = match resolve("cmd23", &env, false) {
        Ok(_) => String::new(),
        Err(err) => err.to_string(),
    };
    assert!(!without.contains("command queue is on"), "{without}");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cmdq_en, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&cmdq_en, "1\n").unwrap();
    let err = resolve("cmd23", &env, true).err().unwrap().to_string();
    assert!(
        err.contains("the card's command queue is on (cmdq_en 1)")
            && err.contains("no CMD23")
            && err.contains("without a command queue"),
        "{err}"
    );
}

#[test]
fn linux_6_12_says_bus_width_is_an_across_boots_ab() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, release) = tree_from_capture("cap-linux6-bus4.txt", dir.path());
    let env = KnobEnv {
        paths,
        kernel_release: release,
    };
    let err = resolve("bus-width", &env, false).err().unwrap().to_string();
    assert!(
        err.contains("not switchable at run time on this kernel"),
        "{err}"
    );
    assert!(err.contains("--label"), "{err}");
    let statuses = status(&env);
    let bus = find(&statuses, "bus-width");
    assert!(!bus.available);
    assert_eq!(bus.value.as_deref(), Some("4"), "current width still shown");
    // CMD23 came with the same change of debugfs caps: not on 6.12.
    let cmd23 = find(&statuses, "cmd23");
    assert!(!cmd23.available, "{cmd23:?}");
    assert!(
        cmd23
            .reason
            .contains("not switchable at run time on this kernel")
            && cmd23.reason.contains("MMC_CAP_CMD23"),
        "{cmd23:?}"
    );
    assert_eq!(
        cmd23.value.as_deref(),
        Some("on"),
        "current setting still shown"
    );
}

#[test]
fn packing_on_a_vendor_kernel_layout_switches_verifies_and_restores() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new(&format!("{FIXTURES}/vendor-packing")), dir.path());
    let paths = paths_under(dir.path(), "sys/devices/msm_sdcc.1/mmc_host/mmc0/mmc0:0001");
    let attribute = paths.block_sysfs.join("num_wr_reqs_to_start_packing");
    let stats = paths.card_debugfs.join("wr_pack_stats");
    let env = KnobEnv {
        paths,
        kernel_release: "3.18.71-perf".into(),
    };
    let listed = find(&status(&env), "packing").clone();
    assert!(listed.available, "{listed:?}");
    assert!(
        listed.value.as_deref().unwrap().starts_with("17"),
        "{listed:?}"
    );

    let mut knob = resolve("packing", &env, false).unwrap();
    assert!(knob
        .normalize("off")
        .unwrap_err()
        .to_string()
        .contains("PACKED_WR"));
    assert!(knob
        .normalize("64")
        .unwrap_err()
        .to_string()
        .contains("MAX_PACKED_WRITES = 63"));
    knob.snapshot().unwrap();
    // Statistics found enabled stay as they are (the runner's evidence reads them).
    assert!(std::fs::read_to_string(&stats)
        .unwrap()
        .contains("Packed 2 reqs - 14 times"));
    let value = knob.normalize("4").unwrap();
    knob.apply(&value).unwrap();
    knob.verify(&value).unwrap();
    assert_eq!(std::fs::read_to_string(&attribute).unwrap().trim(), "4");

    knob.restore().unwrap();
    assert_eq!(std::fs::read_to_string(&attribute).unwrap().trim(), "17");
    assert_eq!(
        knob.restore_commands(),
        vec![format!("echo 17 > {}", attribute.display())]
    );
}

/// The speed mode and the clock on the emulated eMMC's captures: an HS52 card (CARD_TYPE
/// 0x03) at 52 MHz in "mmc high-speed"; 6.12 and 7.2 both take the speed bits.
#[test]
fn speed_mode_and_clock_on_the_emulated_emmc() {
    for capture in ["cap-linux6-bus4.txt", "cap-linux7-bus8.txt"] {
        let dir = tempfile::tempdir().unwrap();
        let (paths, release) = tree_from_capture(capture, dir.path());
        std::fs::write(paths.host_debugfs.join("clock"), "52000000\n").unwrap();
        let env = KnobEnv {
            paths,
            kernel_release: release,
        };
        let statuses = status(&env);
        let speed = find(&statuses, "speed-mode");
        assert!(speed.available, "{capture}: {speed:?}");
        assert_eq!(speed.value.as_deref(), Some("hs"), "{capture}");
        let clock = find(&statuses, "clock");
        assert_eq!(clock.value.as_deref(), Some("52000000"), "{capture}");

        let knob = resolve("speed-mode", &env, false).unwrap();
        for word in ["legacy", "hs"] {
            knob.check(&knob.normalize(word).unwrap(), false).unwrap();
        }
        for (word, lacks) in [
            ("ddr52", "DDR_1_8V (bit 2), DDR_1_2V (bit 3)"),
            ("hs200", "HS200_1_8V (bit 4), HS200_1_2V (bit 5)"),
        ] {
            let err = knob
                .check(&knob.normalize(word).unwrap(), true)
                .unwrap_err()
                .to_string();
            assert_eq!(
                err,
                format!(
                    "speed-mode {word}: refused, the card cannot do {word}: EXT_CSD CARD_TYPE \
                     0x03 has none of {lacks}"
                ),
                "{capture}"
            );
        }
    }
}

#[test]
fn speed_mode_before_6_7_is_an_across_boots_ab() {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = tree_from_capture("cap-linux6-bus4.txt", dir.path());
    let env = KnobEnv {
        paths,
        kernel_release: "6.6.60-armmp".into(),
    };
    let err = resolve("speed-mode", &env, false)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("Linux 6.6 does not let debugfs write the speed bits")
            && err.contains("--label"),
        "{err}"
    );
    assert!(resolve("speed-mode", &env, true).is_ok(), "--force tries");
    let statuses = status(&env);
    let speed = find(&statuses, "speed-mode");
    assert_eq!(
        speed.value.as_deref(),
        Some("hs"),
        "current mode still shown"
    );
}

/// Linux 6.1 (Debian 12's own kernel, captured in the testbed): debugfs `caps` and
/// `caps2` are mode 0400 there, read-only whoever writes (docs/kernel-facts.md, "Linux
/// 6.1"), so every knob that writes them is unavailable even with `--force`, naming the
/// route across boots; `clock` is writable on every kernel.
#[test]
fn linux_6_1_read_only_caps_refuse_even_with_force_and_name_the_route() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (paths, release) = tree_from_capture("cap-linux61-bus4.txt", dir.path());
    assert!(release.starts_with("6.1."), "{release}");
    for file in ["caps", "caps2"] {
        let path = paths.host_debugfs.join(file);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
    }
    std::fs::write(paths.host_debugfs.join("clock"), "52000000\n").unwrap();
    let env = KnobEnv {
        paths,
        kernel_release: release,
    };
    for (knob, route) in [
        ("bus-width", "one boot per device-tree bus-width"),
        ("speed-mode", "one boot per device tree (mmc-ddr-1_8v"),
        ("cmd23", "across kernels or boots"),
    ] {
        for force in [false, true] {
            let err = resolve(knob, &env, force).err().unwrap().to_string();
            assert!(
                err.contains("its debugfs caps and caps2 are read-only")
                    && err.contains("is mode 0400")
                    && err.contains(route)
                    && err.contains("then mmcab compare (docs/board.md, section 9)")
                    && !err.contains("--force tries"),
                "{knob}, force {force}: {err}"
            );
        }
    }
    let statuses = status(&env);
    assert!(find(&statuses, "clock").available, "{statuses:?}");
    assert_eq!(find(&statuses, "bus-width").value.as_deref(), Some("4"));
}
