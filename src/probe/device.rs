//! The device a probe times: one file descriptor with O_DIRECT (reads) or
//! O_DIRECT|O_SYNC (writes, as flashbench opens it), one aligned buffer, each I/O timed
//! with the monotonic clock; and the calling thread raised to SCHED_FIFO while it runs,
//! where that is allowed.

use super::align::ReadTimer;
use super::open_au::{WriteTimer, PATTERN};
use crate::aligned::AlignedBuf;
use crate::workload::target::{Target, TargetKind, Writes};
use anyhow::{bail, Context, Result};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::Instant;

/// An open block device for a probe.
pub struct ProbeDevice {
    file: File,
    pub size_bytes: u64,
    pub logical_block: u64,
    buf: AlignedBuf,
    path: String,
    /// Held for writes: refuses a device in use and keeps it from being mounted.
    target: Target,
}

impl ProbeDevice {
    fn open(path: &Path, write: bool, writes: Writes, buf_bytes: u64) -> Result<ProbeDevice> {
        // Target::open refuses a device in use when writes are allowed, and holds it
        // with O_EXCL for as long as the probe runs; check_write refuses writes the
        // user did not allow.
        let target = Target::open_with(path, writes)?;
        if target.kind != TargetKind::BlockDevice {
            bail!(
                "{}: not a block device: mmcab probe times a whole device (/dev/mmcblkN, /dev/loopN)",
                path.display()
            );
        }
        if write {
            target.check_write("mmcab probe open-au")?;
        }
        let mut opts = OpenOptions::new();
        opts.read(true).write(write);
        let flags = if write {
            libc::O_DIRECT | libc::O_SYNC
        } else {
            libc::O_DIRECT
        };
        opts.custom_flags(flags);
        let file = opts
            .open(path)
            .with_context(|| format!("cannot open {} (run as root?)", path.display()))?;
        let len = usize::try_from(buf_bytes)
            .with_context(|| format!("a buffer of {buf_bytes} bytes does not fit in memory"))?;
        let mut buf = AlignedBuf::new(len, target.logical_block_bytes as usize);
        buf.as_mut_slice().fill(PATTERN);
        Ok(ProbeDevice {
            file,
            size_bytes: target.size_bytes,
            logical_block: target.logical_block_bytes,
            buf,
            path: path.display().to_string(),
            target,
        })
    }

    /// Open for reads of up to `max_read` bytes (read-only: any device, mounted or not).
    pub fn open_read(path: &Path, max_read: u64) -> Result<ProbeDevice> {
        ProbeDevice::open(path, false, Writes::No, max_read)
    }

    /// Open for writes of up to `max_write` bytes: refused without `--allow-write`, for
    /// a device in use (mounted, swap, holders) and, without `--overwrite-data`, for one
    /// that holds data.
    pub fn open_write(path: &Path, max_write: u64, writes: Writes) -> Result<ProbeDevice> {
        ProbeDevice::open(path, true, writes, max_write)
    }

    /// Refuse writes over data in `writes` ([`Target::check_data`]).
    pub fn check_data(&self, writes: &[(u64, u64)]) -> Result<()> {
        self.target.check_data(writes)
    }

    fn check(&self, pos: u64, len: u64) -> Result<()> {
        if len > self.buf.len() as u64 || pos + len > self.size_bytes {
            bail!(
                "{}: {len} bytes at {pos} do not fit (device {} bytes)",
                self.path,
                self.size_bytes
            );
        }
        if pos % self.logical_block != 0 || len % self.logical_block != 0 {
            bail!(
                "{}: {len} bytes at {pos} are not whole logical blocks of {} bytes (O_DIRECT): \
                 use a --blocksize of at least twice that",
                self.path,
                self.logical_block
            );
        }
        Ok(())
    }
}

impl ReadTimer for ProbeDevice {
    fn time_read(&mut self, pos: u64, len: u64) -> Result<u64> {
        self.check(pos, len)?;
        let buf = &mut self.buf.as_mut_slice()[..len as usize];
        let start = Instant::now();
        self.file
            .read_exact_at(buf, pos)
            .with_context(|| format!("{}: read of {len} bytes at {pos}", self.path))?;
        Ok(start.elapsed().as_nanos() as u64)
    }
}

impl WriteTimer for ProbeDevice {
    fn time_write(&mut self, pos: u64, len: u64) -> Result<u64> {
        self.check(pos, len)?;
        let buf = &self.buf.as_slice()[..len as usize];
        let start = Instant::now();
        self.file
            .write_all_at(buf, pos)
            .with_context(|| format!("{}: write of {len} bytes at {pos}", self.path))?;
        Ok(start.elapsed().as_nanos() as u64)
    }
}

/// SCHED_FIFO priority of a probe (flashbench's `set_rtprio`: 10).
pub const RT_PRIORITY: i32 = 10;

/// The calling thread at SCHED_FIFO while this lives (its policy before is put back on
/// drop), or as it was when that is not allowed; `note` says which.
pub struct Realtime {
    before: Option<linux_uapi::sched::Policy>,
    pub note: String,
}

impl Realtime {
    pub fn enter() -> Realtime {
        match linux_uapi::sched::set_fifo(RT_PRIORITY) {
            Ok(before) => Realtime {
                before: Some(before),
                note: format!("SCHED_FIFO priority {RT_PRIORITY}"),
            },
            Err(e) => {
                let now = linux_uapi::sched::current()
                    .map(|p| p.name())
                    .unwrap_or("the default policy");
                Realtime {
                    before: None,
                    note: format!(
                        "{now}: SCHED_FIFO not allowed ({e}; needs root or CAP_SYS_NICE), \
                         so other tasks may add noise to the timings"
                    ),
                }
            }
        }
    }
}

impl Drop for Realtime {
    fn drop(&mut self) {
        if let Some(p) = self.before {
            let _ = linux_uapi::sched::set(p);
        }
    }
}
