//! Command and response flags for `mmc_ioc_cmd.flags`, transcribed by hand from the
//! kernel-internal header `include/linux/mmc/core.h` (not exported as uapi; userspace
//! such as mmc-utils copies them the same way).
//!
//! Source: mainline Linux 6.17 (`include/linux/mmc/core.h`, the version carrying the
//! UHS-II and SDUC additions of 6.13-6.15). The values below have not changed since
//! they were introduced; only `MMC_RSP_R1B_NO_CRC` (2024) is recent.

/// Response expected.
pub const MMC_RSP_PRESENT: u32 = 1 << 0;
/// 136-bit response (R2: CID, CSD).
pub const MMC_RSP_136: u32 = 1 << 1;
/// Response carries a valid CRC.
pub const MMC_RSP_CRC: u32 = 1 << 2;
/// Card may signal busy on DAT0 after the response.
pub const MMC_RSP_BUSY: u32 = 1 << 3;
/// Response contains the opcode.
pub const MMC_RSP_OPCODE: u32 = 1 << 4;

/// Mask of the (non-SPI) command type.
pub const MMC_CMD_MASK: u32 = 3 << 5;
/// Addressed command, no data.
pub const MMC_CMD_AC: u32 = 0 << 5;
/// Addressed command with data transfer.
pub const MMC_CMD_ADTC: u32 = 1 << 5;
/// Broadcast command, no response.
pub const MMC_CMD_BC: u32 = 2 << 5;
/// Broadcast command with response.
pub const MMC_CMD_BCR: u32 = 3 << 5;

/// SPI: one status byte.
pub const MMC_RSP_SPI_S1: u32 = 1 << 7;
/// SPI: second status byte.
pub const MMC_RSP_SPI_S2: u32 = 1 << 8;
/// SPI: four data bytes.
pub const MMC_RSP_SPI_B4: u32 = 1 << 9;
/// SPI: card may send busy.
pub const MMC_RSP_SPI_BUSY: u32 = 1 << 10;

/// No response.
pub const MMC_RSP_NONE: u32 = 0;
pub const MMC_RSP_R1: u32 = MMC_RSP_PRESENT | MMC_RSP_CRC | MMC_RSP_OPCODE;
pub const MMC_RSP_R1B: u32 = MMC_RSP_PRESENT | MMC_RSP_CRC | MMC_RSP_OPCODE | MMC_RSP_BUSY;
pub const MMC_RSP_R1B_NO_CRC: u32 = MMC_RSP_PRESENT | MMC_RSP_OPCODE | MMC_RSP_BUSY;
pub const MMC_RSP_R2: u32 = MMC_RSP_PRESENT | MMC_RSP_136 | MMC_RSP_CRC;
pub const MMC_RSP_R3: u32 = MMC_RSP_PRESENT;
pub const MMC_RSP_R4: u32 = MMC_RSP_PRESENT;
pub const MMC_RSP_R5: u32 = MMC_RSP_PRESENT | MMC_RSP_CRC | MMC_RSP_OPCODE;
pub const MMC_RSP_R6: u32 = MMC_RSP_PRESENT | MMC_RSP_CRC | MMC_RSP_OPCODE;
pub const MMC_RSP_R7: u32 = MMC_RSP_PRESENT | MMC_RSP_CRC | MMC_RSP_OPCODE;

pub const MMC_RSP_SPI_R1: u32 = MMC_RSP_SPI_S1;
pub const MMC_RSP_SPI_R1B: u32 = MMC_RSP_SPI_S1 | MMC_RSP_SPI_BUSY;
pub const MMC_RSP_SPI_R2: u32 = MMC_RSP_SPI_S1 | MMC_RSP_SPI_S2;
pub const MMC_RSP_SPI_R3: u32 = MMC_RSP_SPI_S1 | MMC_RSP_SPI_B4;
pub const MMC_RSP_SPI_R4: u32 = MMC_RSP_SPI_S1 | MMC_RSP_SPI_B4;
pub const MMC_RSP_SPI_R5: u32 = MMC_RSP_SPI_S1 | MMC_RSP_SPI_S2;
pub const MMC_RSP_SPI_R7: u32 = MMC_RSP_SPI_S1 | MMC_RSP_SPI_B4;

/// `cmd.arg` bit of CMD23 (SET_BLOCK_COUNT): reliable write.
pub const MMC_CMD23_ARG_REL_WR: u32 = 1 << 31;
/// `cmd.arg` bit of CMD23: packed command (JEDEC 4.5; core.h had it as
/// `MMC_CMD23_ARG_PACKED` while the kernel supported packing, Linux 3.7-4.10).
pub const MMC_CMD23_ARG_PACKED: u32 = 1 << 30;
/// `cmd.arg` bit of CMD23: tag request.
pub const MMC_CMD23_ARG_TAG_REQ: u32 = 1 << 29;
