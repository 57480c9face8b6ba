//! The `ioctl` engine: every read a CMD23 + CMD18 and every write a CMD23 + CMD25 (+
//! CMD13) that mmcab sends itself through `MMC_IOC_MULTI_CMD`, bypassing the block
//! layer like the kernel's mmc_test, without unbinding the card. With `packed = N`, the
//! job's writes go N at a time as eMMC 4.5 packed writes built as Linux 4.9 built them
//! ([`crate::device::packed`]). No command writes outside the job's region, also when
//! the card takes a packed write for plain data: near the region's end a packed command
//! is cut short ([`split_in_region`]).
//!
//! One command (or one packed command) at a time per job clone, like the sync engine.
//! What is measured is the same as the other engines: each write or read is one I/O of
//! `bs` bytes; the writes of one packed command all complete when it does, so each gets
//! its latency. The clock runs around the ioctl alone: a command's data, its packed
//! header and its arguments are ready before it starts, in buffers kept for the job's
//! life (nothing is allocated per command), so a packed and an unpacked write are timed
//! alike (bench/IOCTL-PACKED-OVERHEAD.md). Verify stamps every block as the other
//! engines do, and the read-back goes through the block layer (O_DIRECT), which is what
//! checks that the card stored what mmcab sent where it was meant to go.
//!
//! Before any I/O, [`setup::check`] refuses what cannot work (see its doc); the engine
//! then trusts what it found: the card's addressing and per-command limit, and for
//! packed writes the card's support and the kernel's CMD23 pass-through.

pub mod setup;

pub use setup::CardCache;

use super::buffer::fill_pattern;
use super::clone_io::CloneIo;
use super::completion::{complete, fsync, Finished};
use super::offsets::OffsetGen;
use super::recorder::Recorder;
use crate::device::ioctl::{read_ext_csd, MmcIoctlError};
use crate::device::mmc_io::{MmcIo, TransferError, WriteDone};
use crate::device::packed::{split_in_region_into, write_header, Entry, PackedStatus};
use crate::device::raw_access::RawAccess;
use crate::device::transfer::PackedArgs;
use crate::plan::workload::{takes_packed, JobSpec};
use crate::workload::io_error::IoFailure;
use crate::workload::result::Direction;
use anyhow::{anyhow, Result};
use linux_uapi::mmc_proto::R1_EXCEPTION_EVENT;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

pub struct IoctlEngine {
    access: Arc<RawAccess>,
    bs: usize,
    /// Writes per packed command (0: each write alone).
    packed: usize,
    read_buf: Vec<u8>,
    /// Unpacked: one block of `bs`. Packed: the header, then `packed` slots of `bs`.
    write_buf: Vec<u8>,
    /// The pending writes (of a packed command: up to `packed`), and their byte offsets on
    /// the node; kept for the job's life, like the buffers.
    entries: Vec<Entry>,
    offsets: Vec<u64>,
    /// The commands the pending writes go in: ranges of `entries` ([`split_in_region_into`]).
    commands: Vec<Range<usize>>,
    /// The job's region in 512-byte sectors: no command writes outside it.
    region: Range<u64>,
}

impl IoctlEngine {
    pub fn new(
        access: Arc<RawAccess>,
        job: &JobSpec,
        region: Range<u64>,
        seed: u64,
        force: bool,
    ) -> Result<IoctlEngine> {
        let bs = job.bs as usize;
        let packed = if takes_packed(job) {
            setup::packed_entries(job.packed.unwrap_or_default(), job.bs, &access, force)
                .map_err(|why| anyhow!("packed = {}: {why}", job.packed.unwrap_or_default()))?
        } else {
            0
        };
        let header = if packed > 0 {
            access.format.header_bytes()
        } else {
            0
        };
        let mut write_buf = vec![0u8; header + packed.max(1) * bs];
        if job.rw.writes() {
            // Every slot carries the block the other engines write (verify compares a
            // bad block with it).
            for slot in write_buf[header..].chunks_mut(bs) {
                fill_pattern(slot, job.pattern, seed);
            }
        }
        Ok(IoctlEngine {
            access,
            bs,
            packed,
            read_buf: vec![0u8; if job.rw.reads() { bs } else { 0 }],
            write_buf,
            entries: Vec::with_capacity(packed.max(1)),
            offsets: Vec::with_capacity(packed.max(1)),
            commands: Vec::with_capacity(2),
            // Whole sectors inside the byte range.
            region: region.start.div_ceil(512)..region.end / 512,
        })
    }

