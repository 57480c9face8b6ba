//! The eMMC 4.5 packed write command, built exactly as Linux 3.7-4.9 built it in
//! `mmc_blk_packed_hdr_wrq_prep()` (`drivers/mmc/card/block.c`), which ran on real cards
//! for four years and is the oracle here (docs/kernel-facts.md, "Packed commands").
//! Pure: no I/O; the ioctl engine and `mmcab probe packed` send what this returns.
//!
//! One packed write is one CMD23 + CMD25 transfer:
//! - CMD23 (SET_BLOCK_COUNT): bit 30 (packed) | the number of 512-byte blocks that follow,
//!   **header included**;
//! - CMD25 (WRITE_MULTIPLE_BLOCK): the address of the first entry;
//! - data: the header (512 bytes, or 4096 on cards with a native 4 KiB sector,
//!   EXT_CSD DATA_SECTOR_SIZE = 1), then the entries' data in entry order.
//!
//! The header, little-endian 32-bit words, zero everywhere else: word 0 =
//! `entries << 16 | 0x02 (write) << 8 | 0x01 (version 1)`, word 1 = 0; entry i (1-based)
//! in words `2i` (its CMD23 argument: its count of 512-byte sectors) and `2i + 1` (its
//! CMD25 argument: its sector, or byte address on byte-addressed cards). Block counts are
//! 512-byte units on every card; on 4 KiB-sector cards Linux packed only entries of whole
//! 4 KiB sectors, and so does this module. Linux packed only two or more requests; one
//! header holds at most 63 entries (512 bytes) or 255 (4 KiB: room for 511, but
//! MAX_PACKED_WRITES is one byte). Linux never set an entry's
//! reliable-write (bit 31) or tag (bit 29) bits for plain writes, and neither does mmcab.
//!
//! Tests: `packed_tests.rs` pins the bytes and commands against
//! `tests/fixtures/packed/linux-4.9.toml`, whose derivation from that kernel code is in
//! the README next to it.

use super::ext_csd_table::{
    EXCEPTION_EVENTS_CTRL, EXCEPTION_EVENTS_STATUS, MAX_PACKED_WRITES, PACKED_COMMAND_STATUS,
    PACKED_FAILURE_INDEX,
};
use super::transfer::PackedArgs;
use linux_uapi::mmc_core::MMC_CMD23_ARG_PACKED;
use serde::{Deserialize, Serialize};

/// `PACKED_CMD_VER` (byte 0 of the header).
pub const PACKED_CMD_VER: u8 = 0x01;
/// `PACKED_CMD_WR` (byte 1 of the header: a packed write).
pub const PACKED_CMD_WR: u8 = 0x02;
/// The block size of every packed transfer (`brq->data.blksz = 512`), also on 4 KiB
/// cards: the transfers' own.
const BLOCK: usize = super::transfer::BLOCK as usize;
/// Most blocks one CMD23 can announce: its count field is 16 bits (Linux capped the
/// packed total at 0xffff).
pub const MAX_CMD23_BLOCKS: u32 = 0xffff;

/// EXT_CSD byte offsets of the packed-command registers (JESD84-B45; Linux 4.9
/// `include/linux/mmc/mmc.h`), from the field table; the two-byte EXP_EVENTS fields by
/// their low byte, which holds PACKED_EVENT.
pub const EXT_CSD_PACKED_FAILURE_INDEX: usize = PACKED_FAILURE_INDEX.offset;
pub const EXT_CSD_PACKED_CMD_STATUS: usize = PACKED_COMMAND_STATUS.offset;
pub const EXT_CSD_EXP_EVENTS_STATUS: usize = EXCEPTION_EVENTS_STATUS.offset;
pub const EXT_CSD_EXP_EVENTS_CTRL: usize = EXCEPTION_EVENTS_CTRL.offset;
pub const EXT_CSD_MAX_PACKED_WRITES: usize = MAX_PACKED_WRITES.offset;
/// EXP_EVENTS_CTRL / EXP_EVENTS_STATUS bit 3: PACKED_EVENT_EN / PACKED_FAILURE.
pub const EXT_CSD_PACKED_EVENT: u8 = 1 << 3;
/// PACKED_COMMAND_STATUS bit 0: generic error; bit 1: the error has an index.
pub const EXT_CSD_PACKED_GENERIC_ERROR: u8 = 1 << 0;
pub const EXT_CSD_PACKED_INDEXED_ERROR: u8 = 1 << 1;

