//! mmc_test beside the block layer, as data: for one config, direction and transfer
//! size, the kernel's mmc_test time per transfer (engine = "mmc_test", measured without
//! the block layer) and a block-layer workload's time per I/O at that size, with the
//! time the mmc trace gave its requests; the difference is the block layer's own share
//! (built by [`crate::report::load::mmc_test`], rendered by
//! [`crate::report::render::mmc_test`]).

use crate::workload::result::Direction;
use serde::Serialize;

/// One config x direction x transfer size x block-layer workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BesideRow {
    pub config: String,
    pub direction: Direction,
    pub bytes: u64,
    /// mmc_test's test (the plan word, e.g. `seq-read`) and its measured runs.
    pub mmc_test: String,
    pub mmc_test_runs: usize,
    /// Mean over the runs of mmc_test's time per transfer of this size, microseconds.
    pub mmc_test_us: f64,
    /// The block-layer workload, its engine (`sync`, `io_uring`, `ioctl`) and runs.
    pub workload: String,
    pub engine: String,
    pub runs: usize,
    /// Mean over the runs of the I/Os' mean latency, microseconds.
    pub io_us: f64,
    /// Mean over the traced runs of the mmc requests' mean time (issue to done),
    /// microseconds; None without a trace in every run.
    pub request_us: Option<f64>,
    /// Multi-block requests with CMD23, of all multi-block requests (trace); None
    /// without a trace or multi-block requests.
    pub cmd23_share: Option<f64>,
    /// Requests through the command queue, of all requests (trace).
    pub cqe_share: Option<f64>,
}

impl BesideRow {
    /// The block layer's own share of an I/O: its latency less the traced request's.
    pub fn block_share_us(&self) -> Option<f64> {
        self.request_us.map(|r| self.io_us - r)
    }
}
