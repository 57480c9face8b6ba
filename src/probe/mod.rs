//! Probes of the flash behind a block device, with flashbench's methods: read timing
//! across power-of-two boundaries ([`align`]: erase block and page-like sizes) and
//! writes round-robin into several allocation units ([`open_au`]: how many the
//! controller keeps open). Domain code: typed options in, records out ([`record`]);
//! the command line prints, `crate::report` renders.
//!
//! - [`measure`]: the two probes against a device ([`device`]: O_DIRECT, monotonic
//!   clock, SCHED_FIFO where allowed), with the card's [`geometry`] to compare with
//! - [`flashbench`]: flashbench's printed output read back (published runs)

pub mod align;
pub mod device;
pub mod flashbench;
pub mod geometry;
pub mod measure;
pub mod open_au;
pub mod record;
