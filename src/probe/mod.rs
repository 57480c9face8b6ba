//! `mmcab probe`: short experiments on a card that tell what it does, before anyone
//! trusts numbers measured on it. Each probe takes typed options and returns a typed
//! report; the command line prints it.
//!
//! - [`packed`]: one packed write through the MMC ioctl, read back through the block
//!   layer: does the card execute packed commands, and which entry failed if not.

pub mod packed;
pub mod packed_run;
