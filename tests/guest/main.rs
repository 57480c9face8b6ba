//! Tier 3: the tests that boot QEMU guests (testbed/run, bench/boots, LAVA's
//! dispatcher): root and `testbed/setup`. All are ignored with the reason; as root:
//! `cargo test --test guest -- --include-ignored --test-threads=2`, or one module with
//! `cargo test --test guest emmcsim_faults:: -- --include-ignored`. HACKING.md "Running
//! the tests" has the three tiers.

#[path = "../common/mod.rs"]
mod common;

mod arm64;
mod boot_card;
mod boots;
mod emmcsim;
mod emmcsim_cache;
mod emmcsim_cqe;
mod emmcsim_evidence;
mod emmcsim_faults;
mod emmcsim_geometry;
mod emmcsim_model;
mod emmcsim_sd;
mod emmcsim_speed;
mod faults;
mod fidelity;
mod guest_evidence;
mod guest_runner;
mod ioctl_engine;
mod ioctl_packed;
mod kconfig;
mod lava;
mod linux61;
mod mmctest;
mod mmctest_module;
mod old_results;
mod presets;
mod probe;
mod run_length;
mod sim_qd1_jitter;
mod testbed;
mod walkthrough;
