//! A safe io_uring ring for block I/O: the ring owns the buffers the kernel reads and
//! writes, so no safe caller can free, move or touch memory while an I/O uses it.
//!
//! [`Ring`] allocates one aligned buffer area, split into slots of `slot_bytes` each and
//! the slots into pools (e.g. read buffers and write buffers), registers the area as fixed
//! buffer 0 (when the kernel allows) and its own duplicate of the file as fixed file 0
//! (when the kernel allows), and builds every submission itself. The ring is the one
//! allocator of its slots: a push takes a free slot of the pool it names and says which
//! (`push_read`, `push_write`, `push_fsync`, on the ring or on a [`Batch`] of pushes that
//! share one submission-queue update). A slot is in flight from its push until its
//! completion is reaped; while it is, its buffer cannot be borrowed. At most `sq_entries`
//! operations are in flight, so the submission queue never overflows and the completion
//! queue (at least as large) never drops a completion. Dropping the ring first waits for
//! every I/O in flight; if it cannot wait, it leaks the buffer area instead of freeing
//! memory the kernel may still write to.
//!
//! The ring is set up as fio's io_uring engine sets up its own: a completion queue as
//! large as the submission queue (CQSIZE), completions that do not interrupt the task
//! (COOP_TASKRUN) and, one task submitting, completions processed only when the task
//! waits for them (SINGLE_ISSUER | DEFER_TASKRUN), and as liburing sets up its rings, without
//! the submission queue's index array (NO_SQARRAY, [`Setup::no_sq_array`] says why); a
//! kernel that refuses a flag (EINVAL: older than 6.6, 6.1, 5.19 or 5.5) gets the ring
//! without it ([`Setup`]). A ring is used by the thread that created it (it is not `Send`).
//!
//! This module is the only place that hands memory to io_uring; the `unsafe` it needs is
//! here, each block with the invariant that makes it sound.

extern crate std;

use core::fmt;
use core::marker::PhantomData;
use core::ptr::NonNull;
use io_uring::{opcode, squeue, types, IoUring};
use std::alloc::{self, Layout};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::vec;
use std::vec::Vec;

/// Largest area registered as a fixed buffer: the kernel refuses one iovec over 1 GiB.
const MAX_FIXED_BYTES: usize = 1 << 30;

/// The buffer area: one zeroed, aligned allocation, freed on drop unless leaked.
struct Area {
    ptr: NonNull<u8>,
    layout: Layout,
    leaked: bool,
}

impl Area {
    fn new(len: usize, align: usize) -> io::Result<Area> {
        let layout = Layout::from_size_align(len, align)
            .map_err(|_| invalid("buffer area size or alignment out of range"))?;
        // SAFETY: `layout` has a non-zero size (Ring::new checks slots and slot_bytes are
        // non-zero) and a power-of-two alignment (checked by Layout::from_size_align).
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                "cannot allocate the io_uring buffer area",
            )
        })?;
        Ok(Area {
            ptr,
            layout,
            leaked: false,
        })
    }

    /// Bytes `start..start + len`, which the caller has checked lie inside the area and
    /// are not in use by the kernel.
    fn bytes(&self, start: usize, len: usize) -> &[u8] {
        assert!(start <= self.layout.size() && len <= self.layout.size() - start);
        // SAFETY: the range lies inside the live allocation (asserted above), which was
        // zero-initialised; the callers (Ring::slot, Ring::reap) only ask for slots that are
        // not in flight, so the kernel does not write to these bytes while the shared
        // borrow, tied to `&self`, lasts.
        unsafe { core::slice::from_raw_parts(self.ptr.as_ptr().add(start), len) }
    }

    /// Like [`Area::bytes`], mutable; `&mut self` makes the borrow exclusive in userspace.
    fn bytes_mut(&mut self, start: usize, len: usize) -> &mut [u8] {
        assert!(start <= self.layout.size() && len <= self.layout.size() - start);
        // SAFETY: as in `bytes`: inside the live, initialised allocation, and the callers
        // (Ring::slot_mut, Ring::area_mut, Batch::push_rw before it pushes a slot it has just
        // taken off a free list) only ask for memory no I/O in flight uses; the
        // `&mut self` borrow keeps every other userspace access out while it lasts.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr().add(start), len) }
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        if !self.leaked {
            // SAFETY: `ptr` came from `alloc_zeroed(self.layout)` and is freed only here,
            // once; Ring::drop sets `leaked` when it could not wait for the kernel to finish
            // with the memory.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), self.layout) }
        }
    }
}

