//! Data a write would destroy: partitions the kernel found on a block device, and the
//! on-disk signatures of partition tables and filesystems at its start (as `wipefs`
//! and `blkid` look for them). The shipped plans write from offset 0 of the whole
//! device, so on a board's eMMC that holds a second OS or a boot partition table,
//! `--allow-write` alone would overwrite it without a word; [`super::target::Target`]
//! refuses such a device unless `--overwrite-data` says the data can go.
//!
//! Only signatures whose chance of appearing in random data is negligible are used: at
//! least four magic bytes, or two with fields that must be plausible as well (an MBR's
//! four status bytes, ext's block size).

use std::fs::{self, File};
use std::io::Read;
use std::path::Path;

/// Bytes read from the device's start: enough for every signature below (btrfs's
/// superblock at 64 KiB, swap's page-size header for 64 KiB pages).
pub const PROBE_BYTES: usize = 68 << 10;

/// A magic byte string at an offset, naming what holds it.
struct Magic {
    what: &'static str,
    offset: usize,
    bytes: &'static [u8],
}

/// Signatures of at least four bytes (blkid's libblkid/src/superblocks and
/// partitions, the same offsets).
const MAGICS: &[Magic] = &[
    Magic {
        what: "a GPT partition table",
        offset: 512,
        bytes: b"EFI PART",
    },
    Magic {
        what: "a GPT partition table (4 KiB sectors)",
        offset: 4096,
        bytes: b"EFI PART",
    },
    Magic {
        what: "an f2fs filesystem",
        offset: 1024,
        bytes: &[0x10, 0x20, 0xf5, 0xf2],
    },
    Magic {
        what: "a btrfs filesystem",
        offset: 0x10040,
        bytes: b"_BHRfS_M",
    },
    Magic {
        what: "an XFS filesystem",
        offset: 0,
        bytes: b"XFSB",
    },
    Magic {
        what: "a squashfs image",
        offset: 0,
        bytes: b"hsqs",
    },
    Magic {
        what: "a LUKS container",
        offset: 0,
        bytes: b"LUKS\xba\xbe",
    },
    Magic {
        what: "swap space",
        offset: 4096 - 10,
        bytes: b"SWAPSPACE2",
    },
    Magic {
        what: "swap space (64 KiB pages)",
        offset: 65536 - 10,
        bytes: b"SWAPSPACE2",
    },
    Magic {
        what: "an ISO 9660 image",
        offset: 0x8001,
        bytes: b"CD001",
    },
    Magic {
        what: "an Android boot image",
        offset: 0,
        bytes: b"ANDROID!",
    },
];

fn at(data: &[u8], offset: usize, len: usize) -> Option<&[u8]> {
    data.get(offset..offset + len)
}

fn boot_signature(data: &[u8]) -> bool {
    at(data, 510, 2) == Some(&[0x55, 0xaa][..])
}

/// FAT: the boot signature and "FAT" where FAT12/16 or FAT32 keep their type string.
fn fat(data: &[u8]) -> bool {
    boot_signature(data)
        && (at(data, 54, 3) == Some(&b"FAT"[..]) || at(data, 82, 5) == Some(&b"FAT32"[..]))
}

/// An MBR: the boot signature and four entries whose status is 0x00 or 0x80, at least
/// one with a partition type.
fn mbr(data: &[u8]) -> bool {
    if !boot_signature(data) {
        return false;
    }
    let entries: Vec<&[u8]> = (0..4).filter_map(|i| at(data, 446 + 16 * i, 16)).collect();
    entries.len() == 4
        && entries.iter().all(|e| e[0] == 0x00 || e[0] == 0x80)
        && entries.iter().any(|e| e[4] != 0)
}

/// ext2/3/4: magic 0xEF53 at 1080 (superblock at 1024), a block size of 1 to 64 KiB
/// and a non-zero inode count.
fn ext(data: &[u8]) -> bool {
    let u32_at = |o: usize| at(data, o, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    at(data, 1080, 2) == Some(&[0x53, 0xef][..])
        && u32_at(1024 + 24).is_some_and(|log| log <= 6)
        && u32_at(1024).is_some_and(|inodes| inodes > 0)
}

/// What the bytes from a device's start hold, as phrases ("an ext2/3/4 filesystem").
pub fn signatures(data: &[u8]) -> Vec<&'static str> {
    let mut found: Vec<&'static str> = MAGICS
        .iter()
        .filter(|m| at(data, m.offset, m.bytes.len()) == Some(m.bytes))
        .map(|m| m.what)
        .collect();
    if ext(data) {
        found.push("an ext2/3/4 filesystem");
    }
    if fat(data) {
        found.push("a FAT filesystem");
    } else if mbr(data) && !found.iter().any(|w| w.starts_with("a GPT")) {
        found.push("an MBR partition table");
    }
    found
}

