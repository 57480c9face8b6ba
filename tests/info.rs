//! End-to-end tests of `mmcab info` on this machine: a real loop device over a file in
//! /dev/shm (needs root, like every block test of the project), missing paths, plain
//! files. The emulated eMMC itself is covered by the testbed's in-guest tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A loop device over a scratch file in /dev/shm, detached and deleted on drop (also
/// when the test fails).
struct LoopDevice {
    dev: PathBuf,
    file: PathBuf,
}

impl LoopDevice {
    fn new(tag: &str, size_bytes: u64) -> LoopDevice {
        let file = PathBuf::from(format!(
            "/dev/shm/mmcab-info-test-{tag}-{}.img",
            std::process::id()
        ));
        let f = std::fs::File::create(&file).expect("create scratch file in /dev/shm");
        f.set_len(size_bytes).unwrap();
        let out = Command::new("losetup")
            .args(["--show", "-f"])
            .arg(&file)
            .output()
            .expect("run losetup (util-linux)");
        if !out.status.success() {
            let _ = std::fs::remove_file(&file);
            panic!(
                "losetup failed (these tests need root): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let dev = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        LoopDevice { dev, file }
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
        let _ = std::fs::remove_file(&self.file);
    }
}

fn mmcab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mmcab"))
        .args(args)
        .output()
        .expect("run mmcab")
}

/// Fails unless the run failed with exactly one line on stderr, no stdout, no panic.
fn one_line_failure(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success(),
        "expected failure, got success: {stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "stdout: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "not one line: {stderr}"
    );
    assert!(stderr.starts_with("mmcab: error: "), "{stderr}");
    stderr
}

#[test]
fn loop_device_is_refused_naming_what_it_is() {
    let lo = LoopDevice::new("refuse", 8 << 20);
    let dev = lo.dev.to_str().unwrap();
    for extra in [&[][..], &["--json"][..], &["--raw"][..]] {
        let mut args = vec!["info"];
        args.extend_from_slice(extra);
        args.push(dev);
        let err = one_line_failure(&mmcab(&args));
        assert!(
            err.contains(&format!("{dev}: not an MMC/SD block device")),
            "{err}"
        );
        assert!(err.contains("it is a loop device"), "{err}");
        assert!(
            err.contains(lo.file.to_str().unwrap()),
            "names the backing file: {err}"
        );
    }
    // The bare disk name takes the same path through sysfs.
    let name = Path::new(dev).file_name().unwrap().to_str().unwrap();
    let err = one_line_failure(&mmcab(&["info", name]));
    assert!(err.contains("it is a loop device"), "{err}");
}

#[test]
fn mmc_ioctl_on_a_loop_device_is_not_mmc() {
    let lo = LoopDevice::new("ioctl", 1 << 20);
    let f = std::fs::File::open(&lo.dev).unwrap();
    let err = mmcab::device::ioctl::read_ext_csd(&f).unwrap_err();
    assert!(
        matches!(err, mmcab::device::ioctl::MmcIoctlError::NotMmc { .. }),
        "{err}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains(lo.dev.to_str().unwrap()) && msg.contains("not an MMC block device"),
        "{msg}"
    );
    let err = mmcab::device::ioctl::send_status(&f, 1).unwrap_err();
    assert!(err.to_string().contains("not an MMC block device"), "{err}");
}

#[test]
fn nonexistent_path_and_unknown_name_fail_with_one_line() {
    let err = one_line_failure(&mmcab(&["info", "/nonexistent"]));
    assert!(err.contains("/nonexistent: no such device"), "{err}");
    let err = one_line_failure(&mmcab(&["info", "mmcblk97"]));
    assert!(err.contains("mmcblk97: no such block device"), "{err}");
}

#[test]
fn regular_file_and_character_device_are_refused() {
    let file = format!("/dev/shm/mmcab-info-test-plain-{}", std::process::id());
    std::fs::write(&file, b"not a disk").unwrap();
    let out = mmcab(&["info", &file]);
    let _ = std::fs::remove_file(&file);
    let err = one_line_failure(&out);
    assert!(err.contains("it is a regular file"), "{err}");
    let err = one_line_failure(&mmcab(&["info", "/dev/null"]));
    assert!(err.contains("it is a character device"), "{err}");
}