/// Why a push was refused. Nothing was queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushError {
    /// The pool index is not below the ring's pool count.
    NoSuchPool,
    /// Every slot of the pool is in flight (not reaped yet).
    PoolFull,
    /// The length is larger than a slot.
    TooLong,
    /// `sq_entries` operations are in flight already.
    QueueFull,
}

impl fmt::Display for PushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PushError::NoSuchPool => "io_uring slot pool index out of range",
            PushError::PoolFull => "every io_uring slot of the pool is in flight (not reaped yet)",
            PushError::TooLong => "io_uring I/O length larger than its slot",
            PushError::QueueFull => "io_uring queue full (as many I/Os in flight as entries)",
        })
    }
}

impl std::error::Error for PushError {}

/// One reaped operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The slot the push took; it is free again.
    pub slot: usize,
    /// Bytes transferred (0 for fsync), or a negative errno.
    pub result: i32,
}

/// The io_uring_setup flags a ring asked for and the kernel accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    /// IORING_SETUP_CQSIZE: a completion queue as large as the submission queue (5.5+).
    pub cq_size: bool,
    /// IORING_SETUP_COOP_TASKRUN: a completion does not interrupt the task (5.19+).
    pub coop_taskrun: bool,
    /// IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN: completions are processed
    /// when the task waits for them, in one go (6.1+).
    pub defer_taskrun: bool,
    /// IORING_SETUP_NO_SQARRAY: no index array, the kernel takes the entries in ring order
    /// (6.6+). A ring with the array holds the kernel's `io_key_has_sqarray` static key
    /// (io_uring/io_uring.c, io_uring_create() and io_ring_ctx_free(), from Linux 6.13's
    /// "io_uring: static_key for !IORING_SETUP_NO_SQARRAY"; its release deferred by a
    /// second by "io_uring: delay sqarray static branch disablement", 2026, which Debian's
    /// 7.2.13 has): once the last such ring is gone the key is switched off, and on 32-bit
    /// ARM that patches the kernel's text under stop_machine() (arch/arm/kernel/patch.c,
    /// patch_text()), halting every CPU in the middle of whatever runs then, such as the
    /// next run. Without the array the key is never touched.
    pub no_sq_array: bool,
}

impl Setup {
    /// Every flag [`Ring::new`] asks for.
    pub const ALL: Setup = Setup {
        cq_size: true,
        coop_taskrun: true,
        defer_taskrun: true,
        no_sq_array: true,
    };
    /// No flag: the ring of a 5.1 kernel.
    pub const PLAIN: Setup = Setup {
        cq_size: false,
        coop_taskrun: false,
        defer_taskrun: false,
        no_sq_array: false,
    };

    /// `self` without its newest flag (fio's order of retries), None when it has none.
    fn without_newest(self) -> Option<Setup> {
        if self.no_sq_array {
            Some(Setup {
                no_sq_array: false,
                ..self
            })
        } else if self.defer_taskrun {
            Some(Setup {
                defer_taskrun: false,
                ..self
            })
        } else if self.coop_taskrun {
            Some(Setup {
                coop_taskrun: false,
                ..self
            })
        } else if self.cq_size {
            Some(Setup::PLAIN)
        } else {
            None
        }
    }

    /// Set up a ring of `entries` with the flags of `self`; on EINVAL try again without
    /// the newest flag, as fio does. Returns the ring and the flags it has.
    fn build(self, entries: u32) -> io::Result<(IoUring, Setup)> {
        let mut want = self;
        loop {
            let mut builder = IoUring::builder();
            if want.cq_size {
                builder.setup_cqsize(entries);
            }
            if want.coop_taskrun {
                builder.setup_coop_taskrun();
            }
            if want.defer_taskrun {
                builder.setup_single_issuer().setup_defer_taskrun();
            }
            if want.no_sq_array {
                builder.setup_no_sqarray();
            }
            match builder.build(entries) {
                Ok(ring) => return Ok((ring, want)),
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => match want.without_newest() {
                    Some(fewer) => want = fewer,
                    None => return Err(e),
                },
                Err(e) => return Err(e),
            }
        }
    }
}

