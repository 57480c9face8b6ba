//! Plans: configs x workloads x repetitions (issues: engine, knobs and runner).
//!
//! - [`spec`]: the plan file (workloads: engine; configs and knobs: [`config`])
//! - [`matrix`]: expansion and order; [`session`]: settings, resume, results directory
//! - [`run`]: the runner loop; [`observe`]: what it reads from the device
pub mod config;
pub mod limits;
pub mod matrix;
pub mod observe;
pub mod run;
pub mod session;
pub mod spec;

pub use run::cmd_run;
