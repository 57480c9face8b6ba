//! A safe interface to the MMC block ioctls: one command ([`cmd`], `MMC_IOC_CMD`) or a
//! batch the kernel issues back to back with the host claimed ([`multi_cmd`],
//! `MMC_IOC_MULTI_CMD`, e.g. CMD23 + CMD25 + data).
//!
//! An [`MmcCmd`] borrows its data buffer for its whole life: a read fills a `&mut [u8]`,
//! a write sends a `&[u8]`, and the number of blocks is the buffer's length divided by the
//! block size, so the kernel never reads or writes past what the caller lent. The limits
//! the kernel enforces are checked here first, before any system call, and refused with
//! an [`Invalid`] that says which:
//!
//! - [`MAX_BYTES`]: data of one command (`blksz x blocks`); the kernel refuses more with
//!   EOVERFLOW, per command, also inside a batch
//!   (`drivers/mmc/core/block.c`, `mmc_blk_ioctl_copy_from_user`);
//! - [`MAX_CMDS`]: commands in one batch; the kernel refuses more with EINVAL
//!   (`drivers/mmc/core/block.c`, `mmc_blk_ioctl_multi_cmd`).
//!
//! Both values are `MMC_IOC_MAX_BYTES` and `MMC_IOC_MAX_CMDS` of
//! `include/uapi/linux/mmc/ioctl.h`, taken from the bindgen output.
//!
//! The kernel answers with the card's response ([`MmcCmd::response`]) and, for a read,
//! copies the data into the buffer; it copies data back only when `write_flag` is zero,
//! which is why a reliable write (bit 31 of `write_flag`) is only offered on writes.

extern crate std;

use crate::mmc_ioctl::{mmc_ioc_cmd, mmc_ioc_multi_cmd};
use crate::{MMC_IOC_CMD, MMC_IOC_MAX_BYTES, MMC_IOC_MAX_CMDS, MMC_IOC_MULTI_CMD};
use core::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// Most data bytes of one command (`MMC_IOC_MAX_BYTES`, 512 KiB).
pub const MAX_BYTES: usize = MMC_IOC_MAX_BYTES as usize;
/// Most commands in one [`multi_cmd`] batch (`MMC_IOC_MAX_CMDS`, 255).
pub const MAX_CMDS: usize = MMC_IOC_MAX_CMDS as usize;

/// `write_flag` bit 31: reliable write (RPMB, and CMD25 with CMD23's reliable-write bit).
const WRITE_FLAG_RELIABLE: i32 = i32::MIN;

/// The data phase of one command, borrowed from the caller for the command's life.
#[derive(Debug)]
pub enum Data<'a> {
    /// No data (e.g. CMD6, CMD13, CMD23).
    None,
    /// Card to host: the kernel fills the whole buffer.
    Read(&'a mut [u8]),
    /// Host to card: the kernel sends the whole buffer.
    Write(&'a [u8]),
}

impl Data<'_> {
    fn len(&self) -> usize {
        match self {
            Data::None => 0,
            Data::Read(buf) => buf.len(),
            Data::Write(buf) => buf.len(),
        }
    }
}

/// One MMC command for [`cmd`] or [`multi_cmd`], built with [`MmcCmd::new`] and the
/// `with_*` methods; after the call, [`MmcCmd::response`] holds the card's answer.
#[derive(Debug)]
pub struct MmcCmd<'a> {
    opcode: u32,
    arg: u32,
    flags: u32,
    blksz: u32,
    data: Data<'a>,
    reliable_write: bool,
    cmd_timeout_ms: u32,
    data_timeout_ns: u32,
    response: [u32; 4],
}

/// Why a command or a batch was refused before any system call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// A command's data is larger than [`MAX_BYTES`].
    TooManyBytes { opcode: u32, bytes: usize },
    /// A command's data is not a whole number of blocks (or the block size is zero).
    PartialBlock {
        opcode: u32,
        bytes: usize,
        blksz: u32,
    },
    /// A reliable write was asked of a command that does not write data.
    ReliableWithoutWrite { opcode: u32 },
    /// A batch with no command.
    NoCommands,
    /// A batch with more than [`MAX_CMDS`] commands.
    TooManyCmds { count: usize },
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Invalid::TooManyBytes { opcode, bytes } => write!(
                f,
                "CMD{opcode}: {bytes} bytes of data exceed MMC_IOC_MAX_BYTES ({MAX_BYTES}) per \
                 command"
            ),
            Invalid::PartialBlock {
                opcode,
                bytes,
                blksz,
            } => write!(
                f,
                "CMD{opcode}: data length {bytes} is not a whole number of {blksz}-byte blocks"
            ),
            Invalid::ReliableWithoutWrite { opcode } => {
                write!(f, "CMD{opcode}: a reliable write needs data to write")
            }
            Invalid::NoCommands => write!(f, "MMC_IOC_MULTI_CMD needs at least one command"),
            Invalid::TooManyCmds { count } => write!(
                f,
                "{count} commands: MMC_IOC_MULTI_CMD takes at most MMC_IOC_MAX_CMDS ({MAX_CMDS})"
            ),
        }
    }
}

