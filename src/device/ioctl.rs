//! Safe wrappers around the MMC block ioctls (`MMC_IOC_CMD`, `MMC_IOC_MULTI_CMD`).
//!
//! This is the only file outside `linux-uapi` with `unsafe`: every block hands the kernel
//! a pointer to memory that outlives the call and has the size the command says.
//!
//! The kernel (`drivers/mmc/core/block.c`, `mmc_blk_check_blkdev`) answers EPERM both
//! without CAP_SYS_RAWIO and on a partition node; the error tells the two apart by
//! looking at the node's sysfs entry.

use linux_uapi::mmc_core::{MMC_CMD_AC, MMC_CMD_ADTC, MMC_RSP_R1, MMC_RSP_R1B};
use linux_uapi::mmc_proto::{
    r1_current_state, EXT_CSD_CMD_SET_NORMAL, MMC_SEND_EXT_CSD, MMC_SEND_STATUS, MMC_SWITCH,
    MMC_SWITCH_MODE_WRITE_BYTE, R1_ERROR_MASK, R1_STATE_NAMES, R1_SWITCH_ERROR,
};
use linux_uapi::{
    mmc_ioc_cmd, MMC_IOC_CMD, MMC_IOC_MAX_BYTES, MMC_IOC_MAX_CMDS, MMC_IOC_MULTI_CMD,
};
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

/// EXT_CSD byte offset of GENERIC_CMD6_TIME (units of 10 ms, EXT_CSD_REV >= 6).
const EXT_CSD_GENERIC_CMD6_TIME: usize = 248;
/// EXT_CSD byte offset of EXT_CSD_REV.
const EXT_CSD_REV: usize = 192;
/// The RCA Linux gives every eMMC (`mmc_init_card`: `card->rca = 1`).
pub const EMMC_RCA: u16 = 1;

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
        index: u8,
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
    #[error("invalid MMC command list: {0}")]
    Invalid(String),
}

/// Data phase of one command.
#[derive(Debug)]
pub enum Data<'a> {
    None,
    /// Card to host: the buffer is filled (length = blksz x blocks).
    Read(&'a mut [u8]),
    /// Host to card.
    Write(&'a [u8]),
}

/// One command for [`command`] / [`multi_cmd`]; `response` holds the card's answer after.
#[derive(Debug)]
pub struct MmcCommand<'a> {
    pub opcode: u32,
    pub arg: u32,
    /// `MMC_RSP_* | MMC_CMD_*` from `linux_uapi::mmc_core`.
    pub flags: u32,
    /// Block size of the data phase in bytes (usually 512); ignored without data.
    pub blksz: u32,
    pub data: Data<'a>,
    /// Busy/response timeout in ms (0: the kernel's default).
    pub cmd_timeout_ms: u32,
    /// Set bit 31 of `write_flag` (reliable write, RPMB).
    pub reliable_write: bool,
    pub response: [u32; 4],
}

impl<'a> MmcCommand<'a> {
    pub fn new(opcode: u32, arg: u32, flags: u32) -> Self {
        MmcCommand {
            opcode,
            arg,
            flags,
            blksz: 512,
            data: Data::None,
            cmd_timeout_ms: 0,
            reliable_write: false,
            response: [0; 4],
        }
    }

    fn raw_for_kernel(&mut self) -> Result<mmc_ioc_cmd, MmcIoctlError> {
        let mut raw = mmc_ioc_cmd::zeroed();
        raw.opcode = self.opcode;
        raw.arg = self.arg;
        raw.flags = self.flags;
        raw.cmd_timeout_ms = self.cmd_timeout_ms;
        let (ptr, len, write) = match &mut self.data {
            Data::None => (0u64, 0usize, false),
            Data::Read(buf) => (buf.as_mut_ptr() as u64, buf.len(), false),
            Data::Write(buf) => (buf.as_ptr() as u64, buf.len(), true),
        };
        if len > 0 {
            if self.blksz == 0 || len % self.blksz as usize != 0 {
                return Err(MmcIoctlError::Invalid(format!(
                    "CMD{}: data length {len} is not a multiple of blksz {}",
                    self.opcode, self.blksz
                )));
            }
            raw.blksz = self.blksz;
            raw.blocks = (len / self.blksz as usize) as u32;
            raw.data_ptr = ptr;
        }
        raw.write_flag = i32::from(write) | if self.reliable_write { i32::MIN } else { 0 };
        Ok(raw)
    }

