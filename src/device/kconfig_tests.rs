//! Tests of [`super::FEATURES`] checked by [`crate::device::kconfig_read`] on fixture
//! trees laid out like a running kernel's (`/boot`, `/proc`, `/sys`, debugfs): Debian's
//! 6.12 armmp config (tests/fixtures/kconfig/), then one option or gate taken away at a
//! time, as a kernel's build or a user would.

use super::*;
use crate::device::kconfig_read::{check_in, parse_config, System};
use crate::device::MmcPaths;
use std::path::Path;

const RELEASE: &str = "6.12.95+deb12-armmp";

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/kconfig")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A running 6.12 kernel with all mmcab needs: the config in /boot, debugfs, tracefs and
/// securityfs mounted, not locked down, io_uring allowed, unsigned modules allowed.
struct Tree {
    dir: tempfile::TempDir,
    system: System,
    paths: MmcPaths,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let root = root.as_path();
        let system = System {
            proc: root.join("proc"),
            sys: root.join("sys"),
            boot: root.join("boot"),
            modules: root.join("lib/modules"),
            release: RELEASE.to_string(),
            root: true,
        };
        let tree = Tree {
            paths: MmcPaths::under(root),
            system,
            dir,
        };
        let r = root.display();
        tree.write(
            &format!("boot/config-{RELEASE}"),
            &fixture(&format!("config-{RELEASE}")),
        );
        tree.write("proc/cmdline", "console=ttyS4,115200 quiet panic=-1\n");
        tree.write(
            "proc/filesystems",
            "nodev\tsysfs\nnodev\tproc\nnodev\tdebugfs\nnodev\ttracefs\nnodev\tsecurityfs\n\text4\n",
        );
        tree.write(
            "proc/self/mounts",
            &format!(
                "sysfs {r}/sys sysfs rw 0 0\ndebugfs {r}/debug debugfs rw 0 0\n\
                 tracefs {r}/sys/kernel/tracing tracefs rw 0 0\n\
                 securityfs {r}/sys/kernel/security securityfs rw 0 0\n"
            ),
        );
        tree.write("proc/sys/kernel/io_uring_disabled", "0\n");
        tree.write("proc/sys/vm/drop_caches", "0\n");
        tree.mkdir("sys/bus/mmc/drivers/mmcblk");
        tree.write(
            "sys/kernel/security/lockdown",
            "[none] integrity confidentiality\n",
        );
        tree.mkdir("sys/kernel/tracing/instances");
        tree.mkdir("sys/kernel/tracing/events/mmc/mmc_request_start");
        tree.write("sys/module/module/parameters/sig_enforce", "N\n");
        tree.write("debug/mmc0/ios", "clock:\t\t52000000 Hz\n");
        tree.write("sys/bus/mmc/devices/mmc0:0001/power/control", "auto\n");
        tree
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn mkdir(&self, rel: &str) {
        std::fs::create_dir_all(self.path(rel)).unwrap();
    }

    fn remove(&self, rel: &str) {
        let path = self.path(rel);
        match path.is_dir() {
            true => std::fs::remove_dir_all(path).unwrap(),
            false => std::fs::remove_file(path).unwrap(),
        }
    }

    /// The config with `line` in place of the line that sets the same option.
    fn config_with(&self, line: &str) {
        let option = line
            .trim_start_matches("# ")
            .split(['=', ' '])
            .next()
            .unwrap();
        let text: String = fixture(&format!("config-{RELEASE}"))
            .lines()
            .map(
                |l| match l.trim_start_matches("# ").split(['=', ' ']).next() == Some(option) {
                    true => format!("{line}\n"),
                    false => format!("{l}\n"),
                },
            )
            .collect();
        assert!(text.contains(line), "{option} is not in the fixture");
        self.write(&format!("boot/config-{RELEASE}"), &text);
    }

    fn check(&self) -> KernelFeatures {
        check_in(&self.system, &self.paths)
    }
}

/// The features with something missing: name -> (what, fix) of each.
fn missing(k: &KernelFeatures) -> Vec<(String, String, String)> {
    k.missing()
        .map(|(f, m)| (f.feature.clone(), m.what.clone(), m.fix.clone()))
        .collect()
}