/// How the card takes CMD18/CMD25 addresses: in 512-byte sectors (every card over
/// 2 GiB, and smaller ones with OCR bit 30) or in bytes (`mmc_card_blockaddr()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Addressing {
    Sector,
    Byte,
}

/// Why a card takes no packed writes (see [`packed_writes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoPackedWrites {
    /// EXT_CSD_REV below 6: packed commands came with eMMC 4.5.
    OldCard { rev: u64 },
    /// EXT_CSD_REV 6 or later, MAX_PACKED_WRITES 0.
    NoneAdvertised { rev: u64 },
}

impl std::fmt::Display for NoPackedWrites {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoPackedWrites::OldCard { rev } => write!(
                f,
                "the card does not support packed commands (EXT_CSD_REV {rev}, packed commands \
                 need >= 6, eMMC 4.5)"
            ),
            NoPackedWrites::NoneAdvertised { rev } => write!(
                f,
                "the card does not support packed writes (EXT_CSD_REV {rev}, MAX_PACKED_WRITES 0)"
            ),
        }
    }
}

/// How many writes the card takes in one packed command, from EXT_CSD_REV [192] and
/// MAX_PACKED_WRITES [500]: the one place mmcab decides whether a card has packed writes
/// (`mmcab info`, the packing knob, the ioctl engine, `probe packed`).
pub fn packed_writes(rev: u64, max_packed_writes: u64) -> Result<u64, NoPackedWrites> {
    if rev < 6 {
        Err(NoPackedWrites::OldCard { rev })
    } else if max_packed_writes == 0 {
        Err(NoPackedWrites::NoneAdvertised { rev })
    } else {
        Ok(max_packed_writes)
    }
}

/// What of the card the packed format depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CardFormat {
    pub addressing: Addressing,
    /// EXT_CSD DATA_SECTOR_SIZE = 1: native 4 KiB sectors (`mmc_large_sector()`).
    pub large_sector: bool,
}

/// One write of a packed command: `sectors` 512-byte sectors at 512-byte sector `sector`
/// (of the hardware partition the command goes to).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub sector: u64,
    pub sectors: u32,
}

/// A packed write as [`build`] returns it: the header and the arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedWrite {
    pub header: Vec<u8>,
    pub args: PackedArgs,
}

/// Why a set of writes cannot be one packed command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackedError {
    #[error(
        "a packed write needs at least 2 entries (Linux packed only 2 or more requests), got {0}"
    )]
    TooFewEntries(usize),
    #[error(
        "{entries} entries do not fit one packed header: {header} bytes hold at most {max} \
         entries of 8 bytes after the 8-byte header"
    )]
    TooManyEntries {
        entries: usize,
        header: usize,
        max: usize,
    },
    #[error("entry {index}: a write of 0 sectors")]
    EmptyEntry { index: usize },
    #[error(
        "entry {index}: {sectors} sectors is not a whole number of 4 KiB sectors, which a card \
         with native 4 KiB sectors needs (Linux did not pack such requests)"
    )]
    NotWholeLargeSectors { index: usize, sectors: u32 },
    #[error("entry {index}: sector {sector} has no {addressing:?} address below 2^32")]
    AddressTooLarge {
        index: usize,
        sector: u64,
        addressing: Addressing,
    },
    #[error(
        "{blocks} blocks (header included) exceed the {MAX_CMD23_BLOCKS} a CMD23 can announce"
    )]
    TooManyBlocks { blocks: u64 },
    #[error("the header buffer has {got} bytes, the card's header needs {need}")]
    HeaderBuffer { got: usize, need: usize },
    #[error(
        "entry {index}: sectors {sector}..+{sectors} lie outside the region the job may write \
         (sectors {start}..{end}); nothing was sent"
    )]
    OutsideRegion {
        index: usize,
        sector: u64,
        sectors: u32,
        start: u64,
        end: u64,
    },
}

impl CardFormat {
    /// Bytes of the header on the bus: 512, or 4096 on native 4 KiB-sector cards
    /// (`hdr_sz` / `hdr_blocks` in Linux 4.9).
    pub fn header_bytes(self) -> usize {
        if self.large_sector {
            4096
        } else {
            512
        }
    }

