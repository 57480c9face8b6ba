//! Helpers shared by the three test binaries (tests/plain, tests/host, tests/guest),
//! each of which declares this module:
//!
//! ```ignore
//! #[path = "../common/mod.rs"]
//! mod common;
//! ```
//!
//! and its modules take what they need with `use crate::common::testbed;` and the like.

// Each tier's binary uses a different part of these helpers (tier 1 boots no guest,
// tier 3 makes no loop device), so what one binary leaves unused is not dead code.
#![allow(dead_code)]

pub mod charts;
pub mod cli;
pub mod engine;
pub mod fidelity;
pub mod golden;
pub mod lava;
pub mod loop_device;
pub mod old_results;
pub mod results;
pub mod runner;
pub mod scenario;
pub mod sim_model;
pub mod stamp;
pub mod testbed;
pub mod tool;
pub mod watch;
