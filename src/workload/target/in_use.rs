//! Who uses a block device: mounts (of it or its partitions, from
//! /proc/self/mountinfo), swap (/proc/swaps) and holders (device mapper, md: sysfs
//! `holders/`). Writes to a device in use are refused ([`super::Target`]), and
//! the knobs that rebind the card's block driver refuse too (knob/mmcblk.rs).

use crate::device::sysfs::{partition_dirs, read_trimmed};
use anyhow::{Context, Result};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Mounts, swap use and holders of the block device `path` and its partitions, as one
/// sentence; None when nothing uses it.
pub fn block_device_in_use(path: &Path) -> Result<Option<String>> {
    let meta = fs::metadata(path).with_context(|| format!("cannot stat {}", path.display()))?;
    let devno = devno(meta.rdev());
    let sys = fs::canonicalize(format!("/sys/dev/block/{devno}"))
        .with_context(|| format!("{}: no /sys/dev/block/{devno}", path.display()))?;
    block_device_users(path, &sys, &devno)
}

/// `maj:min` of a device number, as /sys/dev/block names it.
pub fn devno(dev: u64) -> String {
    format!(
        "{}:{}",
        nix::sys::stat::major(dev),
        nix::sys::stat::minor(dev)
    )
}

/// Mounts, swap use and holders of a block device and its partitions, as one sentence.
pub fn block_device_users(path: &Path, sys: &Path, devno: &str) -> Result<Option<String>> {
    // The device and its partitions: (name, maj:min, sysfs dir).
    let mut devices = vec![(
        sys.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        devno.to_string(),
        sys.to_path_buf(),
    )];
    for p in partition_dirs(sys) {
        if let (Some(name), Ok(d)) = (p.file_name(), read_trimmed(p.join("dev"))) {
            devices.push((name.to_string_lossy().into_owned(), d, p));
        }
    }
    let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut users = Vec::new();
    for (name, dev, dir) in &devices {
        for mount in mounts_of(&mountinfo, dev) {
            users.push(format!("/dev/{name} is mounted at {mount}"));
        }
        if let Ok(holders) = fs::read_dir(dir.join("holders")) {
            for h in holders.flatten() {
                users.push(format!(
                    "/dev/{name} is held by {} (see {}/holders)",
                    h.file_name().to_string_lossy(),
                    dir.display()
                ));
            }
        }
    }
    let canonical = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Ok(swaps) = fs::read_to_string("/proc/swaps") {
        for line in swaps.lines().skip(1) {
            let Some(swap) = line.split_whitespace().next() else {
                continue;
            };
            let swap_path = fs::canonicalize(swap).unwrap_or_else(|_| PathBuf::from(swap));
            if devices
                .iter()
                .any(|(n, _, _)| swap_path == Path::new("/dev").join(n))
                || swap_path == canonical
            {
                users.push(format!("{swap} is used as swap"));
            }
        }
    }
    Ok(if users.is_empty() {
        None
    } else {
        Some(users.join("; "))
    })
}

/// Mount points of the device `maj:min` in /proc/self/mountinfo text.
fn mounts_of(mountinfo: &str, devno: &str) -> Vec<String> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let dev = fields.nth(2)?;
            let mount = fields.nth(1)?;
            (dev == devno).then(|| unescape_mount(mount))
        })
        .collect()
}

/// mountinfo escapes space, tab, newline and backslash as octal (`\040`).
fn unescape_mount(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..i + 4]
                .iter()
                .all(|b| (b'0'..=b'7').contains(b))
        {
            let v = (bytes[i + 1] - b'0') * 64 + (bytes[i + 2] - b'0') * 8 + (bytes[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_is_matched_by_device_number() {
        let text = "36 35 7:3 / /mnt/my\\040disk rw,noatime shared:1 - ext4 /dev/loop3 rw\n\
                    37 35 7:30 / /other rw - ext4 /dev/loop30 rw\n";
        assert_eq!(mounts_of(text, "7:3"), vec!["/mnt/my disk".to_string()]);
        assert_eq!(mounts_of(text, "7:30"), vec!["/other".to_string()]);
        assert!(mounts_of(text, "8:0").is_empty());
    }

    #[test]
    fn holders_of_the_device_and_its_partitions_are_named() {
        // A sysfs-shaped directory: disk "fake0" with partition "fake0p1" held by dm-3.
        let sys = tempfile::tempdir_in("/dev/shm").unwrap();
        let disk = sys.path().join("fake0");
        fs::create_dir_all(disk.join("holders")).unwrap();
        fs::create_dir_all(disk.join("fake0p1/holders/dm-3")).unwrap();
        fs::write(disk.join("fake0p1/partition"), "1\n").unwrap();
        fs::write(disk.join("fake0p1/dev"), "4095:1048575\n").unwrap();
        let users = block_device_users(Path::new("/dev/fake0"), &disk, "4095:1048574").unwrap();
        let users = users.expect("the partition's holder");
        assert!(users.contains("/dev/fake0p1 is held by dm-3"), "{users}");
        fs::remove_dir(disk.join("fake0p1/holders/dm-3")).unwrap();
        assert_eq!(
            block_device_users(Path::new("/dev/fake0"), &disk, "4095:1048574").unwrap(),
            None
        );
    }
}
