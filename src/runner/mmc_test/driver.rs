//! The card moved from mmc_block to mmc_test and back, and one test run through debugfs
//! (drivers/mmc/core/mmc_test.c, Linux 6.12 and 7.x): binding the card to the `mmc_test`
//! driver (`mmc_test_probe`) creates `test` and `testlist` in the card's debugfs
//! directory; writing a number to `test` runs that test inside the write()
//! (`mtf_test_write`, holding the host: no signal stops it); reading `test` then gives
//! its results, which the next write and the unbind (`mmc_test_remove`) free.

use crate::device::MmcPaths;
use crate::knob::mmcblk::MmcBlk;
use crate::plan::mmc_test::MmcTestCase;
use crate::workload::mmc_test::output::{self, TestOutput};
use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The mmc_test driver's sysfs directory (there once the module is loaded).
pub const DRIVER_DIR: &str = "/sys/bus/mmc/drivers/mmc_test";
/// Where the docs say how to get mmc_test on a kernel that lacks it.
pub const DOCS: &str = "docs/mmc-test.md";
/// How long the card's debugfs `test` may take to appear after the bind.
const APPEAR: Duration = Duration::from_secs(5);

/// The card, its two drivers and its debugfs directory.
#[derive(Debug, Clone)]
pub struct MmcTestDriver {
    /// `/sys/bus/mmc/drivers/mmc_test`.
    pub driver: PathBuf,
    /// The card's block driver, which it leaves and comes back to (and the card's
    /// name, [`MmcTestDriver::card`]).
    pub blk: MmcBlk,
    /// `/sys/kernel/debug/mmc0/mmc0:0001`.
    pub card_debugfs: PathBuf,
}

impl MmcTestDriver {
    /// The card's name on the mmc bus: `mmc0:0001`.
    pub fn card(&self) -> &str {
        &self.blk.card
    }

    pub fn new(paths: &MmcPaths) -> MmcTestDriver {
        MmcTestDriver {
            driver: PathBuf::from(DRIVER_DIR),
            blk: MmcBlk::new(paths),
            card_debugfs: paths.card_debugfs.clone(),
        }
    }

    /// Whether mmc_test can run here: its driver loaded, debugfs mounted with the card's
    /// directory. The error is one line naming what is missing and the docs.
    pub fn check_available(&self) -> Result<()> {
        if !self.driver.join("bind").exists() {
            bail!(
                "engine = \"mmc_test\" needs the kernel's mmc_test driver, which is not loaded \
                 ({} does not exist): `modprobe mmc_test`, or build it for this kernel \
                 ({DOCS})",
                self.driver.display()
            );
        }
        if !self.card_debugfs.is_dir() {
            bail!(
                "engine = \"mmc_test\" runs its tests through debugfs, and {} does not exist: \
                 mount it (mount -t debugfs none /sys/kernel/debug; {DOCS})",
                self.card_debugfs.display()
            );
        }
        Ok(())
    }

    /// Whether the card is bound to mmc_test now.
    pub fn attached(&self) -> bool {
        self.driver.join(self.card()).exists()
    }

