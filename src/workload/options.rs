//! How a workload runs, besides what its plan file says ([`EngineOptions`]: the
//! command line's scale-down, seed, cancel flag, ioctl overrides, and the run id).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// How to run: everything that is not in the workload file.
#[derive(Debug, Clone)]
pub struct EngineOptions {
    /// Divide sizes and offsets by this (1 = as written); `--scale-down`.
    pub scale_down: u32,
    /// Written into verify headers, so blocks from an earlier run are told apart.
    pub run_id: u64,
    /// Base of the random offsets when a job has no `randseed` (the plan's `seed`).
    pub seed: u64,
    /// Set by the runner on SIGINT/SIGTERM; checked between I/Os.
    pub cancel: Arc<AtomicBool>,
    /// The user says the kernel passes a CMD23 on as the transfer's `mrq.sbc`
    /// (`--assume-cmd23-passthrough`): packed ioctl writes skip that check.
    pub assume_cmd23_passthrough: bool,
    /// `--force`: packed ioctl writes go to a card whose EXT_CSD has none (to see what
    /// it does with them; verify shows it).
    pub force: bool,
    /// The volatile cache the card states (EXT_CSD CACHE_SIZE), bytes; 0: none, or not
    /// an eMMC. Jobs with `past_cache` write at least twice it.
    pub cache_bytes: u64,
}

impl Default for EngineOptions {
    fn default() -> Self {
        EngineOptions {
            scale_down: 1,
            run_id: new_run_id(),
            seed: 1,
            cancel: Arc::new(AtomicBool::new(false)),
            assume_cmd23_passthrough: false,
            force: false,
            cache_bytes: 0,
        }
    }
}

/// A run id from the clock and the process id (unique enough to tell runs apart).
pub fn new_run_id() -> u64 {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    (now.as_nanos() as u64) ^ ((std::process::id() as u64) << 48)
}
