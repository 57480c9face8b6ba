//! Tests of [`super`]: the raw command built from an [`MmcCmd`], and the kernel's limits
//! refused before any system call.

use super::*;
use crate::mmc_core::{MMC_CMD_AC, MMC_CMD_ADTC, MMC_RSP_R1, MMC_RSP_R1B};
use crate::mmc_proto::{
    MMC_READ_MULTIPLE_BLOCK, MMC_SEND_EXT_CSD, MMC_SET_BLOCK_COUNT, MMC_SWITCH,
    MMC_WRITE_MULTIPLE_BLOCK,
};
use std::string::ToString;
use std::vec;

const R1_ADTC: u32 = MMC_RSP_R1 | MMC_CMD_ADTC;

/// A regular file: any MMC ioctl that reaches the kernel fails with an errno (ENOTTY),
/// so a refusal that is not an `Os` error was made before the system call.
fn not_mmc() -> std::fs::File {
    tempfile::tempfile().unwrap()
}

#[test]
fn raw_command_carries_the_buffer_in_blocks() {
    let mut buf = [0u8; 1024];
    let addr = buf.as_ptr() as usize as u64;
    let mut cmd = MmcCmd::new(MMC_READ_MULTIPLE_BLOCK, 7, R1_ADTC).with_read(&mut buf, 512);
    let raw = cmd.to_raw().unwrap();
    assert_eq!((raw.opcode, raw.arg, raw.flags), (18, 7, R1_ADTC));
    assert_eq!((raw.blksz, raw.blocks, raw.write_flag), (512, 2, 0));
    assert_eq!(raw.data_ptr, addr);

    let data = [0u8; 4096];
    let mut write = MmcCmd::new(MMC_WRITE_MULTIPLE_BLOCK, 0, R1_ADTC)
        .with_write(&data, 512)
        .with_reliable_write()
        .with_cmd_timeout_ms(250)
        .with_data_timeout_ns(1_000_000);
    let raw = write.to_raw().unwrap();
    assert_eq!((raw.blksz, raw.blocks), (512, 8));
    assert_eq!(raw.write_flag, 1 | i32::MIN);
    assert_eq!((raw.cmd_timeout_ms, raw.data_timeout_ns), (250, 1_000_000));
    assert_eq!(raw.data_ptr, data.as_ptr() as usize as u64);

    let mut none = MmcCmd::new(MMC_SWITCH, 0x0321_0101, MMC_RSP_R1B | MMC_CMD_AC);
    let raw = none.to_raw().unwrap();
    assert_eq!(
        (raw.blksz, raw.blocks, raw.data_ptr, raw.write_flag),
        (0, 0, 0, 0)
    );
}

#[test]
fn commands_the_kernel_would_refuse_are_refused_before_the_syscall() {
    let mut big = vec![0u8; MAX_BYTES + 512];
    let mut cmd = MmcCmd::new(MMC_READ_MULTIPLE_BLOCK, 0, R1_ADTC).with_read(&mut big, 512);
    let err = super::cmd(not_mmc(), &mut cmd).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Invalid(Invalid::TooManyBytes {
                opcode: 18,
                bytes
            }) if bytes == MAX_BYTES + 512
        ),
        "{err}"
    );
    assert!(
        err.to_string().contains("MMC_IOC_MAX_BYTES (524288)"),
        "{err}"
    );

    let data = [0u8; 100];
    let mut partial = MmcCmd::new(MMC_WRITE_MULTIPLE_BLOCK, 0, R1_ADTC).with_write(&data, 512);
    assert!(matches!(
        super::cmd(not_mmc(), &mut partial),
        Err(Error::Invalid(Invalid::PartialBlock { bytes: 100, .. }))
    ));
    let mut zero_blksz = [0u8; 512];
    let mut cmd = MmcCmd::new(MMC_SEND_EXT_CSD, 0, R1_ADTC).with_read(&mut zero_blksz, 0);
    assert!(matches!(
        super::cmd(not_mmc(), &mut cmd),
        Err(Error::Invalid(Invalid::PartialBlock { blksz: 0, .. }))
    ));
    let mut read = [0u8; 512];
    let mut reliable_read = MmcCmd::new(MMC_READ_MULTIPLE_BLOCK, 0, R1_ADTC)
        .with_read(&mut read, 512)
        .with_reliable_write();
    assert!(matches!(
        super::cmd(not_mmc(), &mut reliable_read),
        Err(Error::Invalid(Invalid::ReliableWithoutWrite { opcode: 18 }))
    ));
}

#[test]
fn exactly_max_bytes_passes_the_checks_and_reaches_the_kernel() {
    let mut buf = vec![0u8; MAX_BYTES];
    let mut cmd = MmcCmd::new(MMC_READ_MULTIPLE_BLOCK, 0, R1_ADTC).with_read(&mut buf, 512);
    assert_eq!(cmd.to_raw().unwrap().blocks, 1024);
    let err = super::cmd(not_mmc(), &mut cmd).unwrap_err();
    assert!(
        matches!(err, Error::Os(_)),
        "expected the kernel's error, got {err}"
    );
}

#[test]
fn batches_are_limited_to_max_cmds_and_per_command_bytes() {
    let mut none: [MmcCmd; 0] = [];
    assert_eq!(
        multi_cmd(not_mmc(), &mut none).unwrap_err().to_string(),
        "invalid MMC command: MMC_IOC_MULTI_CMD needs at least one command"
    );
    let status = |_| MmcCmd::new(13, 1 << 16, MMC_RSP_R1 | MMC_CMD_AC);
    let mut too_many: [MmcCmd; MAX_CMDS + 1] = core::array::from_fn(status);
    assert!(matches!(
        multi_cmd(not_mmc(), &mut too_many),
        Err(Error::Invalid(Invalid::TooManyCmds { count: 256 }))
    ));
    // MAX_CMDS commands pass the checks and reach the kernel (which refuses a file).
    let mut most: [MmcCmd; MAX_CMDS] = core::array::from_fn(status);
    let err = multi_cmd(not_mmc(), &mut most).unwrap_err();
    assert!(
        matches!(err, Error::Os(_)),
        "expected the kernel's error, got {err}"
    );
    // The byte limit holds per command: two commands of MAX_BYTES each are fine,
    // one of them over it is refused.
    let (mut a, mut b) = (vec![0u8; MAX_BYTES], vec![0u8; MAX_BYTES + 512]);
    let mut batch = [
        MmcCmd::new(MMC_SET_BLOCK_COUNT, 1024, MMC_RSP_R1 | MMC_CMD_AC),
        MmcCmd::new(MMC_READ_MULTIPLE_BLOCK, 0, R1_ADTC).with_read(&mut a, 512),
        MmcCmd::new(MMC_READ_MULTIPLE_BLOCK, 0, R1_ADTC).with_read(&mut b, 512),
    ];
    assert!(matches!(
        multi_cmd(not_mmc(), &mut batch),
        Err(Error::Invalid(Invalid::TooManyBytes { opcode: 18, .. }))
    ));
}

#[test]
fn multi_cmd_buffer_is_the_kernel_header_and_exactly_n_commands() {
    use core::mem::{offset_of, size_of};
    assert_eq!(offset_of!(MultiCmd<3>, cmds), 8);
    assert_eq!(size_of::<MultiCmd<3>>(), 8 + 72 * 3);
    assert_eq!(size_of::<MultiCmd<1>>(), 8 + 72);
    assert_eq!(size_of::<MultiCmd<MAX_CMDS>>(), 8 + 72 * 255);
}
