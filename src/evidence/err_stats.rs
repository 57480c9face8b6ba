//! The host's error counters: debugfs `mmcN/err_stats`, read before and after each run,
//! the run's deltas recorded in evidence.csv.
//!
//! The file is `mmc_err_stats_show()` in drivers/mmc/core/debugfs.c (added in Linux 6.0,
//! "mmc: core: Capture eMMC and SD card errors"; the same in 6.12.118 and 7.2.13): one
//! line per counter of `host->err_stats[MMC_ERR_MAX]` (`u32`, include/linux/mmc/host.h),
//! `seq_printf(file, "# %s:\t %d\n", desc[i], host->err_stats[i])` (a tab and a space
//! after the colon), with the names `Command Timeout Occurred`, `Command CRC Errors
//! Occurred`, `Data Timeout Occurred`, `Data CRC Errors Occurred`, `Auto-Cmd Error
//! Occurred`, `ADMA Error Occurred`, `Tuning Error Occurred`, `CMDQ RED Errors`, `CMDQ
//! GCE Errors`, `CMDQ ICCE Errors`, `Request Timedout`, `CMDQ Request Timedout`, `ICE
//! Config Errors`, `Controller Timedout errors`, `Unexpected IRQ errors`
//! (tests/fixtures/err_stats/ has the file as a guest printed it).
//!
//! Every line is kept with the name as the kernel prints it, so a kernel that adds a
//! counter adds a name here without a change. Writing the file zeroes every counter
//! (`mmc_err_stats_write()`): mmcab only reads it, and takes deltas.
//!
//! Who counts: nothing in the core but `mmc_execute_tuning()` (drivers/mmc/core/core.c,
//! "Tuning Error Occurred" when a host's tuning fails; `mmc_rescan()` zeroes "Command
//! Timeout Occurred" after a card's detection). Every other counter is incremented by
//! host-driver code through `mmc_debugfs_err_stats_inc()` (include/linux/mmc/host.h, a
//! static inline: no symbol a module could be seen to use). In Linux 6.12.118 and 7.2.13
//! (Debian's linux-source packages, `grep -rl mmc_debugfs_err_stats_inc drivers/`) that
//! is the sdhci library (drivers/mmc/host/sdhci.c, through `sdhci_err_stats_inc()` of
//! sdhci.h: command and data CRC errors and timeouts, auto-CMD, ADMA, request and
//! controller timeouts, unexpected IRQs), sdhci-brcmstb.c (built on it) and the CQHCI
//! library (drivers/mmc/host/cqhci-core.c `cqhci_irq()`: CMDQ RED, GCE, ICCE). So a
//! host driver counts when it is built on one of those libraries; the others (dw_mmc,
//! mmci, mtk-sd, meson-gx, omap_hsmmc, renesas, ...) leave every counter at 0 whatever
//! happens, and their zeros mean nothing. A driver out of the tree may count too: mmcab
//! cannot know, so it says the driver is not known to count, and shows whatever counted
//! up all the same (the report calls that seen counting). [`COUNTING`] is that list, as
//! data; how a host's driver is matched against it: [`counting`].

use anyhow::{bail, Context, Result};
use std::path::Path;

/// The counters as the kernel printed them, in its order: (name, value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrStats(pub Vec<(String, u32)>);

impl ErrStats {
    /// Parses the text of `err_stats` (every `# <name>:\t <value>` line).
    pub fn parse(text: &str) -> Result<ErrStats> {
        let mut counters = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let parsed = line
                .strip_prefix("# ")
                .and_then(|rest| rest.rsplit_once(':'))
                .and_then(|(name, value)| {
                    // `%d` of a u32: a counter past 2^31 prints negative.
                    let value = value.trim();
                    let n = value
                        .parse::<u32>()
                        .ok()
                        .or_else(|| value.parse::<i32>().ok().map(|v| v as u32))?;
                    Some((name.trim().to_string(), n))
                });
            match parsed {
                Some(counter) => counters.push(counter),
                None => bail!("err_stats: \"{line}\" is not \"# <name>: <count>\""),
            }
        }
        if counters.is_empty() {
            bail!("err_stats is empty");
        }
        Ok(ErrStats(counters))
    }

    /// Reads and parses the file.
    pub fn read(path: &Path) -> Result<ErrStats> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        ErrStats::parse(&text).with_context(|| path.display().to_string())
    }

    /// What counted up from `before` to `self`: (name, how many), the non-zero ones in
    /// the kernel's order (a counter that went down was zeroed by a write to the file
    /// or a rescan: its value now is what counted since, at least).
    pub fn delta(&self, before: &ErrStats) -> Vec<(String, u64)> {
        self.0
            .iter()
            .filter_map(|(name, after)| {
                let was = before.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
                let d = match was {
                    Some(was) if *after >= was => after - was,
                    _ => *after,
                };
                (d > 0).then(|| (name.clone(), u64::from(d)))
            })
            .collect()
    }
}

