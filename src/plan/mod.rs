//! Plan files and the run matrix; pure (no device, no output).
//!
//! - [`spec`]: the plan file (workloads: [`crate::workload::spec`]; configs and knobs:
//!   [`config`]);
//! - [`matrix`]: configs x workloads x repetitions in a fair [`order`], walked lazily;
//! - [`limits`]: the bounds of every number a plan or the command line gives;
//! - [`sweep`]: `[[sweep]]` tables, workloads charted against one job key.
pub mod config;
pub mod limits;
pub mod matrix;
pub mod order;
pub mod spec;
pub mod sweep;

#[cfg(test)]
mod docs_tests;
