//! The MMC host's driver from sysfs, read the same way for every host: the host device
//! (`/sys/class/mmc_host/<host>/device`, i.e. the `device` link of the card's parent
//! directory), the basename of its `driver` link, and through `driver/module` the
//! driver's `/sys/module/<module>` entry: its `parameters/*`, `version` and
//! `srcversion`. Nothing here knows any driver by name.

use super::info::HostDriver;
use super::sysfs::{read_attrs, read_trimmed};
use std::path::Path;

/// Basename of where the symlink `link` points, if it is one.
fn link_name(link: &Path) -> Option<String> {
    let target = std::fs::read_link(link).ok()?;
    Some(target.file_name()?.to_string_lossy().into_owned())
}

/// The driver of the host whose class directory (`/sys/class/mmc_host/mmcN`, the
/// parent of the card's sysfs directory) is `host_class_dir`; None when the host
/// device has no driver bound (or no such directory).
pub fn read_host_driver(host_class_dir: &Path) -> Option<HostDriver> {
    let device = std::fs::canonicalize(host_class_dir.join("device")).ok()?;
    let driver = link_name(&device.join("driver"))?;
    // The module link resolves to /sys/module/<module>: a loadable module's, or the
    // entry the kernel makes for a built-in driver that names its module (parameters
    // of built-in code live there too, but it has no `initstate`).
    let module_dir = std::fs::canonicalize(device.join("driver/module")).ok();
    let module = module_dir
        .as_ref()
        .and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    let from_module = |name: &str| {
        module_dir
            .as_ref()
            .and_then(|d| read_trimmed(d.join(name)).ok())
    };
    Some(HostDriver {
        builtin: module_dir
            .as_ref()
            .is_none_or(|d| !d.join("initstate").exists()),
        device: device
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        driver,
        parameters: module_dir
            .as_ref()
            .map(|d| read_attrs(&d.join("parameters")))
            .unwrap_or_default(),
        srcversion: from_module("srcversion"),
        version: from_module("version"),
        module,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::path::PathBuf;

    /// Fixture tree (made up, laid out as the kernel lays out sysfs): a platform host
    /// device `name` with the mmc host class directory `mmc0` under it and its card;
    /// returns (sys root, the host's class directory).
    fn host_tree(root: &Path, name: &str) -> (PathBuf, PathBuf) {
        let sys = root.join("sys");
        let device = sys.join("devices/platform").join(name);
        let host = device.join("mmc_host/mmc0");
        std::fs::create_dir_all(host.join("mmc0:0001")).unwrap();
        symlink("../..", host.join("device")).unwrap();
        std::fs::create_dir_all(sys.join("class/mmc_host")).unwrap();
        symlink(&host, sys.join("class/mmc_host/mmc0")).unwrap();
        (sys, host)
    }

    /// Binds the host device `name` to `driver`, with `module` (and whether it is
    /// loadable) as the driver's module.
    fn bind(sys: &Path, name: &str, driver: &str, module: Option<(&str, bool)>) -> PathBuf {
        let drv = sys.join("bus/platform/drivers").join(driver);
        std::fs::create_dir_all(&drv).unwrap();
        symlink(
            Path::new("../../../bus/platform/drivers").join(driver),
            sys.join("devices/platform").join(name).join("driver"),
        )
        .unwrap();
        let Some((module, loadable)) = module else {
            return PathBuf::new();
        };
        let m = sys.join("module").join(module);
        std::fs::create_dir_all(m.join("parameters")).unwrap();
        if loadable {
            std::fs::write(m.join("initstate"), "live\n").unwrap();
        }
        symlink(
            Path::new("../../../../module").join(module),
            drv.join("module"),
        )
        .unwrap();
        m
    }

    /// A driver loaded as a module: its parameters (readable files only, trimmed), its
    /// version and srcversion, reached through `/sys/class/mmc_host/mmc0`.
    #[test]
    fn fixture_tree_driver_as_a_module_with_parameters() {
        let dir = tempfile::tempdir().unwrap();
        let (sys, _) = host_tree(dir.path(), "simhost.0");
        let m = bind(&sys, "simhost.0", "simhost", Some(("simhost", true)));
        std::fs::write(m.join("parameters/read_access_us"), "120\n").unwrap();
        std::fs::write(m.join("parameters/bus_width"), "8\n").unwrap();
        std::fs::write(m.join("parameters/label"), "  two words \n").unwrap();
        std::fs::create_dir(m.join("parameters/not_a_file")).unwrap();
        std::fs::write(m.join("version"), "1.0\n").unwrap();
        std::fs::write(m.join("srcversion"), "0123456789ABCDEF0123456\n").unwrap();
        let hd = read_host_driver(&sys.join("class/mmc_host/mmc0")).unwrap();
        assert_eq!(hd.driver, "simhost");
        assert_eq!(hd.device, "simhost.0");
        assert_eq!(hd.module.as_deref(), Some("simhost"));
        assert!(!hd.builtin);
        assert_eq!(hd.version.as_deref(), Some("1.0"));
        assert_eq!(hd.srcversion.as_deref(), Some("0123456789ABCDEF0123456"));
        let params: Vec<(&str, &str)> = hd
            .parameters
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            params,
            [
                ("bus_width", "8"),
                ("label", "two words"),
                ("read_access_us", "120")
            ]
        );
        assert_eq!(hd.summary(), "simhost (module simhost 1.0)");
        assert_eq!(
            hd.summary_with_parameters(),
            "simhost (module simhost 1.0, 3 parameters)"
        );
    }

    /// Built in: no module link at all, or the module entry the kernel makes for a
    /// built-in driver (no `initstate`), whose parameters are read all the same.
    #[test]
    fn fixture_tree_builtin_driver() {
        let dir = tempfile::tempdir().unwrap();
        let (sys, host) = host_tree(dir.path(), "1e750100.sdhci");
        bind(&sys, "1e750100.sdhci", "sdhci-aspeed", None);
        let hd = read_host_driver(&host).unwrap();
        assert_eq!(
            (hd.driver.as_str(), hd.module.as_deref(), hd.builtin),
            ("sdhci-aspeed", None, true)
        );
        assert!(hd.parameters.is_empty() && hd.version.is_none() && hd.srcversion.is_none());
        assert_eq!(hd.summary(), "sdhci-aspeed (built in)");
        assert_eq!(hd.summary_with_parameters(), "sdhci-aspeed (built in)");

        let dir = tempfile::tempdir().unwrap();
        let (sys, host) = host_tree(dir.path(), "1e750100.sdhci");
        let m = bind(
            &sys,
            "1e750100.sdhci",
            "sdhci-aspeed",
            Some(("sdhci_of_aspeed", false)),
        );
        std::fs::write(m.join("parameters/debug"), "N\n").unwrap();
        let hd = read_host_driver(&host).unwrap();
        assert!(hd.builtin);
        assert_eq!(hd.module.as_deref(), Some("sdhci_of_aspeed"));
        assert_eq!(hd.parameters["debug"], "N");
        assert_eq!(
            hd.summary_with_parameters(),
            "sdhci-aspeed (built in as sdhci_of_aspeed, 1 parameter)"
        );
    }

    /// No driver bound to the host device, or no host device: nothing is recorded.
    #[test]
    fn fixture_tree_without_driver_link() {
        let dir = tempfile::tempdir().unwrap();
        let (_, host) = host_tree(dir.path(), "simhost.0");
        assert_eq!(read_host_driver(&host), None);
        assert_eq!(read_host_driver(&dir.path().join("nonexistent")), None);
    }
}
