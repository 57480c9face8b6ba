//! Where the kernel exposes one card: its device node, sysfs and debugfs paths.

use std::path::PathBuf;

/// Where the kernel exposes one MMC/SD card, found from `/dev/mmcblkN[pM]` or `mmcblkN`.
/// The knobs and the runner take every path they touch from here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MmcPaths {
    /// Whole-disk block device node, e.g. `/dev/mmcblk0`.
    pub dev_node: PathBuf,
    /// Disk name, e.g. `mmcblk0`.
    pub disk: String,
    /// `/sys/block/mmcblk0`.
    pub block_sysfs: PathBuf,
    /// The card's sysfs directory (`/sys/block/mmcblk0/device` resolved), e.g.
    /// `/sys/devices/.../mmc_host/mmc0/mmc0:0001`; also `/sys/bus/mmc/devices/mmc0:0001`.
    pub card_sysfs: PathBuf,
    /// Card name as the kernel names it, e.g. `mmc0:0001`.
    pub card: String,
    /// Host name, e.g. `mmc0`.
    pub host: String,
    /// `/sys/kernel/debug/mmc0` (may not exist when debugfs is not mounted).
    pub host_debugfs: PathBuf,
    /// `/sys/kernel/debug/mmc0/mmc0:0001`.
    pub card_debugfs: PathBuf,
}

#[cfg(test)]
impl MmcPaths {
    /// The paths of the testbed's card (`mmcblk0` on `mmc0:0001` of host `mmc0`) laid
    /// out under `root` (dev/, sys/, debug/), for tests that build a fake tree.
    pub(crate) fn under(root: &std::path::Path) -> MmcPaths {
        MmcPaths {
            dev_node: root.join("dev/mmcblk0"),
            disk: "mmcblk0".into(),
            block_sysfs: root.join("sys/block/mmcblk0"),
            card_sysfs: root.join("sys/bus/mmc/devices/mmc0:0001"),
            card: "mmc0:0001".into(),
            host: "mmc0".into(),
            host_debugfs: root.join("debug/mmc0"),
            card_debugfs: root.join("debug/mmc0/mmc0:0001"),
        }
    }
}
