//! The MMC/SD block devices of this machine, for `mmcab info` without a DEVICE: which
//! `mmcblkN` is the eMMC, which the SD card, their boot partitions and partitions, and
//! what of them is in use (a board that boots from its eMMC). From sysfs only: every
//! disk in `/sys/block` whose `device` is on the mmc bus, its card's `type` (MMC, SD,
//! SDIO) and `name`, its host (`mmcN`), `size` (512-byte sectors) and `ro`/`force_ro`.

use super::discover::Roots;
use super::sysfs::{partition_dirs, read_trimmed};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// One disk of an MMC/SD card: the main area, or an eMMC boot partition
/// (`mmcblkNbootM`, a disk of its own).
#[derive(Debug, Clone, Serialize)]
pub struct McDisk {
    /// `/dev/mmcblk0`.
    pub node: PathBuf,
    /// `mmcblk0`.
    pub disk: String,
    /// `main`, `boot` (`mmcblkNbootM`) or `rpmb` (`mmcblkNrpmb`, on old kernels that made
    /// it a disk; current ones make it a character device, not listed).
    pub area: &'static str,
    /// The card's sysfs `type`: MMC, SD, SDIO.
    #[serde(rename = "type")]
    pub card_type: String,
    /// The card's sysfs `name` (the CID's product name).
    pub name: String,
    /// `mmc0:0001`, and its host `mmc0`.
    pub card: String,
    pub host: String,
    pub size_bytes: u64,
    /// The kernel keeps it read-only (`ro` = 1; `force_ro` of boot partitions).
    pub read_only: bool,
    pub partitions: Vec<McPartition>,
    /// What uses the disk or one of its partitions (mounts, swap, holders); None: nothing.
    pub in_use: Option<String>,
    #[serde(skip)]
    pub devno: String,
    #[serde(skip)]
    pub sys: PathBuf,
}

/// A partition of a disk (`mmcblk0p1`).
#[derive(Debug, Clone, Serialize)]
pub struct McPartition {
    pub node: PathBuf,
    pub start_bytes: u64,
    pub size_bytes: u64,
    pub in_use: Option<String>,
    #[serde(skip)]
    pub devno: String,
    #[serde(skip)]
    pub sys: PathBuf,
}

