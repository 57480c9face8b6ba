//! The io_uring engine: `iodepth` I/Os in flight per job clone, the queue refilled after
//! every reap through one submission-queue update, one registered buffer area and one
//! registered file (fixed ops), one submit+wait syscall per batch and no allocation per
//! I/O. The ring is set up as fio's engine sets up its own
//! (completion queue of the submission queue's size, COOP_TASKRUN, SINGLE_ISSUER |
//! DEFER_TASKRUN, each dropped when the kernel refuses it). Latency is taken per I/O
//! from its submit batch to the reap that saw it (two clock reads per batch).
//!
//! The buffers, the slots, the submissions and the waiting for in-flight I/O belong to
//! [`linux_uapi::uring::Ring`], which keeps the raw code that hands memory to the kernel
//! out of this crate: this file is safe code.

use super::buffer::fill_pattern;
use super::clone_io::CloneIo;
use super::completion::{complete, fsync, Finished};
use super::offsets::OffsetGen;
use super::recorder::Recorder;
use crate::aligned::BUFFER_ALIGN;
use crate::plan::workload::JobSpec;
use crate::workload::io_error::{IoFailure, IoOp};
use crate::workload::result::Direction;
use anyhow::{anyhow, Result};
use linux_uapi::uring::Ring;
use std::time::Instant;

/// The ring's pool of read buffers (and of write buffers when the job only writes).
const POOL_0: usize = 0;
/// The pool of write buffers of a job that also reads: reads must not overwrite the
/// pattern the writes carry.
const WRITE_POOL: usize = 1;

/// What the I/O on a ring slot is (set when it is pushed, read when it is reaped).
#[derive(Clone, Copy)]
struct Slot {
    direction: Direction,
    offset: u64,
    /// When its batch was submitted, ns after [`UringEngine::epoch`].
    submitted_ns: u64,
}

