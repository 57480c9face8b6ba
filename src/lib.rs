//! mmcab: A/B evaluation harness for the Linux MMC/eMMC stack.
//!
//! The pipeline, in the order data flows (see HACKING.md, "Layout"):
//! [`plan`] file -> [`runner`]: [`device`] (identity, ios, EXT_CSD) -> [`knob`] (snapshot,
//! apply, verify) -> [`workload`] (run the jobs, measure) with [`evidence`] around it
//! (block stat, mmc trace) -> [`record`] (runs.csv, evidence.csv, meta.json) -> [`knob`]
//! restore; then [`stats`] -> [`report`].
//!
//! Layers, imports pointing down: [`cli`] (clap, all printing) -> [`runner`] -> [`knob`],
//! [`workload`], [`record`], [`plan`] -> [`evidence`] -> [`device`] -> `linux-uapi`;
//! [`report`] and [`stats`] read [`record`]; [`units`], [`clock`], [`aligned`] (O_DIRECT
//! buffers) and [`exit`] (how a command ends: the exit statuses) are the ground floor
//! every layer may use. [`probe`] (flash geometry, flashbench's
//! methods) sits beside [`runner`]: it uses [`device`] and [`workload`]'s target, and
//! [`report`] renders its records. Nothing below [`cli`] imports it or prints.
#![forbid(unsafe_code)]

pub mod aligned;
pub mod cli;
pub mod clock;
pub mod device;
pub mod evidence;
pub mod exit;
pub mod export;
pub mod knob;
pub mod plan;
pub mod probe;
pub mod record;
pub mod report;
pub mod runner;
pub mod stats;
pub mod units;
pub mod workload;

/// The end-to-end tests' loop device (detached on drop, also when a test fails), for the
/// unit tests that need a real block device.
#[cfg(test)]
#[path = "../tests/common/loop_device.rs"]
pub(crate) mod test_loop_device;

/// The end-to-end tests' check for a program a test needs (skipped loudly, failing in CI).
#[cfg(test)]
#[path = "../tests/common/tool.rs"]
pub(crate) mod test_tool;
