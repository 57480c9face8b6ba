//! The kernel evidence next to the numbers, as data: per workload x direction and
//! config, what the driver did in the measured (non-warm-up) runs (built by
//! [`crate::report::load::evidence`], rendered by [`crate::report::render::evidence`]).

use crate::workload::result::Direction;
use serde::Serialize;
use std::collections::BTreeMap;

/// One workload x direction.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceBlock {
    pub workload: String,
    pub direction: Direction,
    pub rows: Vec<ConfigEvidence>,
}

/// Where a config's counts come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EvidenceSource {
    /// mmc trace events, in every run.
    #[serde(rename = "trace")]
    Trace,
    /// The block layer's stat deltas (no trace in some run).
    #[serde(rename = "block stat")]
    BlockStat,
}

/// What the kernel did under one config.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigEvidence {
    pub config: String,
    pub runs: usize,
    pub source: EvidenceSource,
    pub requests: u64,
    pub requests_per_mib: Option<f64>,
    pub size_mean_bytes: Option<f64>,
    pub size_p99_bytes: Option<u64>,
    pub lat_mean_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    /// Multi-block requests with CMD23, of all multi-block requests.
    pub cmd23_share: Option<f64>,
    /// Requests with the packed bit in CMD23's argument, of all requests.
    pub packed_share: Option<f64>,
    /// Multi-block requests ended by CMD12, of all multi-block requests.
    pub open_ended_share: Option<f64>,
    pub cqe_share: Option<f64>,
    pub errors: u64,
    /// Trace events the ring buffer lost in these runs (counts are too low by them).
    pub lost_events: u64,
    /// Runs in which the driver split requests one block at a time with no error to
    /// retry ([`OneBlockSplit`]); None when no run did.
    pub one_block_split: Option<OneBlockSplit>,
    /// Block layer: I/Os per MiB and merges (from the stat deltas).
    pub stat_ios_per_mib: Option<f64>,
    pub stat_merges: Option<u64>,
    /// `wr_pack_stats` (vendor kernels): packed commands and the requests in them.
    pub pack_cmds: Option<u64>,
    pub pack_reqs: Option<u64>,
    /// Request size in bytes -> requests (trace only).
    pub sizes: BTreeMap<u64, u64>,
}

/// Traced runs of a config with more one-block (512-byte) requests than the block layer
/// completed I/Os (7 more at least, one 4 KiB I/O's worth), no failed request and no
/// lost event: the driver split requests into
/// single blocks on its own. A block-layer I/O is at least one request to the host, so
/// only a split makes more; without an error in the run, the split is the mmc block
/// driver's retry mode left on from an earlier error (docs/kernel-facts.md, "One-block
/// retry mode stays after an error"), or legacy reliable writes (FUA on a card without
/// `WR_REL_PARAM` EN).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OneBlockSplit {
    pub runs: Vec<u32>,
    /// One-block requests the host got in those runs.
    pub requests: u64,
    /// I/Os the block layer completed in those runs.
    pub block_ios: u64,
}
