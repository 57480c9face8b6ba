//! Tier 2: the tests that need root on the host (loop devices, ext4 mounts, fio,
//! strace), LAVA's schema (lava-common) or testbed/setup's aarch64 cross toolchain, but
//! boot no guest. All are ignored with the reason; as root:
//! `cargo test --test host -- --include-ignored`. HACKING.md "Running the tests" has
//! the three tiers.

#[path = "../common/mod.rs"]
mod common;

mod arm64;
mod boot_card;
mod engine;
mod evidence_window;
mod export_fio;
mod fidelity;
mod info;
mod lava;
mod probe;
mod runner;
