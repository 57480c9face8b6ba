//! The MMC block ioctls mmcab sends (CMD8 SEND_EXT_CSD, CMD6 SWITCH, CMD13 SEND_STATUS),
//! over the safe interface of `linux_uapi::mmc` (which hands memory to the kernel and
//! checks the kernel's limits), with errors that say what to do.
//!
//! The kernel (`drivers/mmc/core/block.c`, `mmc_blk_check_blkdev`) answers EPERM both
//! without CAP_SYS_RAWIO and on a partition node; the error tells the two apart by
//! looking at the node's sysfs entry.

use super::ext_csd_table::{EXT_CSD_REV, GENERIC_CMD6_TIME};
use linux_uapi::mmc::{self, MmcCmd};
use linux_uapi::mmc_core::{MMC_CMD_AC, MMC_CMD_ADTC, MMC_RSP_R1, MMC_RSP_R1B};
use linux_uapi::mmc_proto::{
    r1_current_state, EXT_CSD_CMD_SET_NORMAL, MMC_SEND_EXT_CSD, MMC_SEND_STATUS, MMC_SWITCH,
    MMC_SWITCH_MODE_WRITE_BYTE, R1_ERROR_MASK, R1_STATE_NAMES, R1_SWITCH_ERROR,
};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The RCA Linux gives every eMMC (`mmc_init_card`: `card->rca = 1`).
pub const EMMC_RCA: u16 = 1;

/// EXT_CSD bytes a CMD6 SWITCH can write: 0..=191, the modes segment. CMD6's argument
/// carries the index in one byte (bits 23:16), so 256..=511 cannot even be addressed, and
/// 192..=511 are the properties segment, which the card reports and nothing writes
/// (JEDEC JESD84-B51, 7.4 "Extended CSD register"). A larger index cast into the byte
/// would switch another field: 308 (CMDQ_SUPPORT) becomes 52.
pub const SWITCH_INDEX_LIMIT: usize = 192;

/// An EXT_CSD index CMD6 SWITCH may write (below [`SWITCH_INDEX_LIMIT`]); the only way to
/// name the byte [`switch`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SwitchIndex(u8);

/// Why an EXT_CSD index cannot be switched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SwitchIndexError {
    #[error("EXT_CSD has 512 bytes (0-511): there is no byte {0}")]
    NoSuchByte(usize),
    #[error(
        "EXT_CSD[{0}] cannot be switched: CMD6 carries the index in one byte (0-255), and \
         {0} lies in the read-only properties segment (192-511)"
    )]
    DoesNotFit(usize),
    #[error(
        "EXT_CSD[{0}] cannot be switched: it lies in the read-only properties segment \
         (192-511); CMD6 writes only the modes segment (0-191)"
    )]
    PropertiesSegment(usize),
}

impl SwitchIndex {
    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

impl TryFrom<usize> for SwitchIndex {
    type Error = SwitchIndexError;

    fn try_from(index: usize) -> Result<SwitchIndex, SwitchIndexError> {
        match index {
            512.. => Err(SwitchIndexError::NoSuchByte(index)),
            256.. => Err(SwitchIndexError::DoesNotFit(index)),
            SWITCH_INDEX_LIMIT.. => Err(SwitchIndexError::PropertiesSegment(index)),
            _ => Ok(SwitchIndex(index as u8)),
        }
    }
}

impl std::fmt::Display for SwitchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// What went wrong talking to the card, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum MmcIoctlError {
    #[error("{dev}: the MMC ioctl was refused (EPERM): run as root (it needs CAP_SYS_RAWIO)")]
    PermissionDenied { dev: PathBuf },
    #[error(
        "{dev}: is partition {partition} of {whole}; the MMC ioctl needs the whole device: use {whole}"
    )]
    Partition {
        dev: PathBuf,
        partition: String,
        whole: PathBuf,
    },
    #[error("{dev}: not an MMC block device (the MMC ioctl returned {errno}): pass /dev/mmcblkN of an eMMC or SD card")]
    NotMmc { dev: PathBuf, errno: String },
    #[error("{dev}: CMD{opcode} failed: {source}")]
    Command {
        dev: PathBuf,
        opcode: u32,
        source: std::io::Error,
    },
    #[error("{dev}: CMD6 SWITCH of EXT_CSD[{index}] to {value:#04x} was refused by the card (status {status:#010x}, SWITCH_ERROR): the field or value is not writable on this card")]
    SwitchError {
        dev: PathBuf,
        index: SwitchIndex,
        value: u8,
        status: u32,
    },
    #[error("{dev}: CMD{opcode}: card status {status:#010x} has error bits {bits:#010x} (state {state})")]
    CardStatus {
        dev: PathBuf,
        opcode: u32,
        status: u32,
        bits: u32,
        state: &'static str,
    },
    #[error(
        "{dev}: CMD{opcode}: the kernel refused the data size (EOVERFLOW): its \
         MMC_IOC_MAX_BYTES is below the {} KiB mmcab was built with (Linux 4.9 has 128 KiB): \
         use a smaller bs or fewer packed entries",
        mmc::MAX_BYTES / 1024
    )]
    DataTooLarge { dev: PathBuf, opcode: u32 },
    #[error("{0}")]
    Invalid(mmc::Invalid),
}

