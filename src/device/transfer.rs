//! The commands of one data transfer as mmcab sends them in one `MMC_IOC_MULTI_CMD`, and
//! the card status bits it checks afterwards. Pure: [`super::mmc_io`] sends them.
//!
//! - read: CMD23 (block count) + CMD18 (READ_MULTIPLE_BLOCK);
//! - write: CMD23 + CMD25 (WRITE_MULTIPLE_BLOCK) + CMD13 (SEND_STATUS);
//! - packed write: CMD23 with the packed bit + CMD25 of header and entries + CMD13.
//!
//! A CMD23 directly before a CMD18/CMD25 of one batch becomes that transfer's
//! SET_BLOCK_COUNT (`mrq.sbc`, argument unchanged) on kernels with commit 4d0c8d0aef63;
//! older kernels send it as a command of its own, then the data command. The flags are
//! those the block driver gives the same commands (`drivers/mmc/core/block.c`:
//! `MMC_RSP_R1 | MMC_CMD_AC` for CMD23, `MMC_RSP_SPI_R1 | MMC_RSP_R1 | MMC_CMD_ADTC` for
//! CMD18/CMD25; `mmc_send_status()`: `MMC_RSP_SPI_R2 | MMC_RSP_R1 | MMC_CMD_AC`). The
//! kernel converts no address for an ioctl: arguments are sector or byte addresses as
//! the card takes them ([`super::packed::Addressing`]).

use linux_uapi::mmc::MmcCmd;
use linux_uapi::mmc_core::{MMC_CMD_AC, MMC_CMD_ADTC, MMC_RSP_R1, MMC_RSP_SPI_R1, MMC_RSP_SPI_R2};
use linux_uapi::mmc_proto::{
    r1_current_state, MMC_READ_MULTIPLE_BLOCK, MMC_SEND_STATUS, MMC_SET_BLOCK_COUNT,
    MMC_WRITE_MULTIPLE_BLOCK, R1_ADDRESS_ERROR, R1_BLOCK_LEN_ERROR, R1_CARD_ECC_FAILED,
    R1_CC_ERROR, R1_ERROR, R1_EXCEPTION_EVENT, R1_OUT_OF_RANGE, R1_READY_FOR_DATA, R1_WP_VIOLATION,
};
use std::fmt;

/// The two command arguments and the transfer length of one packed write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedArgs {
    /// CMD23: `MMC_CMD23_ARG_PACKED` | `blocks`.
    pub sbc_arg: u32,
    /// CMD25: the first entry's address.
    pub cmd25_arg: u32,
    /// 512-byte blocks of the transfer, header included.
    pub blocks: u32,
    pub entries: usize,
}

/// The data block size of every transfer.
pub const BLOCK: u32 = 512;
/// CMD23 as the block driver sends it.
pub const FLAGS_SBC: u32 = MMC_RSP_R1 | MMC_CMD_AC;
/// CMD18 / CMD25 as the block driver sends them.
pub const FLAGS_DATA: u32 = MMC_RSP_SPI_R1 | MMC_RSP_R1 | MMC_CMD_ADTC;
/// CMD13 as `mmc_send_status()` sends it.
pub const FLAGS_STATUS: u32 = MMC_RSP_SPI_R2 | MMC_RSP_R1 | MMC_CMD_AC;

/// The R1 bits the block driver treats as a failed read or write (`CMD_ERRORS` in
/// `drivers/mmc/core/block.c`).
pub const CMD_ERRORS: u32 = R1_OUT_OF_RANGE
    | R1_ADDRESS_ERROR
    | R1_BLOCK_LEN_ERROR
    | R1_WP_VIOLATION
    | R1_CARD_ECC_FAILED
    | R1_CC_ERROR
    | R1_ERROR;

/// Names of the R1 bits mmcab reports, as `include/linux/mmc/mmc.h` names them.
const R1_NAMES: &[(u32, &str)] = &[
    (R1_OUT_OF_RANGE, "OUT_OF_RANGE"),
    (R1_ADDRESS_ERROR, "ADDRESS_ERROR"),
    (R1_BLOCK_LEN_ERROR, "BLOCK_LEN_ERROR"),
    (R1_WP_VIOLATION, "WP_VIOLATION"),
    (R1_CARD_ECC_FAILED, "CARD_ECC_FAILED"),
    (R1_CC_ERROR, "CC_ERROR"),
    (R1_ERROR, "ERROR"),
    (R1_EXCEPTION_EVENT, "EXCEPTION_EVENT"),
];

/// The data phase of a command, in 512-byte blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    None,
    Read(u32),
    Write(u32),
}

/// One command of a batch, without its buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CmdSpec {
    pub opcode: u32,
    pub arg: u32,
    pub flags: u32,
    pub data: Data,
}

impl fmt::Display for CmdSpec {
    /// `CMD25 arg=0x00001000 flags=0xb5 write 25x512`: the form the fixture pins.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "CMD{} arg={:#010x} flags={:#x}",
            self.opcode, self.arg, self.flags
        )?;
        match self.data {
            Data::None => Ok(()),
            Data::Read(blocks) => write!(f, " read {blocks}x{BLOCK}"),
            Data::Write(blocks) => write!(f, " write {blocks}x{BLOCK}"),
        }
    }
}