/// An io_uring ring with its own buffer area (see the module documentation).
pub struct Ring {
    // Field order is drop order: the ring is closed before the area is freed and before
    // the file it may have registered is closed.
    ring: IoUring,
    slots: Slots,
    setup: Setup,
    /// Not `Send`: with SINGLE_ISSUER only the creating thread may submit and wait (the
    /// kernel refuses others with EEXIST, and a drop elsewhere would have to leak).
    _one_thread: PhantomData<*const ()>,
}

/// The buffer area and its slots: everything a push changes besides the submission
/// queue.
struct Slots {
    area: Area,
    file: File,
    slot_bytes: usize,
    fixed_buffers: bool,
    fixed_file: bool,
    max_in_flight: usize,
    in_flight: usize,
    /// Whether each slot is in flight.
    busy: Vec<bool>,
    /// The pool of each slot.
    pool_of: Vec<usize>,
    /// The free slots of each pool, a stack (the last slot freed is taken first).
    free: Vec<Vec<usize>>,
}

fn invalid(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

impl Ring {
    /// Set up a ring of `entries` submission entries for I/O on `file`, with `pools[p]`
    /// slots of `slot_bytes` each in pool `p` (pool 0 first in the area); the area starts
    /// at a multiple of `align` (a power of two). Asks for every [`Setup`] flag and takes
    /// what the kernel accepts. Errors from `io_uring_setup` carry the OS error (ENOSYS,
    /// EPERM: io_uring not available); a bad argument gives an InvalidInput error without
    /// one. Failing to register the buffers or the file is not an error: the ring then
    /// uses plain opcodes ([`Ring::fixed_buffers`], [`Ring::fixed_file`]).
    pub fn new(
        file: impl AsFd,
        entries: u32,
        pools: &[usize],
        slot_bytes: usize,
        align: usize,
    ) -> io::Result<Ring> {
        Ring::with_setup(file, entries, pools, slot_bytes, align, Setup::ALL)
    }

    /// [`Ring::new`] asking only for the flags of `setup` (e.g. [`Setup::PLAIN`]: the
    /// ring an old kernel gives).
    pub fn with_setup(
        file: impl AsFd,
        entries: u32,
        pools: &[usize],
        slot_bytes: usize,
        align: usize,
        setup: Setup,
    ) -> io::Result<Ring> {
        if pools.is_empty() || pools.contains(&0) || slot_bytes == 0 {
            return Err(invalid(
                "an io_uring ring needs pools of at least one slot of one byte",
            ));
        }
        if u32::try_from(slot_bytes).is_err() {
            return Err(invalid("an io_uring slot is limited to 4 GiB - 1 bytes"));
        }
        let slots = pools
            .iter()
            .try_fold(0usize, |sum, &n| sum.checked_add(n))
            .ok_or_else(|| invalid("io_uring buffer area too large"))?;
        let len = slots
            .checked_mul(slot_bytes)
            .ok_or_else(|| invalid("io_uring buffer area too large"))?;
        let mut area = Area::new(len, align)?;
        let file = File::from(file.as_fd().try_clone_to_owned()?);
        let (ring, setup) = setup.build(entries)?;
        let fixed_buffers = len <= MAX_FIXED_BYTES && {
            let whole = area.bytes_mut(0, len);
            let iovec = libc::iovec {
                iov_base: whole.as_mut_ptr().cast(),
                iov_len: whole.len(),
            };
            // SAFETY: the iovec covers exactly the allocation `area`, which the ring owns
            // and never reallocates; it is freed only after `ring` is closed (field order)
            // and, through Ring::drop, only once no I/O is in flight. Registration only
            // pins the pages; the kernel writes to them only for operations pushed here.
            unsafe { ring.submitter().register_buffers(&[iovec]) }.is_ok()
        };
        let fixed_file = ring.submitter().register_files(&[file.as_raw_fd()]).is_ok();
        let max_in_flight = ring.params().sq_entries() as usize;
        let mut pool_of = Vec::with_capacity(slots);
        let mut free = Vec::with_capacity(pools.len());
        for (pool, &n) in pools.iter().enumerate() {
            let first = pool_of.len();
            pool_of.resize(first + n, pool);
            free.push((first..first + n).rev().collect());
        }
        Ok(Ring {
            ring,
            slots: Slots {
                area,
                file,
                slot_bytes,
                fixed_buffers,
                fixed_file,
                max_in_flight,
                in_flight: 0,
                busy: vec![false; slots],
                pool_of,
                free,
            },
            setup,
            _one_thread: PhantomData,
        })
    }

    /// The setup flags the kernel accepted.
    pub fn setup(&self) -> Setup {
        self.setup
    }

    /// Whether reads and writes use the registered buffer (READ_FIXED / WRITE_FIXED).
    pub fn fixed_buffers(&self) -> bool {
        self.slots.fixed_buffers
    }

    /// Whether operations name the registered file rather than a descriptor.
    pub fn fixed_file(&self) -> bool {
        self.slots.fixed_file
    }

    pub fn slots(&self) -> usize {
        self.slots.busy.len()
    }

    pub fn slot_bytes(&self) -> usize {
        self.slots.slot_bytes
    }

    /// Operations pushed and not reaped yet.
    pub fn in_flight(&self) -> usize {
        self.slots.in_flight
    }

    /// Slot `slot`'s buffer, or None when the slot does not exist or is in flight.
    pub fn slot(&self, slot: usize) -> Option<&[u8]> {
        let s = &self.slots;
        match s.busy.get(slot) {
            Some(false) => Some(s.area.bytes(slot * s.slot_bytes, s.slot_bytes)),
            _ => None,
        }
    }

    /// Slot `slot`'s buffer to fill, or None when the slot does not exist or is in flight.
    pub fn slot_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        let s = &mut self.slots;
        match s.busy.get(slot) {
            Some(false) => Some(s.area.bytes_mut(slot * s.slot_bytes, s.slot_bytes)),
            _ => None,
        }
    }

    /// The whole area (slot after slot, pool after pool), or None while anything is in
    /// flight.
    pub fn area_mut(&mut self) -> Option<&mut [u8]> {
        let s = &mut self.slots;
        if s.in_flight > 0 {
            return None;
        }
        let len = s.busy.len() * s.slot_bytes;
        Some(s.area.bytes_mut(0, len))
    }

    /// Pushes that update the submission queue once, when the batch is dropped (before
    /// the next [`Ring::submit_and_wait`], which the borrow makes sure of).
    pub fn batch(&mut self) -> Batch<'_> {
        Batch {
            sq: self.ring.submission(),
            slots: &mut self.slots,
        }
    }

    /// Queue a read of `len` bytes at file offset `offset` into a free slot of `pool`;
    /// returns the slot.
    pub fn push_read(&mut self, pool: usize, offset: u64, len: u32) -> Result<usize, PushError> {
        self.batch().push_read(pool, offset, len)
    }

    /// Queue a write of the first `len` bytes of a free slot of `pool` at file offset
    /// `offset`, after `fill` has prepared the slot; returns the slot.
    pub fn push_write(
        &mut self,
        pool: usize,
        offset: u64,
        len: u32,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<usize, PushError> {
        self.batch().push_write(pool, offset, len, fill)
    }

    /// Queue an fsync of the whole file; it occupies a slot of `pool` (not its buffer)
    /// until reaped. Returns the slot.
    pub fn push_fsync(&mut self, pool: usize) -> Result<usize, PushError> {
        self.batch().push_fsync(pool)
    }

    /// Submit what was pushed and wait until at least `want` completions are ready
    /// (capped at the number in flight, so this never waits for nothing). With
    /// DEFER_TASKRUN the kernel posts completions only in such a wait: reap after one.
    pub fn submit_and_wait(&mut self, want: usize) -> io::Result<usize> {
        self.ring.submit_and_wait(want.min(self.slots.in_flight))
    }

    /// Hand every ready completion to `f`, with the slot's buffer (now free again).
    pub fn reap(&mut self, mut f: impl FnMut(Completion, &[u8])) {
        let s = &mut self.slots;
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            // Every entry carries the index of a slot it marked busy; skip anything else.
            if !matches!(s.busy.get(slot), Some(true)) {
                continue;
            }
            s.busy[slot] = false;
            s.in_flight -= 1;
            s.free[s.pool_of[slot]].push(slot);
            let c = Completion {
                slot,
                result: cqe.result(),
            };
            f(c, s.area.bytes(slot * s.slot_bytes, s.slot_bytes));
        }
    }
}

