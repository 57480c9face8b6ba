//! Tests of [`super`] (signatures.rs): each signature, where it sits, what random data
//! does not look like, and which writes overlap what.

use super::*;
use std::fs;

const SIZE: u64 = 64 << 20;

fn blank() -> Vec<u8> {
    vec![0u8; HEAD_BYTES]
}

fn names(found: &[Found]) -> Vec<String> {
    found.iter().map(Found::describe).collect()
}

fn mbr(entries: &[(u32, u32)]) -> Vec<u8> {
    let mut d = blank();
    for (i, (start, sectors)) in entries.iter().enumerate() {
        let e = &mut d[446 + 16 * i..446 + 16 * (i + 1)];
        e[4] = 0x83;
        e[8..12].copy_from_slice(&start.to_le_bytes());
        e[12..16].copy_from_slice(&sectors.to_le_bytes());
    }
    d[510] = 0x55;
    d[511] = 0xaa;
    d
}

#[test]
fn a_blank_device_holds_nothing() {
    assert!(signatures(&blank(), &[], SIZE).is_empty());
    assert!(
        signatures(&[], &[], SIZE).is_empty(),
        "a short read is no signature"
    );
}

#[test]
fn an_mbr_and_its_partitions_with_their_bytes() {
    let mut d = mbr(&[]);
    assert!(
        signatures(&d, &[], SIZE).is_empty(),
        "a boot signature alone"
    );
    d = mbr(&[(2048, 8192), (10240, 4096)]);
    assert_eq!(
        names(&signatures(&d, &[], SIZE)),
        [
            "an MBR partition table (bytes 0-511)",
            "MBR partition 1 (bytes 1048576-5242879)",
            "MBR partition 2 (bytes 5242880-7340031)"
        ]
    );
    d[446 + 16] = 0x12;
    assert!(signatures(&d, &[], SIZE).is_empty(), "status 0x12: no MBR");
}

#[test]
fn a_gpt_its_entries_and_its_backup() {
    let mut d = mbr(&[(1, 0xffff_ffff)]);
    d[446 + 4] = 0xee;
    let h = 512;
    d[h..h + 8].copy_from_slice(b"EFI PART");
    d[h + 40..h + 48].copy_from_slice(&34u64.to_le_bytes());
    d[h + 72..h + 80].copy_from_slice(&2u64.to_le_bytes());
    d[h + 80..h + 84].copy_from_slice(&128u32.to_le_bytes());
    d[h + 84..h + 88].copy_from_slice(&128u32.to_le_bytes());
    let e = 1024 + 128;
    d[e] = 0xaf; // a type GUID
    d[e + 32..e + 40].copy_from_slice(&2048u64.to_le_bytes());
    d[e + 40..e + 48].copy_from_slice(&4095u64.to_le_bytes());
    let mut tail = vec![0u8; TAIL_BYTES];
    let last = TAIL_BYTES - 512;
    tail[last..last + 8].copy_from_slice(b"EFI PART");
    assert_eq!(
        names(&signatures(&d, &tail, SIZE)),
        [
            "a GPT partition table (bytes 0-17407)",
            "GPT partition 2 (bytes 1048576-2097151)",
            "a GPT backup partition table (bytes 67091968-67108863)"
        ],
        "the protective MBR is GPT's, not a table of its own"
    );
}