/// The one missing thing of `k`, which must be of `feature`: (what, fix).
fn only_missing(k: &KernelFeatures, feature: &str) -> (String, String) {
    let all = missing(k);
    assert_eq!(
        all.len(),
        1,
        "want one missing thing of {feature}, got {all:#?}"
    );
    let (name, what, fix) = all.into_iter().next().unwrap();
    assert_eq!(name, feature, "{what}");
    (what, fix)
}

#[test]
fn debian_6_12_with_everything_mounted_misses_nothing() {
    let tree = Tree::new();
    let k = tree.check();
    assert_eq!(missing(&k), vec![]);
    assert_eq!(k.config, Some(tree.path(&format!("boot/config-{RELEASE}"))));
    assert_eq!((k.config_error, k.lockdown), (None, Some(Lockdown::None)));
    assert_eq!(k.features.len(), FEATURES.len());
    assert!(k.features.iter().all(|f| f.available));
}

#[test]
fn the_fixture_config_parses_as_kconfig_writes_it() {
    let config = parse_config(&fixture(&format!("config-{RELEASE}")));
    assert_eq!(config["CONFIG_DEBUG_FS"], "y");
    assert_eq!(config["CONFIG_MMC_TEST"], "n");
    assert_eq!(config["CONFIG_MMC_BLOCK_MINORS"], "256");
    assert_eq!(config["CONFIG_MODULE_SIG_FORCE"], "n");
    assert!(!config.contains_key("CONFIG_IKCONFIG_PROC"));
}

#[test]
fn an_option_not_set_is_named_with_the_file_and_its_gates_are_not_asked() {
    let tree = Tree::new();
    tree.config_with("# CONFIG_IO_URING is not set");
    // Its gate would say something else: the option explains it.
    tree.write("proc/sys/kernel/io_uring_disabled", "2\n");
    let (what, fix) = only_missing(&tree.check(), "io_uring");
    let config = tree.path(&format!("boot/config-{RELEASE}"));
    assert_eq!(
        what,
        format!("CONFIG_IO_URING is not set in {}", config.display())
    );
    assert!(fix.contains("CONFIG_IO_URING=y"), "{fix}");
}

#[test]
fn proc_config_gz_comes_before_boot() {
    use std::io::Write;
    let tree = Tree::new();
    let text =
        fixture(&format!("config-{RELEASE}")).replace("CONFIG_PM=y", "# CONFIG_PM is not set");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    tree.write("proc/config.gz", "");
    std::fs::write(tree.path("proc/config.gz"), gz.finish().unwrap()).unwrap();
    let k = tree.check();
    assert_eq!(k.config, Some(tree.path("proc/config.gz")));
    let (what, _) = only_missing(&k, "runtime PM");
    assert!(what.starts_with("CONFIG_PM is not set in ") && what.ends_with("proc/config.gz"));
}

#[test]
fn without_a_config_it_says_so_and_checks_what_is_there() {
    let tree = Tree::new();
    tree.remove(&format!("boot/config-{RELEASE}"));
    tree.remove("sys/kernel/tracing/events/mmc");
    let k = tree.check();
    assert_eq!(k.config, None);
    let error = k.config_error.clone().unwrap();
    assert!(error.starts_with("no kernel config: neither "), "{error}");
    assert!(error.contains("proc/config.gz") && error.contains(&format!("boot/config-{RELEASE}")));
    let (what, _) = only_missing(&k, "mmc trace events");
    assert!(what.contains("events/mmc/mmc_request_start"), "{what}");
}

#[test]
fn lockdown_integrity_costs_the_read_write_debugfs_files_and_unsigned_modules() {
    let tree = Tree::new();
    tree.write(
        "sys/kernel/security/lockdown",
        &fixture("lockdown-integrity"),
    );
    let k = tree.check();
    assert_eq!(k.lockdown, Some(Lockdown::Integrity));
    let all = missing(&k);
    let names: Vec<&str> = all.iter().map(|(f, _, _)| f.as_str()).collect();
    assert_eq!(
        names,
        ["debugfs read-write files", "unsigned modules"],
        "{all:#?}"
    );
    assert_eq!(
        all[0].1,
        "the kernel is locked down (integrity): debugfs access is restricted"
    );
    assert_eq!(
        all[1].1,
        "the kernel is locked down (integrity): unsigned module loading is restricted"
    );
    assert!(
        all[0]
            .2
            .starts_with("lockdown cannot be lifted at run time"),
        "{}",
        all[0].2
    );
}

