//! Whether the running kernel lets a knob write the host's debugfs `caps`/`caps2` at all,
//! and the route to take where it does not: the words of the `bus-width`, `speed-mode`,
//! `cmd23` and `cqe` knobs (docs/kernel-facts.md, "Linux 6.1: what a board's oldest
//! kernel lets mmcab do").
//!
//! Before Linux 6.7 both files are read-only: `mmc_add_host_debugfs()` creates them with
//! `debugfs_create_x32("caps", S_IRUSR, ...)` (Linux 6.1 `drivers/mmc/core/debugfs.c`),
//! an attribute without a setter, so a write fails with EACCES even for root (seen on
//! Debian's 6.1.0-50-armmp, 6.1.176, in the testbed). No `--force` can change that, so
//! a read-only file refuses the knob outright; the kernel-version rules of each knob
//! (which bits which release accepts) apply only to a writable one.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The first release whose debugfs `caps`/`caps2` can be written at all: "mmc: debugfs:
/// Allow host caps to be modified", merged for 6.7 (the speed bits and
/// MMC_CAP_AGGRESSIVE_PM; more bits later: `speed_modes::MORE_CAPS_WRITABLE_SINCE`).
pub const CAPS_WRITABLE_SINCE: (u32, u32) = (6, 7);

/// The route for a bus width this kernel cannot switch at run time.
pub const ROUTE_BUS_WIDTH: &str = "A/B it across boots instead: one boot per device-tree \
     bus-width, each run with --label, then mmcab compare (docs/board.md, section 9)";
/// The route for speed modes this kernel cannot switch at run time.
pub const ROUTE_SPEED_MODE: &str = "A/B the modes across boots instead: one boot per \
     device tree (mmc-ddr-1_8v, mmc-hs200-1_8v, mmc-hs400-1_8v, max-frequency), each run \
     with --label, then mmcab compare (docs/board.md, section 9)";
/// The route for a caps bit (CMD23, CQE) this kernel cannot switch at run time.
pub const ROUTE_KERNELS: &str = "A/B it across kernels or boots instead, each run with \
     --label, then mmcab compare (docs/board.md, section 9)";

/// Why debugfs `caps`/`caps2` cannot be written on this kernel whatever the knob (the
/// file `caps_file` has no owner-write bit: created read-only), or None where it can be
/// tried. A missing file is the caller's to report.
pub fn read_only(caps_file: &Path, release: &str) -> Option<String> {
    if let Some(why) = locked_down(caps_file) {
        return Some(why);
    }
    let mode = std::fs::metadata(caps_file).ok()?.permissions().mode();
    let (major, minor) = CAPS_WRITABLE_SINCE;
    (mode & 0o200 == 0).then(|| {
        format!(
            "not switchable at run time on this kernel (Linux {release}: its debugfs caps and \
             caps2 are read-only, {} is mode {:04o}; they became writable in {major}.{minor}, \
             \"mmc: debugfs: Allow host caps to be modified\")",
            caps_file.display(),
            mode & 0o7777
        )
    })
}

/// The securityfs file that says the kernel's lockdown level (`none [integrity]
/// confidentiality`, the selected one in brackets); absent without the lockdown LSM.
const LOCKDOWN_FILE: &str = "/sys/kernel/security/lockdown";

/// Why the debugfs file `file` cannot be opened at all under the kernel's lockdown, or
/// None. `debugfs_locked_down()` (fs/debugfs/file.c, Linux 6.1-7.2) refuses every open of
/// a debugfs file whose mode has a write bit (or that has ioctl or mmap) once
/// `security_locked_down(LOCKDOWN_DEBUGFS)` says so, and LOCKDOWN_DEBUGFS is an
/// integrity reason (include/linux/security.h): so at `integrity` and `confidentiality`
/// the host's `caps`, `caps2` and `clock` (0600) can be neither read nor written, while
/// `ios` (0400) stays readable (seen on 6.12 and 7.2 in the testbed, docs/kernel-config.md).
pub fn locked_down(file: &Path) -> Option<String> {
    locked_down_at(file, Path::new(LOCKDOWN_FILE))
}

fn locked_down_at(file: &Path, lockdown_file: &Path) -> Option<String> {
    let mode = std::fs::metadata(file).ok()?.permissions().mode();
    let levels = std::fs::read_to_string(lockdown_file).ok()?;
    let level = levels
        .split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))?;
    (level != "none" && mode & 0o222 != 0).then(|| {
        format!(
            "not switchable while the kernel is locked down ({level}: {} is a writable debugfs \
             file, which lockdown refuses to open, debugfs_locked_down()); lockdown cannot be \
             lifted at run time: boot without lockdown= (and without Secure Boot's lockdown), \
             docs/kernel-config.md",
            file.display()
        )
    })
}

/// A knob's refusal on a read-only `caps`: the reason and the route, one line.
pub fn read_only_refusal(caps_file: &Path, release: &str, route: &str) -> Option<String> {
    read_only(caps_file, release).map(|why| format!("{why}; {route}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writable_debugfs_file_is_refused_under_lockdown_and_a_read_only_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let (clock, ios, lockdown) = (
            dir.path().join("clock"),
            dir.path().join("ios"),
            dir.path().join("lockdown"),
        );
        std::fs::write(&clock, "52000000\n").unwrap();
        std::fs::set_permissions(&clock, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&ios, "clock: 0 Hz\n").unwrap();
        std::fs::set_permissions(&ios, std::fs::Permissions::from_mode(0o400)).unwrap();
        std::fs::write(&lockdown, "[none] integrity confidentiality\n").unwrap();
        assert_eq!(locked_down_at(&clock, &lockdown), None);
        for level in ["integrity", "confidentiality"] {
            let text = "none integrity confidentiality\n".replace(level, &format!("[{level}]"));
            std::fs::write(&lockdown, text).unwrap();
            let why = locked_down_at(&clock, &lockdown).unwrap();
            assert!(
                why.contains(&format!("locked down ({level}:")) && why.contains("lockdown="),
                "{why}"
            );
            assert_eq!(locked_down_at(&ios, &lockdown), None, "ios is 0400");
        }
        assert_eq!(
            locked_down_at(&clock, &dir.path().join("no-lsm")),
            None,
            "no lockdown LSM: nothing in the way"
        );
    }

    #[test]
    fn a_read_only_caps_file_is_named_with_its_mode_and_the_route() {
        let dir = tempfile::tempdir().unwrap();
        let caps = dir.path().join("caps");
        std::fs::write(&caps, "0x4000010f\n").unwrap();
        assert_eq!(
            read_only(&caps, "7.2.13+deb14-armmp"),
            None,
            "0644 is writable"
        );
        std::fs::set_permissions(&caps, std::fs::Permissions::from_mode(0o400)).unwrap();
        let why = read_only_refusal(&caps, "6.1.0-50-armmp", ROUTE_BUS_WIDTH).unwrap();
        assert!(why.starts_with("not switchable at run time on this kernel (Linux 6.1.0-50-armmp: its debugfs caps and caps2 are read-only"), "{why}");
        assert!(
            why.contains("is mode 0400") && why.contains("writable in 6.7"),
            "{why}"
        );
        assert!(
            why.ends_with("then mmcab compare (docs/board.md, section 9)"),
            "{why}"
        );
        assert_eq!(
            read_only(&dir.path().join("none"), "6.1"),
            None,
            "missing: the caller's"
        );
    }
}
