//! A workload's job clones and the engines that run them. [`job`] turns the jobs into
//! clones (the region each works in, its phases, its file, laid out before the clones
//! start); each engine issues a clone's I/O its own way: [`sync`] (pread/pwrite, one at a time), [`uring`] (io_uring,
//! `iodepth` in flight) and [`ioctl`] (raw MMC commands through the ioctl, packed writes
//! included; its card facts, [`ioctl::CardCache`], come from whoever holds the target).
//!
//! Their common parts: [`clone_io`], the clone's stop flags, verify and fsync;
//! [`completion`], what happens once an I/O has finished; [`offsets`], where the next
//! I/O goes, inside a shared [`window`] when the workload has one; [`buffer`], the data
//! pattern and the verify header; [`recorder`], what was measured.

pub mod buffer;
pub mod clone_io;
pub mod completion;
pub mod ioctl;
pub mod job;
pub mod offsets;
pub mod recorder;
pub mod sync;
pub mod uring;
pub mod window;
