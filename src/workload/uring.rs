//! The io_uring engine: `iodepth` I/Os in flight per job clone, the queue refilled after
//! every reap, one registered buffer area and one registered file (fixed ops), one
//! submit+wait syscall per batch and no allocation per I/O. Latency is taken per I/O
//! from its submit batch to the reap that saw it (two clock reads per batch).
//!
//! The buffers, the submissions and the waiting for in-flight I/O belong to
//! [`linux_uapi::uring::Ring`], which keeps the raw code that hands memory to the kernel
//! out of this crate: this file is safe code.

use super::buffer::fill_pattern;
use super::clone_io::CloneIo;
use super::io_error::{IoFailure, IoOp};
use super::measure::Recorder;
use super::offsets::OffsetGen;
use super::result::Direction;
use super::spec::Pattern;
use crate::aligned::BUFFER_ALIGN;
use anyhow::{anyhow, Result};
use linux_uapi::uring::Ring;
use std::time::Instant;

#[derive(Clone, Copy)]
struct Slot {
    direction: Direction,
    offset: u64,
    submitted: Instant,
}

pub struct UringEngine {
    /// Ring slots 0..depth are read buffers, depth..2*depth write buffers when the job
    /// does both (reads must not overwrite the pattern); otherwise slots 0..depth.
    ring: Ring,
    depth: usize,
    bs: usize,
    separate_write_bufs: bool,
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
        let separate_write_bufs = reads && writes;
        let nbufs = if separate_write_bufs {
            2 * depth
        } else {
            depth
        };
        // A plain ring, as fio 3.33 sets it up. SINGLE_ISSUER + DEFER_TASKRUN (6.1+)
        // measured no better on a loop device (runs spread too widely to tell) and
        // would leave completions unprocessed until the next wait.
        let mut ring =
            Ring::new(file, depth as u32, nbufs, bs, align.max(BUFFER_ALIGN)).map_err(|e| {
                if e.raw_os_error().is_some() {
                    unavailable(e)
                } else {
                    anyhow!("io_uring engine with iodepth {depth} and bs {bs}: {e}")
                }
            })?;
        if writes {
            let from = if separate_write_bufs { depth * bs } else { 0 };
            let area = ring
                .area_mut()
                .ok_or_else(|| anyhow!("a new io_uring ring has I/O in flight"))?;
            // Every write buffer carries the same pattern, as the sync engine's one
            // buffer does, so verify knows what each block held.
            let (first, rest) = area[from..].split_at_mut(bs);
            fill_pattern(first, pattern, seed);
            for slot in rest.chunks_exact_mut(bs) {
                slot.copy_from_slice(first);
            }
        }
        Ok(UringEngine {
            ring,
            depth,
            bs,
            separate_write_bufs,
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

    /// The ring slot whose buffer an I/O of `direction` on engine slot `slot` uses.
    fn ring_slot(&self, slot: u16, direction: Direction) -> usize {
        if direction == Direction::Write && self.separate_write_bufs {
            self.depth + slot as usize
        } else {
            slot as usize
        }
    }

    /// Prepare (writes) and queue one I/O on engine slot `slot`.
    fn queue(
        &mut self,
        io: &mut CloneIo<'_>,
        slot: u16,
        direction: Direction,
        offset: u64,
    ) -> Result<()> {
        let index = self.ring_slot(slot, direction);
        let len = self.bs as u32;
        let pushed = match direction {
            Direction::Read => self.ring.push_read(index, offset, len, slot as u64),
            Direction::Write => match self.ring.slot_mut(index) {
                Some(block) => {
                    io.writer.prepare(block, offset);
                    self.ring.push_write(index, offset, len, slot as u64)
                }
                None => Err(linux_uapi::uring::PushError::SlotInFlight),
            },
        };
        pushed.map_err(|e| anyhow!("job '{}': io_uring engine slot {slot}: {e}", io.name))
    }

    /// Issue the generator's I/Os, keeping `iodepth` in flight, until it is done, the
    /// deadline passes or a stop flag is set; always drains what is in flight.
    pub fn run(
        &mut self,
        io: &mut CloneIo<'_>,
        gen: &mut OffsetGen,
        rec: &mut Recorder,
    ) -> Result<()> {
        let mut f = Flight {
            inflight: 0,
            exhausted: false,
            fsync_due: false,
            failure: None,
        };
        loop {
            if f.may_queue() {
                if let Err(e) = io.stop.check() {
                    f.failure = Some(e);
                }
            }
            if f.may_queue() {
                self.fill(io, gen, &mut f);
            }
            if f.inflight == 0 {
                if f.fsync_due && f.failure.is_none() {
                    f.fsync_due = false;
                    match io.fsync() {
                        Ok(()) => rec.extend_end(Direction::Write, Instant::now()),
                        Err(e) => f.failure = Some(e),
                    }
                    if !f.exhausted {
                        continue;
                    }
                }
                break;
            }
            if !self.submit_and_wait(io, f.inflight)? {
                continue;
            }
            let done = Instant::now();
            self.reap(io, rec, &mut f, done);
            if let Some(deadline) = io.deadline {
                if done >= deadline {
                    f.exhausted = true;
                }
            }
        }
        match f.failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Queues the generator's next I/Os until `iodepth` are in flight. They all get one
    /// submit time: they reach the kernel in the same syscall.
    fn fill(&mut self, io: &mut CloneIo<'_>, gen: &mut OffsetGen, f: &mut Flight) {
        self.just_queued.clear();
        while f.inflight < self.depth {
            let Some((direction, offset)) = gen.next_io() else {
                f.exhausted = true;
                break;
            };
            if gen.take_wrapped() {
                io.new_pass();
            }
            let slot = self.free.pop().expect("a free slot while below iodepth");
            if let Err(e) = self.queue(io, slot, direction, offset) {
                self.free.push(slot);
                f.failure = Some(e);
                break;
            }
            self.slots[slot as usize].direction = direction;
            self.slots[slot as usize].offset = offset;
            self.just_queued.push(slot);
            f.inflight += 1;
        }
        let now = Instant::now();
        for &slot in &self.just_queued {
            self.slots[slot as usize].submitted = now;
        }
    }

    /// Submits what is queued and waits for one completion. `Ok(false)`: interrupted by
    /// a signal (EINTR), call again.
    fn submit_and_wait(&mut self, io: &CloneIo<'_>, inflight: usize) -> Result<bool> {
        match self.ring.submit_and_wait(1) {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(false),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(true),
            Err(e) => {
                // Cannot reap: the ring keeps its buffers until the kernel is done
                // with them (its drop waits, or leaks them if it cannot).
                Err(IoFailure::new(
                    IoOp::Submit {
                        in_flight: inflight,
                    },
                    None,
                    0,
                    io.path,
                    io.name,
                )
                .errno(&e)
                .into())
            }
        }
    }

    /// Takes every completion the kernel has posted: frees its slot, records its latency
    /// (from its submit batch to `done`), checks reads and counts writes toward fsync;
    /// the first error or short I/O becomes the run's failure.
    fn reap(&mut self, io: &mut CloneIo<'_>, rec: &mut Recorder, f: &mut Flight, done: Instant) {
        let bs = self.bs as u64;
        let slots = &self.slots;
        let free = &mut self.free;
        self.ring.reap(|c, buf| {
            let slot = c.user_data as u16;
            let s = slots[slot as usize];
            free.push(slot);
            f.inflight -= 1;
            let res = c.result;
            if res < 0 {
                if f.failure.is_none() {
                    f.failure = Some(io.io_error(
                        s.direction,
                        s.offset,
                        std::io::Error::from_raw_os_error(-res),
                    ));
                }
                return;
            }
            if res as u64 != bs {
                if f.failure.is_none() {
                    f.failure = Some(io.short_io(s.direction, s.offset, res as u64));
                }
                return;
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
                        io.checker.check(buf, s.offset, None);
                    }
                }
                Direction::Write => {
                    if io.writer.written_one() {
                        f.fsync_due = true;
                    }
                }
            }
        });
    }
}

/// Where one [`UringEngine::run`] stands.
struct Flight {
    /// I/Os submitted and not reaped yet.
    inflight: usize,
    /// The generator is done or the deadline passed: queue nothing more.
    exhausted: bool,
    /// A write completed an fsync interval: queue nothing, drain, fsync, go on.
    fsync_due: bool,
    /// The first error: queue nothing more, drain, then return it.
    failure: Option<anyhow::Error>,
}

impl Flight {
    fn may_queue(&self) -> bool {
        !self.exhausted && self.failure.is_none() && !self.fsync_due
    }
}