/// Pushes through one submission-queue handle: the queue's tail is published to the
/// kernel once, when the batch is dropped, instead of once per push.
pub struct Batch<'a> {
    sq: squeue::SubmissionQueue<'a>,
    slots: &'a mut Slots,
}

impl Batch<'_> {
    /// [`Ring::push_read`] in this batch.
    pub fn push_read(&mut self, pool: usize, offset: u64, len: u32) -> Result<usize, PushError> {
        self.push_rw(false, pool, offset, len, |_| {})
    }

    /// [`Ring::push_write`] in this batch.
    pub fn push_write(
        &mut self,
        pool: usize,
        offset: u64,
        len: u32,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<usize, PushError> {
        self.push_rw(true, pool, offset, len, fill)
    }

    /// [`Ring::push_fsync`] in this batch.
    pub fn push_fsync(&mut self, pool: usize) -> Result<usize, PushError> {
        let slot = self.take(pool)?;
        let s = &*self.slots;
        let entry = if s.fixed_file {
            opcode::Fsync::new(types::Fixed(0)).build()
        } else {
            opcode::Fsync::new(types::Fd(s.file.as_raw_fd())).build()
        };
        self.push(slot, entry)
    }

    /// A free slot of `pool`, taken off its free list (a failed push gives it back).
    fn take(&mut self, pool: usize) -> Result<usize, PushError> {
        let s = &mut *self.slots;
        let free = s.free.get_mut(pool).ok_or(PushError::NoSuchPool)?;
        if s.in_flight >= s.max_in_flight {
            return Err(PushError::QueueFull);
        }
        free.pop().ok_or(PushError::PoolFull)
    }

    fn push_rw(
        &mut self,
        write: bool,
        pool: usize,
        offset: u64,
        len: u32,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<usize, PushError> {
        if len as usize > self.slots.slot_bytes {
            return Err(PushError::TooLong);
        }
        let slot = self.take(pool)?;
        let s = &mut *self.slots;
        let start = slot * s.slot_bytes;
        if write {
            // Not in flight: just taken off the free list.
            fill(s.area.bytes_mut(start, s.slot_bytes));
        }
        // In bounds: slot < slots and len <= slot_bytes; the area is slots * slot_bytes.
        let ptr = s.area.ptr.as_ptr().wrapping_add(start);
        macro_rules! build {
            ($fd:expr) => {
                match (write, s.fixed_buffers) {
                    (false, true) => opcode::ReadFixed::new($fd, ptr, len, 0)
                        .offset(offset)
                        .build(),
                    (true, true) => opcode::WriteFixed::new($fd, ptr, len, 0)
                        .offset(offset)
                        .build(),
                    (false, false) => opcode::Read::new($fd, ptr, len).offset(offset).build(),
                    (true, false) => opcode::Write::new($fd, ptr, len).offset(offset).build(),
                }
            };
        }
        let entry = if s.fixed_file {
            build!(types::Fixed(0))
        } else {
            build!(types::Fd(s.file.as_raw_fd()))
        };
        self.push(slot, entry)
    }

    /// Queue `entry` for `slot`, just taken off its pool's free list, and mark it in
    /// flight.
    fn push(&mut self, slot: usize, entry: squeue::Entry) -> Result<usize, PushError> {
        let entry = entry.user_data(slot as u64);
        // SAFETY: `entry` was built here and points only at slot `slot` of the area (or
        // at nothing, for fsync) and at the ring's file or the registered copy of it.
        // The slot was free (taken off its pool's free list, which holds only slots not
        // in flight), so no userspace borrow of it exists (slot/slot_mut/area_mut borrow
        // the ring, which this batch borrows mutably) and none can be made until its
        // completion is reaped; the area outlives the I/O because Ring::drop waits for
        // every operation in flight or leaks the area. The file stays open as long as
        // the ring.
        // Does not fail: at most max_in_flight = sq_entries operations are in flight
        // (take), and unsubmitted entries are among them.
        if unsafe { self.sq.push(&entry) }.is_err() {
            let s = &mut *self.slots;
            s.free[s.pool_of[slot]].push(slot);
            return Err(PushError::QueueFull);
        }
        let s = &mut *self.slots;
        s.busy[slot] = true;
        s.in_flight += 1;
        Ok(slot)
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        while self.slots.in_flight > 0 {
            match self.ring.submit_and_wait(self.slots.in_flight) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(_) => {
                    // The kernel may still write into the area: never free it.
                    self.slots.area.leaked = true;
                    return;
                }
            }
            self.reap(|_, _| {});
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};
    use std::os::unix::net::UnixStream;
    use std::time::{Duration, Instant};

    const BS: usize = 4096;

    fn scratch() -> File {
        let mut f = tempfile::tempfile().expect("scratch file");
        f.write_all(&[0xee; 16 * BS]).unwrap();
        f
    }

    fn wait_one(ring: &mut Ring) -> (Completion, Vec<u8>) {
        ring.submit_and_wait(1).expect("io_uring_enter");
        let mut got = Vec::new();
        ring.reap(|c, buf| got.push((c, buf.to_vec())));
        assert_eq!(got.len(), 1, "one completion");
        got.pop().unwrap()
    }

    /// Every set of flags the ring may end up with (a kernel that refuses the newer
    /// ones gets the older), down to none: the same I/O works with each.
    #[test]
    fn reads_back_what_it_wrote_with_every_setup() {
        let mut setup = Some(Setup::ALL);
        while let Some(want) = setup {
            reads_back_what_it_wrote(want);
            setup = want.without_newest();
        }
    }

    fn reads_back_what_it_wrote(want: Setup) {
        let mut file = scratch();
        // Pool 0: slots 0 and 1, pool 1: slot 2.
        let mut ring = Ring::with_setup(&file, 4, &[2, 1], BS, BS, want).expect("io_uring");
        assert_eq!(ring.setup(), want, "this kernel takes {want:?}");
        assert_eq!(ring.slots(), 3);
        assert_eq!(ring.slot(0).unwrap().as_ptr() as usize % BS, 0);
        let mut pattern = vec![0u8; BS];
        for (i, b) in pattern.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        let slot = ring
            .push_write(1, 2 * BS as u64, BS as u32, |buf| {
                buf.copy_from_slice(&pattern)
            })
            .unwrap();
        assert_eq!(slot, 2, "pool 1's one slot");
        let (c, _) = wait_one(&mut ring);
        assert_eq!(
            c,
            Completion {
                slot: 2,
                result: BS as i32
            }
        );
        let slot = ring.push_fsync(0).unwrap();
        let (c, _) = wait_one(&mut ring);
        assert_eq!((c.slot, c.result), (slot, 0));
        let slot = ring.push_read(0, 2 * BS as u64, BS as u32).unwrap();
        let (c, buf) = wait_one(&mut ring);
        assert_eq!((c.slot, c.result), (slot, BS as i32));
        assert_eq!(buf, pattern);
        assert_eq!(ring.slot(slot).unwrap(), &pattern[..]);
        assert_eq!(ring.in_flight(), 0);
        drop(ring);
        // The data reached the file, not only the ring's own buffer.
        let mut on_disk = vec![0u8; BS];
        file.seek(SeekFrom::Start(2 * BS as u64)).unwrap();
        file.read_exact(&mut on_disk).unwrap();
        assert_eq!(on_disk, pattern);
    }

    #[test]
    fn a_batch_is_submitted_whole_and_in_flight_slots_cannot_be_borrowed() {
        let file = scratch();
        let mut ring = Ring::new(&file, 8, &[4, 4], BS, BS).expect("io_uring available");
        let mut taken = Vec::new();
        {
            let mut batch = ring.batch();
            for i in 0..4u64 {
                taken.push(batch.push_read(0, i * BS as u64, BS as u32).unwrap());
            }
            taken.push(batch.push_write(1, 0, BS as u32, |b| b.fill(0xee)).unwrap());
            assert_eq!(batch.push_read(0, 0, BS as u32), Err(PushError::PoolFull));
        }
        taken.sort_unstable();
        assert_eq!(taken[..4], [0, 1, 2, 3], "pool 0 is slots 0..4");
        assert!((4..8).contains(&taken[4]), "pool 1 is slots 4..8");
        assert_eq!(ring.in_flight(), 5);
        for &slot in &taken {
            assert!(ring.slot(slot).is_none());
            assert!(ring.slot_mut(slot).is_none());
        }
        assert!(ring.area_mut().is_none());
        let mut seen = Vec::new();
        while seen.len() < 5 {
            ring.submit_and_wait(1).unwrap();
            ring.reap(|c, buf| {
                assert_eq!(c.result, BS as i32);
                assert!(buf.iter().all(|&b| b == 0xee));
                seen.push(c.slot);
            });
        }
        seen.sort_unstable();
        assert_eq!(seen, taken);
        // Reaped: free again.
        assert!(ring.area_mut().is_some());
        assert!(ring.push_read(0, BS as u64, BS as u32).is_ok());
        assert_eq!(wait_one(&mut ring).0.result, BS as i32);
    }

    #[test]
    fn bad_pushes_are_refused() {
        let file = scratch();
        // One entry: at most one operation in flight.
        let mut ring = Ring::new(&file, 1, &[2], BS, BS).expect("io_uring available");
        assert_eq!(ring.push_read(1, 0, BS as u32), Err(PushError::NoSuchPool));
        assert_eq!(ring.push_read(0, 0, BS as u32 + 1), Err(PushError::TooLong));
        ring.push_read(0, 0, BS as u32).unwrap();
        assert_eq!(ring.push_read(0, 0, BS as u32), Err(PushError::QueueFull));
        assert_eq!(ring.in_flight(), 1, "a refused push takes no slot");
        wait_one(&mut ring);
        ring.push_read(0, 0, BS as u32).unwrap();
        wait_one(&mut ring);
        // Nothing in flight: waiting returns at once instead of blocking forever.
        assert_eq!(ring.submit_and_wait(5).unwrap(), 0);
    }

    /// Reads on a socket that gets its data only later: dropping the ring must not
    /// return (and free the buffers) before the kernel has done them, with every set of
    /// flags, whether or not the reads were submitted before the drop.
    #[test]
    fn drop_waits_for_io_in_flight() {
        for (want, submit_first) in [
            (Setup::ALL, false),
            (Setup::ALL, true),
            (Setup::PLAIN, false),
            (Setup::PLAIN, true),
        ] {
            let (mut ours, mut theirs) = UnixStream::pair().expect("socket pair");
            let mut ring = Ring::with_setup(&ours, 8, &[8], BS, BS, want).expect("io_uring");
            for _ in 0..8 {
                ring.push_read(0, 0, BS as u32).unwrap();
            }
            if submit_first {
                ring.submit_and_wait(0).unwrap();
            }
            let delay = Duration::from_millis(150);
            let writer = std::thread::spawn(move || {
                std::thread::sleep(delay);
                let writing = Instant::now();
                theirs.write_all(&[0x5a; 8 * BS]).unwrap();
                // End of stream: a read that got less than BS leaves a later one at EOF.
                drop(theirs);
                writing
            });
            let start = Instant::now();
            drop(ring);
            let dropped = Instant::now();
            let writing = writer.join().unwrap();
            assert!(
                dropped > writing && dropped - start >= delay,
                "{want:?}: drop returned {:?} after it began, before the data came",
                dropped - start
            );
            // The eight reads took all the data: only the end of stream is left.
            let mut rest = [0u8; 16];
            assert_eq!(ours.read(&mut rest).unwrap(), 0, "{want:?}");
        }
    }

    #[test]
    fn bad_arguments_are_refused_before_setup() {
        let file = scratch();
        for (pools, bytes) in [
            (&[][..], BS),
            (&[0][..], BS),
            (&[1, 0][..], BS),
            (&[1][..], 0),
        ] {
            let e = Ring::new(&file, 4, pools, bytes, BS).err().unwrap();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            assert!(e.raw_os_error().is_none());
        }
        let e = Ring::new(&file, 4, &[1], BS, 3).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