/// Partitions the kernel found on the disk whose sysfs directory is `sys`.
pub fn partitions(sys: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(sys)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("partition").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What a write to the block device `path` (sysfs directory `sys`) would destroy, as
/// one phrase; None when neither the kernel nor the first bytes show anything. A device
/// that cannot be read is left to the open that follows to report.
pub fn data_on(path: &Path, sys: &Path) -> Option<String> {
    let mut what = Vec::new();
    let parts = partitions(sys);
    if !parts.is_empty() {
        what.push(format!(
            "partitions {} (the kernel found a partition table)",
            parts.join(", ")
        ));
    }
    let mut data = Vec::with_capacity(PROBE_BYTES);
    if let Ok(f) = File::open(path) {
        let _ = f.take(PROBE_BYTES as u64).read_to_end(&mut data);
    }
    what.extend(signatures(&data).into_iter().map(str::to_string));
    (!what.is_empty()).then(|| what.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blank() -> Vec<u8> {
        vec![0u8; PROBE_BYTES]
    }

    #[test]
    fn a_blank_device_holds_nothing() {
        assert!(signatures(&blank()).is_empty());
        assert!(signatures(&[]).is_empty(), "a short read is no signature");
    }

    #[test]
    fn partition_tables_are_named() {
        let mut d = blank();
        d[510] = 0x55;
        d[511] = 0xaa;
        assert!(
            signatures(&d).is_empty(),
            "a boot signature alone is no table"
        );
        d[446 + 4] = 0x83;
        assert_eq!(signatures(&d), ["an MBR partition table"]);
        d[446 + 16] = 0x12;
        assert!(signatures(&d).is_empty(), "status 0x12 is no MBR entry");
        d[446 + 16] = 0x80;
        d[4 + 446 + 16 * 3] = 0xee;
        d[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(
            signatures(&d),
            ["a GPT partition table"],
            "a protective MBR is GPT's"
        );
    }

    #[test]
    fn filesystems_are_named() {
        let mut d = blank();
        d[1080] = 0x53;
        d[1081] = 0xef;
        assert!(signatures(&d).is_empty(), "no inodes: not ext");
        d[1024] = 16;
        d[1024 + 24] = 2;
        assert_eq!(signatures(&d), ["an ext2/3/4 filesystem"]);
        d[1024 + 24] = 200;
        assert!(
            signatures(&d).is_empty(),
            "a block size of 2^210 KiB: not ext"
        );

        let mut d = blank();
        d[82..87].copy_from_slice(b"FAT32");
        d[510] = 0x55;
        d[511] = 0xaa;
        d[446 + 4] = 0x0c;
        assert_eq!(signatures(&d), ["a FAT filesystem"], "not also an MBR");

        let mut d = blank();
        d[0x10040..0x10048].copy_from_slice(b"_BHRfS_M");
        d[4086..4096].copy_from_slice(b"SWAPSPACE2");
        assert_eq!(signatures(&d), ["a btrfs filesystem", "swap space"]);
    }

    /// Random data (what mmcab's own writes leave) carries no signature.
    #[test]
    fn random_data_holds_nothing() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200 {
            let d: Vec<u8> = (0..PROBE_BYTES)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    (state >> 24) as u8
                })
                .collect();
            assert!(signatures(&d).is_empty());
        }
    }

    #[test]
    fn kernel_partitions_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        for p in ["mmcblk0p2", "mmcblk0p1"] {
            fs::create_dir(dir.path().join(p)).unwrap();
            fs::write(dir.path().join(p).join("partition"), "1\n").unwrap();
        }
        fs::create_dir(dir.path().join("queue")).unwrap();
        assert_eq!(partitions(dir.path()), ["mmcblk0p1", "mmcblk0p2"]);
    }
}
