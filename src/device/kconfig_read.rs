//! Checking [`super::kconfig::FEATURES`] on the running kernel: its config
//! (`/proc/config.gz`, else `/boot/config-<release>`; often neither), the kernel command
//! line, `/proc/filesystems` and the mounts, the lockdown level, sysctls, module
//! parameters and the card's own files. [`check_in`] takes the roots as parameters so
//! the tests can point it at a fixture tree.

use super::kconfig::{FeatureStatus, Gate, KernelFeatures, Lockdown, Missing, FEATURES};
use super::paths::MmcPaths;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Where the running kernel shows itself.
#[derive(Debug, Clone)]
pub struct System {
    /// procfs, normally `/proc`.
    pub proc: PathBuf,
    /// sysfs, normally `/sys`.
    pub sys: PathBuf,
    /// Where distributions install the kernel's config, normally `/boot`.
    pub boot: PathBuf,
    /// Where the kernel's modules are installed, normally `/lib/modules`.
    pub modules: PathBuf,
    /// `uname -r`.
    pub release: String,
    /// Whether this process runs as root (euid 0).
    pub root: bool,
}

impl System {
    /// The running system.
    pub fn running() -> System {
        System {
            proc: PathBuf::from("/proc"),
            sys: PathBuf::from("/sys"),
            boot: PathBuf::from("/boot"),
            modules: PathBuf::from("/lib/modules"),
            release: super::capabilities::kernel_release(),
            root: effective_uid(Path::new("/proc")) == Some(0),
        }
    }
}

