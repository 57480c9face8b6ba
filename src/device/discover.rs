//! From what the user typed (`/dev/mmcblk0`, `/dev/mmcblk0p2`, `mmcblk0`, or any node or
//! symlink to one) to the card's sysfs directory, its host and its debugfs directories.
//!
//! [`discover_in`] takes the sysfs, debugfs and /dev roots as parameters so tests can
//! point it at a tree built from a capture; [`discover`] uses the real ones.

use super::paths::MmcPaths;
use anyhow::{bail, Context, Result};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Where discovery looks.
#[derive(Debug, Clone)]
pub struct Roots {
    /// sysfs, normally `/sys`.
    pub sys: PathBuf,
    /// debugfs mount point, normally `/sys/kernel/debug`.
    pub debugfs: PathBuf,
    /// Device nodes, normally `/dev`.
    pub dev: PathBuf,
}

pub const DEBUGFS_DEFAULT: &str = "/sys/kernel/debug";

impl Default for Roots {
    fn default() -> Self {
        Roots {
            sys: PathBuf::from("/sys"),
            debugfs: debugfs_mount_point().unwrap_or_else(|| PathBuf::from(DEBUGFS_DEFAULT)),
            dev: PathBuf::from("/dev"),
        }
    }
}

/// Finds the card behind `name` in the running system.
pub fn discover(name: &str) -> Result<MmcPaths> {
    discover_in(name, &Roots::default())
}

/// What a non-MMC block device is, for the error message.
fn describe_block(block: &Path, disk: &str) -> String {
    if let Ok(backing) = std::fs::read_to_string(block.join("loop/backing_file")) {
        return format!("it is a loop device (backing file {})", backing.trim());
    }
    if disk.starts_with("loop") {
        return "it is a loop device with nothing attached".to_string();
    }
    let subsystem = std::fs::read_link(block.join("device/subsystem"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    match subsystem {
        Some(s) => format!("its device is on the {s} bus"),
        None if disk.starts_with("ram") => "it is a RAM disk".to_string(),
        None if disk.starts_with("zram") => "it is a compressed RAM disk (zram)".to_string(),
        None if disk.starts_with("dm-") => "it is a device-mapper device".to_string(),
        None if disk.starts_with("md") => "it is a software RAID (md) device".to_string(),
        None => "it has no backing device (a virtual block device)".to_string(),
    }
}

/// Resolves a user-supplied name to (whole-disk name, given node is a partition of it).
fn disk_name(name: &str, roots: &Roots) -> Result<(String, Option<String>)> {
    let looks_like_path = name.contains('/');
    if looks_like_path {
        let path = Path::new(name);
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => anyhow::anyhow!(
                "{name}: no such device (list MMC/SD cards with: ls /sys/block | grep mmcblk)"
            ),
            std::io::ErrorKind::PermissionDenied => {
                anyhow::anyhow!("{name}: permission denied: run as root")
            }
            _ => anyhow::anyhow!("{name}: {e}"),
        })?;
        if !meta.file_type().is_block_device() {
            let what = if meta.is_dir() {
                "a directory"
            } else if meta.is_file() {
                "a regular file"
            } else if meta.file_type().is_char_device() {
                "a character device"
            } else {
                "not a block device"
            };
            bail!("{name}: not an MMC/SD block device: it is {what} (pass /dev/mmcblkN)");
        }
        let rdev = meta.rdev();
        let (major, minor) = (libc::major(rdev), libc::minor(rdev));
        let sys_dev = roots.sys.join(format!("dev/block/{major}:{minor}"));
        let block = std::fs::canonicalize(&sys_dev).with_context(|| {
            format!(
                "{name}: block device {major}:{minor} has no sysfs entry {}",
                sys_dev.display()
            )
        })?;
        let own = file_name(&block)?;
        if block.join("partition").exists() {
            let parent = block.parent().context("partition without a parent disk")?;
            return Ok((file_name(parent)?, Some(own)));
        }
        return Ok((own, None));
    }
    // A bare name: a disk or a partition known to sysfs.
    let class = roots.sys.join("class/block").join(name);
    let block = roots.sys.join("block").join(name);
    if block.exists() {
        return Ok((name.to_string(), None));
    }
    if class.join("partition").exists() {
        let real = std::fs::canonicalize(&class)?;
        let parent = real.parent().context("partition without a parent disk")?;
        return Ok((file_name(parent)?, Some(name.to_string())));
    }
    bail!(
        "{name}: no such block device in {} (list MMC/SD cards with: ls /sys/block | grep mmcblk)",
        roots.sys.join("block").display()
    )
}

fn file_name(p: &Path) -> Result<String> {
    Ok(p.file_name()
        .with_context(|| format!("{}: no file name", p.display()))?
        .to_string_lossy()
        .into_owned())
}

/// [`discover`] against explicit roots.
pub fn discover_in(name: &str, roots: &Roots) -> Result<MmcPaths> {
    let (disk, _partition) = disk_name(name, roots)?;
    let block_sysfs = roots.sys.join("block").join(&disk);
    let device_link = block_sysfs.join("device");
    let card_sysfs = match std::fs::canonicalize(&device_link) {
        Ok(p) => p,
        Err(_) => bail!(
            "{name}: not an MMC/SD block device: {}",
            describe_block(&block_sysfs, &disk)
        ),
    };
    let subsystem = std::fs::read_link(card_sysfs.join("subsystem"))
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    if subsystem.as_deref() != Some("mmc") {
        bail!(
            "{name}: not an MMC/SD block device: {}",
            describe_block(&block_sysfs, &disk)
        );
    }
    let card = file_name(&card_sysfs)?;
    let host_dir = card_sysfs.parent().with_context(|| {
        format!(
            "{}: card directory has no host above it",
            card_sysfs.display()
        )
    })?;
    let host = file_name(host_dir)?;
    if !host.starts_with("mmc") {
        bail!(
            "{}: expected the card's parent to be an mmc host (mmcN), found {host}",
            card_sysfs.display()
        );
    }
    let host_debugfs = roots.debugfs.join(&host);
    let card_debugfs = host_debugfs.join(&card);
    Ok(MmcPaths {
        dev_node: roots.dev.join(&disk),
        disk,
        block_sysfs,
        card_sysfs,
        card,
        host,
        host_debugfs,
        card_debugfs,
    })
}