#[test]
fn filesystems_cover_the_whole_device() {
    let mut d = blank();
    d[1080] = 0x53;
    d[1081] = 0xef;
    assert!(signatures(&d, &[], SIZE).is_empty(), "no inodes: not ext");
    d[1024] = 16;
    d[1024 + 24] = 2;
    assert_eq!(
        names(&signatures(&d, &[], SIZE)),
        ["an ext2/3/4 filesystem (bytes 0-67108863)"]
    );
    d[1024 + 24] = 200;
    assert!(
        signatures(&d, &[], SIZE).is_empty(),
        "2^210 KiB blocks: not ext"
    );

    let mut d = mbr(&[(2048, 8192)]);
    d[82..87].copy_from_slice(b"FAT32");
    let found = signatures(&d, &[], SIZE);
    assert_eq!(found.len(), 1, "FAT, not also an MBR: {found:?}");
    assert_eq!(found[0].what, "a FAT filesystem");

    let mut d = blank();
    d[0x10040..0x10048].copy_from_slice(b"_BHRfS_M");
    d[4086..4096].copy_from_slice(b"SWAPSPACE2");
    d[1024..1032].copy_from_slice(b"LABELONE");
    d[1048..1056].copy_from_slice(b"LVM2 001");
    let what: Vec<String> = signatures(&d, &[], SIZE)
        .into_iter()
        .map(|f| f.what)
        .collect();
    assert_eq!(
        what,
        [
            "a btrfs filesystem",
            "swap space",
            "an LVM2 physical volume"
        ]
    );
}

#[test]
fn md_raid_superblocks_at_either_end() {
    let mut d = blank();
    d[4096..4100].copy_from_slice(&[0xfc, 0x4e, 0x2b, 0xa9]);
    assert_eq!(
        signatures(&d, &[], SIZE)[0].what,
        "an md RAID member (superblock 1.2)"
    );
    let mut tail = vec![0u8; TAIL_BYTES];
    let v090 = TAIL_BYTES - (64 << 10);
    tail[v090..v090 + 4].copy_from_slice(&[0xfc, 0x4e, 0x2b, 0xa9]);
    assert_eq!(
        signatures(&blank(), &tail, SIZE)[0].what,
        "an md RAID member (superblock 0.90)"
    );
}

/// Random data (what mmcab's own writes leave) carries no signature.
#[test]
fn random_data_holds_nothing() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut random = |n: usize| -> Vec<u8> {
        (0..n)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 24) as u8
            })
            .collect()
    };
    for _ in 0..100 {
        let (head, tail) = (random(HEAD_BYTES), random(TAIL_BYTES));
        assert!(signatures(&head, &tail, SIZE).is_empty());
    }
}

#[test]
fn only_writes_over_data_are_refused() {
    let found = signatures(&mbr(&[(2048, 8192)]), &[], SIZE);
    let dev = Path::new("/dev/mmcblk0");
    // Between the table and the first partition: free space.
    assert_eq!(refusal(dev, &found, &[(64 << 10, 512 << 10)]), None);
    let line = refusal(dev, &found, &[(0, 1 << 20)]).unwrap();
    assert!(
        line.starts_with("refusing to write to /dev/mmcblk0: the writes (bytes 0-1048575, 1MiB)")
            && line.contains("an MBR partition table (bytes 0-511)")
            && !line.contains("MBR partition 1")
            && line.contains("--overwrite-data")
            && line.contains("wipefs -a /dev/mmcblk0"),
        "{line}"
    );
    let line = refusal(dev, &found, &[(0, 512 << 10), (4 << 20, 5 << 20)]).unwrap();
    assert!(
        line.contains("and more")
            && line.contains("an MBR partition table")
            && line.contains("MBR partition 1 (bytes 1048576-5242879)"),
        "{line}"
    );
}

#[test]
fn kernel_partitions_have_their_bytes() {
    let dir = tempfile::tempdir().unwrap();
    for (p, start, size) in [("mmcblk0p2", 10240, 100), ("mmcblk0p1", 2048, 8192)] {
        let d = dir.path().join(p);
        fs::create_dir(&d).unwrap();
        fs::write(d.join("partition"), "1\n").unwrap();
        fs::write(d.join("start"), format!("{start}\n")).unwrap();
        fs::write(d.join("size"), format!("{size}\n")).unwrap();
    }
    fs::create_dir(dir.path().join("queue")).unwrap();
    assert_eq!(
        names(&kernel_partitions(dir.path())),
        [
            "partition mmcblk0p1 (bytes 1048576-5242879)",
            "partition mmcblk0p2 (bytes 5242880-5294079)"
        ]
    );
}