    /// Issue the generator's I/Os until it is done, the deadline passes or a stop flag is
    /// set. Afterwards the block device's page cache is dropped: it may hold pages the
    /// writes went around.
    pub fn run(
        &mut self,
        io: &mut CloneIo<'_>,
        gen: &mut OffsetGen,
        rec: &mut Recorder,
    ) -> Result<()> {
        let result = self.run_all(io, gen, rec);
        let _ = nix::fcntl::posix_fadvise(
            &io.file,
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        );
        result
    }

    fn run_all(
        &mut self,
        io: &mut CloneIo<'_>,
        gen: &mut OffsetGen,
        rec: &mut Recorder,
    ) -> Result<()> {
        while let Some((dir, offset)) = gen.next_io() {
            io.stop.check()?;
            let done = match dir {
                Direction::Read => self.read(io, offset, rec)?,
                Direction::Write => {
                    self.entries.clear();
                    self.offsets.clear();
                    self.push(offset);
                    while self.entries.len() < self.packed {
                        match gen.next_io() {
                            Some((Direction::Write, next)) => self.push(next),
                            // Packed jobs only write (checked): nothing else comes.
                            Some((Direction::Read, _)) | None => break,
                        }
                    }
                    self.write_pending(io, rec)?
                }
            };
            if io.past_deadline(done) {
                break;
            }
        }
        Ok(())
    }

    /// One more pending write, at byte `offset`.
    fn push(&mut self, offset: u64) {
        self.entries.push(Entry {
            sector: offset / 512,
            sectors: (self.bs / 512) as u32,
        });
        self.offsets.push(offset);
    }

    fn mmc<'a>(&self, io: &'a CloneIo<'_>) -> MmcIo<'a> {
        MmcIo {
            dev: &io.file,
            rca: self.access.rca,
        }
    }

    fn read(&mut self, io: &mut CloneIo<'_>, offset: u64, rec: &mut Recorder) -> Result<Instant> {
        let address = self.access.address(offset)?;
        let started = Instant::now();
        let result = self.mmc(io).read(address, &mut self.read_buf);
        let done = Instant::now();
        result.map_err(|e| failed(io, Direction::Read, offset, e))?;
        let finished = Finished {
            direction: Direction::Read,
            offset,
            // MMC_IOC_MULTI_CMD has no byte count: a command moves every block or fails.
            moved: None,
            latency_ns: (done - started).as_nanos() as u64,
            measured_ns: rec.since_start(done),
            block: &self.read_buf,
        };
        // A read: no fsync comes due.
        complete(io, rec, finished)?;
        Ok(done)
    }

    /// Sends the pending writes in as few commands as keep every byte a command may
    /// write inside the job's region ([`split_in_region_into`]: near its end a packed
    /// command is cut short and the rest follow).
    fn write_pending(&mut self, io: &mut CloneIo<'_>, rec: &mut Recorder) -> Result<Instant> {
        split_in_region_into(
            self.access.format,
            &self.entries,
            self.packed.max(1),
            &self.region,
            &mut self.commands,
        )
        .map_err(|e| {
            anyhow!(
                "job '{}': write at offset {}: {e}",
                io.name,
                self.offsets[0]
            )
        })?;
        let mut done = Instant::now();
        for k in 0..self.commands.len() {
            done = self.write_command(io, rec, self.commands[k].clone())?;
        }
        Ok(done)
    }

