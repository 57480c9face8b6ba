//! The workload engine (issue: workload engine).
pub mod result;
