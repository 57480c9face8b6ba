//! A loop device over a scratch file in /dev/shm, for the end-to-end tests that need a
//! real block device (root needed, like every block test of the project: such tests
//! carry `#[ignore = "needs root: loop devices"]`). Detached, and
//! its file deleted, on drop, also when the test fails. Nothing touches the machine's
//! disks.
//!
//! ```ignore
//! #[path = "common/loop_device.rs"]
//! mod loop_device;
//! use loop_device::LoopDevice;
//! ```

#![allow(dead_code)] // each test crate uses a different part of this module

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;

pub struct LoopDevice {
    /// `/dev/loopN`.
    pub dev: PathBuf,
    backing: tempfile::NamedTempFile,
}

impl LoopDevice {
    /// `size_bytes` of zeros.
    pub fn new(size_bytes: u64) -> LoopDevice {
        LoopDevice::filled(size_bytes, 0)
    }

    /// `size_bytes`, every byte `fill`.
    pub fn filled(size_bytes: u64, fill: u8) -> LoopDevice {
        let backing = tempfile::Builder::new()
            .prefix("mmcab-test-loop.")
            .suffix(".img")
            .tempfile_in("/dev/shm")
            .expect("create a scratch file in /dev/shm");
        backing.as_file().set_len(size_bytes).unwrap();
        if fill != 0 {
            let chunk = vec![fill; MIB as usize];
            let mut at = 0;
            while at < size_bytes {
                let n = (size_bytes - at).min(MIB) as usize;
                backing.as_file().write_all_at(&chunk[..n], at).unwrap();
                at += n as u64;
            }
        }
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(backing.path())
            .output()
            .expect("run losetup (util-linux, on root's PATH: these tests need root)");
        assert!(
            out.status.success(),
            "losetup failed (these tests need root): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dev = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        LoopDevice { dev, backing }
    }

    /// The scratch file behind the device.
    pub fn backing_path(&self) -> &Path {
        self.backing.path()
    }

    /// The disk name (`loopN`), as in /sys/block.
    pub fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// Every byte of the backing file.
    pub fn contents(&self) -> Vec<u8> {
        std::fs::read(self.backing.path()).unwrap()
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}
