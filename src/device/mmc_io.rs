//! Reads and writes of card blocks through the MMC ioctl, bypassing the block layer:
//! one `MMC_IOC_MULTI_CMD` per transfer ([`super::transfer`] says which commands), the
//! card status checked after every write.
//!
//! After a write the kernel itself polls CMD13 until the card has programmed the data
//! and puts the OR of those statuses into the CMD25 response (Linux 6.12 and later do;
//! 6.1 does not, docs/kernel-facts.md). mmcab does not rely on it: every write batch ends
//! with a CMD13, and while that status is not "tran, ready for data" mmcab polls CMD13
//! itself (as the block driver does after each write) for up to [`BUSY_TIMEOUT`]. Every
//! response is checked for the block driver's error bits ([`transfer::CMD_ERRORS`]).

use super::ioctl::state_name as state;
use super::ioctl::{self, MmcIoctlError};
use super::transfer::PackedArgs;
use super::transfer::{self, CmdSpec};
use std::fs::File;
use std::time::{Duration, Instant};

/// How long a write may keep the card busy: `MMC_BLK_TIMEOUT_MS` of the block driver.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// One transfer that failed, with what it was.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error("{what}: {source}")]
    Ioctl {
        what: String,
        #[source]
        source: MmcIoctlError,
    },
    #[error("{what}: card status {status:#010x} has error bits {names} (state {state})")]
    Status {
        what: String,
        status: u32,
        names: String,
        state: &'static str,
    },
    #[error(
        "{what}: the card was still busy after {} s (status {status:#010x}, state {state})",
        BUSY_TIMEOUT.as_secs()
    )]
    Busy {
        what: String,
        status: u32,
        state: &'static str,
    },
}

/// A write the card accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteDone {
    /// The OR of every status word seen for it (R1 of CMD23, CMD25, every CMD13): the
    /// caller looks for EXCEPTION_EVENT here.
    pub status: u32,
    /// CMD13s mmcab sent after the batch because the card was still busy.
    pub polls: u32,
}

/// The card behind an open whole-device node (`/dev/mmcblkN`, or a boot/GP hardware
/// partition node), with the relative card address CMD13 needs.
pub struct MmcIo<'a> {
    pub dev: &'a File,
    pub rca: u16,
}

impl MmcIo<'_> {
    /// Reads `buf.len()` bytes (whole 512-byte blocks) at card address `address`.
    pub fn read(&self, address: u32, buf: &mut [u8]) -> Result<(), TransferError> {
        let blocks = (buf.len() / transfer::BLOCK as usize) as u32;
        let what = || describe("read", blocks, address);
        let [sbc, data] = transfer::read(address, blocks);
        let mut cmds = [transfer::no_data(&sbc), transfer::with_read(&data, buf)];
        ioctl::multi_cmd(self.dev, &mut cmds).map_err(|source| TransferError::Ioctl {
            what: what(),
            source,
        })?;
        let status = cmds[0].response()[0] | cmds[1].response()[0];
        check(status, &what)
    }

    /// Writes `buf` (whole 512-byte blocks) at card address `address`; returns when the
    /// card is ready again.
    pub fn write(&self, address: u32, buf: &[u8]) -> Result<WriteDone, TransferError> {
        let blocks = (buf.len() / transfer::BLOCK as usize) as u32;
        let specs = transfer::write(address, blocks, self.rca);
        self.write_batch(&specs, buf, &|| describe("write", blocks, address))
    }

    /// Sends one packed write: `buf` is the header followed by the entries' data, as
    /// many blocks as `args.blocks`.
    pub fn packed_write(&self, args: &PackedArgs, buf: &[u8]) -> Result<WriteDone, TransferError> {
        let specs = transfer::packed_write(args, self.rca);
        self.write_batch(&specs, buf, &|| {
            format!(
                "packed write of {} entries ({} blocks with the header, CMD23 arg {:#010x}) at \
                 card address {:#x}",
                args.entries, args.blocks, args.sbc_arg, args.cmd25_arg
            )
        })
    }

    fn write_batch(
        &self,
        specs: &[CmdSpec; 3],
        buf: &[u8],
        what: &dyn Fn() -> String,
    ) -> Result<WriteDone, TransferError> {
        let [sbc, data, status] = specs;
        let mut cmds = [
            transfer::no_data(sbc),
            transfer::with_write(data, buf),
            transfer::no_data(status),
        ];
        ioctl::multi_cmd(self.dev, &mut cmds).map_err(|source| TransferError::Ioctl {
            what: what(),
            source,
        })?;
        let mut seen = cmds.iter().fold(0, |acc, c| acc | c.response()[0]);
        let mut last = cmds[2].response()[0];
        let mut polls = 0;
        let started = Instant::now();
        let mut pause = Duration::from_micros(32);
        while !transfer::ready_for_data(last) {
            if transfer::error_bits(seen) != 0 {
                break;
            }
            if started.elapsed() > BUSY_TIMEOUT {
                return Err(TransferError::Busy {
                    what: what(),
                    status: last,
                    state: state(last),
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(32));
            let mut cmd = transfer::no_data(status);
            ioctl::command(self.dev, &mut cmd).map_err(|source| TransferError::Ioctl {
                what: format!("{} (CMD13 while the card was busy)", what()),
                source,
            })?;
            last = cmd.response()[0];
            seen |= last;
            polls += 1;
        }
        check(seen, what)?;
        Ok(WriteDone {
            status: seen,
            polls,
        })
    }
}

fn describe(op: &str, blocks: u32, address: u32) -> String {
    format!(
        "{op} of {} bytes at card address {address:#x} (CMD23+CMD{})",
        u64::from(blocks) * u64::from(transfer::BLOCK),
        if op == "read" { 18 } else { 25 }
    )
}

fn check(status: u32, what: &dyn Fn() -> String) -> Result<(), TransferError> {
    let bits = transfer::error_bits(status);
    if bits == 0 {
        return Ok(());
    }
    Err(TransferError::Status {
        what: what(),
        status,
        names: transfer::bit_names(bits),
        state: state(status),
    })
}