pub struct UringEngine {
    /// One pool of `iodepth` slots, two (reads, writes) when the job does both; the ring
    /// hands out the slots.
    ring: Ring,
    depth: usize,
    bs: usize,
    write_pool: usize,
    /// By ring slot.
    slots: Vec<Slot>,
    /// Completions each wait asks for (`iodepth_batch_complete_min`, 1 by default), or
    /// all in flight when fewer.
    complete_min: usize,
    /// The slots of the batch `fill` is queueing.
    just_queued: Vec<usize>,
    /// Origin of the submit and reap times.
    epoch: Instant,
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
    /// The ring for `job` (its iodepth, bs, read/write mix, pattern and completion
    /// batch) on `file`, buffers aligned to `align`, write buffers filled from `seed`.
    pub fn new(file: &std::fs::File, job: &JobSpec, align: usize, seed: u64) -> Result<Self> {
        let (depth, bs) = (job.iodepth as usize, job.bs as usize);
        let (reads, writes, pattern) = (job.rw.reads(), job.rw.writes(), job.pattern);
        let separate_write_bufs = reads && writes;
        let pools: &[usize] = if separate_write_bufs {
            &[depth, depth]
        } else {
            &[depth]
        };
        let mut ring =
            Ring::new(file, depth as u32, pools, bs, align.max(BUFFER_ALIGN)).map_err(|e| {
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
        let slots = ring.slots();
        Ok(UringEngine {
            ring,
            depth,
            bs,
            write_pool: if separate_write_bufs {
                WRITE_POOL
            } else {
                POOL_0
            },
            slots: vec![
                Slot {
                    direction: Direction::Read,
                    offset: 0,
                    submitted_ns: 0,
                };
                slots
            ],
            complete_min: job.iodepth_batch_complete_min.unwrap_or(1).max(1) as usize,
            just_queued: Vec::with_capacity(depth),
            epoch: Instant::now(),
        })
    }

    /// What the ring does without, on this kernel, as fio would not: one line, None when
    /// it has everything (registered buffers and file, every setup flag).
    pub fn fallbacks(&self) -> Option<String> {
        let mut missing = Vec::new();
        if !self.ring.fixed_buffers() {
            missing.push("registered buffers (plain READ/WRITE instead of READ_FIXED/WRITE_FIXED)");
        }
        if !self.ring.fixed_file() {
            missing.push("a registered file (a plain descriptor)");
        }
        let setup = self.ring.setup();
        if !setup.defer_taskrun {
            missing.push("IORING_SETUP_SINGLE_ISSUER|DEFER_TASKRUN");
        }
        if !setup.coop_taskrun {
            missing.push("IORING_SETUP_COOP_TASKRUN");
        }
        if !setup.cq_size {
            missing.push("IORING_SETUP_CQSIZE");
        }
        (!missing.is_empty()).then(|| format!("io_uring ring without {}", missing.join(", ")))
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
                    if let Err(e) = fsync(io, rec) {
                        f.failure = Some(e);
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
            if io.past_deadline(done) {
                f.exhausted = true;
            }
        }
        match f.failure {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Queues the generator's next I/Os until `iodepth` are in flight, in one batch of
    /// the ring (one submission-queue update); the wait that follows submits them in one
    /// syscall, as fio does with `iodepth_batch_submit = iodepth`. They all get one
    /// submit time, read once.
    fn fill(&mut self, io: &mut CloneIo<'_>, gen: &mut OffsetGen, f: &mut Flight) {
        let len = self.bs as u32;
        self.just_queued.clear();
        let mut batch = self.ring.batch();
        while f.inflight < self.depth {
            let Some((direction, offset)) = gen.next_io() else {
                f.exhausted = true;
                break;
            };
            if gen.take_wrapped() {
                io.new_pass();
            }
            let pushed = match direction {
                Direction::Read => batch.push_read(POOL_0, offset, len),
                Direction::Write => batch.push_write(self.write_pool, offset, len, |block| {
                    io.writer.prepare(block, offset)
                }),
            };
            let slot = match pushed {
                Ok(slot) => slot,
                Err(e) => {
                    f.failure = Some(anyhow!("job '{}': io_uring engine: {e}", io.name));
                    break;
                }
            };
            self.slots[slot].direction = direction;
            self.slots[slot].offset = offset;
            self.just_queued.push(slot);
            f.inflight += 1;
        }
        drop(batch);
        let now = self.epoch.elapsed().as_nanos() as u64;
        for &slot in &self.just_queued {
            self.slots[slot].submitted_ns = now;
        }
    }

    fn submit_failed(
        &self,
        io: &CloneIo<'_>,
        inflight: usize,
        e: &std::io::Error,
    ) -> anyhow::Error {
        IoFailure::new(
            IoOp::Submit {
                in_flight: inflight,
            },
            None,
            0,
            io.path,
            io.name,
        )
        .errno(e)
        .into()
    }

    /// Submits what is queued and waits for `complete_min` completions (all in flight
    /// when fewer are). `Ok(false)`: interrupted by a signal (EINTR), call again.
    fn submit_and_wait(&mut self, io: &CloneIo<'_>, inflight: usize) -> Result<bool> {
        let want = self.complete_min.min(inflight);
        match self.ring.submit_and_wait(want) {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => Ok(false),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(true),
            // Cannot reap: the ring keeps its buffers until the kernel is done with them
            // (its drop waits, or leaks them if it cannot).
            Err(e) => Err(self.submit_failed(io, inflight, &e)),
        }
    }

    /// Takes every completion the kernel has posted through [`complete`], with its
    /// latency from its submit batch to `done`; a due fsync waits for the drain, the first
    /// error or short I/O becomes the run's failure. `done` is converted once for all.
    fn reap(&mut self, io: &mut CloneIo<'_>, rec: &mut Recorder, f: &mut Flight, done: Instant) {
        let slots = &self.slots;
        let done_ns = done.saturating_duration_since(self.epoch).as_nanos() as u64;
        // None: during ramp_time, not recorded.
        let measured_ns = rec.since_start(done);
        self.ring.reap(|c, buf| {
            let s = slots[c.slot];
            f.inflight -= 1;
            let res = c.result;
            let completed = if res < 0 {
                let errno = std::io::Error::from_raw_os_error(-res);
                Err(io.io_error(s.direction, s.offset, errno))
            } else {
                let finished = Finished {
                    direction: s.direction,
                    offset: s.offset,
                    moved: Some(res as u64),
                    latency_ns: done_ns.saturating_sub(s.submitted_ns),
                    measured_ns,
                    block: buf,
                };
                complete(io, rec, finished)
            };
            match completed {
                Ok(fsync_due) => f.fsync_due |= fsync_due,
                Err(e) => {
                    f.failure.get_or_insert(e);
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
