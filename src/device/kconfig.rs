//! What of the running kernel mmcab needs, by feature: the config options (`CONFIG_*`)
//! each feature needs and the run-time gates that can take it away on a kernel built
//! with them (the kernel command line, kernel lockdown, a sysctl, module signature
//! enforcement, a file system not there), as one table, [`FEATURES`]; and which of them
//! the running kernel lacks ([`KernelFeatures`], `mmcab info` and `mmcab knobs`), read
//! by [`super::kconfig_read`] from the kernel's config (`/proc/config.gz`, else
//! `/boot/config-<release>`) and from what is actually there.
//!
//! The sources of each row (kernel file and function, Linux 6.12) are in
//! docs/kernel-config.md, which shows this table; a test holds the two together.

use serde::Serialize;
use std::path::PathBuf;

/// One thing mmcab does that needs the kernel's help: the options it needs and the
/// gates that can still take it away. One row of [`FEATURES`].
#[derive(Debug)]
pub struct Feature {
    /// Its name in `mmcab info`, e.g. `debugfs`.
    pub name: &'static str,
    /// What of mmcab it costs when missing, in words.
    pub needed_by: &'static str,
    /// Config options that must be `y` (or `m`), each with the fix when it is not.
    pub options: &'static [Opt],
    /// Checked in order on the running kernel; the first one in the way is reported
    /// (a later gate presupposes the earlier ones).
    pub gates: &'static [Gate],
}

/// A config option a feature needs (`=y` or `=m`).
#[derive(Debug)]
pub struct Opt {
    pub name: &'static str,
    /// What to do when it is not set.
    pub fix: &'static str,
}

/// A run-time check on the running kernel; [`super::kconfig_read`] says what each
/// finds and the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// A file under /sys exists (`path` relative to /sys); `fix` when it does not.
    SysPath {
        path: &'static str,
        fix: &'static str,
    },
    /// A file under /proc exists (`path` relative to /proc); `fix` when it does not.
    ProcPath {
        path: &'static str,
        fix: &'static str,
    },
    /// `/proc/filesystems` lists the file system `name`; `fix` when it does not.
    Filesystem {
        name: &'static str,
        fix: &'static str,
    },
    /// debugfs is allowed: `debugfs=` on the command line (or the config's default,
    /// `CONFIG_DEBUG_FS_ALLOW_*`) is not `off` or `no-mount`.
    DebugfsAllowed,
    /// debugfs is mounted and has the card's host directory.
    HostDebugfs,
    /// The kernel is locked down below this level (`/sys/kernel/security/lockdown`);
    /// `reason` is the kernel's name of what the level restricts.
    Lockdown {
        level: Lockdown,
        reason: &'static str,
    },
    /// tracefs is reachable (mounted, or under debugfs) and has the mmc events.
    MmcEvents,
    /// The card's sysfs directory has `power/control` (runtime PM).
    RuntimePm,
    /// `kernel.io_uring_disabled` lets this process set up a ring.
    IoUringAllowed,
    /// `module.sig_enforce` is off: unsigned modules load.
    UnsignedModules,
}

/// Kernel lockdown levels, in order (`security/lockdown/lockdown.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Lockdown {
    None,
    Integrity,
    Confidentiality,
}

impl Lockdown {
    pub fn as_str(self) -> &'static str {
        match self {
            Lockdown::None => "none",
            Lockdown::Integrity => "integrity",
            Lockdown::Confidentiality => "confidentiality",
        }
    }

    /// A level as the kernel names it (`lockdown=`, the lockdown file).
    pub fn parse(word: &str) -> Option<Lockdown> {
        match word {
            "none" => Some(Lockdown::None),
            "integrity" => Some(Lockdown::Integrity),
            "confidentiality" => Some(Lockdown::Confidentiality),
            _ => None,
        }
    }
}