impl std::error::Error for Invalid {}

/// What [`cmd`] and [`multi_cmd`] return on failure.
#[derive(Debug)]
pub enum Error {
    /// Refused before any system call.
    Invalid(Invalid),
    /// The ioctl failed; the error carries the errno.
    Os(io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(invalid) => write!(f, "invalid MMC command: {invalid}"),
            Error::Os(err) => write!(f, "MMC ioctl failed: {err}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Invalid(invalid) => Some(invalid),
            Error::Os(err) => Some(err),
        }
    }
}

impl From<Invalid> for Error {
    fn from(invalid: Invalid) -> Error {
        Error::Invalid(invalid)
    }
}

impl<'a> MmcCmd<'a> {
    /// A command without data: `flags` is `MMC_RSP_* | MMC_CMD_*` from [`crate::mmc_core`].
    pub fn new(opcode: u32, arg: u32, flags: u32) -> Self {
        MmcCmd {
            opcode,
            arg,
            flags,
            blksz: 512,
            data: Data::None,
            reliable_write: false,
            cmd_timeout_ms: 0,
            data_timeout_ns: 0,
            response: [0; 4],
        }
    }

    /// Reads `buf.len() / blksz` blocks of `blksz` bytes from the card into `buf`.
    pub fn with_read(mut self, buf: &'a mut [u8], blksz: u32) -> Self {
        self.data = Data::Read(buf);
        self.blksz = blksz;
        self
    }

    /// Writes `buf.len() / blksz` blocks of `blksz` bytes from `buf` to the card.
    pub fn with_write(mut self, buf: &'a [u8], blksz: u32) -> Self {
        self.data = Data::Write(buf);
        self.blksz = blksz;
        self
    }

    /// Sets bit 31 of `write_flag` (reliable write); only valid with [`MmcCmd::with_write`].
    pub fn with_reliable_write(mut self) -> Self {
        self.reliable_write = true;
        self
    }

    /// Response/busy timeout in ms (0, the default: the kernel's).
    pub fn with_cmd_timeout_ms(mut self, ms: u32) -> Self {
        self.cmd_timeout_ms = ms;
        self
    }

    /// Data timeout in ns (0, the default: the kernel's, from the card's CSD).
    pub fn with_data_timeout_ns(mut self, ns: u32) -> Self {
        self.data_timeout_ns = ns;
        self
    }

    pub fn opcode(&self) -> u32 {
        self.opcode
    }

    pub fn arg(&self) -> u32 {
        self.arg
    }

    /// The data phase, as lent to the command.
    pub fn data(&self) -> &Data<'a> {
        &self.data
    }

    /// Data bytes of this command (0 without data).
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    /// The card's response after a successful [`cmd`] / [`multi_cmd`] (R1: word 0).
    pub fn response(&self) -> [u32; 4] {
        self.response
    }

    /// The checks the kernel would make, and the ones that keep the buffer whole.
    pub fn validate(&self) -> Result<(), Invalid> {
        let (opcode, bytes, blksz) = (self.opcode, self.data.len(), self.blksz);
        if bytes > MAX_BYTES {
            return Err(Invalid::TooManyBytes { opcode, bytes });
        }
        if bytes > 0 && (blksz == 0 || bytes % blksz as usize != 0) {
            return Err(Invalid::PartialBlock {
                opcode,
                bytes,
                blksz,
            });
        }
        if self.reliable_write && !matches!(self.data, Data::Write(buf) if !buf.is_empty()) {
            return Err(Invalid::ReliableWithoutWrite { opcode });
        }
        Ok(())
    }

    /// The `struct mmc_ioc_cmd` for this command, after [`MmcCmd::validate`]. Its
    /// `data_ptr` points at the buffer this command borrows (0 without data); the struct
    /// is only handed to the kernel while that borrow is held (by [`cmd`] and
    /// [`multi_cmd`], which take `&mut MmcCmd`).
    pub fn to_raw(&mut self) -> Result<mmc_ioc_cmd, Invalid> {
        self.validate()?;
        let mut raw = mmc_ioc_cmd::zeroed();
        raw.opcode = self.opcode;
        raw.arg = self.arg;
        raw.flags = self.flags;
        raw.cmd_timeout_ms = self.cmd_timeout_ms;
        raw.data_timeout_ns = self.data_timeout_ns;
        let (ptr, len, write) = match &mut self.data {
            Data::None => (0, 0, false),
            Data::Read(buf) => (buf.as_mut_ptr() as usize as u64, buf.len(), false),
            Data::Write(buf) => (buf.as_ptr() as usize as u64, buf.len(), true),
        };
        if len > 0 {
            // Both fit: len <= MAX_BYTES and divides by blksz (validate).
            raw.blksz = self.blksz;
            raw.blocks = (len / self.blksz as usize) as u32;
            raw.data_ptr = ptr;
        }
        raw.write_flag = i32::from(write)
            | if self.reliable_write {
                WRITE_FLAG_RELIABLE
            } else {
                0
            };
        Ok(raw)
    }
}

