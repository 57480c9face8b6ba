//! Plan files and the run matrix; pure (no device, no output, no engine).
//!
//! The plan file's schema, one file per table, each with the checks that need no device:
//! - [`spec`]: the plan itself (its top-level keys), read and checked as a whole;
//! - [`workload`]: `[[workload]]` and `[[workload.job]]` (fio's words), with [`packed`],
//!   the ioctl engine's packing choice;
//! - [`config`]: `[[config]]` tables; [`knob`]: `[[knob]]` declarations;
//! - [`sweep`]: `[[sweep]]` tables, workloads charted against one job key;
//! - [`order`]: the `order` key, and the order of the runs it gives.
//!
//! What mmcab makes of a plan: [`matrix`], configs x workloads x repetitions in a fair
//! [`order`], walked lazily; [`limits`], the bounds of every number a plan or the command
//! line gives; [`length`], how long a run must last and how much a write run must
//! write to be trusted. Which knob names a plan may use is the knobs' to say (knob/names.rs): the
//! plan knows no device, engine or knob.
pub mod config;
pub mod knob;
pub mod length;
pub mod limits;
pub mod matrix;
pub mod mmc_test;
pub mod order;
pub mod packed;
pub mod spec;
pub mod sweep;
pub mod workload;

#[cfg(test)]
mod docs_tests;
