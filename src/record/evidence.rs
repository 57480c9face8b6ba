//! Kernel evidence in the results directory (see [`crate::evidence`]):
//!
//! - `evidence.csv`: one row per run x direction (`read`, `write`, and `none` for
//!   commands without data and flushes when there were any): block statistics deltas,
//!   then what the mmc trace showed. Counts are empty (not 0) when their source was
//!   unavailable; `trace` says why (`ok`, `lost N events` when the ring buffer overran,
//!   or the reason there is no trace), and `trace_lost_events` (the last column) is that
//!   count as a number; `err_stats` the host's error counters that counted up in the
//!   run.
//! - `request_sizes.csv`: per run x direction, how many requests of each size the
//!   driver got (the histogram behind the mean, the p99 and the report's chart).
//! - meta.json's `evidence`: where each source was read from, or why not.

use super::run_key::RunKey;
use crate::evidence::requests::{opcode_mix, Kind, Requests};
pub use crate::evidence::EvidenceMeta;
use crate::evidence::RunEvidence;
use serde::{Deserialize, Serialize};

pub const EVIDENCE_CSV: &str = "evidence.csv";
pub const REQUEST_SIZES_CSV: &str = "request_sizes.csv";

/// One row of `evidence.csv`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvidenceRow {
    pub run: u32,
    pub config: String,
    pub workload: String,
    /// `read`, `write`, or `none` (requests without data; flushes in the stat columns).
    pub direction: String,
    /// Block statistics deltas: I/Os, merges, 512-byte sectors, ticks (ms).
    pub stat_ios: Option<u64>,
    pub stat_merges: Option<u64>,
    pub stat_sectors: Option<u64>,
    pub stat_ticks_ms: Option<u64>,
    /// `ok`, `lost N events` (the counts below are too low), `none` (not an MMC card),
    /// `unavailable` (meta.json `evidence.trace` says why) or `failed: <why>`.
    pub trace: String,
    /// Requests the host driver got (mmc_request_start) and their bytes.
    pub requests: Option<u64>,
    pub bytes: Option<u64>,
    pub multi_block: Option<u64>,
    /// With CMD23 SET_BLOCK_COUNT, and those whose argument has bit 31 (reliable
    /// write) or bit 30 (packed), or a block count that differs from the request's.
    pub sbc: Option<u64>,
    /// Multi-block requests with CMD23 (the share of `multi_block` CMD23 bounds; empty
    /// in results recorded before this column).
    pub sbc_multi_block: Option<u64>,
    pub sbc_reliable_write: Option<u64>,
    pub sbc_packed: Option<u64>,
    pub sbc_count_mismatch: Option<u64>,
    /// Multi-block requests without CMD23, ended by CMD12 (stop).
    pub open_ended: Option<u64>,
    /// Command-queue tasks (data without a command).
    pub cqe: Option<u64>,
    /// Requests completed with an error, and which (`CMD25 data_err=-84:1`).
    pub errors: Option<u64>,
    pub error_kinds: String,
    /// Device latency per request (start to done event), microseconds.
    pub lat_mean_us: Option<f64>,
    pub lat_p50_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    pub lat_max_us: Option<f64>,
    pub size_mean_bytes: Option<f64>,
    pub size_p99_bytes: Option<u64>,
    /// `opcode:requests ...`, most frequent first.
    pub opcodes: String,
    /// `wr_pack_stats` over the run (write rows, vendor kernels): packed commands and
    /// the requests in them.
    pub pack_cmds: Option<u64>,
    pub pack_reqs: Option<u64>,
    /// Trace events the ring buffer lost in this run (the count `trace` says in words);
    /// empty without a trace, and in results recorded before this column (the last, so
    /// the columns before it keep their positions).
    pub trace_lost_events: Option<u64>,
    /// The host's error counters (debugfs `err_stats`) that counted up during the run,
    /// as the kernel names them (`Data CRC Errors Occurred:1; Command Timeout
    /// Occurred:2`), `none` when none did; the run's, the same on each of its rows (do
    /// not add them up over directions). Empty where the file was not read (meta.json's
    /// `evidence.err_stats` says why) and in results recorded before this column (the
    /// last).
    #[serde(default)]
    pub err_stats: String,
}