    /// The header in 512-byte blocks (`hdr_blocks`: 8 or 1).
    pub fn header_blocks(self) -> u32 {
        (self.header_bytes() / BLOCK) as u32
    }

    /// Most entries one header holds: 8 bytes each after the first 8, and at most 255
    /// (MAX_PACKED_WRITES is one byte: no card takes more).
    pub fn max_entries(self) -> usize {
        ((self.header_bytes() - 8) / 8).min(usize::from(u8::MAX))
    }

    /// The CMD18/CMD25 argument of a 512-byte sector: the sector, or its byte address.
    pub fn address(self, sector: u64) -> Option<u32> {
        let value = match self.addressing {
            Addressing::Sector => sector,
            Addressing::Byte => sector.checked_mul(BLOCK as u64)?,
        };
        u32::try_from(value).ok()
    }
}

/// Writes the header of a packed write of `entries` into `header` (exactly
/// [`CardFormat::header_bytes`] long) and returns the command arguments.
pub fn write_header(
    format: CardFormat,
    entries: &[Entry],
    header: &mut [u8],
) -> Result<PackedArgs, PackedError> {
    let need = format.header_bytes();
    if header.len() != need {
        return Err(PackedError::HeaderBuffer {
            got: header.len(),
            need,
        });
    }
    if entries.len() < 2 {
        return Err(PackedError::TooFewEntries(entries.len()));
    }
    if entries.len() > format.max_entries() {
        return Err(PackedError::TooManyEntries {
            entries: entries.len(),
            header: need,
            max: format.max_entries(),
        });
    }
    header.fill(0);
    // packed_cmd_hdr[0] = cpu_to_le32((nr_entries << 16) | (PACKED_CMD_WR << 8) | PACKED_CMD_VER)
    let word0 = ((entries.len() as u32) << 16)
        | (u32::from(PACKED_CMD_WR) << 8)
        | u32::from(PACKED_CMD_VER);
    header[0..4].copy_from_slice(&word0.to_le_bytes());
    let mut blocks: u64 = 0;
    for (index, entry) in entries.iter().enumerate() {
        if entry.sectors == 0 {
            return Err(PackedError::EmptyEntry { index: index + 1 });
        }
        if format.large_sector && entry.sectors % 8 != 0 {
            return Err(PackedError::NotWholeLargeSectors {
                index: index + 1,
                sectors: entry.sectors,
            });
        }
        let address = format
            .address(entry.sector)
            .ok_or(PackedError::AddressTooLarge {
                index: index + 1,
                sector: entry.sector,
                addressing: format.addressing,
            })?;
        // Entry i (1-based) in words 2i (CMD23 argument) and 2i + 1 (CMD25 argument).
        let at = 8 * (index + 1);
        header[at..at + 4].copy_from_slice(&entry.sectors.to_le_bytes());
        header[at + 4..at + 8].copy_from_slice(&address.to_le_bytes());
        blocks += u64::from(entry.sectors);
    }
    let total = blocks + u64::from(format.header_blocks());
    if total > u64::from(MAX_CMD23_BLOCKS) {
        return Err(PackedError::TooManyBlocks { blocks: total });
    }
    let total = total as u32;
    Ok(PackedArgs {
        // brq->sbc.arg = MMC_CMD23_ARG_PACKED | (packed->blocks + hdr_blocks)
        sbc_arg: MMC_CMD23_ARG_PACKED | total,
        // brq->cmd.arg = blk_rq_pos(req), << 9 unless block-addressed: the first entry
        cmd25_arg: format
            .address(entries[0].sector)
            .expect("checked with the entries"),
        blocks: total,
        entries: entries.len(),
    })
}

/// [`write_header`] into a new buffer.
pub fn build(format: CardFormat, entries: &[Entry]) -> Result<PackedWrite, PackedError> {
    let mut header = vec![0u8; format.header_bytes()];
    let args = write_header(format, entries, &mut header)?;
    Ok(PackedWrite { header, args })
}

