//! Rebinding the card's block driver (`mmcblk`), which is when it decides how it builds
//! requests (CMD23 use, the command-queue setup: docs/kernel-facts.md). Unbinding deletes
//! every disk of the card (main area, boot partitions, RPMB); so it is refused while
//! anything else holds one of them (a mount, swap, a device-mapper or md holder, an open
//! file descriptor of another process), and after the bind mmcab waits until the disk is
//! back under its name with a device node.

use super::attribute::write_attribute;
use crate::device::MmcPaths;
use anyhow::{bail, Context, Result};
use std::collections::BTreeSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The block driver's sysfs directory (`mmc_blk_probe`'s driver, "mmcblk").
pub const DRIVER_DIR: &str = "/sys/bus/mmc/drivers/mmcblk";
/// How long the disk may take to come back after the bind.
const COME_BACK: Duration = Duration::from_secs(15);

/// The card and the driver it is bound to.
#[derive(Debug, Clone)]
pub struct MmcBlk {
    pub driver: PathBuf,
    /// `mmc0:0001`.
    pub card: String,
    pub card_sysfs: PathBuf,
    /// `mmcblk0` and `/dev/mmcblk0`.
    pub disk: String,
    pub dev_node: PathBuf,
}

impl MmcBlk {
    pub fn new(paths: &MmcPaths) -> MmcBlk {
        MmcBlk {
            driver: PathBuf::from(DRIVER_DIR),
            card: paths.card.clone(),
            card_sysfs: paths.card_sysfs.clone(),
            disk: paths.disk.clone(),
            dev_node: paths.dev_node.clone(),
        }
    }

    /// Why the card cannot be rebound here, if it cannot.
    pub fn unavailable(&self) -> Option<String> {
        for file in ["unbind", "bind"] {
            if !self.driver.join(file).exists() {
                return Some(format!(
                    "{} does not exist: the card's block driver cannot be rebound here",
                    self.driver.join(file).display()
                ));
            }
        }
        if !self.driver.join(&self.card).exists() {
            return Some(format!(
                "{} is not bound to {} (no {})",
                self.card,
                self.driver.display(),
                self.driver.join(&self.card).display()
            ));
        }
        None
    }

    /// The card's disks (`mmcblk0`, `mmcblk0boot0`, ...) and their partitions, as
    /// (device node, device number) of each.
    fn disks(&self) -> Vec<(String, u64)> {
        let card = std::fs::canonicalize(&self.card_sysfs).unwrap_or(self.card_sysfs.clone());
        let mut out = Vec::new();
        let Ok(entries) = std::fs::read_dir("/sys/block") else {
            return out;
        };
        for entry in entries.flatten() {
            let dir = entry.path();
            let device = std::fs::canonicalize(dir.join("device")).ok();
            if device.as_deref() != Some(card.as_path()) {
                continue;
            }
            let mut dirs = vec![dir.clone()];
            dirs.extend(crate::device::sysfs::partition_dirs(&dir));
            for d in dirs {
                let name = d
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if let Some(dev) = read_devno(&d.join("dev")) {
                    out.push((name, dev));
                }
            }
        }
        out
    }

    /// Refuse while anything but this process holds one of the card's disks.
    pub fn check_not_held(&self) -> Result<()> {
        let disks = self.disks();
        let mut users = Vec::new();
        for (name, _) in &disks {
            let node = Path::new("/dev").join(name);
            if node.exists() {
                if let Some(u) = crate::workload::target::in_use::block_device_in_use(&node)? {
                    users.push(u);
                }
            }
        }
        let devices: BTreeSet<u64> = disks.iter().map(|(_, d)| *d).collect();
        users.extend(open_by_others(&devices));
        if !users.is_empty() {
            bail!(
                "refusing to rebind the block driver of {} (it deletes and re-creates {}): \
                 {}; stop what uses it and retry",
                self.card,
                self.dev_node.display(),
                users.join("; ")
            );
        }
        Ok(())
    }

    /// Unbind and bind the card's block driver, then wait for the disk to come back.
    pub fn rebind(&self) -> Result<()> {
        self.check_not_held()?;
        self.unbind_and_bind()?;
        self.wait_for_disk()
    }

    /// Whether the card is bound to the driver now (`<driver>/<card>` exists).
    pub fn bound(&self) -> bool {
        self.driver.join(&self.card).exists()
    }

    /// Unbind (when bound: a card left unbound, e.g. by a bind that failed earlier, only
    /// needs binding; unbinding it would fail with ENODEV) and bind.
    fn unbind_and_bind(&self) -> Result<()> {
        self.unbind()?;
        self.bind()
    }

    /// Unbind the card from the driver when it is bound (the caller closed its handles
    /// and checked that nothing holds the disk).
    pub fn unbind(&self) -> Result<()> {
        if !self.bound() {
            return Ok(());
        }
        write_attribute(&self.driver.join("unbind"), &self.card)
            .with_context(|| format!("unbinding {} from {}", self.card, self.driver.display()))
    }

    /// Bind the card to the driver; the caller waits for the disk
    /// ([`MmcBlk::wait_for_disk`]).
    pub fn bind(&self) -> Result<()> {
        write_attribute(&self.driver.join("bind"), &self.card).with_context(|| {
            format!(
                "binding {} to {} again (by hand: {})",
                self.card,
                self.driver.display(),
                self.commands()[1]
            )
        })
    }