fn sbc(arg: u32) -> CmdSpec {
    CmdSpec {
        opcode: MMC_SET_BLOCK_COUNT,
        arg,
        flags: FLAGS_SBC,
        data: Data::None,
    }
}

/// CMD13 to the card with relative address `rca`.
pub fn status(rca: u16) -> CmdSpec {
    CmdSpec {
        opcode: MMC_SEND_STATUS,
        arg: u32::from(rca) << 16,
        flags: FLAGS_STATUS,
        data: Data::None,
    }
}

/// Read `blocks` blocks at card address `address`.
pub fn read(address: u32, blocks: u32) -> [CmdSpec; 2] {
    [
        sbc(blocks),
        CmdSpec {
            opcode: MMC_READ_MULTIPLE_BLOCK,
            arg: address,
            flags: FLAGS_DATA,
            data: Data::Read(blocks),
        },
    ]
}

/// Write `blocks` blocks at card address `address`, then ask for the card's status.
pub fn write(address: u32, blocks: u32, rca: u16) -> [CmdSpec; 3] {
    [
        sbc(blocks),
        CmdSpec {
            opcode: MMC_WRITE_MULTIPLE_BLOCK,
            arg: address,
            flags: FLAGS_DATA,
            data: Data::Write(blocks),
        },
        status(rca),
    ]
}

/// A packed write ([`super::packed::write_header`]'s arguments), then the status.
pub fn packed_write(args: &PackedArgs, rca: u16) -> [CmdSpec; 3] {
    [
        sbc(args.sbc_arg),
        CmdSpec {
            opcode: MMC_WRITE_MULTIPLE_BLOCK,
            arg: args.cmd25_arg,
            flags: FLAGS_DATA,
            data: Data::Write(args.blocks),
        },
        status(rca),
    ]
}

/// The command of `spec` without data.
pub fn no_data(spec: &CmdSpec) -> MmcCmd<'static> {
    MmcCmd::new(spec.opcode, spec.arg, spec.flags)
}

/// The command of `spec`, reading into `buf` (which the spec's block count must fill).
pub fn with_read<'a>(spec: &CmdSpec, buf: &'a mut [u8]) -> MmcCmd<'a> {
    debug_assert_eq!(spec.data, Data::Read((buf.len() / BLOCK as usize) as u32));
    no_data(spec).with_read(buf, BLOCK)
}

/// The command of `spec`, writing `buf`.
pub fn with_write<'a>(spec: &CmdSpec, buf: &'a [u8]) -> MmcCmd<'a> {
    debug_assert_eq!(spec.data, Data::Write((buf.len() / BLOCK as usize) as u32));
    no_data(spec).with_write(buf, BLOCK)
}

/// The card is in the transfer state and ready for data (`mmc_ready_for_data()`): a
/// write's programming is over.
pub fn ready_for_data(status: u32) -> bool {
    status & R1_READY_FOR_DATA != 0 && r1_current_state(status) == 4
}

/// The [`CMD_ERRORS`] bits of an R1 status.
pub fn error_bits(status: u32) -> u32 {
    status & CMD_ERRORS
}

/// `ADDRESS_ERROR|OUT_OF_RANGE`: the named bits of `bits`.
pub fn bit_names(bits: u32) -> String {
    let names: Vec<&str> = R1_NAMES
        .iter()
        .filter(|(bit, _)| bits & bit != 0)
        .map(|(_, name)| *name)
        .collect();
    if names.is_empty() {
        format!("{bits:#010x}")
    } else {
        names.join("|")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_the_block_drivers() {
        assert_eq!(FLAGS_SBC, 0x15);
        assert_eq!(FLAGS_DATA, 0xb5);
        assert_eq!(FLAGS_STATUS, 0x195);
        assert_eq!(CMD_ERRORS, 0xe438_0000);
    }

    #[test]
    fn sequences_read_and_write() {
        let r: Vec<String> = read(0x1000, 8).iter().map(|c| c.to_string()).collect();
        assert_eq!(
            r,
            [
                "CMD23 arg=0x00000008 flags=0x15",
                "CMD18 arg=0x00001000 flags=0xb5 read 8x512"
            ]
        );
        let w: Vec<String> = write(0x200000, 128, 1)
            .iter()
            .map(|c| c.to_string())
            .collect();
        assert_eq!(
            w,
            [
                "CMD23 arg=0x00000080 flags=0x15",
                "CMD25 arg=0x00200000 flags=0xb5 write 128x512",
                "CMD13 arg=0x00010000 flags=0x195"
            ]
        );
    }

    #[test]
    fn status_words() {
        // The emulated card's answer after a write: 0x900 (tran, ready for data).
        assert!(ready_for_data(0x900));
        assert_eq!(error_bits(0x900), 0);
        // prg (7) is still busy; rcv (6) too.
        assert!(!ready_for_data(0xe00));
        assert!(!ready_for_data(0xd00));
        let bad = 0x900 | R1_ADDRESS_ERROR | R1_OUT_OF_RANGE;
        assert_eq!(bit_names(error_bits(bad)), "OUT_OF_RANGE|ADDRESS_ERROR");
        assert_eq!(bit_names(R1_EXCEPTION_EVENT), "EXCEPTION_EVENT");
    }
}