    fn data_len(&self) -> usize {
        match &self.data {
            Data::None => 0,
            Data::Read(b) => b.len(),
            Data::Write(b) => b.len(),
        }
    }
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

/// Sends one command (`MMC_IOC_CMD`) and stores the card's response in `cmd.response`.
pub fn command(dev: &File, cmd: &mut MmcCommand<'_>) -> Result<(), MmcIoctlError> {
    if cmd.data_len() > MMC_IOC_MAX_BYTES as usize {
        return Err(MmcIoctlError::Invalid(format!(
            "CMD{}: {} bytes exceed MMC_IOC_MAX_BYTES ({MMC_IOC_MAX_BYTES})",
            cmd.opcode,
            cmd.data_len()
        )));
    }
    let mut raw = cmd.raw_for_kernel()?;
    // SAFETY: `raw` is a valid, initialised `struct mmc_ioc_cmd` that lives across the
    // call; its data_ptr is either 0 or points to `cmd.data`'s buffer of exactly
    // blksz x blocks bytes, borrowed (mutably for reads) for the duration of the call.
    let rc = unsafe { libc::ioctl(dev.as_raw_fd(), MMC_IOC_CMD as libc::Ioctl, &mut raw) };
    if rc < 0 {
        return Err(map_errno(dev, cmd.opcode, std::io::Error::last_os_error()));
    }
    cmd.response = raw.response;
    Ok(())
}

/// Sends up to `MMC_IOC_MAX_CMDS` commands in one request (`MMC_IOC_MULTI_CMD`): the
/// kernel issues them back to back with the host claimed, e.g. CMD23 + CMD25 + data.
pub fn multi_cmd(dev: &File, cmds: &mut [MmcCommand<'_>]) -> Result<(), MmcIoctlError> {
    if cmds.is_empty() || cmds.len() > MMC_IOC_MAX_CMDS as usize {
        return Err(MmcIoctlError::Invalid(format!(
            "{} commands: MMC_IOC_MULTI_CMD takes 1 to {MMC_IOC_MAX_CMDS}",
            cmds.len()
        )));
    }
    let total: usize = cmds.iter().map(MmcCommand::data_len).sum();
    if total > MMC_IOC_MAX_BYTES as usize {
        return Err(MmcIoctlError::Invalid(format!(
            "{total} bytes of data exceed MMC_IOC_MAX_BYTES ({MMC_IOC_MAX_BYTES})"
        )));
    }
    // struct mmc_ioc_multi_cmd { __u64 num_of_cmds; struct mmc_ioc_cmd cmds[]; } in a
    // u64 buffer, so the 8-byte alignment of both parts is guaranteed.
    const WORDS: usize = linux_uapi::MMC_IOC_CMD_SIZE / 8;
    let mut buf = vec![0u64; 1 + WORDS * cmds.len()];
    buf[0] = cmds.len() as u64;
    for (i, cmd) in cmds.iter_mut().enumerate() {
        let raw = cmd.raw_for_kernel()?;
        // SAFETY: slot i starts at word 1 + i*9, is 8-byte aligned and 72 bytes long,
        // inside `buf`; mmc_ioc_cmd is plain old data of exactly that size and alignment.
        unsafe {
            buf.as_mut_ptr()
                .add(1 + i * WORDS)
                .cast::<mmc_ioc_cmd>()
                .write(raw)
        };
    }
    // SAFETY: `buf` holds num_of_cmds followed by that many valid mmc_ioc_cmd; each
    // data_ptr points into a buffer borrowed from `cmds` for the duration of the call.
    let rc = unsafe {
        libc::ioctl(
            dev.as_raw_fd(),
            MMC_IOC_MULTI_CMD as libc::Ioctl,
            buf.as_mut_ptr(),
        )
    };
    if rc < 0 {
        let opcode = cmds[0].opcode;
        return Err(map_errno(dev, opcode, std::io::Error::last_os_error()));
    }
    for (i, cmd) in cmds.iter_mut().enumerate() {
        // SAFETY: same slot as written above; the kernel filled in `response`.
        let raw = unsafe { buf.as_ptr().add(1 + i * WORDS).cast::<mmc_ioc_cmd>().read() };
        cmd.response = raw.response;
    }
    Ok(())
}

/// CMD8 SEND_EXT_CSD: the card's 512-byte EXT_CSD register (eMMC only).
pub fn read_ext_csd(dev: &File) -> Result<[u8; 512], MmcIoctlError> {
    let mut ext_csd = [0u8; 512];
    let mut cmd = MmcCommand::new(MMC_SEND_EXT_CSD, 0, MMC_RSP_R1 | MMC_CMD_ADTC);
    cmd.data = Data::Read(&mut ext_csd);
    command(dev, &mut cmd)?;
    check_status(dev, MMC_SEND_EXT_CSD, cmd.response[0])?;
    Ok(ext_csd)
}

/// CMD13 SEND_STATUS: the card's R1 status word (`rca`: 1 for every eMMC under Linux;
/// SD cards have the RCA in sysfs `rca`).
pub fn send_status(dev: &File, rca: u16) -> Result<u32, MmcIoctlError> {
    let mut cmd = MmcCommand::new(
        MMC_SEND_STATUS,
        u32::from(rca) << 16,
        MMC_RSP_R1 | MMC_CMD_AC,
    );
    command(dev, &mut cmd)?;
    Ok(cmd.response[0])
}

/// The CMD6 busy timeout for this card: GENERIC_CMD6_TIME x 10 ms when EXT_CSD_REV >= 6
/// defines it and it is non-zero; None otherwise (the kernel's default then applies).
pub fn cmd6_timeout_ms(ext_csd: &[u8; 512]) -> Option<u32> {
    let t = ext_csd[EXT_CSD_GENERIC_CMD6_TIME];
    (ext_csd[EXT_CSD_REV] >= 6 && t > 0).then(|| u32::from(t) * 10)
}

/// CMD6 SWITCH, access mode "write byte": EXT_CSD[`index`] = `value` (R1b, the card
/// signals busy until done). The busy timeout is GENERIC_CMD6_TIME read from the card
/// first, when known. A following CMD13 checks SWITCH_ERROR.
pub fn switch(dev: &File, index: u8, value: u8, cmd_set: u8) -> Result<(), MmcIoctlError> {
    let timeout = read_ext_csd(dev).ok().as_ref().and_then(cmd6_timeout_ms);
    switch_with_timeout(dev, index, value, cmd_set, timeout)
}

/// [`switch`] with an explicit busy timeout (None: the kernel's default).
pub fn switch_with_timeout(
    dev: &File,
    index: u8,
    value: u8,
    cmd_set: u8,
    timeout_ms: Option<u32>,
) -> Result<(), MmcIoctlError> {
    let arg = (MMC_SWITCH_MODE_WRITE_BYTE << 24)
        | (u32::from(index) << 16)
        | (u32::from(value) << 8)
        | u32::from(cmd_set);
    let mut cmd = MmcCommand::new(MMC_SWITCH, arg, MMC_RSP_R1B | MMC_CMD_AC);
    cmd.cmd_timeout_ms = timeout_ms.unwrap_or(0);
    command(dev, &mut cmd)?;
    check_status(dev, MMC_SWITCH, cmd.response[0])?;
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
        // CACHE_CTRL (33) = 1, the CMD6 tried in the testbed (testbed/README.md): arg 0x03210101.
        let arg = (MMC_SWITCH_MODE_WRITE_BYTE << 24) | (33 << 16) | (1 << 8) | 1;
        assert_eq!(arg, 0x0321_0101);
    }

    #[test]
    fn cmd6_timeout_only_from_rev6_and_nonzero() {
        let mut e = [0u8; 512];
        e[EXT_CSD_GENERIC_CMD6_TIME] = 5;
        e[EXT_CSD_REV] = 3;
        assert_eq!(cmd6_timeout_ms(&e), None);
        e[EXT_CSD_REV] = 8;
        assert_eq!(cmd6_timeout_ms(&e), Some(50));
        e[EXT_CSD_GENERIC_CMD6_TIME] = 0;
        assert_eq!(cmd6_timeout_ms(&e), None);
    }

    #[test]
    fn status_0x900_is_tran_and_ready() {
        // The emulated card's CMD6 answer (testbed/README.md): R1 0x900.
        assert_eq!(state_name(0x900), "tran");
        assert_eq!(0x900 & R1_ERROR_MASK, 0);
    }

    #[test]
    fn raw_command_carries_data_length_in_blocks() {
        let mut buf = [0u8; 1024];
        let mut cmd = MmcCommand::new(MMC_SEND_EXT_CSD, 0, MMC_RSP_R1 | MMC_CMD_ADTC);
        cmd.data = Data::Read(&mut buf);
        let raw = cmd.raw_for_kernel().unwrap();
        assert_eq!((raw.blksz, raw.blocks, raw.write_flag), (512, 2, 0));
        let data = [0u8; 100];
        let mut bad = MmcCommand::new(25, 0, MMC_RSP_R1 | MMC_CMD_ADTC);
        bad.data = Data::Write(&data);
        assert!(bad.raw_for_kernel().is_err());
    }

    #[test]
    fn ext_csd_on_a_regular_file_is_not_mmc() {
        let f = tempfile::tempfile().unwrap();
        let err = read_ext_csd(&f).unwrap_err();
        assert!(matches!(err, MmcIoctlError::NotMmc { .. }), "{err}");
        assert!(err.to_string().contains("not an MMC block device"));
    }
}
