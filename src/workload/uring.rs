//! The io_uring engine: `iodepth` I/Os in flight per job clone, the queue refilled after
//! every reap, one registered buffer area and one registered file (fixed ops), one
//! submit+wait syscall per batch and no allocation per I/O. Latency is taken per I/O
//! from its submit batch to the reap that saw it (two clock reads per batch).
//!
//! This file holds the only `unsafe` of the engine: handing buffers to the kernel.

use super::buffer::{fill_pattern, AlignedBuf};
use super::job::CloneIo;
use super::measure::Recorder;
use super::offsets::OffsetGen;
use super::result::Direction;
use super::spec::Pattern;
use anyhow::{anyhow, Result};
use io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::AsRawFd;
use std::time::Instant;

#[derive(Clone, Copy)]
struct Slot {
    direction: Direction,
    offset: u64,
    submitted: Instant,
}

pub struct UringEngine {
    ring: IoUring,
    depth: usize,
    bs: usize,
    /// Read buffers (slots 0..depth), then write buffers when the job does both.
    bufs: AlignedBuf,
    separate_write_bufs: bool,
    fixed_buffers: bool,
    fixed_file: bool,
    slots: Vec<Slot>,
    free: Vec<u16>,
    just_queued: Vec<u16>,
}

/// Explain why io_uring cannot be used here.
fn unavailable(e: std::io::Error) -> anyhow::Error {
    anyhow!(
        "engine \"io_uring\" is not available here (io_uring_setup: {e}); it is missing under \
         qemu-user, on kernels before 5.1, and when seccomp or kernel.io_uring_disabled \
         blocks it: use engine = \"sync\" for this job"
    )
}