    /// Sends the pending writes `command`: alone, or as one packed command when there are
    /// two or more (Linux 4.9 packed no single request either). Only the ioctl is timed:
    /// the data, the packed header and the command's arguments are ready before.
    fn write_command(
        &mut self,
        io: &mut CloneIo<'_>,
        rec: &mut Recorder,
        command: Range<usize>,
    ) -> Result<Instant> {
        let bs = self.bs;
        let count = command.len();
        let packed = count >= 2;
        let data_start = if self.packed > 0 {
            self.access.format.header_bytes()
        } else {
            0
        };
        for (k, offset) in self.offsets[command.clone()].iter().enumerate() {
            let at = data_start + k * bs;
            io.writer.prepare(&mut self.write_buf[at..at + bs], *offset);
        }
        let first = self.offsets[command.start];
        let ready = if packed {
            let header = self.access.format.header_bytes();
            let hdr = &mut self.write_buf[..header];
            let args = write_header(self.access.format, &self.entries[command.clone()], hdr)
                .map_err(|e| anyhow!("job '{}': packed write at offset {first}: {e}", io.name))?;
            Ready::Packed {
                args,
                len: header + count * bs,
            }
        } else {
            Ready::Plain {
                address: self.access.address(first)?,
            }
        };
        let started = Instant::now();
        let result = match ready {
            Ready::Packed { args, len } => self.mmc(io).packed_write(&args, &self.write_buf[..len]),
            Ready::Plain { address } => {
                let at = data_start;
                self.mmc(io).write(address, &self.write_buf[at..at + bs])
            }
        };
        let done = Instant::now();
        let written = match result {
            Ok(written) => written,
            Err(e) if packed => return Err(self.packed_failed(io, count, first, e)),
            Err(e) => return Err(failed(io, Direction::Write, first, e)),
        };
        if packed {
            self.check_exception(io, count, first, written)?;
        }
        // Every write of a packed command completes when it does, with its latency.
        let latency_ns = (done - started).as_nanos() as u64;
        let measured_ns = rec.since_start(done);
        let mut fsync_due = false;
        for (k, offset) in self.offsets[command].iter().enumerate() {
            let at = data_start + k * bs;
            let finished = Finished {
                direction: Direction::Write,
                offset: *offset,
                moved: None,
                latency_ns,
                measured_ns,
                block: &self.write_buf[at..at + bs],
            };
            fsync_due |= complete(io, rec, finished)?;
        }
        // One fsync after the command, also when its writes completed more than one
        // `fsync = N` interval: nothing can be fsynced in the middle of a command.
        if fsync_due {
            fsync(io, rec)?;
        }
        Ok(done)
    }

    /// EXCEPTION_EVENT after a packed write: the card may report it failed (when
    /// PACKED_EVENT_EN is set; other exceptions, e.g. urgent BKOPS, are no failure).
    fn check_exception(
        &self,
        io: &CloneIo<'_>,
        entries: usize,
        first: u64,
        written: WriteDone,
    ) -> Result<()> {
        if written.status & R1_EXCEPTION_EVENT == 0 {
            return Ok(());
        }
        let status = PackedStatus::from_ext_csd(&read_ext_csd(&io.file)?);
        if status.failed() {
            let len = (entries * self.bs) as u64;
            let failure = io_failure(io, Direction::Write, first, len, None);
            return Err(failure.context(format!(
                "packed write of {entries} entries: {}",
                status.describe()
            )));
        }
        Ok(())
    }

    /// A packed write that failed, with what the card's packed status registers say
    /// (Linux 4.9 read them after every failed packed command).
    fn packed_failed(
        &self,
        io: &CloneIo<'_>,
        entries: usize,
        first: u64,
        e: TransferError,
    ) -> anyhow::Error {
        let registers = read_ext_csd(&io.file)
            .map(|raw| PackedStatus::from_ext_csd(&raw).describe())
            .unwrap_or_else(|err| format!("EXT_CSD unreadable afterwards: {err}"));
        let len = (entries * self.bs) as u64;
        io_failure(io, Direction::Write, first, len, Some(&e)).context(format!("{e}; {registers}"))
    }
}

/// A write command as it goes to the card, built before the clock starts.
enum Ready {
    /// The header is in the write buffer; `len` bytes of it go: header and entries.
    Packed {
        args: PackedArgs,
        len: usize,
    },
    Plain {
        address: u32,
    },
}

/// A transfer that failed, as the runner knows failed I/O ([`IoFailure`]: exit status 4,
/// and a note when the card is gone), with what the ioctl or the card said first.
fn failed(io: &CloneIo<'_>, dir: Direction, offset: u64, e: TransferError) -> anyhow::Error {
    io_failure(io, dir, offset, io.bs, Some(&e)).context(e.to_string())
}

/// The errno of the ioctl when it failed with one; EIO when the card reported the error
/// (status bits, a packed failure, busy for too long).
fn io_failure(
    io: &CloneIo<'_>,
    dir: Direction,
    offset: u64,
    len: u64,
    e: Option<&TransferError>,
) -> anyhow::Error {
    let errno = match e {
        Some(TransferError::Ioctl {
            source: MmcIoctlError::Command { source, .. },
            ..
        }) => source.raw_os_error(),
        _ => None,
    };
    let errno = std::io::Error::from_raw_os_error(errno.unwrap_or(libc::EIO));
    IoFailure::new(dir.into(), Some(offset), len, io.path, io.name)
        .errno(&errno)
        .into()
}
