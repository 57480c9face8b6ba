//! Test support: the real captures from the emulated eMMC in tests/fixtures/qemu-emmc
//! (`@@@ name` sections, see that directory's README), and a sysfs/debugfs tree built
//! from one of them in a scratch directory, laid out as the guest's kernel lays it out
//! (paths from the capture's `readlink` section). It stands in for a booted guest only
//! in unit tests of path handling; the guest itself is tested by the testbed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct Capture {
    sections: BTreeMap<String, String>,
}

/// The text of tests/fixtures/qemu-emmc/`name`.
pub fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/qemu-emmc")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

impl Capture {
    /// Loads tests/fixtures/qemu-emmc/`name`.
    pub fn load(name: &str) -> Capture {
        Capture::parse(&fixture(name))
    }

    pub fn parse(text: &str) -> Capture {
        let mut sections = BTreeMap::new();
        let mut current: Option<(String, String)> = None;
        for line in text.lines() {
            if let Some(name) = line.strip_prefix("@@@ ") {
                if let Some((n, body)) = current.take() {
                    sections.insert(n, body);
                }
                current = Some((name.trim().to_string(), String::new()));
            } else if let Some((_, body)) = current.as_mut() {
                body.push_str(line);
                body.push('\n');
            }
        }
        if let Some((n, body)) = current {
            sections.insert(n, body);
        }
        Capture { sections }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.sections.get(name).map(String::as_str)
    }

    /// The card's sysfs attributes (`device/NAME` sections): name -> content as read.
    pub fn device_attrs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.sections
            .iter()
            .filter_map(|(k, v)| k.strip_prefix("device/").map(|n| (n, v.as_str())))
    }

    /// Writes a sysfs + debugfs tree for `mmcblk0` under `root` (`root/sys`,
    /// `root/debug`) and returns (sys root, debugfs root).
    pub fn build_tree(&self, root: &Path) -> (PathBuf, PathBuf) {
        let sys = root.join("sys");
        let debug = root.join("debug");
        // Second line of `readlink`: the card directory as the guest resolved it.
        let card_abs = self
            .get("readlink")
            .and_then(|r| r.lines().nth(1))
            .expect("capture has a readlink section")
            .trim()
            .to_string();
        let card_rel = card_abs.trim_start_matches("/sys/");
        let card = sys.join(card_rel);
        let disk = card.join("block/mmcblk0");
        std::fs::create_dir_all(disk.join("queue")).unwrap();
        std::fs::create_dir_all(sys.join("block")).unwrap();
        std::fs::create_dir_all(sys.join("bus/mmc")).unwrap();
        std::fs::create_dir_all(card.join("power")).unwrap();
        for (name, body) in self.device_attrs() {
            std::fs::write(card.join(name), body).unwrap();
        }
        std::fs::write(card.join("power/runtime_status"), "active\n").unwrap();
        for (name, body) in &self.sections {
            if let Some(q) = name.strip_prefix("queue/") {
                std::fs::write(disk.join("queue").join(q), body).unwrap();
            }
        }
        std::fs::write(disk.join("size"), self.get("size").unwrap_or("0\n")).unwrap();
        let link = |target: &Path, at: &Path| std::os::unix::fs::symlink(target, at).unwrap();
        link(
            &Path::new("..").join(card_rel).join("block/mmcblk0"),
            &sys.join("block/mmcblk0"),
        );
        link(Path::new("../../../mmc0:0001"), &disk.join("device"));
        link(&sys.join("bus/mmc"), &card.join("subsystem"));
        let host = debug.join("mmc0");
        std::fs::create_dir_all(host.join("mmc0:0001")).unwrap();
        for name in ["ios", "caps", "caps2"] {
            if let Some(body) = self.get(name) {
                std::fs::write(host.join(name), body).unwrap();
            }
        }
        for name in ["ext_csd", "status"] {
            if let Some(body) = self.get(name) {
                std::fs::write(host.join("mmc0:0001").join(name), body).unwrap();
            }
        }
        (sys, debug)
    }

    /// [`Capture::build_tree`] under `root`, discovered as `mmcblk0`, with `/dev/null`
    /// standing in for the node: the mmc ioctl fails on it (ENOTTY), so EXT_CSD comes
    /// from the tree's debugfs.
    pub fn paths_in_tree(&self, root: &Path) -> crate::device::MmcPaths {
        use crate::device::discover::{discover_in, Roots};
        let (sys, debugfs) = self.build_tree(root);
        let roots = Roots {
            sys,
            debugfs,
            dev: "/dev".into(),
        };
        let mut paths = discover_in("mmcblk0", &roots).unwrap();
        paths.dev_node = "/dev/null".into();
        paths
    }
}

#[test]
fn captures_have_the_sections_the_tests_use() {
    for which in ["cap-linux6-bus4.txt", "cap-linux7-bus8.txt"] {
        let c = Capture::load(which);
        for s in ["uname", "ios", "caps", "ext_csd", "device/cid", "readlink"] {
            assert!(c.get(s).is_some(), "{which}: no {s}");
        }
        assert_eq!(c.device_attrs().count(), 29, "{which}");
    }
}
