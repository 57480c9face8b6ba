//! A safe io_uring ring for block I/O: the ring owns the buffers the kernel reads and
//! writes, so no safe caller can free, move or touch memory while an I/O uses it.
//!
//! [`Ring`] allocates one aligned buffer area, split into `slots` buffers of
//! `slot_bytes` each, registers it as fixed buffer 0 (when the kernel allows) and its own
//! duplicate of the file as fixed file 0 (when the kernel allows), and builds every
//! submission itself from a slot index: `push_read`, `push_write`, `push_fsync`. A slot is
//! in flight from its push until its completion is reaped; while it is, pushing it again
//! is refused and its buffer cannot be borrowed. At most `sq_entries` operations are in
//! flight, so the submission queue never overflows and the completion queue (twice as
//! large) never drops a completion. Dropping the ring first waits for every I/O in flight;
//! if it cannot wait, it leaks the buffer area instead of freeing memory the kernel may
//! still write to.
//!
//! This module is the only place that hands memory to io_uring; the `unsafe` it needs is
//! here, each block with the invariant that makes it sound.

extern crate std;

use core::fmt;
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
        // (Ring::slot_mut, Ring::area_mut) only ask for memory no I/O in flight uses; the
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
    /// The slot index is not below the ring's slot count.
    NoSuchSlot,
    /// The slot's previous operation has not been reaped yet.
    SlotInFlight,
    /// The length is larger than a slot.
    TooLong,
    /// `sq_entries` operations are in flight already.
    QueueFull,
}

impl fmt::Display for PushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PushError::NoSuchSlot => "io_uring slot index out of range",
            PushError::SlotInFlight => "io_uring slot still in flight (not reaped yet)",
            PushError::TooLong => "io_uring I/O length larger than its slot",
            PushError::QueueFull => "io_uring queue full (as many I/Os in flight as entries)",
        })
    }
}

impl std::error::Error for PushError {}

/// One reaped operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The slot the operation was pushed on; it is free again.
    pub slot: usize,
    /// What the caller passed to the push.
    pub user_data: u64,
    /// Bytes transferred (0 for fsync), or a negative errno.
    pub result: i32,
}

/// An io_uring ring with its own buffer area (see the module documentation).
pub struct Ring {
    // Field order is drop order: the ring is closed before the area is freed and before
    // the file it may have registered is closed.
    ring: IoUring,
    area: Area,
    file: File,
    slot_bytes: usize,
    fixed_buffers: bool,
    fixed_file: bool,
    max_in_flight: usize,
    in_flight: usize,
    busy: Vec<bool>,
    user_data: Vec<u64>,
}

fn invalid(what: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what)
}

impl Ring {
    /// Set up a ring of `entries` submission entries for I/O on `file`, with `slots`
    /// buffers of `slot_bytes` each; the area starts at a multiple of `align` (a power of
    /// two). Errors from `io_uring_setup` carry the OS error (ENOSYS, EPERM: io_uring not
    /// available); a bad argument gives an InvalidInput error without one. Failing to
    /// register the buffers or the file is not an error: the ring then uses plain opcodes.
    pub fn new(
        file: impl AsFd,
        entries: u32,
        slots: usize,
        slot_bytes: usize,
        align: usize,
    ) -> io::Result<Ring> {
        if slots == 0 || slot_bytes == 0 {
            return Err(invalid(
                "an io_uring ring needs at least one slot of one byte",
            ));
        }
        if u32::try_from(slot_bytes).is_err() {
            return Err(invalid("an io_uring slot is limited to 4 GiB - 1 bytes"));
        }
        let len = slots
            .checked_mul(slot_bytes)
            .ok_or_else(|| invalid("io_uring buffer area too large"))?;
        let mut area = Area::new(len, align)?;
        let file = File::from(file.as_fd().try_clone_to_owned()?);
        let ring = IoUring::new(entries)?;
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
        Ok(Ring {
            ring,
            area,
            file,
            slot_bytes,
            fixed_buffers,
            fixed_file,
            max_in_flight,
            in_flight: 0,
            busy: vec![false; slots],
            user_data: vec![0; slots],
        })
    }

    /// Whether reads and writes use the registered buffer (READ_FIXED / WRITE_FIXED).
    pub fn fixed_buffers(&self) -> bool {
        self.fixed_buffers
    }

    /// Whether operations name the registered file rather than a descriptor.
    pub fn fixed_file(&self) -> bool {
        self.fixed_file
    }

    pub fn slots(&self) -> usize {
        self.busy.len()
    }

    pub fn slot_bytes(&self) -> usize {
        self.slot_bytes
    }

    /// Operations pushed and not reaped yet.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// Slot `slot`'s buffer, or None when the slot does not exist or is in flight.
    pub fn slot(&self, slot: usize) -> Option<&[u8]> {
        match self.busy.get(slot) {
            Some(false) => Some(self.area.bytes(slot * self.slot_bytes, self.slot_bytes)),
            _ => None,
        }
    }