/// The deltas of a run as evidence.csv's `err_stats` column writes them:
/// `Data CRC Errors Occurred:1; Command Timeout Occurred:2`, `none` when nothing counted.
pub fn delta_text(delta: &[(String, u64)]) -> String {
    if delta.is_empty() {
        return "none".into();
    }
    let parts: Vec<String> = delta.iter().map(|(n, d)| format!("{n}:{d}")).collect();
    parts.join("; ")
}

/// [`delta_text`] read back; None for a cell that is not one (empty: not read).
pub fn parse_delta_text(text: &str) -> Option<Vec<(String, u64)>> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if text == "none" {
        return Some(Vec::new());
    }
    text.split("; ")
        .map(|part| {
            let (name, n) = part.rsplit_once(':')?;
            Some((name.to_string(), n.parse().ok()?))
        })
        .collect()
}

/// Host-driver code that calls `mmc_debugfs_err_stats_inc()`, by the kernel module it is
/// in, and where (Linux 6.12.118 and 7.2.13; see the module docs). A host driver counts
/// when its module is one of these or uses one (`/sys/module/<m>/holders`). A driver
/// missing here is reported as not known to count: add its module, with the code that
/// counts, when a kernel adds one.
pub const COUNTING: &[(&str, &str)] = &[
    (
        "sdhci",
        "drivers/mmc/host/sdhci.c, sdhci_err_stats_inc() (command and data CRC errors and \
         timeouts, auto-CMD, ADMA, request and controller timeouts, unexpected IRQs)",
    ),
    (
        "cqhci",
        "drivers/mmc/host/cqhci-core.c, cqhci_irq() (CMDQ RED, GCE and ICCE errors)",
    ),
    (
        "sdhci_brcmstb",
        "drivers/mmc/host/sdhci-brcmstb.c, sdhci_err_stats_inc() (controller timeouts)",
    ),
];

/// Whether the host's driver counts errors in `err_stats`, as recorded in meta.json.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counting {
    /// Its module is, or uses, these modules of [`COUNTING`].
    Yes {
        driver: String,
        module: String,
        through: Vec<String>,
    },
    /// A loadable module that uses none of them: not known to count (its zeros may mean
    /// nothing; a counter that moves shows it counts after all).
    No { driver: String },
    /// Cannot be told (built in: no module links to follow; no driver bound).
    Unknown { why: String },
}

impl Counting {
    /// The sentence meta.json records (`evidence.err_stats_counting`) and the report
    /// reads back with [`Counting::parse`]'s first word.
    pub fn text(&self) -> String {
        match self {
            Counting::Yes {
                driver,
                module,
                through,
            } => {
                let how: Vec<String> = through
                    .iter()
                    .map(|lib| {
                        let source = COUNTING
                            .iter()
                            .find(|(m, _)| m == lib)
                            .map_or("", |(_, source)| source);
                        match lib == module {
                            true => format!("its module {module} calls it ({source})"),
                            false => {
                                format!("its module {module} uses {lib}, which calls it ({source})")
                            }
                        }
                    })
                    .collect();
                format!(
                    "counts: the host driver {driver} counts them: {}; the callers of \
                     mmc_debugfs_err_stats_inc() mmcab knows: src/evidence/err_stats.rs",
                    how.join("; ")
                )
            }
            Counting::No { driver } => format!(
                "not known to count: the host driver {driver} uses none of {} (the \
                 mmc_debugfs_err_stats_inc() callers of Linux 6.12 and 7.2, \
                 src/evidence/err_stats.rs); only the core's tuning errors are counted for \
                 certain",
                module_names()
            ),
            Counting::Unknown { why } => format!("unknown: {why}"),
        }
    }
}

fn module_names() -> String {
    let names: Vec<&str> = COUNTING.iter().map(|(m, _)| *m).collect();
    names.join(", ")
}