    /// Until `/sys/block/<disk>` is back and `/dev/<disk>` is its block device.
    pub fn wait_for_disk(&self) -> Result<()> {
        let start = Instant::now();
        let sys = Path::new("/sys/block").join(&self.disk);
        loop {
            let want = read_devno(&sys.join("dev"));
            let have = std::fs::metadata(&self.dev_node)
                .ok()
                .filter(|m| m.file_type().is_block_device())
                .map(|m| m.rdev());
            if want.is_some() && want == have {
                return Ok(());
            }
            if start.elapsed() > COME_BACK {
                bail!(
                    "{} did not come back as {} within {} s after binding {} to {} (sysfs {}, \
                     node {}): check dmesg",
                    self.disk,
                    self.dev_node.display(),
                    COME_BACK.as_secs(),
                    self.card,
                    self.driver.display(),
                    if want.is_some() { "there" } else { "missing" },
                    if have.is_some() {
                        "with another device number"
                    } else {
                        "missing"
                    }
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The shell commands of [`MmcBlk::rebind`].
    pub fn commands(&self) -> Vec<String> {
        ["unbind", "bind"]
            .iter()
            .map(|f| {
                format!(
                    "echo {} > {}",
                    super::shell_quote(&self.card),
                    super::shell_quote(&self.driver.join(f).to_string_lossy())
                )
            })
            .collect()
    }
}

/// `maj:min` in a sysfs `dev` file as a device number.
fn read_devno(path: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let (major, minor) = text.trim().split_once(':')?;
    Some(nix::sys::stat::makedev(
        major.parse().ok()?,
        minor.parse().ok()?,
    ))
}

/// Other processes with one of `devices` open: `comm (pid N) has /dev/x open`.
fn open_by_others(devices: &BTreeSet<u64>) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return out;
    };
    for p in procs.flatten() {
        let pid = p.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let Ok(meta) = std::fs::metadata(fd.path()) else {
                continue;
            };
            if meta.file_type().is_block_device() && devices.contains(&meta.rdev()) {
                let comm = std::fs::read_to_string(p.path().join("comm")).unwrap_or_default();
                let node = std::fs::read_link(fd.path()).unwrap_or_default();
                out.push(format!(
                    "{} (pid {pid}) has {} open",
                    comm.trim(),
                    node.display()
                ));
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebind_commands_name_the_card_and_the_driver() {
        let m = MmcBlk {
            driver: PathBuf::from(DRIVER_DIR),
            card: "mmc0:0001".into(),
            card_sysfs: PathBuf::from("/nonexistent"),
            disk: "mmcblk0".into(),
            dev_node: PathBuf::from("/dev/mmcblk0"),
        };
        assert_eq!(
            m.commands(),
            [
                "echo mmc0:0001 > /sys/bus/mmc/drivers/mmcblk/unbind",
                "echo mmc0:0001 > /sys/bus/mmc/drivers/mmcblk/bind"
            ]
        );
    }

    /// A driver directory with `unbind` and `bind` as plain files.
    fn driver_tree(bound: bool) -> (tempfile::TempDir, MmcBlk) {
        let dir = tempfile::tempdir().unwrap();
        for f in ["unbind", "bind"] {
            std::fs::write(dir.path().join(f), "").unwrap();
        }
        if bound {
            std::fs::create_dir(dir.path().join("mmc0:0001")).unwrap();
        }
        let m = MmcBlk {
            driver: dir.path().to_path_buf(),
            card: "mmc0:0001".into(),
            card_sysfs: PathBuf::from("/nonexistent"),
            disk: "mmcblk0".into(),
            dev_node: PathBuf::from("/dev/mmcblk0"),
        };
        (dir, m)
    }

    #[test]
    fn a_card_already_unbound_is_only_bound() {
        let written =
            |dir: &tempfile::TempDir, f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();
        let (dir, m) = driver_tree(true);
        m.unbind_and_bind().unwrap();
        assert_eq!(written(&dir, "unbind"), "mmc0:0001\n");
        assert_eq!(written(&dir, "bind"), "mmc0:0001\n");
        let (dir, m) = driver_tree(false);
        m.unbind_and_bind().unwrap();
        assert_eq!(written(&dir, "unbind"), "", "no unbind of an unbound card");
        assert_eq!(written(&dir, "bind"), "mmc0:0001\n");
    }

    #[test]
    #[ignore = "needs root: loop devices"]
    fn another_process_holding_the_device_is_named_and_this_one_is_not() {
        let device = crate::test_loop_device::LoopDevice::new(1 << 20);
        let node = device.dev.clone();
        let dev = std::fs::metadata(&node).unwrap().rdev();
        // This process holding it does not count: the runner closes its own handle. A new
        // loop device is probed by udev's workers for a moment (they open it): wait until
        // udev has handled its events (without udev installed, nothing probes it).
        if crate::test_tool::installed("udevadm") {
            let settled = std::process::Command::new("udevadm")
                .args(["settle", "--timeout=120"])
                .status();
            eprintln!("udevadm settle: {settled:?}");
        }
        // No other test of this process runs losetup while this one lists the holders.
        let _tools = crate::test_loop_device::loop_tools();
        let own = std::fs::File::open(&node).unwrap();
        let others = open_by_others(&BTreeSet::from([dev]));
        assert!(others.is_empty(), "{others:?}");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .stdin(std::fs::File::open(&node).unwrap())
            .spawn()
            .unwrap();
        let found = open_by_others(&BTreeSet::from([dev]));
        child.kill().unwrap();
        child.wait().unwrap();
        drop(own);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with(&format!(
                "sleep (pid {}) has {}",
                child.id(),
                node.display()
            )),
            "{found:?}"
        );
    }
}