/// The path behind an open file, for error messages (`/proc/self/fd/N`).
fn dev_path(dev: &File) -> PathBuf {
    std::fs::read_link(format!("/proc/self/fd/{}", dev.as_raw_fd()))
        .unwrap_or_else(|_| PathBuf::from(format!("fd {}", dev.as_raw_fd())))
}

/// If `dev` is a partition node, its partition name and whole-disk node.
fn partition_of(dev: &File) -> Option<(String, PathBuf)> {
    let meta = dev.metadata().ok()?;
    if !meta.file_type().is_block_device() {
        return None;
    }
    let rdev = meta.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if !sys.join("partition").exists() {
        return None;
    }
    let part = std::fs::canonicalize(&sys).ok()?;
    let name = part.file_name()?.to_string_lossy().into_owned();
    let whole = part.parent()?.file_name()?.to_string_lossy().into_owned();
    Some((name, Path::new("/dev").join(whole)))
}

fn map_errno(dev: &File, opcode: u32, err: std::io::Error) -> MmcIoctlError {
    let path = dev_path(dev);
    match err.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => match partition_of(dev) {
            Some((partition, whole)) => MmcIoctlError::Partition {
                dev: path,
                partition,
                whole,
            },
            None => MmcIoctlError::PermissionDenied { dev: path },
        },
        Some(libc::ENOTTY) => MmcIoctlError::NotMmc {
            dev: path,
            errno: "ENOTTY".into(),
        },
        Some(libc::EOVERFLOW) => MmcIoctlError::DataTooLarge { dev: path, opcode },
        Some(libc::EINVAL) if !is_mmc_major(dev) => MmcIoctlError::NotMmc {
            dev: path,
            errno: "EINVAL".into(),
        },
        _ => MmcIoctlError::Command {
            dev: path,
            opcode,
            source: err,
        },
    }
}

fn is_mmc_major(dev: &File) -> bool {
    dev.metadata()
        .map(|m| {
            m.file_type().is_block_device() && libc::major(m.rdev()) == linux_uapi::MMC_BLOCK_MAJOR
        })
        .unwrap_or(false)
}

/// Sends one command (`MMC_IOC_CMD`); the card's response is in `cmd.response()` after.
pub fn command(dev: &File, cmd: &mut MmcCmd<'_>) -> Result<(), MmcIoctlError> {
    let opcode = cmd.opcode();
    mmc::cmd(dev, cmd).map_err(|err| map_error(dev, opcode, err))
}

