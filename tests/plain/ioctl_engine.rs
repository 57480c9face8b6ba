//! The ioctl engine and `mmcab probe packed` on the emulated eMMC (testbed/run: QEMU
//! ast2600-evb, the real Linux MMC stack, Debian armmp 6.12 and 7.x; the card is EXT_CSD
//! rev 3, byte addressed, without packed commands):
//! - unpacked ioctl writes land where the block layer finds them: blocks copied out with
//!   `dd iflag=direct` are checked here by a parser of the verify stamp written for this
//!   test (not mmcab's), and mmcab's own read-back verify agrees;
//! - ioctl reads verify what the block layer wrote, and find nothing on a region nobody
//!   wrote (the check is not vacuous);
//! - workloads/packed-ioctl.toml and `probe packed` are refused with the card's reason,
//!   before any I/O; `probe packed --force` sees the kernel's CMD23 pass-through in
//!   tracefs, sees that this card stores a packed command as plain data, and puts the
//!   region back; a packed ioctl write job with `--force` runs, and its verify finds
//!   every block wrong (the card stored headers and shifted data).
//!
//! This file holds the tests that need neither root nor the testbed (tier 1); the others
//! are in tests/guest/ioctl_engine.rs.

use crate::common::cli::mmcab_code_stderr as mmcab;

#[test]
fn refusals_that_need_no_card() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target.img");
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let job = "[[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"j\"\nrw = \"write\"\n\
               bs = \"4k\"\nsize = \"64k\"\n";
    let ioctl = write(
        "ioctl.toml",
        &format!("name = \"p\"\n{job}engine = \"ioctl\"\npacked = 4\n"),
    );
    let target_arg = target.display().to_string();
    let (status, err) = mmcab(&["run", &ioctl, "--device", &target_arg]);
    assert_eq!(status, Some(1), "{err}");
    assert!(
        err.contains("job 'j'") && err.contains("this is a regular file"),
        "{err}"
    );
    assert!(!target.exists(), "the refusal created the target");
    let no_ioctl = write(
        "plain.toml",
        &format!("name = \"p\"\n[[config]]\nname = \"a\"\npacked = 8\n{job}"),
    );
    let (status, err) = mmcab(&["run", &no_ioctl, "--device", &target_arg]);
    assert_eq!(status, Some(1));
    assert!(
        err.contains("config a: `packed` applies to jobs with engine = \"ioctl\""),
        "{err}"
    );
    let (status, err) = mmcab(&["probe", "packed", &ioctl, "--allow-write", "--offset", "1M"]);
    assert_eq!(status, Some(1));
    assert!(
        err.contains("not an MMC/SD block device: it is a regular file"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}
