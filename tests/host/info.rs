//! End-to-end tests of `mmcab info` on this machine: a real loop device over a file in
//! /dev/shm (needs root, like every block test of the project: ignored in plain `cargo
//! test`), missing paths, plain files. The emulated eMMC itself is covered by the testbed's in-guest tests.
//!
//! This file holds the tests that need root or testbed/setup's tools on the host, no
//! guest (tier 2); the others are in tests/plain/info.rs.

use crate::common::cli::mmcab;
use crate::common::cli::one_line_failure;
use crate::common::loop_device;
use loop_device::LoopDevice;
use std::path::Path;

#[test]
#[ignore = "needs root: loop devices"]
fn loop_device_is_refused_naming_what_it_is() {
    let lo = LoopDevice::new(8 << 20);
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
            err.contains(lo.backing_path().to_str().unwrap()),
            "names the backing file: {err}"
        );
    }
    // The bare disk name takes the same path through sysfs.
    let name = Path::new(dev).file_name().unwrap().to_str().unwrap();
    let err = one_line_failure(&mmcab(&["info", name]));
    assert!(err.contains("it is a loop device"), "{err}");
}

#[test]
#[ignore = "needs root: loop devices"]
fn mmc_ioctl_on_a_loop_device_is_not_mmc() {
    let lo = LoopDevice::new(1 << 20);
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
