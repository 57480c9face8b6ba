//! The verify stamp as src/workload/engine/buffer.rs lays it out, parsed independently of mmcab
//! (a test of mmcab's verify must not share its parser): bytes 0..8 "MMCABVFY", 8..16
//! the block's byte offset, 16..24 the run id, 24..32 the sequence, 32..36 the block's
//! length, 36..40 the CRC32 of the block without bytes 36..40 (all little-endian).
/// Little-endian u64 at `at`.
pub fn le64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Checks the stamp of `block`, read from byte `offset` of the device; returns the run id.
pub fn check_stamp(block: &[u8], offset: u64) -> u64 {
    assert_eq!(&block[0..8], b"MMCABVFY", "no stamp at {offset}");
    assert_eq!(
        le64(block, 8),
        offset,
        "stamp of another offset at {offset}"
    );
    let len = u32::from_le_bytes(block[32..36].try_into().unwrap());
    assert_eq!(len as usize, block.len());
    let mut h = crc32fast::Hasher::new();
    h.update(&block[..36]);
    h.update(&block[40..]);
    let crc = u32::from_le_bytes(block[36..40].try_into().unwrap());
    assert_eq!(h.finalize(), crc, "CRC of the block at {offset}");
    le64(block, 16)
}