/// Sends one command (`MMC_IOC_CMD`) to the card behind `fd` (a whole MMC block device,
/// e.g. `/dev/mmcblk0`, opened by a process with CAP_SYS_RAWIO). On success the card's
/// response is in `cmd.response()` and a read's buffer holds the data.
pub fn cmd(fd: impl AsFd, cmd: &mut MmcCmd<'_>) -> Result<(), Error> {
    let mut raw = cmd.to_raw()?;
    let fd = fd.as_fd();
    // SAFETY: `raw` is an initialised `struct mmc_ioc_cmd` (the size MMC_IOC_CMD encodes,
    // checked at compile time in lib.rs) that lives across the call. Its data_ptr is 0
    // without data, or points at the buffer `cmd` borrows, exactly blksz x blocks bytes
    // long (`to_raw` after `validate`); the `&mut` borrow of `cmd` keeps that buffer alive
    // and unaliased until the ioctl returns, and the kernel writes into it only for a read
    // (write_flag 0), whose buffer is borrowed mutably.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), MMC_IOC_CMD as libc::Ioctl, &mut raw) };
    if rc < 0 {
        return Err(Error::Os(io::Error::last_os_error()));
    }
    cmd.response = raw.response;
    Ok(())
}

/// `struct mmc_ioc_multi_cmd` with its flexible array member `cmds[]` holding exactly the
/// batch's N commands (at offset 8, as in the bindgen struct: [`MultiCmd::LAYOUT`]). It
/// is built on the caller's stack for each batch, N x 72 bytes (216 for a write's
/// CMD23 + CMD25 + CMD13): nothing is allocated, and nothing is written but the N
/// commands the kernel reads.
#[repr(C)]
struct MultiCmd<const N: usize> {
    num_of_cmds: u64,
    cmds: [mmc_ioc_cmd; N],
}

impl<const N: usize> MultiCmd<N> {
    /// The kernel's layout, checked at compile time for every N a batch is built with.
    const LAYOUT: () = {
        use core::mem::{align_of, offset_of};
        assert!(offset_of!(Self, num_of_cmds) == offset_of!(mmc_ioc_multi_cmd, num_of_cmds));
        assert!(offset_of!(Self, cmds) == offset_of!(mmc_ioc_multi_cmd, cmds));
        assert!(align_of::<Self>() == align_of::<mmc_ioc_multi_cmd>());
    };
}

/// Sends 1 to [`MAX_CMDS`] commands in one `MMC_IOC_MULTI_CMD`: the kernel issues them in
/// order with the host claimed, stopping at the first that fails (the error does not say
/// which). On success every command's response is filled in.
pub fn multi_cmd<const N: usize>(fd: impl AsFd, cmds: &mut [MmcCmd<'_>; N]) -> Result<(), Error> {
    #[allow(clippy::let_unit_value)] // evaluates the layout check for this N
    let () = MultiCmd::<N>::LAYOUT;
    if N == 0 {
        return Err(Invalid::NoCommands.into());
    }
    if N > MAX_CMDS {
        return Err(Invalid::TooManyCmds { count: N }.into());
    }
    let mut batch = MultiCmd {
        num_of_cmds: N as u64,
        cmds: [mmc_ioc_cmd::zeroed(); N],
    };
    for (slot, cmd) in batch.cmds.iter_mut().zip(cmds.iter_mut()) {
        *slot = cmd.to_raw()?;
    }
    let fd = fd.as_fd();
    // SAFETY: `batch` is an initialised `struct mmc_ioc_multi_cmd` header followed by its
    // num_of_cmds = N initialised commands, at the offsets the header's struct has
    // (`MultiCmd::LAYOUT`, checked at compile time for this N); it lives across the call.
    // Each command's data_ptr is 0 or points at the buffer the matching element of `cmds`
    // borrows, exactly blksz x blocks bytes long (`to_raw`); the `&mut` borrow of `cmds`
    // keeps every buffer alive and unaliased until the ioctl returns, and the kernel
    // writes into a buffer only for a read (write_flag 0), borrowed mutably.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            MMC_IOC_MULTI_CMD as libc::Ioctl,
            &mut batch as *mut MultiCmd<N>,
        )
    };
    if rc < 0 {
        return Err(Error::Os(io::Error::last_os_error()));
    }
    for (cmd, raw) in cmds.iter_mut().zip(batch.cmds.iter()) {
        cmd.response = raw.response;
    }
    Ok(())
}

#[cfg(test)]
#[path = "mmc_tests.rs"]
mod tests;