    /// Unbind the card from mmc_block (the caller closed its handles and checked that
    /// nothing holds the disk), bind it to mmc_test, wait for its `test` file.
    pub fn attach(&self) -> Result<()> {
        self.blk.unbind()?;
        if !self.attached() {
            write(&self.driver.join("bind"), self.card())?;
        }
        let start = Instant::now();
        while !self.test_file().exists() {
            if start.elapsed() > APPEAR {
                bail!(
                    "{} did not appear within {} s after binding {} to {}: check dmesg",
                    self.test_file().display(),
                    APPEAR.as_secs(),
                    self.card(),
                    self.driver.display()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// Unbind the card from mmc_test (when bound) and bind it to mmc_block again (when
    /// not bound); the caller waits for the disk.
    pub fn detach(&self) -> Result<()> {
        if self.attached() {
            write(&self.driver.join("unbind"), self.card())?;
        }
        if !self.blk.bound() {
            self.blk.bind()?;
        }
        Ok(())
    }

    fn test_file(&self) -> PathBuf {
        self.card_debugfs.join("test")
    }

    /// The number of `case` in this kernel's `testlist`.
    pub fn number(&self, case: MmcTestCase) -> Result<u32> {
        let path = self.card_debugfs.join("testlist");
        let list = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        output::number_in_testlist(&list, case.kernel_name()).with_context(|| {
            format!(
                "{} has no test named {:?} (mmc_test = \"{}\"): this kernel's mmc_test lacks it",
                path.display(),
                case.kernel_name(),
                case.as_str()
            )
        })
    }

    /// Run test `number` (the write returns when it is done) and read its results back
    /// at once.
    pub fn run(&self, number: u32) -> Result<TestOutput> {
        let path = self.test_file();
        std::fs::write(&path, format!("{number}\n"))
            .with_context(|| format!("writing {number} to {}", path.display()))?;
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        if text.trim().is_empty() {
            // mmc_test_run records no result when the test's prepare stage fails (the
            // test area's erase or fill): the kernel log says why.
            bail!(
                "{} is empty after test {number}: its prepare stage (erasing and filling \
                 the test area) failed; dmesg has mmc_test's \"Prepare stage failed\" line \
                 and the card's errors",
                path.display()
            );
        }
        let out = output::parse(&text).with_context(|| format!("{}", path.display()))?;
        if out.number != number {
            bail!(
                "{} holds the results of test {}, not of test {number}: was another mmc_test \
                 run at the same time?",
                path.display(),
                out.number
            );
        }
        Ok(out)
    }

    /// The shell commands that put the card back on mmc_block (restore.sh, and the
    /// message of a failed rebind): each does nothing when it is done already.
    pub fn restore_commands(&self) -> Vec<String> {
        let q = |p: &Path| crate::knob::shell_quote(&p.to_string_lossy());
        let card = crate::knob::shell_quote(self.card());
        vec![
            format!(
                "[ ! -e {} ] || echo {card} > {}",
                q(&self.driver.join(self.card())),
                q(&self.driver.join("unbind"))
            ),
            format!(
                "[ -e {} ] || echo {card} > {}",
                q(&self.blk.driver.join(self.card())),
                q(&self.blk.driver.join("bind"))
            ),
        ]
    }
}

fn write(path: &Path, value: &str) -> Result<()> {
    crate::knob::attribute::write_attribute(path, value)
        .with_context(|| format!("writing {value} to {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Driver directories with `bind` and `unbind` as plain files and a debugfs dir.
    fn tree() -> (tempfile::TempDir, MmcTestDriver) {
        let dir = tempfile::tempdir().unwrap();
        let d = MmcTestDriver {
            driver: dir.path().join("mmc_test"),
            blk: MmcBlk {
                driver: dir.path().join("mmcblk"),
                card: "mmc0:0001".into(),
                card_sysfs: dir.path().join("card"),
                disk: "mmcblk0".into(),
                dev_node: dir.path().join("mmcblk0"),
            },
            card_debugfs: dir.path().join("debug/mmc0/mmc0:0001"),
        };
        for drv in [&d.driver, &d.blk.driver] {
            std::fs::create_dir_all(drv).unwrap();
            for f in ["bind", "unbind"] {
                std::fs::write(drv.join(f), "").unwrap();
            }
        }
        std::fs::create_dir_all(&d.card_debugfs).unwrap();
        (dir, d)
    }

    #[test]
    fn a_missing_driver_names_the_docs() {
        let (_dir, mut d) = tree();
        assert!(d.check_available().is_ok());
        d.driver = d.driver.join("nope");
        let err = d.check_available().unwrap_err().to_string();
        assert!(
            err.contains("modprobe mmc_test") && err.contains(DOCS),
            "{err}"
        );
    }

    #[test]
    fn attach_unbinds_mmc_block_and_binds_mmc_test() {
        let (_dir, d) = tree();
        std::fs::create_dir(d.blk.driver.join(d.card())).unwrap();
        // The "kernel" answers the bind with the test file.
        std::fs::write(d.card_debugfs.join("test"), "").unwrap();
        d.attach().unwrap();
        assert_eq!(
            std::fs::read_to_string(d.blk.driver.join("unbind")).unwrap(),
            "mmc0:0001\n"
        );
        assert_eq!(
            std::fs::read_to_string(d.driver.join("bind")).unwrap(),
            "mmc0:0001\n"
        );
        // Detach: mmc_test is bound, mmc_block is not.
        std::fs::remove_dir(d.blk.driver.join(d.card())).unwrap();
        std::fs::create_dir(d.driver.join(d.card())).unwrap();
        d.detach().unwrap();
        assert_eq!(
            std::fs::read_to_string(d.driver.join("unbind")).unwrap(),
            "mmc0:0001\n"
        );
        assert_eq!(
            std::fs::read_to_string(d.blk.driver.join("bind")).unwrap(),
            "mmc0:0001\n"
        );
    }

    #[test]
    fn restore_commands_do_only_what_is_left() {
        let (_dir, d) = tree();
        let c = d.restore_commands();
        assert!(
            c[0].starts_with("[ ! -e ") && c[0].ends_with("/mmc_test/unbind"),
            "{c:?}"
        );
        assert!(
            c[1].starts_with("[ -e ") && c[1].ends_with("/mmcblk/bind"),
            "{c:?}"
        );
    }
}