/// Every MMC/SD disk under `roots`, by name; `in_use` is left for the caller to fill
/// (who uses a block device is the target's concern, [`crate::workload::target`]).
pub fn mmc_disks(roots: &Roots) -> Vec<McDisk> {
    let mut disks = Vec::new();
    let Ok(entries) = std::fs::read_dir(roots.sys.join("block")) else {
        return disks;
    };
    for entry in entries.flatten() {
        let disk = entry.file_name().to_string_lossy().into_owned();
        let sys = std::fs::canonicalize(entry.path()).unwrap_or(entry.path());
        let Ok(card_sysfs) = std::fs::canonicalize(sys.join("device")) else {
            continue;
        };
        let subsystem = std::fs::read_link(card_sysfs.join("subsystem"))
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
        if subsystem.as_deref() != Some("mmc") {
            continue;
        }
        let sectors = |dir: &Path, file: &str| -> u64 {
            read_trimmed(dir.join(file))
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or(0)
                * 512
        };
        let flag = |file: &str| read_trimmed(sys.join(file)).is_ok_and(|v| v == "1");
        let area = if disk.contains("boot") {
            "boot"
        } else if disk.ends_with("rpmb") {
            "rpmb"
        } else {
            "main"
        };
        let partitions = partition_dirs(&sys)
            .into_iter()
            .filter_map(|p| {
                let name = p.file_name()?.to_string_lossy().into_owned();
                Some(McPartition {
                    node: roots.dev.join(&name),
                    start_bytes: sectors(&p, "start"),
                    size_bytes: sectors(&p, "size"),
                    in_use: None,
                    devno: read_trimmed(p.join("dev")).unwrap_or_default(),
                    sys: p,
                })
            })
            .collect();
        let card = card_sysfs
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        disks.push(McDisk {
            node: roots.dev.join(&disk),
            area,
            card_type: read_trimmed(card_sysfs.join("type")).unwrap_or_default(),
            name: read_trimmed(card_sysfs.join("name")).unwrap_or_default(),
            host: card.split(':').next().unwrap_or_default().to_string(),
            card,
            size_bytes: sectors(&sys, "size"),
            read_only: flag("ro") || flag("force_ro"),
            partitions,
            in_use: None,
            devno: read_trimmed(sys.join("dev")).unwrap_or_default(),
            sys,
            disk,
        });
    }
    disks.sort_by(|a, b| a.disk.cmp(&b.disk));
    disks
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A sysfs tree with an eMMC (main area, two partitions, a boot partition), an SD
    /// card and a loop device.
    fn tree(root: &Path) -> Roots {
        let sys = root.join("sys");
        let bus = sys.join("bus/mmc");
        fs::create_dir_all(&bus).unwrap();
        let card = |host: &str, rca: &str, kind: &str, name: &str| {
            let dir = sys.join(format!("devices/{host}/{host}:{rca}"));
            fs::create_dir_all(&dir).unwrap();
            std::os::unix::fs::symlink(&bus, dir.join("subsystem")).unwrap();
            fs::write(dir.join("type"), format!("{kind}\n")).unwrap();
            fs::write(dir.join("name"), format!("{name}\n")).unwrap();
            dir
        };
        let disk = |card: &Path, name: &str, dev: &str, sectors: u64| {
            let dir = card.join("block").join(name);
            fs::create_dir_all(&dir).unwrap();
            std::os::unix::fs::symlink(card, dir.join("device")).unwrap();
            fs::write(dir.join("dev"), format!("{dev}\n")).unwrap();
            fs::write(dir.join("size"), format!("{sectors}\n")).unwrap();
            fs::create_dir_all(sys.join("block")).unwrap();
            std::os::unix::fs::symlink(&dir, sys.join("block").join(name)).unwrap();
            dir
        };
        let emmc = card("mmc0", "0001", "MMC", "DG4008");
        let main = disk(&emmc, "mmcblk0", "179:0", 8 << 20);
        for (i, start) in [(1u32, 2048u64), (2, 526336)] {
            let p = main.join(format!("mmcblk0p{i}"));
            fs::create_dir_all(&p).unwrap();
            fs::write(p.join("partition"), format!("{i}\n")).unwrap();
            fs::write(p.join("start"), format!("{start}\n")).unwrap();
            fs::write(p.join("size"), "524288\n").unwrap();
            fs::write(p.join("dev"), format!("179:{i}\n")).unwrap();
        }
        let boot = disk(&emmc, "mmcblk0boot0", "179:8", 8192);
        fs::write(boot.join("force_ro"), "1\n").unwrap();
        let sd = card("mmc1", "aaaa", "SD", "SU08G");
        disk(&sd, "mmcblk1", "179:16", 1 << 24);
        let lp = sys.join("devices/virtual/block/loop0");
        fs::create_dir_all(&lp).unwrap();
        std::os::unix::fs::symlink(&lp, sys.join("block/loop0")).unwrap();
        Roots {
            sys,
            debugfs: root.join("debug"),
            dev: PathBuf::from("/dev"),
        }
    }

    #[test]
    fn the_mmc_disks_with_their_type_partitions_and_boot_partitions() {
        let dir = tempfile::tempdir().unwrap();
        let disks = mmc_disks(&tree(dir.path()));
        let names: Vec<&str> = disks.iter().map(|d| d.disk.as_str()).collect();
        assert_eq!(names, ["mmcblk0", "mmcblk0boot0", "mmcblk1"], "no loop0");
        let emmc = &disks[0];
        assert_eq!(
            (emmc.card_type.as_str(), emmc.name.as_str(), emmc.area),
            ("MMC", "DG4008", "main")
        );
        assert_eq!(
            (emmc.card.as_str(), emmc.host.as_str()),
            ("mmc0:0001", "mmc0")
        );
        assert_eq!(emmc.size_bytes, 4 << 30);
        assert_eq!(emmc.partitions.len(), 2);
        assert_eq!(emmc.partitions[1].node, Path::new("/dev/mmcblk0p2"));
        assert_eq!(emmc.partitions[1].start_bytes, 526336 * 512);
        assert_eq!(emmc.partitions[1].devno, "179:2");
        assert!(!emmc.read_only);
        assert_eq!(disks[1].area, "boot");
        assert!(disks[1].read_only, "force_ro");
        assert_eq!(disks[2].card_type, "SD");
    }
}