/// Splits writes, in the order they are to go, into commands that never write outside
/// `region` (512-byte sectors of the node: the job's `offset..offset + size`). Each range
/// of `entries` is one command: packed when it holds two or more, else a plain write.
///
/// Every entry must lie inside the region (else `Err` and nothing is to be sent). So must
/// the whole transfer read as one plain write from the first entry's sector, header and
/// data (`blocks` sectors): that is what a card that ignores the packed bit (one without
/// packed commands, sent them with `--force`) stores. A command that would reach past the
/// region's end is cut short, and the writes that did not fit go in the next command (a
/// plain write when only one fits). At most `max_entries` (at least 1) per command.
pub fn split_in_region(
    format: CardFormat,
    entries: &[Entry],
    max_entries: usize,
    region: &std::ops::Range<u64>,
) -> Result<Vec<std::ops::Range<usize>>, PackedError> {
    let mut commands = Vec::new();
    split_in_region_into(format, entries, max_entries, region, &mut commands)?;
    Ok(commands)
}

/// [`split_in_region`] into `commands` (cleared first), so that a caller sending one
/// batch after another reuses one vector.
pub fn split_in_region_into(
    format: CardFormat,
    entries: &[Entry],
    max_entries: usize,
    region: &std::ops::Range<u64>,
    commands: &mut Vec<std::ops::Range<usize>>,
) -> Result<(), PackedError> {
    commands.clear();
    for (index, entry) in entries.iter().enumerate() {
        let end = entry.sector.checked_add(u64::from(entry.sectors));
        if entry.sector < region.start || end.is_none_or(|end| end > region.end) {
            return Err(PackedError::OutsideRegion {
                index: index + 1,
                sector: entry.sector,
                sectors: entry.sectors,
                start: region.start,
                end: region.end,
            });
        }
    }
    let header = u64::from(format.header_blocks());
    let mut from = 0;
    while from < entries.len() {
        let first = entries[from].sector;
        let most = (entries.len() - from).min(max_entries.max(1));
        // The longest run from `from` whose plain-write reading stays inside.
        let mut n = most;
        while n >= 2 {
            let data: Option<u64> = entries[from..from + n]
                .iter()
                .try_fold(header, |sum, e| sum.checked_add(u64::from(e.sectors)));
            let end = data.and_then(|data| first.checked_add(data));
            if end.is_some_and(|end| end <= region.end) {
                break;
            }
            n -= 1;
        }
        let n = n.max(1);
        commands.push(from..from + n);
        from += n;
    }
    Ok(())
}

/// What the card says about a packed command, from EXT_CSD (Linux 4.9
/// `mmc_blk_packed_err_check()`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PackedStatus {
    /// EXP_EVENTS_STATUS [54] bit 3 (PACKED_FAILURE).
    pub failure_event: bool,
    /// PACKED_COMMAND_STATUS [36].
    pub command_status: u8,
    /// PACKED_FAILURE_INDEX [35]: 1-based index of the failed entry.
    pub failure_index: u8,
}

impl PackedStatus {
    pub fn from_ext_csd(ext_csd: &[u8; 512]) -> PackedStatus {
        PackedStatus {
            failure_event: ext_csd[EXT_CSD_EXP_EVENTS_STATUS] & EXT_CSD_PACKED_EVENT != 0,
            command_status: ext_csd[EXT_CSD_PACKED_CMD_STATUS],
            failure_index: ext_csd[EXT_CSD_PACKED_FAILURE_INDEX],
        }
    }

    /// The card reports a failed packed command (generic error bit).
    pub fn failed(&self) -> bool {
        self.command_status & EXT_CSD_PACKED_GENERIC_ERROR != 0
    }

    /// The failed entry, 1-based, when the card names one (indexed error bit).
    pub fn failed_entry(&self) -> Option<u8> {
        (self.failed() && self.command_status & EXT_CSD_PACKED_INDEXED_ERROR != 0)
            .then_some(self.failure_index)
    }

    /// One sentence for messages.
    pub fn describe(&self) -> String {
        let registers = format!(
            "EXT_CSD PACKED_COMMAND_STATUS {:#04x}, PACKED_FAILURE_INDEX {}, \
             EXCEPTION_EVENTS_STATUS PACKED_FAILURE {}",
            self.command_status,
            self.failure_index,
            u8::from(self.failure_event)
        );
        match (self.failed(), self.failed_entry()) {
            (true, Some(i)) => format!("the card failed entry {i} ({registers})"),
            (true, None) => {
                format!("the card failed the packed command, no entry named ({registers})")
            }
            (false, _) => format!("the card reports no packed failure ({registers})"),
        }
    }
}

#[cfg(test)]
#[path = "packed_tests.rs"]
mod tests;