/// Whether the driver of the host whose class directory (`/sys/class/mmc_host/mmcN`)
/// is `host_class_dir` counts errors: its module is in [`COUNTING`], or one of
/// [`COUNTING`]'s modules lists it among its holders (directly or through modules in
/// between, as sdhci_pltfm sits between sdhci and sdhci_of_aspeed). Built-in code has no
/// holders to follow: then it cannot be told, unless its module name is in the list.
pub fn counting(host_class_dir: &Path) -> Counting {
    let Some(driver) = crate::device::host_driver::read_host_driver(host_class_dir) else {
        return Counting::Unknown {
            why: format!("no driver bound to {}", host_class_dir.display()),
        };
    };
    let name = driver.driver.clone();
    let Some(module) = driver.module.clone() else {
        return Counting::Unknown {
            why: format!(
                "the host driver {name} is built in without a module name: which code it \
                 uses cannot be read from sysfs"
            ),
        };
    };
    let module_dir = std::fs::canonicalize(host_class_dir.join("device/driver/module")).ok();
    let Some(root) = module_dir.as_deref().and_then(Path::parent) else {
        return Counting::Unknown {
            why: format!("the module {module} of the host driver {name} has no sysfs entry"),
        };
    };
    let through: Vec<String> = COUNTING
        .iter()
        .filter(|(lib, _)| *lib == module || holds(root, lib, &module))
        .map(|(lib, _)| lib.to_string())
        .collect();
    if !through.is_empty() {
        return Counting::Yes {
            driver: name,
            module,
            through,
        };
    }
    if driver.builtin {
        return Counting::Unknown {
            why: format!(
                "the host driver {name} is built in (as {module}): the modules it uses cannot \
                 be read from sysfs"
            ),
        };
    }
    Counting::No { driver: name }
}