#[test]
fn lockdown_confidentiality_costs_the_trace_as_well() {
    let tree = Tree::new();
    tree.write(
        "sys/kernel/security/lockdown",
        "none integrity [confidentiality]\n",
    );
    let names: Vec<String> = missing(&tree.check()).into_iter().map(|m| m.0).collect();
    assert_eq!(
        names,
        [
            "debugfs read-write files",
            "mmc trace events",
            "unsigned modules"
        ]
    );
}

#[test]
fn without_securityfs_the_command_line_and_config_give_a_floor() {
    let tree = Tree::new();
    tree.remove("sys/kernel/security");
    let mounts = std::fs::read_to_string(tree.path("proc/self/mounts")).unwrap();
    let mounts: String = mounts
        .lines()
        .filter(|l| !l.starts_with("securityfs"))
        .map(|l| format!("{l}\n"))
        .collect();
    tree.write("proc/self/mounts", &mounts);
    let k = tree.check();
    assert_eq!(k.lockdown, None);
    assert!(k
        .lockdown_note
        .as_deref()
        .unwrap()
        .contains("securityfs is not mounted"));
    assert_eq!(missing(&k), vec![]);

    tree.write("proc/cmdline", "console=ttyS4 lockdown=integrity quiet\n");
    let k = tree.check();
    assert_eq!(k.lockdown, Some(Lockdown::Integrity));
    assert!(k
        .lockdown_note
        .as_deref()
        .unwrap()
        .contains("lockdown=integrity on the command line"));
    assert_eq!(missing(&k).len(), 2);

    tree.config_with("CONFIG_LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY=y");
    assert_eq!(tree.check().lockdown, Some(Lockdown::Confidentiality));
}

#[test]
fn debugfs_off_or_no_mount_on_the_command_line_is_named() {
    for (cmdline, word) in [
        ("quiet debugfs=off", "debugfs=off"),
        ("debugfs=on debugfs=no-mount", "debugfs=no-mount"),
    ] {
        let tree = Tree::new();
        tree.write("proc/cmdline", cmdline);
        let (what, fix) = only_missing(&tree.check(), "debugfs");
        assert_eq!(
            what,
            format!("{word} on the kernel command line: debugfs is not registered")
        );
        assert_eq!(fix, format!("boot without {word} (or with debugfs=on)"));
    }
}

#[test]
fn the_configs_debugfs_default_counts_unless_the_command_line_overrides_it() {
    let tree = Tree::new();
    tree.config_with("CONFIG_DEBUG_FS_ALLOW_NONE=y");
    let (what, fix) = only_missing(&tree.check(), "debugfs");
    assert!(what.starts_with("CONFIG_DEBUG_FS_ALLOW_NONE=y"), "{what}");
    assert!(fix.contains("debugfs=on"), "{fix}");
    tree.write("proc/cmdline", "debugfs=on");
    assert_eq!(missing(&tree.check()), vec![]);
}

#[test]
fn debugfs_not_registered_or_not_mounted() {
    let tree = Tree::new();
    tree.write("proc/filesystems", "nodev\tsysfs\nnodev\ttracefs\n");
    let (what, _) = only_missing(&tree.check(), "debugfs");
    assert_eq!(what, "no debugfs in /proc/filesystems");

    let tree = Tree::new();
    let mounts = std::fs::read_to_string(tree.path("proc/self/mounts")).unwrap();
    let mounts: String = mounts
        .lines()
        .filter(|l| !l.starts_with("debugfs"))
        .map(|l| format!("{l}\n"))
        .collect();
    tree.write("proc/self/mounts", &mounts);
    let (what, fix) = only_missing(&tree.check(), "debugfs");
    assert_eq!(what, "debugfs is not mounted");
    assert!(
        fix.contains("mount -t debugfs none /sys/kernel/debug"),
        "{fix}"
    );
}