/// One row of `request_sizes.csv`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestSizeRow {
    pub run: u32,
    pub config: String,
    pub workload: String,
    pub direction: String,
    pub bytes: u64,
    pub requests: u64,
}

/// The rows of one run's evidence.
pub fn rows_for(key: &RunKey, evidence: &RunEvidence) -> (Vec<EvidenceRow>, Vec<RequestSizeRow>) {
    let mut rows = Vec::new();
    let mut sizes = Vec::new();
    let trace_status = evidence.trace_status();
    for kind in Kind::ALL {
        let stat = evidence.block_stat.as_ref().ok().and_then(|s| match kind {
            Kind::Read => Some(s.read),
            Kind::Write => Some(s.write),
            Kind::None => s.flush,
        });
        let mut requests = evidence.trace.as_ref().ok().map(|t| t.kind(kind).clone());
        let empty =
            requests.as_ref().is_none_or(|r| r.requests == 0) && stat.is_none_or(|s| s.ios == 0);
        if kind == Kind::None && empty {
            continue;
        }
        let mut row = EvidenceRow {
            run: key.run,
            config: key.config.clone(),
            workload: key.workload.clone(),
            direction: kind.as_str().to_string(),
            stat_ios: stat.map(|s| s.ios),
            stat_merges: stat.map(|s| s.merges),
            stat_sectors: stat.map(|s| s.sectors),
            stat_ticks_ms: stat.map(|s| s.ticks_ms),
            trace: trace_status.clone(),
            trace_lost_events: evidence.trace.as_ref().ok().map(|t| t.lost_events),
            err_stats: match &evidence.err_stats {
                Some(Ok(delta)) => crate::evidence::err_stats::delta_text(delta),
                _ => String::new(),
            },
            ..Default::default()
        };
        if let Some(r) = &mut requests {
            fill_trace(&mut row, r);
            for (bytes, n) in &r.sizes {
                sizes.push(RequestSizeRow {
                    run: key.run,
                    config: key.config.clone(),
                    workload: key.workload.clone(),
                    direction: row.direction.clone(),
                    bytes: *bytes,
                    requests: *n,
                });
            }
        }
        if kind == Kind::Write {
            if let Some(Ok((cmds, reqs))) = evidence.packed {
                row.pack_cmds = Some(cmds);
                row.pack_reqs = Some(reqs);
            }
        }
        rows.push(row);
    }
    (rows, sizes)
}

fn fill_trace(row: &mut EvidenceRow, r: &mut Requests) {
    row.requests = Some(r.requests);
    row.bytes = Some(r.bytes);
    row.multi_block = Some(r.multi_block);
    row.sbc = Some(r.sbc);
    row.sbc_multi_block = Some(r.sbc_multi_block);
    row.sbc_reliable_write = Some(r.sbc_reliable_write);
    row.sbc_packed = Some(r.sbc_packed);
    row.sbc_count_mismatch = Some(r.sbc_count_mismatch);
    row.open_ended = Some(r.open_ended);
    row.cqe = Some(r.cqe);
    row.errors = Some(r.errors);
    row.lat_mean_us = r.mean_latency_us();
    row.lat_p50_us = r.latency_percentile_us(50.0);
    row.lat_p99_us = r.latency_percentile_us(99.0);
    row.lat_max_us = r.latency_percentile_us(100.0);
    row.size_mean_bytes = r.mean_size();
    row.size_p99_bytes = r.size_percentile(99.0);
    row.opcodes = opcode_mix(&r.opcodes);
    row.error_kinds = r
        .error_kinds
        .iter()
        .map(|(k, n)| format!("{k}:{n}"))
        .collect::<Vec<_>>()
        .join(" ");
}
