//! Device discovery and introspection (issue: foundation).
use std::path::PathBuf;
use std::process::ExitCode;

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

pub fn cmd_info(_args: &crate::cli::InfoArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!("mmcab info: under construction")
}