#[test]
fn tracefs_is_found_under_debugfs_when_not_mounted_itself() {
    let tree = Tree::new();
    let mounts = std::fs::read_to_string(tree.path("proc/self/mounts")).unwrap();
    let mounts: String = mounts
        .lines()
        .filter(|l| !l.starts_with("tracefs"))
        .map(|l| format!("{l}\n"))
        .collect();
    tree.write("proc/self/mounts", &mounts);
    tree.remove("sys/kernel/tracing");
    let (what, fix) = only_missing(&tree.check(), "mmc trace events");
    assert!(
        what.starts_with("tracefs is not mounted (looked in "),
        "{what}"
    );
    assert!(fix.starts_with("as root: mount -t tracefs nodev "), "{fix}");
    tree.mkdir("debug/tracing/instances");
    tree.mkdir("debug/tracing/events/mmc/mmc_request_start");
    assert_eq!(missing(&tree.check()), vec![]);
}

#[test]
fn io_uring_disabled_2_for_all_1_for_those_not_root() {
    let mut tree = Tree::new();
    tree.write("proc/sys/kernel/io_uring_disabled", "2\n");
    let (what, fix) = only_missing(&tree.check(), "io_uring");
    assert_eq!(
        what,
        "kernel.io_uring_disabled is 2: io_uring is off for every process"
    );
    assert!(
        fix.starts_with("sysctl -w kernel.io_uring_disabled=0"),
        "{fix}"
    );
    tree.write("proc/sys/kernel/io_uring_disabled", "1\n");
    assert_eq!(missing(&tree.check()), vec![]);
    tree.system.root = false;
    let (what, _) = only_missing(&tree.check(), "io_uring");
    assert!(what.starts_with("kernel.io_uring_disabled is 1"), "{what}");
    // Before Linux 6.6 there is no such sysctl.
    tree.remove("proc/sys/kernel/io_uring_disabled");
    assert_eq!(missing(&tree.check()), vec![]);
}

#[test]
fn module_signature_enforcement_refuses_the_testbed_modules() {
    let tree = Tree::new();
    tree.write("sys/module/module/parameters/sig_enforce", "Y\n");
    let (what, fix) = only_missing(&tree.check(), "unsigned modules");
    assert_eq!(
        what,
        "module.sig_enforce is on: unsigned modules are refused"
    );
    assert!(fix.contains("module.sig_enforce=1"), "{fix}");
}

#[test]
fn no_runtime_pm_no_mmcblk_no_drop_caches() {
    for (rel, feature) in [
        ("sys/bus/mmc/devices/mmc0:0001/power", "runtime PM"),
        ("sys/bus/mmc/drivers/mmcblk", "mmc block driver"),
        ("proc/sys/vm/drop_caches", "page cache drop"),
    ] {
        let tree = Tree::new();
        tree.remove(rel);
        let (what, _) = only_missing(&tree.check(), feature);
        assert!(what.starts_with("no ") && what.contains(rel), "{what}");
    }
}

/// docs/kernel-config.md shows the table: every feature, option and gate's subject.
#[test]
fn docs_kernel_config_has_every_feature_and_option() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/kernel-config.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    for feature in FEATURES {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", feature.name)))
            .unwrap_or_else(|| panic!("docs/kernel-config.md has no row for {}", feature.name));
        for option in feature.options {
            assert!(
                row.contains(option.name),
                "{}: no {} in\n{row}",
                feature.name,
                option.name
            );
        }
        for gate in feature.gates {
            let subject = match gate {
                Gate::SysPath { path, .. } | Gate::ProcPath { path, .. } => *path,
                Gate::Filesystem { name, .. } => name,
                Gate::DebugfsAllowed => "debugfs=",
                Gate::HostDebugfs => "mounted",
                Gate::Lockdown { level, .. } => level.as_str(),
                Gate::MmcEvents => "mmc_request_start",
                Gate::RuntimePm => "power/control",
                Gate::IoUringAllowed => "io_uring_disabled",
                Gate::UnsignedModules => "sig_enforce",
            };
            assert!(
                row.contains(subject),
                "{}: no {subject} in\n{row}",
                feature.name
            );
        }
    }
}