    /// Slot `slot`'s buffer to fill, or None when the slot does not exist or is in flight.
    pub fn slot_mut(&mut self, slot: usize) -> Option<&mut [u8]> {
        match self.busy.get(slot) {
            Some(false) => Some(self.area.bytes_mut(slot * self.slot_bytes, self.slot_bytes)),
            _ => None,
        }
    }

    /// The whole area (slot after slot), or None while anything is in flight.
    pub fn area_mut(&mut self) -> Option<&mut [u8]> {
        if self.in_flight > 0 {
            return None;
        }
        let len = self.busy.len() * self.slot_bytes;
        Some(self.area.bytes_mut(0, len))
    }

    /// Queue a read of `len` bytes at file offset `offset` into slot `slot`.
    pub fn push_read(
        &mut self,
        slot: usize,
        offset: u64,
        len: u32,
        user_data: u64,
    ) -> Result<(), PushError> {
        self.push_rw(false, slot, offset, len, user_data)
    }

    /// Queue a write of the first `len` bytes of slot `slot` at file offset `offset`.
    pub fn push_write(
        &mut self,
        slot: usize,
        offset: u64,
        len: u32,
        user_data: u64,
    ) -> Result<(), PushError> {
        self.push_rw(true, slot, offset, len, user_data)
    }

    /// Queue an fsync of the whole file; it occupies `slot` (not its buffer) until reaped.
    pub fn push_fsync(&mut self, slot: usize, user_data: u64) -> Result<(), PushError> {
        self.check_free(slot)?;
        let entry = if self.fixed_file {
            opcode::Fsync::new(types::Fixed(0)).build()
        } else {
            opcode::Fsync::new(types::Fd(self.file.as_raw_fd())).build()
        };
        self.push(slot, entry, user_data)
    }

    fn check_free(&self, slot: usize) -> Result<(), PushError> {
        match self.busy.get(slot) {
            None => Err(PushError::NoSuchSlot),
            Some(true) => Err(PushError::SlotInFlight),
            Some(false) if self.in_flight >= self.max_in_flight => Err(PushError::QueueFull),
            Some(false) => Ok(()),
        }
    }

