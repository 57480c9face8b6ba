//! Whether the kernel's own MMC test driver, mmc_test (`drivers/mmc/core/mmc_test.c`,
//! `CONFIG_MMC_TEST`), is there on the running kernel: built in, loaded as a module,
//! installed but not loaded, or absent (`kernel_features.mmc_test` of `mmcab info --json`
//! and `mmcab knobs --json`, and its line in their Kernel features block).
//!
//! It is not a row of [`super::kconfig::FEATURES`]: those are what mmcab needs, and a
//! kernel without one gets a `missing` line; mmc_test is needed only to run the kernel's
//! own tests, and most kernels lack it (Debian's do not set `CONFIG_MMC_TEST`), so it has a
//! line of its own that says which of the four it is.
//!
//! Where each is seen (Linux 6.1-7.2): the driver registers itself on the mmc bus as
//! `mmc_test` (`mmc_test_driver`, `mmc_register_driver()`), so
//! `/sys/bus/mmc/drivers/mmc_test` is there whenever it is built in or loaded; only a
//! module has `/sys/module/mmc_test/initstate` (`kernel/module/sysfs.c`; a built-in
//! driver without parameters has no `/sys/module/mmc_test` at all); an installed module is
//! listed in `/lib/modules/<release>/modules.dep` (depmod) as `.../mmc_test.ko` with the
//! distribution's compression suffix. How to get it: docs/mmc-test.md.

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What [`check_in`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum State {
    /// `CONFIG_MMC_TEST=y`: registered at boot.
    BuiltIn,
    /// The module is loaded: its driver is on the mmc bus.
    Loaded,
    /// A `mmc_test.ko` is installed for this kernel but not loaded.
    Installed,
    /// None of the above.
    Absent,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::BuiltIn => "built in",
            State::Loaded => "module loaded",
            State::Installed => "installed, not loaded",
            State::Absent => "absent",
        }
    }
}

/// mmc_test on the running kernel. Keys in alphabetical order, as the rest of
/// `info --json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MmcTest {
    /// Its driver is registered: a card can be bound to it now.
    pub available: bool,
    /// What to do to make it available; None when it is.
    pub fix: Option<String>,
    pub state: State,
    /// Where it was seen, or what was looked at.
    pub what: String,
}

/// The fix when it is nowhere: how to get it (docs/mmc-test.md has the steps).
pub const BUILD_FIX: &str = "build the kernel with CONFIG_MMC_TEST=m, or mmc_test.ko out of tree \
                         against the kernel's headers (docs/mmc-test.md)";

/// mmc_test on the kernel whose sysfs is `sys`, with modules under `modules` (normally
/// `/lib/modules`) for `release`; `config` is the kernel's config when one was read (its
/// path and options).
pub fn check_in(
    sys: &Path,
    modules: &Path,
    release: &str,
    config: Option<(&Path, &BTreeMap<String, String>)>,
) -> MmcTest {
    let driver = sys.join("bus/mmc/drivers/mmc_test");
    let option = config.map(|(path, c)| {
        let value = c.get("CONFIG_MMC_TEST").map(String::as_str).unwrap_or("n");
        (path, value.to_string())
    });
    if driver.is_dir() {
        let initstate = sys.join("module/mmc_test/initstate");
        if initstate.exists() {
            return MmcTest {
                available: true,
                fix: None,
                state: State::Loaded,
                what: format!("{} ({})", driver.display(), initstate.display()),
            };
        }
        let from = match &option {
            Some((path, v)) if v == "y" => format!("; CONFIG_MMC_TEST=y in {}", path.display()),
            _ => String::new(),
        };
        return MmcTest {
            available: true,
            fix: None,
            state: State::BuiltIn,
            what: format!("{}{from}", driver.display()),
        };
    }
    let dir = modules.join(release);
    if let Some(file) = installed(&dir) {
        return MmcTest {
            available: false,
            fix: Some("as root: modprobe mmc_test".to_string()),
            state: State::Installed,
            what: format!("{} is installed; no {}", file.display(), driver.display()),
        };
    }
    let (what, fix) = match &option {
        Some((path, v)) if v == "y" => (
            format!(
                "CONFIG_MMC_TEST=y in {} but no {}",
                path.display(),
                driver.display()
            ),
            "the kernel's log says why the driver did not register (dmesg | grep mmc_test)"
                .to_string(),
        ),
        Some((path, v)) if v == "m" => (
            format!(
                "CONFIG_MMC_TEST=m in {} but no mmc_test.ko in {}/modules.dep",
                path.display(),
                dir.display()
            ),
            "install the kernel's modules (the package that has its drivers/mmc), then \
             modprobe mmc_test"
                .to_string(),
        ),
        Some((path, _)) => (
            format!(
                "CONFIG_MMC_TEST is not set in {}; no mmc_test.ko in {}",
                path.display(),
                dir.display()
            ),
            BUILD_FIX.to_string(),
        ),
        None => (
            format!(
                "no {}; no mmc_test.ko in {}",
                driver.display(),
                dir.display()
            ),
            BUILD_FIX.to_string(),
        ),
    };
    MmcTest {
        available: false,
        fix: Some(fix),
        state: State::Absent,
        what,
    }
}

/// The installed module's file: the `modules.dep` entry whose file is `mmc_test.ko`
/// (any compression suffix), relative to `dir`; without a `modules.dep`, the place the
/// kernel's own build puts it.
fn installed(dir: &Path) -> Option<PathBuf> {
    let is_it = |name: &str| name == "mmc_test.ko" || name.starts_with("mmc_test.ko.");
    if let Ok(dep) = std::fs::read_to_string(dir.join("modules.dep")) {
        return dep.lines().find_map(|line| {
            let file = line.split(':').next()?.trim();
            let name = Path::new(file).file_name()?.to_str()?;
            is_it(name).then(|| dir.join(file))
        });
    }
    let core = dir.join("kernel/drivers/mmc/core");
    std::fs::read_dir(core).ok()?.flatten().find_map(|e| {
        let name = e.file_name();
        is_it(name.to_str()?).then(|| e.path())
    })
}

#[cfg(test)]
#[path = "mmc_test_tests.rs"]
mod tests;
