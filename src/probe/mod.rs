//! `mmcab probe`: short experiments on a card that tell what it does, before anyone
//! trusts numbers measured on it. Each probe takes typed options and returns a typed
//! report or record; the command line prints it, `crate::report` renders the flash
//! geometry probes.
//!
//! - [`packed`]: one packed write through the MMC ioctl, read back through the block
//!   layer: does the card execute packed commands, and which entry failed if not.
//! - Flash geometry with flashbench's methods: read timing across power-of-two
//!   boundaries ([`align`]: erase block and page-like sizes) and writes round-robin
//!   into several allocation units ([`open_au`]: how many the controller keeps open);
//!   [`measure`] runs them against a device ([`device`]: O_DIRECT, monotonic clock,
//!   SCHED_FIFO where allowed), with the card's [`geometry`] to compare with, into a
//!   [`record`]; [`flashbench`] reads flashbench's printed output back (published runs).

pub mod align;
pub mod device;
pub mod flashbench;
pub mod geometry;
pub mod measure;
pub mod open_au;
pub mod packed;
pub mod packed_region;
pub mod packed_run;
pub mod record;
