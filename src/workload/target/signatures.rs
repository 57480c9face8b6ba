//! Data a write would destroy: partitions the kernel lists on a block device, and the
//! partition tables, filesystems, RAID and LVM members its first and last bytes carry
//! (as `wipefs` and `blkid` look for them), each with the bytes it occupies. A plan's
//! writes over any of it are refused unless the user says the data may go
//! (`--overwrite-data`), so `--allow-write` alone never destroys a board's second OS or
//! boot partition table; a plan whose `offset` keeps its writes clear of it runs.
//!
//! Only signatures whose chance of appearing in random data (what mmcab's own writes
//! leave) is negligible are used: at least four magic bytes, or two with fields that
//! must be plausible as well (an MBR's status bytes, ext's block size).

use crate::aligned::AlignedBuf;
use crate::device::sysfs::{partition_dirs, read_trimmed};
use crate::units::format_size;
use std::path::Path;

/// Bytes read from the device's start: enough for every signature below (btrfs's
/// superblock at 64 KiB, swap's header for 64 KiB pages, a GPT's entries).
pub const HEAD_BYTES: usize = 68 << 10;
/// Bytes read from its end (GPT's backup, md RAID 0.90 and 1.0 superblocks).
pub const TAIL_BYTES: usize = 128 << 10;

/// Something on the device and the bytes it occupies, `[start, end)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub what: String,
    pub start: u64,
    pub end: u64,
    /// A partition as a partition table on the device names it (the kernel's own list,
    /// where it has one, replaces these).
    pub table_entry: bool,
}

impl Found {
    fn new(what: impl Into<String>, start: u64, end: u64) -> Found {
        Found {
            what: what.into(),
            start,
            end,
            table_entry: false,
        }
    }

    fn entry(what: String, start: u64, end: u64) -> Found {
        Found {
            table_entry: true,
            ..Found::new(what, start, end)
        }
    }

    /// "an ext2/3/4 filesystem (bytes 0-16777215)".
    pub fn describe(&self) -> String {
        format!("{} (bytes {}-{})", self.what, self.start, self.end - 1)
    }
}

/// A magic byte string at an offset from the start, naming what holds it; what it names
/// covers the whole device (a filesystem or container without a partition table).
struct Magic {
    what: &'static str,
    offset: usize,
    bytes: &'static [u8],
}

/// Signatures of at least four bytes at the device's start (libblkid's superblocks,
/// same offsets).
const WHOLE_DEVICE: &[Magic] = &[
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
        what: "swap space",
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
    Magic {
        what: "an md RAID member (superblock 1.1)",
        offset: 0,
        bytes: &[0xfc, 0x4e, 0x2b, 0xa9],
    },
    Magic {
        what: "an md RAID member (superblock 1.2)",
        offset: 4096,
        bytes: &[0xfc, 0x4e, 0x2b, 0xa9],
    },
];

fn at(data: &[u8], offset: usize, len: usize) -> Option<&[u8]> {
    data.get(offset..offset.checked_add(len)?)
}