/// Every feature mmcab needs the kernel for, in the order `mmcab info` lists them.
pub const FEATURES: &[Feature] = &[
    Feature {
        name: "mmc block driver",
        needed_by: "/dev/mmcblkN itself, EXT_CSD by CMD8, the ioctl engine, probe packed, \
                    the cache knob",
        options: &[
            Opt {
                name: "CONFIG_MMC",
                fix: "build the kernel with CONFIG_MMC=y",
            },
            Opt {
                name: "CONFIG_MMC_BLOCK",
                fix: "build the kernel with CONFIG_MMC_BLOCK=y (or =m and modprobe mmc_block)",
            },
        ],
        gates: &[Gate::SysPath {
            path: "bus/mmc/drivers/mmcblk",
            fix: "modprobe mmc_block (CONFIG_MMC_BLOCK)",
        }],
    },
    Feature {
        name: "debugfs",
        needed_by: "bus width, clock and timing (debugfs ios) in info and meta.json, the \
                    host's caps, the bus-width, speed-mode, clock, cmd23 and cqe knobs, \
                    err_stats, EXT_CSD when the ioctl fails",
        options: &[Opt {
            name: "CONFIG_DEBUG_FS",
            fix: "build the kernel with CONFIG_DEBUG_FS=y",
        }],
        gates: &[
            Gate::DebugfsAllowed,
            Gate::Filesystem {
                name: "debugfs",
                fix: "build the kernel with CONFIG_DEBUG_FS=y",
            },
            Gate::HostDebugfs,
        ],
    },
    Feature {
        name: "debugfs read-write files",
        needed_by: "the bus-width, speed-mode, clock, cmd23 and cqe knobs and the host's caps \
                    in info (debugfs caps, caps2, clock: mode 0600), err_stats in the evidence \
                    (ios and ext_csd, mode 0400, stay readable)",
        options: &[],
        gates: &[Gate::Lockdown {
            level: Lockdown::Integrity,
            reason: "debugfs access",
        }],
    },
    Feature {
        name: "runtime PM",
        needed_by: "the bus-width and speed-mode knobs (new caps take effect when runtime PM \
                    re-initialises the card)",
        options: &[Opt {
            name: "CONFIG_PM",
            fix: "build the kernel with CONFIG_PM=y",
        }],
        gates: &[Gate::RuntimePm],
    },
    Feature {
        name: "mmc trace events",
        needed_by: "each run's kernel evidence (request sizes, CMD23, packing, tuning), the \
                    CMD23 pass-through check, probe packed's trace",
        options: &[
            Opt {
                name: "CONFIG_FTRACE",
                fix: "build the kernel with CONFIG_FTRACE=y and a tracer that selects \
                      CONFIG_TRACING (e.g. CONFIG_ENABLE_DEFAULT_TRACERS=y)",
            },
            Opt {
                name: "CONFIG_TRACING",
                fix: "enable a tracer that selects CONFIG_TRACING (e.g. \
                      CONFIG_ENABLE_DEFAULT_TRACERS=y, under CONFIG_FTRACE)",
            },
        ],
        gates: &[
            Gate::Filesystem {
                name: "tracefs",
                fix: "build the kernel with CONFIG_FTRACE=y and a tracer that selects \
                      CONFIG_TRACING (e.g. CONFIG_ENABLE_DEFAULT_TRACERS=y)",
            },
            Gate::Lockdown {
                level: Lockdown::Confidentiality,
                reason: "use of tracefs",
            },
            Gate::MmcEvents,
        ],
    },
    Feature {
        name: "io_uring",
        needed_by: "the io_uring engine (engine = \"io_uring\" in a plan)",
        options: &[Opt {
            name: "CONFIG_IO_URING",
            fix: "build the kernel with CONFIG_IO_URING=y, or use engine = \"sync\"",
        }],
        gates: &[Gate::IoUringAllowed],
    },
    Feature {
        name: "page cache drop",
        needed_by: "cold buffered reads (the page cache is dropped before a workload with a \
                    direct = false job)",
        options: &[Opt {
            name: "CONFIG_PROC_SYSCTL",
            fix: "build the kernel with CONFIG_PROC_SYSCTL=y",
        }],
        gates: &[Gate::ProcPath {
            path: "sys/vm/drop_caches",
            fix: "build the kernel with CONFIG_PROC_SYSCTL=y, with /proc mounted",
        }],
    },
    Feature {
        name: "unsigned modules",
        needed_by: "loading the testbed's modules (testbed/emmcsim's simulated card is built \
                    unsigned)",
        options: &[Opt {
            name: "CONFIG_MODULES",
            fix: "build the kernel with CONFIG_MODULES=y",
        }],
        gates: &[
            Gate::UnsignedModules,
            Gate::Lockdown {
                level: Lockdown::Integrity,
                reason: "unsigned module loading",
            },
        ],
    },
];

/// What the running kernel lacks of [`FEATURES`] (`kernel_features` in `mmcab info
/// --json` and `mmcab knobs --json`). Keys in alphabetical order, as the rest of
/// `info --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelFeatures {
    /// Where the options were read: `/proc/config.gz` or `/boot/config-<release>`; None
    /// when neither could be read (only the gates were checked).
    pub config: Option<PathBuf>,
    /// Why no config was read.
    pub config_error: Option<String>,
    /// One per row of [`FEATURES`], in its order.
    pub features: Vec<FeatureStatus>,
    /// The lockdown level in force; None when it cannot be told.
    pub lockdown: Option<Lockdown>,
    /// Why the level cannot be told, or where it was guessed from.
    pub lockdown_note: Option<String>,
    /// The kernel's own MMC test driver (not a row of [`FEATURES`]: mmcab runs without it).
    pub mmc_test: super::mmc_test::MmcTest,
}

/// One feature on the running kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeatureStatus {
    /// Nothing in the way that mmcab could see.
    pub available: bool,
    pub feature: String,
    /// What is in the way: each option not set, then the first gate in the way.
    pub missing: Vec<Missing>,
    pub needed_by: String,
    /// The config options it needs.
    pub options: Vec<String>,
}

/// One thing in the way of a feature, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missing {
    pub fix: String,
    pub what: String,
}

impl KernelFeatures {
    /// Every missing thing with its feature, in table order.
    pub fn missing(&self) -> impl Iterator<Item = (&FeatureStatus, &Missing)> {
        self.features
            .iter()
            .flat_map(|f| f.missing.iter().map(move |m| (f, m)))
    }
}

#[cfg(test)]
#[path = "kconfig_tests.rs"]
mod tests;
