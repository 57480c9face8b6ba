//! A loop device over a scratch file in /dev/shm, for the end-to-end tests that need a
//! real block device (root needed, like every block test of the project: such tests
//! carry `#[ignore = "needs root: loop devices"]`). Detached, and
//! its file deleted, on drop, also when the test fails. Nothing touches the machine's
//! disks.
//!
//! ```ignore
//! use crate::common::loop_device;
//! use loop_device::LoopDevice;
//! ```

// Also the lib's unit tests take this file (src/lib.rs, test_loop_device), each using a
// different part of it.
#![allow(dead_code)]

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const MIB: u64 = 1 << 20;

/// Held while this process runs losetup or partx, and by a test that lists the processes
/// holding its device (src/knob/mmcblk.rs): `losetup --find` opens other loop devices
/// while it looks for a free one, and a child forked to run it holds this process's
/// files until its exec, so another test's losetup showed up as a holder.
static LOOP_TOOLS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// [`LOOP_TOOLS`], also after a test that held it panicked.
pub fn loop_tools() -> std::sync::MutexGuard<'static, ()> {
    LOOP_TOOLS.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct LoopDevice {
    /// `/dev/loopN`.
    pub dev: PathBuf,
    backing: tempfile::NamedTempFile,
    /// Partitions were added ([`LoopDevice::partitioned`]).
    partitions: bool,
}

impl LoopDevice {
    /// `size_bytes` of zeros.
    pub fn new(size_bytes: u64) -> LoopDevice {
        LoopDevice::filled(size_bytes, 0)
    }

    /// `size_bytes`, every byte `fill`.
    pub fn filled(size_bytes: u64, fill: u8) -> LoopDevice {
        LoopDevice::attach(LoopDevice::backing(size_bytes, fill))
    }

    /// `size_bytes` of zeros with an MBR partition table of Linux partitions
    /// (`(first sector, sectors)` each, at most 4), attached with --partscan so the
    /// kernel lists them (loopNp1 ...); they go when the device is detached.
    pub fn partitioned(size_bytes: u64, parts: &[(u32, u32)]) -> LoopDevice {
        assert!(parts.len() <= 4);
        let backing = LoopDevice::backing(size_bytes, 0);
        let mut mbr = [0u8; 512];
        for (i, (start, sectors)) in parts.iter().enumerate() {
            let e = &mut mbr[446 + 16 * i..446 + 16 * (i + 1)];
            e[4] = 0x83;
            e[8..12].copy_from_slice(&start.to_le_bytes());
            e[12..16].copy_from_slice(&sectors.to_le_bytes());
        }
        mbr[510] = 0x55;
        mbr[511] = 0xaa;
        backing.as_file().write_all_at(&mbr, 0).unwrap();
        let mut dev = LoopDevice::attach(backing);
        let _tools = loop_tools();
        let ok = Command::new("partx")
            .arg("--add")
            .arg(&dev.dev)
            .status()
            .expect("run partx (util-linux)");
        assert!(ok.success(), "partx --add {} failed", dev.dev.display());
        dev.partitions = true;
        dev
    }

    fn backing(size_bytes: u64, fill: u8) -> tempfile::NamedTempFile {
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
        backing
    }

    fn attach(backing: tempfile::NamedTempFile) -> LoopDevice {
        let _tools = loop_tools();
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
        LoopDevice {
            dev,
            backing,
            partitions: false,
        }
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
        let _tools = loop_tools();
        if self.partitions {
            let _ = Command::new("partx")
                .arg("--delete")
                .arg(&self.dev)
                .status();
        }
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}