/// Sends up to [`mmc::MAX_CMDS`] commands in one request (`MMC_IOC_MULTI_CMD`): the
/// kernel issues them back to back with the host claimed, e.g. CMD23 + CMD25 + data.
/// The kernel's struct for them is sized to the batch, on the stack (nothing allocated).
pub fn multi_cmd<const N: usize>(
    dev: &File,
    cmds: &mut [MmcCmd<'_>; N],
) -> Result<(), MmcIoctlError> {
    let opcode = cmds.first().map_or(0, MmcCmd::opcode);
    mmc::multi_cmd(dev, cmds).map_err(|err| map_error(dev, opcode, err))
}

fn map_error(dev: &File, opcode: u32, err: mmc::Error) -> MmcIoctlError {
    match err {
        mmc::Error::Invalid(invalid) => MmcIoctlError::Invalid(invalid),
        mmc::Error::Os(err) => map_errno(dev, opcode, err),
    }
}

/// CMD8 SEND_EXT_CSD: the card's 512-byte EXT_CSD register (eMMC only).
pub fn read_ext_csd(dev: &File) -> Result<[u8; 512], MmcIoctlError> {
    let mut ext_csd = [0u8; 512];
    let mut cmd =
        MmcCmd::new(MMC_SEND_EXT_CSD, 0, MMC_RSP_R1 | MMC_CMD_ADTC).with_read(&mut ext_csd, 512);
    command(dev, &mut cmd)?;
    check_status(dev, MMC_SEND_EXT_CSD, cmd.response()[0])?;
    Ok(ext_csd)
}

/// CMD13 SEND_STATUS: the card's R1 status word (`rca`: 1 for every eMMC under Linux;
/// SD cards have the RCA in sysfs `rca`).
pub fn send_status(dev: &File, rca: u16) -> Result<u32, MmcIoctlError> {
    let mut cmd = MmcCmd::new(
        MMC_SEND_STATUS,
        u32::from(rca) << 16,
        super::transfer::FLAGS_STATUS,
    );
    command(dev, &mut cmd)?;
    Ok(cmd.response()[0])
}

/// The CMD6 busy timeout for this card: GENERIC_CMD6_TIME x 10 ms when EXT_CSD_REV >= 6
/// defines it and it is non-zero; None otherwise (the kernel's default then applies).
pub fn cmd6_timeout_ms(ext_csd: &[u8; 512]) -> Option<u32> {
    let t = ext_csd[GENERIC_CMD6_TIME.offset];
    (ext_csd[EXT_CSD_REV.offset] >= 6 && t > 0).then(|| u32::from(t) * 10)
}

/// CMD6 SWITCH, access mode "write byte": byte `index` of EXT_CSD = `value` (R1b, the card
/// signals busy until done). The busy timeout is GENERIC_CMD6_TIME read from the card
/// first, when known. A following CMD13 checks SWITCH_ERROR.
pub fn switch(dev: &File, index: SwitchIndex, value: u8, cmd_set: u8) -> Result<(), MmcIoctlError> {
    let timeout = read_ext_csd(dev).ok().as_ref().and_then(cmd6_timeout_ms);
    switch_with_timeout(dev, index, value, cmd_set, timeout)
}

/// CMD6's argument for access mode "write byte": byte `index` of EXT_CSD = `value`.
pub fn switch_arg(index: SwitchIndex, value: u8, cmd_set: u8) -> u32 {
    (MMC_SWITCH_MODE_WRITE_BYTE << 24)
        | (u32::from(index.0) << 16)
        | (u32::from(value) << 8)
        | u32::from(cmd_set)
}

/// [`switch`] with an explicit busy timeout (None: the kernel's default).
pub fn switch_with_timeout(
    dev: &File,
    index: SwitchIndex,
    value: u8,
    cmd_set: u8,
    timeout_ms: Option<u32>,
) -> Result<(), MmcIoctlError> {
    let arg = switch_arg(index, value, cmd_set);
    let mut cmd = MmcCmd::new(MMC_SWITCH, arg, MMC_RSP_R1B | MMC_CMD_AC)
        .with_cmd_timeout_ms(timeout_ms.unwrap_or(0));
    command(dev, &mut cmd)?;
    check_status(dev, MMC_SWITCH, cmd.response()[0])?;
    let status = send_status(dev, EMMC_RCA)?;
    if status & R1_SWITCH_ERROR != 0 {
        return Err(MmcIoctlError::SwitchError {
            dev: dev_path(dev),
            index,
            value,
            status,
        });
    }
    check_status(dev, MMC_SEND_STATUS, status)
}

/// The usual cmd set argument of [`switch`].
pub const CMD_SET_NORMAL: u8 = EXT_CSD_CMD_SET_NORMAL;

fn check_status(dev: &File, opcode: u32, status: u32) -> Result<(), MmcIoctlError> {
    let bits = status & R1_ERROR_MASK;
    if bits == 0 {
        return Ok(());
    }
    Err(MmcIoctlError::CardStatus {
        dev: dev_path(dev),
        opcode,
        status,
        bits,
        state: state_name(status),
    })
}

/// Name of the card state in an R1 status ("tran", "prg", ...).
pub fn state_name(status: u32) -> &'static str {
    R1_STATE_NAMES
        .get(r1_current_state(status) as usize)
        .copied()
        .unwrap_or("reserved")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_argument_is_write_byte_index_value_cmdset() {
        // CACHE_CTRL (33) = 1, the CMD6 tried in the testbed (testbed/README.md): the argument
        // mmc-utils' `mmc extcsd write 0x21 1` sends.
        let index = SwitchIndex::try_from(33).unwrap();
        assert_eq!(switch_arg(index, 1, CMD_SET_NORMAL), 0x0321_0101);
    }

    #[test]
    fn switch_index_must_fit_the_argument_and_the_modes_segment() {
        // CMDQ_SUPPORT (308): cast into the argument's byte it would switch byte 52.
        let err = SwitchIndex::try_from(308).unwrap_err();
        assert_eq!(err, SwitchIndexError::DoesNotFit(308));
        assert!(err.to_string().contains("one byte (0-255)"), "{err}");
        // EXT_CSD_REV (192): addressable, but the first byte of the properties segment.
        let err = SwitchIndex::try_from(192).unwrap_err();
        assert_eq!(err, SwitchIndexError::PropertiesSegment(192));
        assert!(
            err.to_string().contains("read-only properties segment"),
            "{err}"
        );
        assert_eq!(
            SwitchIndex::try_from(512),
            Err(SwitchIndexError::NoSuchByte(512))
        );
        // 191 (the last modes byte) and CACHE_CTRL (33) are switchable.
        assert_eq!(SwitchIndex::try_from(191).unwrap().get(), 191);
        let arg = switch_arg(SwitchIndex::try_from(191).unwrap(), 0xab, CMD_SET_NORMAL);
        assert_eq!((arg >> 16) & 0xff, 191);
        assert_eq!(SwitchIndex::try_from(33).unwrap().get(), 33);
    }

    #[test]
    fn cmd6_timeout_only_from_rev6_and_nonzero() {
        let mut e = [0u8; 512];
        e[GENERIC_CMD6_TIME.offset] = 5;
        e[EXT_CSD_REV.offset] = 3;
        assert_eq!(cmd6_timeout_ms(&e), None);
        e[EXT_CSD_REV.offset] = 8;
        assert_eq!(cmd6_timeout_ms(&e), Some(50));
        e[GENERIC_CMD6_TIME.offset] = 0;
        assert_eq!(cmd6_timeout_ms(&e), None);
    }

    #[test]
    fn status_0x900_is_tran_and_ready() {
        // The emulated card's CMD6 answer (testbed/README.md): R1 0x900.
        assert_eq!(state_name(0x900), "tran");
        assert_eq!(0x900 & R1_ERROR_MASK, 0);
    }

    #[test]
    fn a_bad_command_is_refused_before_the_kernel_sees_it() {
        // On a regular file the kernel would answer ENOTTY (NotMmc): Invalid means the
        // command never reached it.
        let f = tempfile::tempfile().unwrap();
        let data = [0u8; 100];
        let mut bad = MmcCmd::new(25, 0, MMC_RSP_R1 | MMC_CMD_ADTC).with_write(&data, 512);
        let err = command(&f, &mut bad).unwrap_err();
        assert!(matches!(err, MmcIoctlError::Invalid(_)), "{err}");
        assert!(err.to_string().contains("CMD25: data length 100"), "{err}");
        let mut none: [MmcCmd; 0] = [];
        let err = multi_cmd(&f, &mut none).unwrap_err();
        assert!(matches!(err, MmcIoctlError::Invalid(_)), "{err}");
        let mut fine = [MmcCmd::new(
            MMC_SEND_STATUS,
            1 << 16,
            MMC_RSP_R1 | MMC_CMD_AC,
        )];
        let err = multi_cmd(&f, &mut fine).unwrap_err();
        assert!(matches!(err, MmcIoctlError::NotMmc { .. }), "{err}");
    }

    #[test]
    fn ext_csd_on_a_regular_file_is_not_mmc() {
        let f = tempfile::tempfile().unwrap();
        let err = read_ext_csd(&f).unwrap_err();
        assert!(matches!(err, MmcIoctlError::NotMmc { .. }), "{err}");
        assert!(err.to_string().contains("not an MMC block device"));
    }
}