impl UringEngine {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        file: &std::fs::File,
        depth: u32,
        bs: usize,
        align: usize,
        reads: bool,
        writes: bool,
        pattern: Pattern,
        seed: u64,
    ) -> Result<UringEngine> {
        let depth = depth as usize;
        // A plain ring, as fio 3.33 sets it up. SINGLE_ISSUER + DEFER_TASKRUN (6.1+)
        // measured no better on a loop device (runs spread too widely to tell) and
        // would leave completions unprocessed until the next wait.
        let ring = IoUring::new(depth as u32).map_err(unavailable)?;
        let separate_write_bufs = reads && writes;
        let nbufs = if separate_write_bufs {
            2 * depth
        } else {
            depth
        };
        let mut bufs = AlignedBuf::new(nbufs * bs, align);
        if writes {
            let from = if separate_write_bufs { depth * bs } else { 0 };
            fill_pattern(&mut bufs.as_mut_slice()[from..], pattern, seed);
        }
        let area = bufs.as_mut_slice();
        let iovec = libc::iovec {
            iov_base: area.as_mut_ptr().cast(),
            iov_len: area.len(),
        };
        // SAFETY: the iovec covers `bufs`, which this engine owns and keeps alive (and
        // never reallocates) for as long as the ring, to which it is registered, exists;
        // the ring is dropped first (field order) and drained before every return.
        let fixed_buffers =
            area.len() <= 1 << 30 && unsafe { ring.submitter().register_buffers(&[iovec]) }.is_ok();
        let fixed_file = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        Ok(UringEngine {
            ring,
            depth,
            bs,
            bufs,
            separate_write_bufs,
            fixed_buffers,
            fixed_file,
            slots: vec![
                Slot {
                    direction: Direction::Read,
                    offset: 0,
                    submitted: Instant::now()
                };
                depth
            ],
            free: (0..depth as u16).rev().collect(),
            just_queued: Vec::with_capacity(depth),
        })
    }

    fn entry(
        &mut self,
        io: &CloneIo<'_>,
        slot: u16,
        direction: Direction,
        offset: u64,
    ) -> squeue::Entry {
        let index = if direction == Direction::Write && self.separate_write_bufs {
            self.depth + slot as usize
        } else {
            slot as usize
        };
        let bs = self.bs;
        let buf = &mut self.bufs.as_mut_slice()[index * bs..(index + 1) * bs];
        let ptr = buf.as_mut_ptr();
        let len = bs as u32;
        let raw_fd = io.file.as_raw_fd();
        macro_rules! build {
            ($fd:expr) => {
                match (direction, self.fixed_buffers) {
                    (Direction::Read, true) => opcode::ReadFixed::new($fd, ptr, len, 0)
                        .offset(offset)
                        .build(),
                    (Direction::Write, true) => opcode::WriteFixed::new($fd, ptr, len, 0)
                        .offset(offset)
                        .build(),
                    (Direction::Read, false) => {
                        opcode::Read::new($fd, ptr, len).offset(offset).build()
                    }
                    (Direction::Write, false) => {
                        opcode::Write::new($fd, ptr, len).offset(offset).build()
                    }
                }
            };
        }
        let e = if self.fixed_file {
            build!(types::Fixed(0))
        } else {
            build!(types::Fd(raw_fd))
        };
        e.user_data(slot as u64)
    }

    /// Issue the generator's I/Os, keeping `iodepth` in flight, until it is done, the
    /// deadline passes or a stop flag is set; always drains what is in flight.
    pub fn run(
        &mut self,
        io: &mut CloneIo<'_>,
        gen: &mut OffsetGen,
        rec: &mut Recorder,
    ) -> Result<()> {
        let bs = self.bs as u64;
        let mut inflight = 0usize;
        let mut exhausted = false;
        let mut fsync_due = false;
        let mut failure: Option<anyhow::Error> = None;
        loop {
            if !exhausted && failure.is_none() && !fsync_due {
                if let Err(e) = io.stop.check() {
                    failure = Some(e);
                }
            }
            if !exhausted && failure.is_none() && !fsync_due {
                self.just_queued.clear();
                while inflight < self.depth {
                    let Some((direction, offset)) = gen.next_io() else {
                        exhausted = true;
                        break;
                    };
                    let slot = self.free.pop().expect("a free slot while below iodepth");
                    if direction == Direction::Write {
                        let index = if self.separate_write_bufs {
                            self.depth + slot as usize
                        } else {
                            slot as usize
                        };
                        let block =
                            &mut self.bufs.as_mut_slice()[index * self.bs..(index + 1) * self.bs];
                        io.writer.prepare(block, offset);
                    }
                    let entry = self.entry(io, slot, direction, offset);
                    self.slots[slot as usize].direction = direction;
                    self.slots[slot as usize].offset = offset;
                    // SAFETY: the entry points into `self.bufs` (slot `slot`, not in
                    // flight: it came from the free list) which outlives the I/O: every
                    // path out of this function first waits for all in-flight I/O.
                    // The queue has room: at most `depth` entries are ever in flight.
                    unsafe { self.ring.submission().push(&entry) }
                        .expect("submission queue sized to iodepth");
                    self.just_queued.push(slot);
                    inflight += 1;
                }
                let now = Instant::now();
                for &slot in &self.just_queued {
                    self.slots[slot as usize].submitted = now;
                }
            }
            if inflight == 0 {
                if fsync_due && failure.is_none() {
                    fsync_due = false;
                    match io.fsync() {
                        Ok(()) => rec.extend_end(Direction::Write, Instant::now()),
                        Err(e) => failure = Some(e),
                    }
                    if !exhausted {
                        continue;
                    }
                }
                break;
            }
            match self.ring.submit_and_wait(1) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(e) => {
                    // Cannot reap, so the kernel may still write into the buffers: leak
                    // them rather than free memory that is in use, and stop.
                    std::mem::forget(std::mem::replace(&mut self.bufs, AlignedBuf::new(0, 0)));
                    return Err(anyhow!(
                        "job '{}': io_uring_enter failed with {inflight} I/Os in flight: {e}",
                        io.name
                    ));
                }
            }
            let done = Instant::now();
            for cqe in self.ring.completion() {
                let slot = cqe.user_data() as u16;
                let s = self.slots[slot as usize];
                self.free.push(slot);
                inflight -= 1;
                let res = cqe.result();
                if res < 0 {
                    if failure.is_none() {
                        failure = Some(io.io_error(
                            s.direction,
                            s.offset,
                            std::io::Error::from_raw_os_error(-res),
                        ));
                    }
                    continue;
                }
                if res as u64 != bs {
                    if failure.is_none() {
                        failure = Some(io.short_io(s.direction, s.offset, res as u64));
                    }
                    continue;
                }
                rec.record(
                    s.direction,
                    bs,
                    (done - s.submitted).as_nanos() as u64,
                    done,
                );
                match s.direction {
                    Direction::Read => {
                        if io.checker.enabled {
                            let b = &self.bufs.as_slice()
                                [slot as usize * self.bs..(slot as usize + 1) * self.bs];
                            io.checker.check(b, s.offset, None);
                        }
                    }
                    Direction::Write => {
                        if io.writer.written_one() {
                            fsync_due = true;
                        }
                    }
                }
            }
            if let Some(deadline) = io.deadline {
                if done >= deadline {
                    exhausted = true;
                }
            }
        }
        match failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