fn le32(data: &[u8], offset: usize) -> Option<u32> {
    at(data, offset, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn le64(data: &[u8], offset: usize) -> Option<u64> {
    let b = at(data, offset, 8)?;
    Some(u64::from_le_bytes([
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
    ]))
}

fn boot_signature(head: &[u8]) -> bool {
    at(head, 510, 2) == Some(&[0x55, 0xaa][..])
}

/// FAT: the boot signature and "FAT" where FAT12/16 or FAT32 keep their type string.
fn fat(head: &[u8]) -> bool {
    boot_signature(head)
        && (at(head, 54, 3) == Some(&b"FAT"[..]) || at(head, 82, 5) == Some(&b"FAT32"[..]))
}

/// ext2/3/4: magic 0xEF53 at 1080 (superblock at 1024), a block size of 1 to 64 KiB
/// and a non-zero inode count.
fn ext(head: &[u8]) -> bool {
    at(head, 1080, 2) == Some(&[0x53, 0xef][..])
        && le32(head, 1024 + 24).is_some_and(|log| log <= 6)
        && le32(head, 1024).is_some_and(|inodes| inodes > 0)
}

/// LVM2 physical volume: "LABELONE" in one of the first four sectors, "LVM2 001" 24
/// bytes after it.
fn lvm(head: &[u8]) -> bool {
    (0..4).any(|s| {
        at(head, s * 512, 8) == Some(&b"LABELONE"[..])
            && at(head, s * 512 + 24, 8) == Some(&b"LVM2 001"[..])
    })
}

/// An MBR's partitions `(index, first byte, end)`: None when sector 0 is no MBR (no
/// boot signature, or an entry whose status is neither 0x00 nor 0x80, or no entry with
/// a type).
fn mbr_partitions(head: &[u8]) -> Option<Vec<(usize, u64, u64)>> {
    if !boot_signature(head) {
        return None;
    }
    let entries: Vec<&[u8]> = (0..4).filter_map(|i| at(head, 446 + 16 * i, 16)).collect();
    if entries.len() != 4
        || !entries.iter().all(|e| e[0] == 0x00 || e[0] == 0x80)
        || !entries.iter().any(|e| e[4] != 0)
    {
        return None;
    }
    Some(
        entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e[4] != 0)
            .filter_map(|(i, e)| {
                let start = u64::from(le32(e, 8)?) * 512;
                let len = u64::from(le32(e, 12)?) * 512;
                Some((i + 1, start, start + len))
            })
            .collect(),
    )
}

/// A GPT's table (header and entries) and partitions, for `sector` bytes per LBA.
fn gpt(head: &[u8], sector: usize) -> Option<Vec<Found>> {
    if at(head, sector, 8) != Some(&b"EFI PART"[..]) {
        return None;
    }
    let h = sector;
    let first_usable = le64(head, h + 40)?;
    let entries_lba = le64(head, h + 72)? as usize;
    let count = le32(head, h + 80)? as usize;
    let size = le32(head, h + 84)? as usize;
    let sector_bytes = sector as u64;
    let mut found = vec![Found::new(
        "a GPT partition table",
        0,
        first_usable.max(1) * sector_bytes,
    )];
    for i in 0..count.min(256) {
        let Some(e) = at(head, entries_lba * sector + i * size, size.max(48)) else {
            break;
        };
        if e[..16].iter().all(|&b| b == 0) {
            continue;
        }
        let (first, last) = (le64(e, 32)?, le64(e, 40)?);
        if last >= first {
            found.push(Found::entry(
                format!("GPT partition {}", i + 1),
                first * sector_bytes,
                (last + 1) * sector_bytes,
            ));
        }
    }
    Some(found)
}

/// What the device's first bytes (`head`) and last bytes (`tail`, ending at `size`)
/// hold, each with the bytes it occupies.
pub fn signatures(head: &[u8], tail: &[u8], size: u64) -> Vec<Found> {
    let whole = |what: &str| Found::new(what, 0, size.max(1));
    let mut found: Vec<Found> = WHOLE_DEVICE
        .iter()
        .filter(|m| at(head, m.offset, m.bytes.len()) == Some(m.bytes))
        .map(|m| whole(m.what))
        .collect();
    if ext(head) {
        found.push(whole("an ext2/3/4 filesystem"));
    }
    if lvm(head) {
        found.push(whole("an LVM2 physical volume"));
    }
    if let Some(table) = gpt(head, 512).or_else(|| gpt(head, 4096)) {
        found.extend(table);
    } else if fat(head) {
        found.push(whole("a FAT filesystem"));
    } else if let Some(parts) = mbr_partitions(head) {
        found.push(Found::new("an MBR partition table", 0, 512));
        for (i, start, end) in parts {
            found.push(Found::entry(format!("MBR partition {i}"), start, end));
        }
    }
    found.extend(tail_signatures(tail, size));
    found
}

/// GPT's backup header in the last sector; md RAID 0.90 (64 KiB aligned, 64 KiB from
/// the end) and 1.0 (4 KiB aligned, at least 8 KiB from the end) superblocks.
fn tail_signatures(tail: &[u8], size: u64) -> Vec<Found> {
    let tail_start = size.saturating_sub(tail.len() as u64);
    let at_byte = |byte: u64, len: usize| {
        byte.checked_sub(tail_start)
            .and_then(|o| at(tail, o as usize, len))
    };
    let mut found = Vec::new();
    if size >= 512 && at_byte(size - 512, 8) == Some(&b"EFI PART"[..]) {
        found.push(Found::new(
            "a GPT backup partition table",
            size.saturating_sub(33 * 512),
            size,
        ));
    }
    let md_magic = &[0xfc, 0x4e, 0x2b, 0xa9][..];
    if size >= 128 << 10 {
        let v090 = (size & !0xffff) - (64 << 10);
        if at_byte(v090, 4) == Some(md_magic) {
            found.push(Found::new("an md RAID member (superblock 0.90)", 0, size));
        }
        let v10 = (size - (8 << 10)) & !0xfff;
        if at_byte(v10, 4) == Some(md_magic) {
            found.push(Found::new("an md RAID member (superblock 1.0)", 0, size));
        }
    }
    found
}

/// Partitions the kernel lists on the disk whose sysfs directory is `sys`, with the
/// bytes each occupies (sysfs `start` and `size`, in 512-byte sectors).
pub fn kernel_partitions(sys: &Path) -> Vec<Found> {
    let sectors =
        |p: &Path, name: &str| -> Option<u64> { read_trimmed(p.join(name)).ok()?.parse().ok() };
    let mut found: Vec<Found> = partition_dirs(sys)
        .into_iter()
        .filter_map(|p| {
            let (start, len) = (sectors(&p, "start")?, sectors(&p, "size")?);
            Some(Found::new(
                format!("partition {}", p.file_name()?.to_string_lossy()),
                start * 512,
                (start + len) * 512,
            ))
        })
        .collect();
    found.sort_by_key(|f| f.start);
    found
}

/// The first `HEAD_BYTES` and last `TAIL_BYTES` of the device, each read with one
/// O_DIRECT read (two commands on an eMMC, whatever the page cache holds); a part that
/// cannot be read is empty.
fn head_and_tail(path: &Path, size: u64) -> (Vec<u8>, Vec<u8>) {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let Ok(f) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
    else {
        return (Vec::new(), Vec::new());
    };
    let read = |at: u64, len: usize| -> Vec<u8> {
        let len = len.min(size.saturating_sub(at) as usize) & !4095;
        let mut buf = AlignedBuf::new(len, 4096);
        match f.read_exact_at(buf.as_mut_slice(), at) {
            Ok(()) => buf.as_slice().to_vec(),
            Err(_) => Vec::new(),
        }
    };
    let head = read(0, HEAD_BYTES);
    // The tail must end at the device's end (a size that is not a 4 KiB multiple, which
    // O_DIRECT could not reach exactly, goes without it).
    let tail = match size % 4096 {
        0 => read(size.saturating_sub(TAIL_BYTES as u64), TAIL_BYTES),
        _ => Vec::new(),
    };
    (head, tail)
}

/// Everything on the block device `path` (sysfs directory `sys`, `size` bytes): the
/// kernel's partitions, else those its partition table names, and the signatures. A
/// device that cannot be read shows only what sysfs says (the open that follows
/// reports the error).
pub fn data_on(path: &Path, sys: &Path, size: u64) -> Vec<Found> {
    let (head, tail) = head_and_tail(path, size);
    let kernel = kernel_partitions(sys);
    let mut found = signatures(&head, &tail, size);
    if !kernel.is_empty() {
        // The kernel's list is the one in use; the table's own entries say the same.
        found.retain(|f| !f.table_entry);
        found.extend(kernel);
    }
    found
}

/// The found data that the writes `[start, end)` overlap, each with the first write
/// region that does.
pub fn overlapped<'a>(found: &'a [Found], writes: &[(u64, u64)]) -> Vec<(&'a Found, (u64, u64))> {
    found
        .iter()
        .filter_map(|f| {
            writes
                .iter()
                .find(|&&(s, e)| s < f.end && f.start < e)
                .map(|&w| (f, w))
        })
        .collect()
}

/// The refusal's sentence for writes over data, or None when the writes miss it.
pub fn refusal(path: &Path, found: &[Found], writes: &[(u64, u64)]) -> Option<String> {
    let hit = overlapped(found, writes);
    let (_, (s, e)) = *hit.first()?;
    let what: Vec<String> = hit.iter().map(|(f, _)| f.describe()).collect();
    Some(format!(
        "refusing to write to {}: the writes (bytes {s}-{}, {}{}) would destroy what is \
         there: {}; if it may go, add --overwrite-data (or wipe it first: wipefs -a {}), \
         else move the plan's offset clear of it or pick another device",
        path.display(),
        e - 1,
        format_size(e - s),
        if writes.len() > 1 { " and more" } else { "" },
        what.join(", "),
        path.display()
    ))
}

#[cfg(test)]
#[path = "signatures_tests.rs"]
mod tests;