/// Where debugfs is mounted, from /proc/self/mounts (the first debugfs entry).
pub fn debugfs_mount_point() -> Option<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    mounts.lines().find_map(|line| {
        let mut it = line.split_whitespace();
        let (_src, dir, fstype) = (it.next()?, it.next()?, it.next()?);
        (fstype == "debugfs").then(|| PathBuf::from(dir.replace("\\040", " ")))
    })
}

/// Makes sure debugfs is mounted and returns its mount point: mounts it at
/// /sys/kernel/debug if it is not mounted (needs root), or says how.
///
/// Read-write (nosuid, nodev, noexec), as systemd mounts it: the host `caps` knob writes
/// a debugfs file, and a read-only mount made by `info` would make a later knob run
/// fail with "debugfs is mounted read-only". debugfs files that only root may write
/// stay so; mounting it writes nothing.
pub fn ensure_debugfs() -> Result<PathBuf> {
    if let Some(p) = debugfs_mount_point() {
        return Ok(p);
    }
    let target = Path::new(DEBUGFS_DEFAULT);
    let flags = nix::mount::MsFlags::MS_NOSUID
        | nix::mount::MsFlags::MS_NODEV
        | nix::mount::MsFlags::MS_NOEXEC;
    nix::mount::mount(
        Some("debugfs"),
        target,
        Some("debugfs"),
        flags,
        None::<&str>,
    )
    .map_err(|e| {
        anyhow::anyhow!(
            "debugfs is not mounted and mounting it at {} failed ({e}): as root run \
             `mount -t debugfs none {}` (kernel needs CONFIG_DEBUG_FS)",
            target.display(),
            target.display()
        )
    })?;
    Ok(target.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::capture::Capture;

    fn roots_for(which: &str, dir: &Path) -> Roots {
        let (sys, debugfs) = Capture::load(which).build_tree(dir);
        Roots {
            sys,
            debugfs,
            dev: PathBuf::from("/dev"),
        }
    }

    #[test]
    fn qemu_layout_resolves_card_host_and_debugfs() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots_for("cap-linux7-bus8.txt", dir.path());
        let p = discover_in("mmcblk0", &roots).unwrap();
        assert_eq!(p.disk, "mmcblk0");
        assert_eq!(p.card, "mmc0:0001");
        assert_eq!(p.host, "mmc0");
        assert_eq!(p.dev_node, PathBuf::from("/dev/mmcblk0"));
        assert!(
            p.card_sysfs
                .ends_with("1e750100.sdhci/mmc_host/mmc0/mmc0:0001"),
            "{p:?}"
        );
        assert_eq!(p.host_debugfs, roots.debugfs.join("mmc0"));
        assert_eq!(p.card_debugfs, roots.debugfs.join("mmc0/mmc0:0001"));
        assert!(p.card_debugfs.join("ext_csd").exists());
    }

    #[test]
    fn partition_name_resolves_to_its_disk() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots_for("cap-linux6-bus4.txt", dir.path());
        // Lay out mmcblk0p1 as the kernel does: a directory inside the disk, linked
        // from class/block.
        let disk = std::fs::canonicalize(roots.sys.join("block/mmcblk0")).unwrap();
        std::fs::create_dir_all(disk.join("mmcblk0p1")).unwrap();
        std::fs::write(disk.join("mmcblk0p1/partition"), "1\n").unwrap();
        std::fs::create_dir_all(roots.sys.join("class/block")).unwrap();
        std::os::unix::fs::symlink(
            disk.join("mmcblk0p1"),
            roots.sys.join("class/block/mmcblk0p1"),
        )
        .unwrap();
        let p = discover_in("mmcblk0p1", &roots).unwrap();
        assert_eq!((p.disk.as_str(), p.card.as_str()), ("mmcblk0", "mmc0:0001"));
    }

    #[test]
    fn unknown_names_and_non_block_paths_fail_with_one_line() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots_for("cap-linux6-bus4.txt", dir.path());
        let err = discover_in("mmcblk9", &roots).unwrap_err().to_string();
        assert!(err.contains("mmcblk9: no such block device"), "{err}");
        let err = discover_in("/nonexistent/mmcblk0", &roots)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no such device"), "{err}");
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        let err = discover_in(file.to_str().unwrap(), &roots)
            .unwrap_err()
            .to_string();
        assert!(err.contains("it is a regular file"), "{err}");
        assert!(!err.contains('\n'));
    }

    #[test]
    fn a_disk_without_mmc_subsystem_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let roots = roots_for("cap-linux6-bus4.txt", dir.path());
        let virt = roots.sys.join("devices/virtual/block/zram0");
        std::fs::create_dir_all(&virt).unwrap();
        std::os::unix::fs::symlink(&virt, roots.sys.join("block/zram0")).unwrap();
        let err = discover_in("zram0", &roots).unwrap_err().to_string();
        assert_eq!(
            err,
            "zram0: not an MMC/SD block device: it is a compressed RAM disk (zram)"
        );
    }
}