/// Whether `module` uses `lib`: it is among `lib`'s holders, or a holder's holder.
fn holds(root: &Path, lib: &str, module: &str) -> bool {
    let mut seen: Vec<String> = Vec::new();
    let mut todo = vec![lib.to_string()];
    while let Some(m) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&m).join("holders")) else {
            continue;
        };
        for entry in entries.flatten() {
            let holder = entry.file_name().to_string_lossy().into_owned();
            if holder == module {
                return true;
            }
            if !seen.contains(&holder) {
                seen.push(holder.clone());
                todo.push(holder);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn every_line_is_kept_with_the_kernels_name() {
        let text = "# Command Timeout Occurred:\t 0\n# Data CRC Errors Occurred:\t 3\n\
                    # Unexpected IRQ errors:\t -1\n";
        let stats = ErrStats::parse(text).unwrap();
        assert_eq!(
            stats.0,
            [
                ("Command Timeout Occurred".to_string(), 0),
                ("Data CRC Errors Occurred".to_string(), 3),
                ("Unexpected IRQ errors".to_string(), u32::MAX),
            ]
        );
        assert!(ErrStats::parse("").is_err());
        let err = ErrStats::parse("# Data CRC Errors Occurred:\t many\n").unwrap_err();
        assert!(err.to_string().contains("many"), "{err}");
    }

    fn capture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/err_stats/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(path).unwrap()
    }

    /// The file as Linux 7.2.13 prints it for the simulated card's host (testbed/run
    /// --kernel 7 --card sim): the 15 counters of mmc_err_stats_show(), in its order.
    #[test]
    fn the_kernels_file_parses_with_every_name() {
        let stats = ErrStats::parse(&capture("linux-7.2-emmcsim.txt")).unwrap();
        let names: Vec<&str> = stats.0.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "Command Timeout Occurred",
                "Command CRC Errors Occurred",
                "Data Timeout Occurred",
                "Data CRC Errors Occurred",
                "Auto-Cmd Error Occurred",
                "ADMA Error Occurred",
                "Tuning Error Occurred",
                "CMDQ RED Errors",
                "CMDQ GCE Errors",
                "CMDQ ICCE Errors",
                "Request Timedout",
                "CMDQ Request Timedout",
                "ICE Config Errors",
                "Controller Timedout errors",
                "Unexpected IRQ errors",
            ]
        );
        assert!(stats.0.iter().all(|(_, n)| *n == 0));
        let sdhci = ErrStats::parse(&capture("linux-6.12-sdhci-aspeed.txt")).unwrap();
        assert_eq!(sdhci.0, stats.0, "6.12 prints the same 15 counters");
        // After a data CRC error and a command timeout (emmcsim counting as sdhci does).
        let after = ErrStats::parse(&capture("linux-7.2-emmcsim-crc-and-timeout.txt")).unwrap();
        let delta = after.delta(&stats);
        assert_eq!(
            delta_text(&delta),
            "Command Timeout Occurred:1; Data CRC Errors Occurred:1"
        );
        let after = ErrStats::parse(&capture("linux-6.12-emmcsim-crc-and-timeout.txt")).unwrap();
        assert_eq!(after.delta(&sdhci), delta, "Linux 6.12.95, the same faults");
    }

    #[test]
    fn deltas_are_the_non_zero_ones_in_the_kernels_order() {
        let before = ErrStats::parse("# A:\t 1\n# B:\t 5\n# C:\t 0\n").unwrap();
        let after = ErrStats::parse("# A:\t 3\n# B:\t 2\n# C:\t 0\n# D:\t 4\n").unwrap();
        // B went down (zeroed, then counted 2); D is new.
        let delta = after.delta(&before);
        assert_eq!(
            delta,
            [("A".into(), 2), ("B".into(), 2), ("D".into(), 4)] as [(String, u64); 3]
        );
        assert_eq!(delta_text(&delta), "A:2; B:2; D:4");
        assert_eq!(parse_delta_text("A:2; B:2; D:4"), Some(delta));
        assert_eq!(delta_text(&[]), "none");
        assert_eq!(parse_delta_text("none"), Some(Vec::new()));
        assert_eq!(parse_delta_text(""), None);
        assert_eq!(after.delta(&after), []);
    }

    /// Fixture tree laid out as sysfs: host `mmc0` of device `dev`, bound to `driver`
    /// of `module` (loadable or built in), and /sys/module entries with their holders.
    fn tree(
        driver: &str,
        module: Option<(&str, bool)>,
        holders: &[(&str, &str)],
    ) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path().join("sys");
        let device = sys.join("devices/platform/dev");
        let host = device.join("mmc_host/mmc0");
        std::fs::create_dir_all(&host).unwrap();
        symlink("../..", host.join("device")).unwrap();
        let drv = sys.join("bus/platform/drivers").join(driver);
        std::fs::create_dir_all(&drv).unwrap();
        symlink(&drv, device.join("driver")).unwrap();
        for (lib, holder) in holders {
            std::fs::create_dir_all(sys.join("module").join(lib).join("holders")).unwrap();
            std::fs::create_dir_all(sys.join("module").join(holder)).unwrap();
            symlink(
                sys.join("module").join(holder),
                sys.join("module").join(lib).join("holders").join(holder),
            )
            .unwrap();
        }
        if let Some((module, loadable)) = module {
            let m = sys.join("module").join(module);
            std::fs::create_dir_all(&m).unwrap();
            if loadable {
                std::fs::write(m.join("initstate"), "live\n").unwrap();
            }
            symlink(&m, drv.join("module")).unwrap();
        }
        (dir, host)
    }

    /// The testbed's QEMU host on Linux 6.12 (Debian armmp: CONFIG_MMC_SDHCI=m):
    /// sdhci-aspeed in sdhci_of_aspeed, among sdhci's holders with sdhci_pltfm
    /// (tests/fixtures/err_stats/README.md).
    #[test]
    fn an_sdhci_host_counts_through_the_modules_it_uses() {
        let (_dir, host) = tree(
            "sdhci-aspeed",
            Some(("sdhci_of_aspeed", true)),
            &[("sdhci", "sdhci_pltfm"), ("sdhci", "sdhci_of_aspeed")],
        );
        assert!(matches!(counting(&host), Counting::Yes { .. }));
        // Through a module in between only: still counted.
        let (_dir, host) = tree(
            "sdhci-aspeed",
            Some(("sdhci_of_aspeed", true)),
            &[("sdhci", "sdhci_pltfm"), ("sdhci_pltfm", "sdhci_of_aspeed")],
        );
        let c = counting(&host);
        assert_eq!(
            c,
            Counting::Yes {
                driver: "sdhci-aspeed".into(),
                module: "sdhci_of_aspeed".into(),
                through: vec!["sdhci".into()]
            }
        );
        assert!(
            c.text().starts_with(
                "counts: the host driver sdhci-aspeed counts them: its module sdhci_of_aspeed \
                 uses sdhci, which calls it (drivers/mmc/host/sdhci.c, sdhci_err_stats_inc()"
            ),
            "{}",
            c.text()
        );
    }

    #[test]
    fn a_module_of_the_list_counts_itself() {
        let (_dir, host) = tree("cqhci-host", Some(("cqhci", true)), &[]);
        assert!(matches!(counting(&host), Counting::Yes { through, .. } if through == ["cqhci"]));
    }

    #[test]
    fn a_module_using_none_of_them_is_not_known_to_count_and_built_in_cannot_be_told() {
        let (_dir, host) = tree("dw_mmc", Some(("dw_mmc", true)), &[("sdhci", "other")]);
        let c = counting(&host);
        assert_eq!(
            c,
            Counting::No {
                driver: "dw_mmc".into()
            }
        );
        assert!(c
            .text()
            .starts_with("not known to count: the host driver dw_mmc uses none of sdhci,"));
        let (_dir, host) = tree("sdhci-x", Some(("sdhci_x", false)), &[]);
        assert!(matches!(counting(&host), Counting::Unknown { why } if why.contains("built in")));
        let (_dir, host) = tree("sdhci-x", None, &[]);
        assert!(matches!(counting(&host), Counting::Unknown { .. }));
        assert!(matches!(
            counting(Path::new("/nonexistent")),
            Counting::Unknown { .. }
        ));
    }
}
