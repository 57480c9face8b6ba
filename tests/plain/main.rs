//! Tier 1: the tests that need neither root nor the QEMU testbed. Plain `cargo test`
//! (or `scripts/test-quick`) runs them as any user; none is ignored. HACKING.md
//! "Running the tests" has the three tiers.

#[path = "../common/mod.rs"]
mod common;

mod boots;
mod completions;
mod engine;
mod exit_statuses;
mod fidelity;
mod fio_words;
mod gates;
mod imports;
mod info;
mod ioctl_engine;
mod knobs;
mod lava;
mod old_results;
mod presets;
mod probe;
mod report;
mod report_evidence;
mod report_pins;
mod runner;
mod testbed;
mod until_ci;
