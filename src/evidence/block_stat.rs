//! `/sys/block/<dev>/stat` (and a partition's `stat`), read before and after a run.
//!
//! Fields (Documentation/block/stat.rst): read I/Os, read merges, read sectors, read
//! ticks (ms), the same four for writes, in flight, io_ticks, time_in_queue; since
//! Linux 4.18 four for discards; since 5.5 flush I/Os and flush ticks. Sectors are
//! 512 bytes whatever the device's block size. Counters are per request completed by
//! the block layer (after merging), which is what the driver was handed.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// One direction's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DirStat {
    pub ios: u64,
    pub merges: u64,
    pub sectors: u64,
    pub ticks_ms: u64,
}

impl DirStat {
    fn delta(&self, before: &DirStat) -> DirStat {
        DirStat {
            ios: self.ios.wrapping_sub(before.ios),
            merges: self.merges.wrapping_sub(before.merges),
            sectors: self.sectors.wrapping_sub(before.sectors),
            ticks_ms: self.ticks_ms.wrapping_sub(before.ticks_ms),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockStat {
    pub read: DirStat,
    pub write: DirStat,
    /// Milliseconds the device had I/O in flight.
    pub io_ticks_ms: u64,
    /// Flush requests and their ticks (Linux >= 5.5; None before).
    pub flush: Option<DirStat>,
}

impl BlockStat {
    pub fn parse(text: &str) -> Result<BlockStat> {
        let v: Vec<u64> = text
            .split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .with_context(|| format!("'{}' is not a block stat line", text.trim()))?;
        if v.len() < 11 {
            bail!(
                "'{}' has {} fields, a block stat line has at least 11",
                text.trim(),
                v.len()
            );
        }
        let dir = |i: usize| DirStat {
            ios: v[i],
            merges: v[i + 1],
            sectors: v[i + 2],
            ticks_ms: v[i + 3],
        };
        Ok(BlockStat {
            read: dir(0),
            write: dir(4),
            io_ticks_ms: v[9],
            flush: (v.len() >= 17).then(|| DirStat {
                ios: v[15],
                ticks_ms: v[16],
                ..Default::default()
            }),
        })
    }

    pub fn read_from(path: &Path) -> Result<BlockStat> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading block statistics {}", path.display()))?;
        Self::parse(&text).with_context(|| path.display().to_string())
    }

    /// What happened between `before` and `self`.
    pub fn delta(&self, before: &BlockStat) -> BlockStat {
        BlockStat {
            read: self.read.delta(&before.read),
            write: self.write.delta(&before.write),
            io_ticks_ms: self.io_ticks_ms.wrapping_sub(before.io_ticks_ms),
            flush: match (self.flush, before.flush) {
                (Some(a), Some(b)) => Some(a.delta(&b)),
                _ => None,
            },
        }
    }
}

/// The `stat` file of the block device a target lives on: the device itself (a disk or
/// a partition) for a device node, the filesystem's device for a file or directory.
/// Looked up by device number each time, so a device that came back with another
/// number (after a driver rebind) is followed.
pub fn stat_path(target: &Path) -> Result<PathBuf> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = match std::fs::metadata(target) {
        Ok(m) => m,
        // A file target mmcab has not created yet: its directory's device.
        Err(_) => std::fs::metadata(
            target
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
        )
        .with_context(|| format!("{}: cannot stat it", target.display()))?,
    };
    let dev = if meta.file_type().is_block_device() {
        meta.rdev()
    } else {
        meta.dev()
    };
    let devno = format!(
        "{}:{}",
        nix::sys::stat::major(dev),
        nix::sys::stat::minor(dev)
    );
    let path = Path::new("/sys/dev/block").join(&devno).join("stat");
    if !path.exists() {
        bail!(
            "{} is on device {devno}, which is not a block device (tmpfs, overlay, NFS, ...): \
             no block statistics",
            target.display()
        );
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_of_old_and_new_kernels() {
        // Linux 7.2 in the testbed, before and after two 1 MiB writes and reads.
        let a = BlockStat::parse(
            "       1        0        8       22        0        0        0        0        0        0       22        0        0        0        0        0        0\n",
        )
        .unwrap();
        let b = BlockStat::parse(
            "       9        0     4136      616        6        0     4112     1124        0        0     1740        0        0        0        0        0        0\n",
        )
        .unwrap();
        let d = b.delta(&a);
        assert_eq!(
            d.read,
            DirStat {
                ios: 8,
                merges: 0,
                sectors: 4128,
                ticks_ms: 594
            }
        );
        assert_eq!((d.write.ios, d.write.sectors), (6, 4112));
        assert_eq!(d.flush, Some(DirStat::default()));
        // 11 fields (before Linux 4.18): no flushes.
        let old = BlockStat::parse("1 2 3 4 5 6 7 8 0 10 11").unwrap();
        assert_eq!(
            (old.write.ticks_ms, old.io_ticks_ms, old.flush),
            (8, 10, None)
        );
        assert!(BlockStat::parse("1 2 3").is_err());
        assert!(BlockStat::parse("a b c d e f g h i j k").is_err());
    }

    #[test]
    fn a_file_on_tmpfs_has_no_block_statistics() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        let err = stat_path(&dir.path().join("f")).unwrap_err().to_string();
        assert!(err.contains("not a block device"), "{err}");
    }
}
