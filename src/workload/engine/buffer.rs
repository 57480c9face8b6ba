//! The data pattern of I/O buffers ([`crate::aligned::AlignedBuf`]) and the verify
//! header written at the start of every block when a job has `verify = true`.
//!
//! Verify block layout (little endian): bytes 0..8 magic `MMCABVFY`, 8..16 byte offset
//! on the target, 16..24 run id, 24..32 sequence number of the write within its job
//! clone, 32..36 block length, 36..40 CRC32 of the whole block with these 4 bytes left
//! out. The rest is the job's pattern.

use crate::plan::workload::Pattern;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const MAGIC: &[u8; 8] = b"MMCABVFY";

/// Fill a buffer with the job's pattern.
pub fn fill_pattern(buf: &mut [u8], pattern: Pattern, seed: u64) {
    match pattern {
        Pattern::Zeros => buf.fill(0),
        Pattern::Random => Xoshiro256PlusPlus::seed_from_u64(seed).fill_bytes(buf),
    }
}

/// Stamp the verify header and checksum into a block about to be written.
pub fn stamp_block(block: &mut [u8], offset: u64, run_id: u64, sequence: u64) {
    block[0..8].copy_from_slice(MAGIC);
    block[8..16].copy_from_slice(&offset.to_le_bytes());
    block[16..24].copy_from_slice(&run_id.to_le_bytes());
    block[24..32].copy_from_slice(&sequence.to_le_bytes());
    let len = block.len() as u32;
    block[32..36].copy_from_slice(&len.to_le_bytes());
    let crc = block_crc(block);
    block[36..40].copy_from_slice(&crc.to_le_bytes());
}

fn block_crc(block: &[u8]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    h.update(&block[..36]);
    h.update(&block[40..]);
    h.finalize()
}

fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// Check a block read back at `offset`; `run_id` is checked when given (the blocks were
/// written by this run). Returns what is wrong, or None.
pub fn check_block(block: &[u8], offset: u64, run_id: Option<u64>) -> Option<String> {
    if &block[0..8] != MAGIC {
        return Some("no verify header (block never written with verify, or overwritten)".into());
    }
    let len = u32::from_le_bytes([block[32], block[33], block[34], block[35]]) as usize;
    if len != block.len() {
        return Some(format!(
            "header says block length {len}, read {}",
            block.len()
        ));
    }
    let stored = u32::from_le_bytes([block[36], block[37], block[38], block[39]]);
    if stored != block_crc(block) {
        return Some("checksum mismatch (data changed after it was written)".into());
    }
    let at = le_u64(&block[8..16]);
    if at != offset {
        return Some(format!(
            "block written for offset {at} found here (misplaced write)"
        ));
    }
    if let Some(expected) = run_id {
        let got = le_u64(&block[16..24]);
        if got != expected {
            return Some(format!(
                "run id {got:#x}, expected {expected:#x} (stale data from another run)"
            ));
        }
    }
    None
}

/// Which bytes of a bad block differ from what a verifying writer wrote there: its
/// pattern (`written`, one block as the engine filled it) with the header stamped for
/// `offset` and `run_id`. The sequence number and the CRC are not known afterwards and
/// are not compared. Returns e.g. "1 byte differs from what was written: byte 1000 of
/// the block (offset 5096 on the target) reads 0xff, 0x3a was written".
pub fn describe_damage(block: &[u8], written: &[u8], offset: u64, run_id: u64) -> String {
    let mut expected = written.to_vec();
    expected[0..8].copy_from_slice(MAGIC);
    expected[8..16].copy_from_slice(&offset.to_le_bytes());
    expected[16..24].copy_from_slice(&run_id.to_le_bytes());
    expected[32..36].copy_from_slice(&(block.len() as u32).to_le_bytes());
    let unknown = |i: usize| (24..32).contains(&i) || (36..40).contains(&i);
    let mut differ =
        (0..block.len().min(expected.len())).filter(|&i| !unknown(i) && block[i] != expected[i]);
    let Some(first) = differ.next() else {
        return "the data and the known header fields are as written (the sequence number \
                or the checksum bytes changed)"
            .to_string();
    };
    let count = 1 + differ.count();
    format!(
        "{count} byte{} differ{} from what was written, the first is byte {first} of the block \
         (offset {} on the target): reads {:#04x}, {:#04x} was written",
        if count == 1 { "" } else { "s" },
        if count == 1 { "s" } else { "" },
        offset + first as u64,
        block[first],
        expected[first]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamped_blocks_verify_and_corruption_is_seen() {
        let mut block = vec![0u8; 4096];
        fill_pattern(&mut block, Pattern::Random, 3);
        stamp_block(&mut block, 8192, 42, 7);
        assert_eq!(check_block(&block, 8192, Some(42)), None);
        assert!(check_block(&block, 4096, None)
            .unwrap()
            .contains("offset 8192"));
        assert!(check_block(&block, 8192, Some(43))
            .unwrap()
            .contains("run id"));
        block[1000] ^= 1;
        assert!(check_block(&block, 8192, None)
            .unwrap()
            .contains("checksum"));
        assert!(check_block(&[0u8; 512], 0, None)
            .unwrap()
            .contains("no verify header"));
    }

    #[test]
    fn damage_is_located_to_the_byte() {
        let mut pattern = vec![0u8; 4096];
        fill_pattern(&mut pattern, Pattern::Random, 9);
        let mut block = pattern.clone();
        stamp_block(&mut block, 8192, 42, 7);
        assert!(describe_damage(&block, &pattern, 8192, 42).starts_with("the data and"));
        let was = block[1000];
        block[1000] = was ^ 0xff;
        assert_eq!(
            describe_damage(&block, &pattern, 8192, 42),
            format!(
                "1 byte differs from what was written, the first is byte 1000 of the block \
                 (offset 9192 on the target): reads {:#04x}, {was:#04x} was written",
                was ^ 0xff
            )
        );
        block[0] = b'X';
        assert!(describe_damage(&block, &pattern, 8192, 42).starts_with("2 bytes differ"));
    }

    #[test]
    fn patterns() {
        let mut a = vec![1u8; 4096];
        fill_pattern(&mut a, Pattern::Zeros, 0);
        assert!(a.iter().all(|&b| b == 0));
        fill_pattern(&mut a, Pattern::Random, 1);
        assert!(a.iter().filter(|&&b| b == 0).count() < 100);
    }
}
