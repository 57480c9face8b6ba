//! The probe's scratch region: entries and canary blocks of [`ENTRY_BYTES`] each, and
//! how each read back ([`BlockCheck`]). Shared by the probe (packed.rs) and its run
//! (packed_run.rs).

use serde::Serialize;

/// Bytes of each entry (and of each canary block).
pub const ENTRY_BYTES: u64 = 4096;

/// How one block of the region read back.
#[derive(Debug, Clone, Serialize)]
pub struct BlockCheck {
    /// `entry N` or `canary`.
    pub what: String,
    pub offset: u64,
    /// None: as it should be; else what is wrong.
    pub problem: Option<String>,
}