/// The effective user id, from `status`' `Uid:` line (real, effective, saved, fs).
fn effective_uid(proc: &Path) -> Option<u32> {
    let status = std::fs::read_to_string(proc.join("self/status")).ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Which features the running kernel lacks, for the card at `paths`.
pub fn check(paths: &MmcPaths) -> KernelFeatures {
    check_in(&System::running(), paths)
}

/// [`check`] against explicit roots.
pub fn check_in(system: &System, paths: &MmcPaths) -> KernelFeatures {
    let seen = Seen::read(system);
    let features = FEATURES
        .iter()
        .map(|feature| {
            let mut missing: Vec<Missing> = match &seen.config {
                Ok((path, config)) => feature
                    .options
                    .iter()
                    .filter(|o| !is_set(config, o.name))
                    .map(|o| Missing {
                        what: format!("{} is not set in {}", o.name, path.display()),
                        fix: o.fix.to_string(),
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
            // A missing option explains whatever its gates would find.
            if missing.is_empty() {
                missing.extend(
                    feature
                        .gates
                        .iter()
                        .find_map(|gate| seen.gate(system, paths, *gate)),
                );
            }
            FeatureStatus {
                available: missing.is_empty(),
                feature: feature.name.to_string(),
                missing,
                needed_by: feature.needed_by.to_string(),
                options: feature.options.iter().map(|o| o.name.to_string()).collect(),
            }
        })
        .collect();
    let config = seen.config.as_ref().ok();
    KernelFeatures {
        config: config.map(|(path, _)| path.clone()),
        config_error: seen.config.as_ref().err().cloned(),
        features,
        lockdown: seen.lockdown,
        lockdown_note: seen.lockdown_note.clone(),
        mmc_test: super::mmc_test::check_in(
            &system.sys,
            &system.modules,
            &system.release,
            config.map(|(path, c)| (path.as_path(), c)),
        ),
    }
}

/// `CONFIG_X=y` or `=m`.
fn is_set(config: &BTreeMap<String, String>, option: &str) -> bool {
    matches!(config.get(option).map(String::as_str), Some("y" | "m"))
}

/// A kernel config: `CONFIG_X=value` lines (`# CONFIG_X is not set` is `n`).
pub fn parse_config(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("# ") {
                let name = rest.strip_suffix(" is not set")?;
                return name
                    .starts_with("CONFIG_")
                    .then(|| (name.to_string(), "n".to_string()));
            }
            let (name, value) = line.split_once('=')?;
            name.starts_with("CONFIG_")
                .then(|| (name.to_string(), value.trim_matches('"').to_string()))
        })
        .collect()
}

/// The config the kernel carries (`/proc/config.gz`, CONFIG_IKCONFIG_PROC), else the one
/// installed beside it (`/boot/config-<release>`), or why neither could be read.
fn read_config(system: &System) -> Result<(PathBuf, BTreeMap<String, String>), String> {
    let gz = system.proc.join("config.gz");
    let boot = system.boot.join(format!("config-{}", system.release));
    let from_gz = std::fs::File::open(&gz).and_then(|file| {
        let mut text = String::new();
        flate2::read::GzDecoder::new(file).read_to_string(&mut text)?;
        Ok(text)
    });
    let gz_error = match from_gz {
        Ok(text) => return Ok((gz, parse_config(&text))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(format!("{}: {e}", gz.display())),
    };
    match std::fs::read_to_string(&boot) {
        Ok(text) => Ok((boot, parse_config(&text))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && gz_error.is_none() => Err(format!(
            "no kernel config: neither {} (CONFIG_IKCONFIG_PROC) nor {}; options not \
             checked, only what is there",
            gz.display(),
            boot.display()
        )),
        Err(e) => Err(format!(
            "no kernel config: {}{}: {e}; options not checked, only what is there",
            gz_error.map(|g| format!("{g}; ")).unwrap_or_default(),
            boot.display()
        )),
    }
}

/// What was read once for all the gates.
struct Seen {
    config: Result<(PathBuf, BTreeMap<String, String>), String>,
    /// The kernel command line's words.
    cmdline: Vec<String>,
    /// `/proc/filesystems`' names; None when unreadable.
    filesystems: Option<Vec<String>>,
    /// (mount point, file system type) from `/proc/self/mounts`.
    mounts: Vec<(PathBuf, String)>,
    lockdown: Option<Lockdown>,
    lockdown_note: Option<String>,
}

impl Seen {
    fn read(system: &System) -> Seen {
        let text = |rel: &str| std::fs::read_to_string(system.proc.join(rel));
        let cmdline: Vec<String> = text("cmdline")
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect();
        let filesystems = text("filesystems").ok().map(|t| {
            t.lines()
                .filter_map(|l| l.split_whitespace().last().map(str::to_string))
                .collect()
        });
        let mounts = text("self/mounts")
            .unwrap_or_default()
            .lines()
            .filter_map(|line| {
                let mut it = line.split_whitespace();
                let (_src, dir, fstype) = (it.next()?, it.next()?, it.next()?);
                Some((PathBuf::from(dir.replace("\\040", " ")), fstype.to_string()))
            })
            .collect();
        let mut seen = Seen {
            config: read_config(system),
            cmdline,
            filesystems,
            mounts,
            lockdown: None,
            lockdown_note: None,
        };
        (seen.lockdown, seen.lockdown_note) = seen.read_lockdown(system);
        seen
    }

    /// The last `name=` on the command line (early parameters: the last one wins).
    fn param(&self, name: &str) -> Option<&str> {
        self.cmdline
            .iter()
            .rev()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
    }

    fn config_value(&self, option: &str) -> Option<&str> {
        let (_, config) = self.config.as_ref().ok()?;
        config.get(option).map(String::as_str)
    }

    fn mounted(&self, fstype: &str) -> Option<&Path> {
        self.mounts
            .iter()
            .find(|(_, t)| t == fstype)
            .map(|(dir, _)| dir.as_path())
    }

    /// The level from securityfs' `lockdown` (`[integrity]` marks it); without
    /// securityfs, at least what the command line and the config force.
    fn read_lockdown(&self, system: &System) -> (Option<Lockdown>, Option<String>) {
        let file = system.sys.join("kernel/security/lockdown");
        if let Ok(text) = std::fs::read_to_string(&file) {
            let level = text
                .split_whitespace()
                .find_map(|w| Lockdown::parse(w.strip_prefix('[')?.strip_suffix(']')?));
            return match level {
                Some(level) => (Some(level), None),
                None => (
                    None,
                    Some(format!("{}: no level in {text:?}", file.display())),
                ),
            };
        }
        if self.mounted("securityfs").is_some() {
            let note = format!("no {} (no lockdown LSM)", file.display());
            return (Some(Lockdown::None), Some(note));
        }
        let forced = [
            (
                "CONFIG_LOCK_DOWN_KERNEL_FORCE_CONFIDENTIALITY",
                Lockdown::Confidentiality,
            ),
            (
                "CONFIG_LOCK_DOWN_KERNEL_FORCE_INTEGRITY",
                Lockdown::Integrity,
            ),
        ]
        .into_iter()
        .find(|(option, _)| self.config_value(option) == Some("y"));
        let given = self.param("lockdown").and_then(Lockdown::parse);
        let (level, from) = match (given, forced) {
            (Some(g), Some((option, f))) if f > g => (f, option.to_string()),
            (Some(g), _) => (g, format!("lockdown={} on the command line", g.as_str())),
            (None, Some((option, f))) => (f, format!("{option}=y")),
            (None, None) => {
                return (
                    None,
                    Some(format!(
                        "not known: securityfs is not mounted (mount -t securityfs securityfs \
                         {} to read {})",
                        file.parent().unwrap_or(&file).display(),
                        file.display()
                    )),
                )
            }
        };
        let note = format!("from {from} (securityfs is not mounted: at least this level)");
        (Some(level), Some(note))
    }

    /// What `gate` finds in the way, or None when nothing is (or it cannot tell).
    fn gate(&self, system: &System, paths: &MmcPaths, gate: Gate) -> Option<Missing> {
        let missing = |what: String, fix: &str| {
            Some(Missing {
                what,
                fix: fix.to_string(),
            })
        };
        match gate {
            Gate::SysPath { path, fix } => absent(&system.sys.join(path), fix),
            Gate::ProcPath { path, fix } => absent(&system.proc.join(path), fix),
            Gate::Filesystem { name, fix } => {
                let known = self.filesystems.as_ref()?;
                if known.iter().any(|f| f == name) {
                    return None;
                }
                missing(format!("no {name} in /proc/filesystems"), fix)
            }
            Gate::DebugfsAllowed => self.debugfs_allowed(),
            Gate::HostDebugfs => {
                if self.mounted("debugfs").is_none() {
                    return missing(
                        "debugfs is not mounted".to_string(),
                        "as root: mount -t debugfs none /sys/kernel/debug (mmcab info mounts \
                         it when run as root)",
                    );
                }
                absent(
                    &paths.host_debugfs,
                    "the host has no debugfs directory: check that debugfs is mounted where \
                     /proc/self/mounts says",
                )
            }
            Gate::Lockdown { level, reason } => {
                let now = self.lockdown?;
                (now >= level).then(|| Missing {
                    what: format!(
                        "the kernel is locked down ({}): {reason} is restricted",
                        now.as_str()
                    ),
                    fix: "lockdown cannot be lifted at run time: boot without lockdown= (and \
                          without Secure Boot's lockdown, CONFIG_LOCK_DOWN_IN_EFI_SECURE_BOOT, or \
                          CONFIG_LOCK_DOWN_KERNEL_FORCE_*)"
                        .to_string(),
                })
            }
            Gate::MmcEvents => self.mmc_events(system),
            Gate::RuntimePm => absent(
                &paths.card_sysfs.join("power/control"),
                "build the kernel with CONFIG_PM=y",
            ),
            Gate::IoUringAllowed => {
                let file = system.proc.join("sys/kernel/io_uring_disabled");
                let value = std::fs::read_to_string(file).ok()?;
                match value.trim() {
                    "2" => missing(
                        "kernel.io_uring_disabled is 2: io_uring is off for every process"
                            .to_string(),
                        "sysctl -w kernel.io_uring_disabled=0, or use engine = \"sync\"",
                    ),
                    "1" if !system.root => missing(
                        "kernel.io_uring_disabled is 1: only CAP_SYS_ADMIN and the group \
                         kernel.io_uring_group may use io_uring"
                            .to_string(),
                        "run as root, or sysctl -w kernel.io_uring_disabled=0",
                    ),
                    _ => None,
                }
            }
            Gate::UnsignedModules => {
                let file = system.sys.join("module/module/parameters/sig_enforce");
                let value = std::fs::read_to_string(file).ok()?;
                (value.trim() == "Y").then(|| Missing {
                    what: "module.sig_enforce is on: unsigned modules are refused".to_string(),
                    fix: "boot without module.sig_enforce=1 on a kernel without \
                          CONFIG_MODULE_SIG_FORCE, or sign the module with the kernel's key \
                          (scripts/sign-file)"
                        .to_string(),
                })
            }
        }
    }

    /// `debugfs=off|no-mount` (the last on the command line), else the config's default.
    fn debugfs_allowed(&self) -> Option<Missing> {
        let (what, fix) = match self.param("debugfs") {
            Some(v @ ("off" | "no-mount")) => (
                format!("debugfs={v} on the kernel command line: debugfs is not registered"),
                format!("boot without debugfs={v} (or with debugfs=on)"),
            ),
            Some(_) => return None,
            None => {
                let default = [
                    "CONFIG_DEBUG_FS_ALLOW_NONE",
                    "CONFIG_DEBUG_FS_DISALLOW_MOUNT",
                ]
                .into_iter()
                .find(|o| self.config_value(o) == Some("y"))?;
                (
                    format!(
                        "{default}=y: debugfs is not registered unless the command line says so"
                    ),
                    "boot with debugfs=on, or build the kernel with CONFIG_DEBUG_FS_ALLOW_ALL=y"
                        .to_string(),
                )
            }
        };
        Some(Missing { what, fix })
    }

    /// tracefs where mmcab looks for it (its mounts, /sys/kernel/tracing, `tracing/` in
    /// debugfs), with an `instances/` directory and the mmc events.
    fn mmc_events(&self, system: &System) -> Option<Missing> {
        let mut candidates: Vec<PathBuf> = self
            .mounts
            .iter()
            .filter(|(_, t)| t == "tracefs")
            .map(|(dir, _)| dir.clone())
            .collect();
        candidates.push(system.sys.join("kernel/tracing"));
        if let Some(debugfs) = self.mounted("debugfs") {
            candidates.push(debugfs.join("tracing"));
        }
        let Some(root) = candidates.iter().find(|c| c.join("instances").is_dir()) else {
            return Some(Missing {
                what: format!(
                    "tracefs is not mounted (looked in {})",
                    candidates
                        .iter()
                        .map(|c| c.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                fix: format!(
                    "as root: mount -t tracefs nodev {}",
                    system.sys.join("kernel/tracing").display()
                ),
            });
        };
        let start = root.join("events/mmc/mmc_request_start");
        if start.is_dir() {
            return None;
        }
        Some(Missing {
            what: format!("no {}: the mmc core has no trace events", start.display()),
            fix: "Linux 4.9 or later with CONFIG_TRACING (the events are \
                  include/trace/events/mmc.h's)"
                .to_string(),
        })
    }
}

/// Missing when `path` is not there; a directory this process may not look into says so.
fn absent(path: &Path, fix: &str) -> Option<Missing> {
    match std::fs::symlink_metadata(path) {
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some(Missing {
            what: format!("{}: permission denied", path.display()),
            fix: "run as root".to_string(),
        }),
        Err(_) => Some(Missing {
            what: format!("no {}", path.display()),
            fix: fix.to_string(),
        }),
    }
}
