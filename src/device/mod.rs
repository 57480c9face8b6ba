//! Device discovery and introspection: from `/dev/mmcblkN` to the card's identity, the
//! host's bus settings, EXT_CSD and capabilities (what `mmcab info` shows). Returns
//! data; the command line prints it.
//!
//! - [`discover`]: name -> [`MmcPaths`] (sysfs, host, debugfs)
//! - [`ioctl`]: the MMC ioctls, over the safe interface of `linux_uapi::mmc`
//! - [`ext_csd`] (+ [`ext_csd_table`]), [`cid`], [`ios`]: decoding
//! - [`capabilities`]: packed, cmdq, cache, bus width (now / switchable at run time)
//! - [`info`]: [`DeviceInfo`], all of it in one typed value (`mmcab info --json`,
//!   meta.json's `device`); [`probe`]: reading it from the kernel; [`render`]: its
//!   human form
//! - [`host_driver`]: the host's driver, its module and the module's parameters
//! - [`sysfs`]: reading kernel attribute files
//! - data commands through the ioctl: [`raw_access`] (may mmcab, and how: addressing,
//!   limits), [`transfer`] (which commands), [`mmc_io`] (sending them), [`packed`] (the
//!   packed write of Linux 4.9); whether the kernel passes CMD23 on as `mrq.sbc` is
//!   seen in the trace: [`crate::evidence::sbc`]
use std::path::PathBuf;

pub mod capabilities;
#[cfg(test)]
pub(crate) mod capture;
pub mod cid;
pub mod discover;
pub mod ext_csd;
pub mod ext_csd_table;
pub mod host_driver;
pub mod info;
pub mod ioctl;
pub mod ios;
pub mod mmc_io;
pub mod packed;
pub mod probe;
pub mod raw_access;
pub mod render;
pub mod sysfs;
pub mod transfer;

pub use discover::{discover, ensure_debugfs};
pub use ext_csd::{read_ext_csd, ExtCsd, ExtCsdSource};
pub use info::DeviceInfo;
pub use ios::{read_ios, Ios};

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