    fn push_rw(
        &mut self,
        write: bool,
        slot: usize,
        offset: u64,
        len: u32,
        user_data: u64,
    ) -> Result<(), PushError> {
        self.check_free(slot)?;
        if len as usize > self.slot_bytes {
            return Err(PushError::TooLong);
        }
        // In bounds: slot < slots and len <= slot_bytes; the area is slots * slot_bytes.
        let ptr = self.area.ptr.as_ptr().wrapping_add(slot * self.slot_bytes);
        macro_rules! build {
            ($fd:expr) => {
                match (write, self.fixed_buffers) {
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
        let entry = if self.fixed_file {
            build!(types::Fixed(0))
        } else {
            build!(types::Fd(self.file.as_raw_fd()))
        };
        self.push(slot, entry, user_data)
    }

    /// Queue `entry` for free slot `slot` (checked by the caller) and mark it in flight.
    fn push(&mut self, slot: usize, entry: squeue::Entry, user_data: u64) -> Result<(), PushError> {
        let entry = entry.user_data(slot as u64);
        // SAFETY: `entry` was built here and points only at slot `slot` of `self.area`
        // (or at nothing, for fsync) and at `self.file` or the registered copy of it.
        // The slot is not in flight (check_free), so no userspace borrow of it exists
        // (slot/slot_mut/area_mut borrow `self`, which `&mut self` here excludes) and none
        // can be made until its completion is reaped; the area outlives the I/O because
        // Ring::drop waits for every operation in flight or leaks the area. The file
        // stays open as long as the ring.
        // Does not fail: at most max_in_flight = sq_entries operations are in flight
        // (check_free), and unsubmitted entries are among them.
        unsafe { self.ring.submission().push(&entry) }.map_err(|_| PushError::QueueFull)?;
        self.busy[slot] = true;
        self.user_data[slot] = user_data;
        self.in_flight += 1;
        Ok(())
    }

    /// Submit what was pushed and wait until at least `want` completions are ready
    /// (capped at the number in flight, so this never waits for nothing).
    pub fn submit_and_wait(&mut self, want: usize) -> io::Result<usize> {
        self.ring.submit_and_wait(want.min(self.in_flight))
    }

    /// Hand every ready completion to `f`, with the slot's buffer (now free again).
    pub fn reap(&mut self, mut f: impl FnMut(Completion, &[u8])) {
        let slot_bytes = self.slot_bytes;
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as usize;
            // Every entry carries the index of a slot it marked busy; skip anything else.
            if !matches!(self.busy.get(slot), Some(true)) {
                continue;
            }
            self.busy[slot] = false;
            self.in_flight -= 1;
            let c = Completion {
                slot,
                user_data: self.user_data[slot],
                result: cqe.result(),
            };
            f(c, self.area.bytes(slot * slot_bytes, slot_bytes));
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        while self.in_flight > 0 {
            match self.ring.submit_and_wait(self.in_flight) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
                Err(_) => {
                    // The kernel may still write into the area: never free it.
                    self.area.leaked = true;
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

    #[test]
    fn reads_back_what_it_wrote() {
        let mut file = scratch();
        let mut ring = Ring::new(&file, 4, 3, BS, BS).expect("io_uring available");
        assert_eq!(ring.slot(0).unwrap().as_ptr() as usize % BS, 0);
        for (i, b) in ring.slot_mut(0).unwrap().iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        let pattern = ring.slot(0).unwrap().to_vec();
        ring.push_write(0, 2 * BS as u64, BS as u32, 70).unwrap();
        let (c, _) = wait_one(&mut ring);
        assert_eq!(
            c,
            Completion {
                slot: 0,
                user_data: 70,
                result: BS as i32
            }
        );
        ring.push_fsync(1, 71).unwrap();
        let (c, _) = wait_one(&mut ring);
        assert_eq!((c.slot, c.user_data, c.result), (1, 71, 0));
        ring.push_read(2, 2 * BS as u64, BS as u32, 72).unwrap();
        let (c, buf) = wait_one(&mut ring);
        assert_eq!((c.slot, c.user_data, c.result), (2, 72, BS as i32));
        assert_eq!(buf, pattern);
        assert_eq!(ring.slot(2).unwrap(), &pattern[..]);
        assert_eq!(ring.in_flight(), 0);
        drop(ring);
        // The data reached the file, not only the ring's own buffer.
        let mut on_disk = vec![0u8; BS];
        file.seek(SeekFrom::Start(2 * BS as u64)).unwrap();
        file.read_exact(&mut on_disk).unwrap();
        assert_eq!(on_disk, pattern);
    }

    #[test]
    fn an_in_flight_slot_is_refused_and_cannot_be_borrowed() {
        let file = scratch();
        let mut ring = Ring::new(&file, 4, 2, BS, BS).expect("io_uring available");
        ring.push_read(0, 0, BS as u32, 1).unwrap();
        assert_eq!(
            ring.push_read(0, 0, BS as u32, 2),
            Err(PushError::SlotInFlight)
        );
        assert_eq!(
            ring.push_write(0, 0, BS as u32, 2),
            Err(PushError::SlotInFlight)
        );
        assert_eq!(ring.push_fsync(0, 2), Err(PushError::SlotInFlight));
        assert!(ring.slot(0).is_none());
        assert!(ring.slot_mut(0).is_none());
        assert!(ring.area_mut().is_none());
        assert!(ring.slot_mut(1).is_some());
        assert_eq!(ring.in_flight(), 1);
        let (c, buf) = wait_one(&mut ring);
        assert_eq!((c.slot, c.user_data, c.result), (0, 1, BS as i32));
        assert!(buf.iter().all(|&b| b == 0xee));
        // Reaped: the slot is free again.
        assert!(ring.slot(0).is_some());
        ring.push_read(0, BS as u64, BS as u32, 3).unwrap();
        assert_eq!(wait_one(&mut ring).0.user_data, 3);
    }

    #[test]
    fn bad_pushes_are_refused() {
        let file = scratch();
        // One entry: at most one operation in flight.
        let mut ring = Ring::new(&file, 1, 2, BS, BS).expect("io_uring available");
        assert_eq!(
            ring.push_read(2, 0, BS as u32, 0),
            Err(PushError::NoSuchSlot)
        );
        assert_eq!(
            ring.push_read(0, 0, BS as u32 + 1, 0),
            Err(PushError::TooLong)
        );
        ring.push_read(0, 0, BS as u32, 0).unwrap();
        assert_eq!(
            ring.push_read(1, 0, BS as u32, 0),
            Err(PushError::QueueFull)
        );
        wait_one(&mut ring);
        ring.push_read(1, 0, BS as u32, 0).unwrap();
        wait_one(&mut ring);
        // Nothing in flight: waiting returns at once instead of blocking forever.
        assert_eq!(ring.submit_and_wait(5).unwrap(), 0);
    }

    #[test]
    fn drop_waits_for_io_in_flight() {
        let file = scratch();
        let mut ring = Ring::new(&file, 8, 8, BS, BS).expect("io_uring available");
        for slot in 0..8 {
            ring.push_read(slot, (slot * BS) as u64, BS as u32, 0)
                .unwrap();
        }
        // Neither submitted nor reaped: drop submits, waits for all eight, then frees.
        drop(ring);
        let mut ring = Ring::new(&file, 8, 8, BS, BS).expect("io_uring available");
        for slot in 0..8 {
            ring.push_read(slot, (slot * BS) as u64, BS as u32, 0)
                .unwrap();
        }
        ring.submit_and_wait(0).unwrap();
        drop(ring);
    }

    #[test]
    fn bad_arguments_are_refused_before_setup() {
        let file = scratch();
        for (slots, bytes) in [(0, BS), (1, 0)] {
            let e = Ring::new(&file, 4, slots, bytes, BS).err().unwrap();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            assert!(e.raw_os_error().is_none());
        }
        let e = Ring::new(&file, 4, 1, BS, 3).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    }
}
