//! eMMC protocol constants mmcab sends through the ioctl, transcribed by hand from the
//! kernel-internal header `include/linux/mmc/mmc.h` (mainline Linux 6.17; values follow
//! JEDEC JESD84 and have not changed since they were added).

/// CMD6 SWITCH (ac, R1b): `arg` = access << 24 | index << 16 | value << 8 | cmd_set.
pub const MMC_SWITCH: u32 = 6;
/// CMD8 SEND_EXT_CSD (adtc, R1): one 512-byte block.
pub const MMC_SEND_EXT_CSD: u32 = 8;
/// CMD9 SEND_CSD (ac, R2).
pub const MMC_SEND_CSD: u32 = 9;
/// CMD10 SEND_CID (ac, R2).
pub const MMC_SEND_CID: u32 = 10;
/// CMD12 STOP_TRANSMISSION (ac, R1b).
pub const MMC_STOP_TRANSMISSION: u32 = 12;
/// CMD13 SEND_STATUS (ac, R1): `arg` = RCA << 16.
pub const MMC_SEND_STATUS: u32 = 13;
/// CMD16 SET_BLOCKLEN.
pub const MMC_SET_BLOCKLEN: u32 = 16;
/// CMD17 READ_SINGLE_BLOCK.
pub const MMC_READ_SINGLE_BLOCK: u32 = 17;
/// CMD18 READ_MULTIPLE_BLOCK.
pub const MMC_READ_MULTIPLE_BLOCK: u32 = 18;
/// CMD23 SET_BLOCK_COUNT (see `mmc_core::MMC_CMD23_ARG_*` for the flag bits).
pub const MMC_SET_BLOCK_COUNT: u32 = 23;
/// CMD24 WRITE_BLOCK.
pub const MMC_WRITE_BLOCK: u32 = 24;
/// CMD25 WRITE_MULTIPLE_BLOCK.
pub const MMC_WRITE_MULTIPLE_BLOCK: u32 = 25;

/// CMD6 access modes (`arg` bits 25:24).
pub const MMC_SWITCH_MODE_CMD_SET: u32 = 0x00;
pub const MMC_SWITCH_MODE_SET_BITS: u32 = 0x01;
pub const MMC_SWITCH_MODE_CLEAR_BITS: u32 = 0x02;
pub const MMC_SWITCH_MODE_WRITE_BYTE: u32 = 0x03;

/// CMD6 command set (`arg` bits 2:0) for the normal command set.
pub const EXT_CSD_CMD_SET_NORMAL: u8 = 1 << 0;

/// R1 card status bits (CMD13 response, and every R1/R1b response).
pub const R1_OUT_OF_RANGE: u32 = 1 << 31;
pub const R1_ADDRESS_ERROR: u32 = 1 << 30;
pub const R1_BLOCK_LEN_ERROR: u32 = 1 << 29;
pub const R1_ERASE_SEQ_ERROR: u32 = 1 << 28;
pub const R1_ERASE_PARAM: u32 = 1 << 27;
pub const R1_WP_VIOLATION: u32 = 1 << 26;
pub const R1_CARD_IS_LOCKED: u32 = 1 << 25;
pub const R1_LOCK_UNLOCK_FAILED: u32 = 1 << 24;
pub const R1_COM_CRC_ERROR: u32 = 1 << 23;
pub const R1_ILLEGAL_COMMAND: u32 = 1 << 22;
pub const R1_CARD_ECC_FAILED: u32 = 1 << 21;
pub const R1_CC_ERROR: u32 = 1 << 20;
pub const R1_ERROR: u32 = 1 << 19;
pub const R1_UNDERRUN: u32 = 1 << 18;
pub const R1_OVERRUN: u32 = 1 << 17;
pub const R1_CID_CSD_OVERWRITE: u32 = 1 << 16;
pub const R1_WP_ERASE_SKIP: u32 = 1 << 15;
pub const R1_CARD_ECC_DISABLED: u32 = 1 << 14;
pub const R1_ERASE_RESET: u32 = 1 << 13;
pub const R1_READY_FOR_DATA: u32 = 1 << 8;
pub const R1_SWITCH_ERROR: u32 = 1 << 7;
pub const R1_EXCEPTION_EVENT: u32 = 1 << 6;
pub const R1_APP_CMD: u32 = 1 << 5;

/// `R1_STATUS(x)` in mmc.h: the error bits of an R1 status.
pub const R1_ERROR_MASK: u32 = 0xFFF9_A000;

/// `R1_CURRENT_STATE(x)`: card state, bits 12:9.
pub const fn r1_current_state(status: u32) -> u32 {
    (status & 0x0000_1E00) >> 9
}

/// Names of the R1 card states 0..=8 (`R1_STATE_*`), indexed by [`r1_current_state`].
pub const R1_STATE_NAMES: [&str; 9] = [
    "idle", "ready", "ident", "stby", "tran", "data", "rcv", "prg", "dis",
];
