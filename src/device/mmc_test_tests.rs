//! [`super::check_in`] on fixture trees laid out like a running kernel's sysfs and
//! `/lib/modules`: built in, loaded, installed (with and without modules.dep), absent.

use super::*;

const RELEASE: &str = "6.12.95+deb12-armmp";

struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let tree = Tree {
            dir: tempfile::tempdir().unwrap(),
        };
        tree.mkdir("sys/bus/mmc/drivers/mmcblk");
        tree
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn mkdir(&self, rel: &str) {
        std::fs::create_dir_all(self.path(rel)).unwrap();
    }
    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    fn check(&self, config: Option<(&str, &str)>) -> MmcTest {
        let config = config.map(|(name, value)| {
            let mut c = BTreeMap::new();
            c.insert(name.to_string(), value.to_string());
            (PathBuf::from("/boot/config-x"), c)
        });
        check_in(
            &self.path("sys"),
            &self.path("lib/modules"),
            RELEASE,
            config.as_ref().map(|(p, c)| (p.as_path(), c)),
        )
    }
}

#[test]
fn a_loaded_module_has_its_driver_and_an_initstate() {
    let t = Tree::new();
    t.mkdir("sys/bus/mmc/drivers/mmc_test");
    t.write("sys/module/mmc_test/initstate", "live\n");
    let m = t.check(None);
    assert_eq!((m.available, m.state, m.fix), (true, State::Loaded, None));
    assert!(
        m.what.ends_with("sys/module/mmc_test/initstate)"),
        "{}",
        m.what
    );
}

#[test]
fn built_in_is_the_driver_without_a_module() {
    let t = Tree::new();
    t.mkdir("sys/bus/mmc/drivers/mmc_test");
    let m = t.check(Some(("CONFIG_MMC_TEST", "y")));
    assert_eq!((m.available, m.state), (true, State::BuiltIn));
    assert!(
        m.what.ends_with("; CONFIG_MMC_TEST=y in /boot/config-x"),
        "{}",
        m.what
    );
}

#[test]
fn installed_from_modules_dep_with_the_modprobe_line() {
    let t = Tree::new();
    t.write(
        &format!("lib/modules/{RELEASE}/modules.dep"),
        "kernel/drivers/mmc/host/sdhci.ko.xz: kernel/drivers/mmc/host/cqhci.ko.xz\n\
         kernel/drivers/mmc/core/mmc_test.ko.xz:\n",
    );
    let m = t.check(Some(("CONFIG_MMC_TEST", "m")));
    assert_eq!((m.available, m.state), (false, State::Installed));
    assert_eq!(m.fix.as_deref(), Some("as root: modprobe mmc_test"));
    assert!(
        m.what.contains(&format!(
            "{RELEASE}/kernel/drivers/mmc/core/mmc_test.ko.xz is installed"
        )),
        "{}",
        m.what
    );
}

#[test]
fn installed_out_of_tree_without_modules_dep_is_found_where_the_kernel_puts_it() {
    let t = Tree::new();
    t.write(
        &format!("lib/modules/{RELEASE}/kernel/drivers/mmc/core/mmc_test.ko"),
        "",
    );
    let m = t.check(None);
    assert_eq!(m.state, State::Installed);
    // A modules.dep without it: not installed for modprobe, and not looked for elsewhere.
    t.write(
        &format!("lib/modules/{RELEASE}/modules.dep"),
        "kernel/fs/ext4/ext4.ko.xz:\n",
    );
    assert_eq!(t.check(None).state, State::Absent);
}

#[test]
fn absent_says_what_was_looked_at_and_the_fix() {
    let t = Tree::new();
    let m = t.check(Some(("CONFIG_MMC_TEST", "n")));
    assert_eq!((m.available, m.state), (false, State::Absent));
    assert!(
        m.what
            .starts_with("CONFIG_MMC_TEST is not set in /boot/config-x; no mmc_test.ko in "),
        "{}",
        m.what
    );
    assert_eq!(m.fix.as_deref(), Some(BUILD_FIX));
    assert!(BUILD_FIX.contains("docs/mmc-test.md"));

    let m = t.check(None);
    assert!(m.what.starts_with("no "), "{}", m.what);
    assert!(
        m.what
            .contains("sys/bus/mmc/drivers/mmc_test; no mmc_test.ko in "),
        "{}",
        m.what
    );

    // =m but no module installed, =y but no driver: each names the mismatch.
    let m = t.check(Some(("CONFIG_MMC_TEST", "m")));
    assert!(m
        .what
        .starts_with("CONFIG_MMC_TEST=m in /boot/config-x but no mmc_test.ko"));
    let m = t.check(Some(("CONFIG_MMC_TEST", "y")));
    assert!(m
        .what
        .starts_with("CONFIG_MMC_TEST=y in /boot/config-x but no "));
    assert!(m.fix.unwrap().contains("dmesg"));
}

#[test]
fn json_keys_are_alphabetical_and_the_state_is_kebab_case() {
    let t = Tree::new();
    t.mkdir("sys/bus/mmc/drivers/mmc_test");
    let json = serde_json::to_string(&t.check(None)).unwrap();
    assert!(
        json.starts_with(r#"{"available":true,"fix":null,"state":"built-in","what":""#),
        "{json}"
    );
}
