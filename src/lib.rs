//! mmcab: A/B evaluation harness for the Linux MMC/eMMC stack.
//!
//! The pipeline, in the order data flows (see README.md):
//! plan file -> [`device`] (identity, ios, EXT_CSD) -> [`knob`] (snapshot, apply, verify)
//! -> [`workload`] (run the jobs, measure) -> [`record`] (runs.csv, meta.json)
//! -> [`knob`] restore -> [`stats`] -> [`report`].
#![forbid(unsafe_code)]

pub mod cli;
pub mod device;
pub mod knob;
pub mod plan;
pub mod record;
pub mod report;
pub mod stats;
pub mod units;
pub mod workload;
