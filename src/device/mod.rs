//! Device discovery and introspection: from `/dev/mmcblkN` to the card's identity, the
//! host's bus settings, EXT_CSD and capabilities (what `mmcab info` shows). Returns
//! data; the command line prints it.
//!
//! - [`discover`]: name -> [`MmcPaths`] (sysfs, host, debugfs)
//! - [`ioctl`]: the MMC ioctls, over the safe interface of `linux_uapi::mmc`
//! - [`ext_csd`] (+ [`ext_csd_table`], the fields by name, over [`ext_csd_field`], what a
//!   field is), [`cid`], [`ios`]: decoding
//! - [`capabilities`]: packed, cmdq, cache, bus width (now / switchable at run time)
//! - [`caps_gate`]: a debugfs `caps` this kernel made read-only, and the across-boots route
//! - [`info`]: [`DeviceInfo`], all of it in one typed value (`mmcab info --json`,
//!   meta.json's `device`); [`info_read`]: reading it from the kernel; [`render`]: its
//!   human form
//! - [`info_speed`]: the speed modes card and host offer (CARD_TYPE, DRIVER_STRENGTH,
//!   STROBE_SUPPORT, HS_TIMING; the host's caps/caps2 speed bits)
//! - [`speed_offer`]: which speed modes this kernel, host and card offer, and why not
//!   (`mmcab knobs`), from [`speed_modes`]' verdicts
//! - [`host_driver`]: the host's driver, its module and the module's parameters
//! - [`kconfig`]: the kernel config options and run-time gates each feature of mmcab
//!   needs, as one table; [`kconfig_read`]: which of them the running kernel lacks;
//!   [`mmc_test`]: whether the kernel's mmc_test driver is there
//! - [`sysfs`]: reading kernel attribute files
//! - data commands through the ioctl: [`raw_access`] (may mmcab, and how: addressing,
//!   limits), [`transfer`] (which commands), [`mmc_io`] (sending them), [`packed`] (the
//!   packed write of Linux 4.9); whether the kernel passes CMD23 on as `mrq.sbc` is
//!   seen in the trace: [`crate::evidence::sbc`]

pub mod capabilities;
pub mod caps_gate;
#[cfg(test)]
pub(crate) mod capture;
pub mod cid;
pub mod discover;
pub mod ext_csd;
pub mod ext_csd_field;
pub mod ext_csd_table;
pub mod host_driver;
pub mod info;
pub mod info_read;
pub mod info_speed;
pub mod ioctl;
pub mod ios;
pub mod kconfig;
pub mod kconfig_read;
pub mod list;
pub mod mmc_io;
pub mod mmc_test;
pub mod packed;
pub mod paths;
pub mod raw_access;
pub mod render;
pub mod speed_modes;
pub mod speed_offer;
pub mod sysfs;
pub mod transfer;

pub use discover::{discover, ensure_debugfs};
pub use ext_csd::{read_ext_csd, ExtCsd, ExtCsdSource};
pub use info::DeviceInfo;
pub use ios::{read_ios, Ios};
pub use paths::MmcPaths;
