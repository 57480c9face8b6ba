//! The kernel evidence next to the numbers: per workload x direction and config, what
//! the driver did in the measured (non-warm-up) runs, from `evidence.csv` and
//! `request_sizes.csv` (results directories without them have no evidence section).
//!
//! Per config, pooled over its runs: requests per MiB the workload moved, mean and p99
//! request size (from the size histogram), mean device latency (start to done event,
//! weighted by requests) and the mean of the runs' p99 latencies, the share of
//! multi-block requests with CMD23, the share of requests with the packed bit. Where a
//! run has no trace (not an MMC card, tracefs unavailable), the block statistics stand
//! in: requests and sizes from the stat deltas, mean latency from the stat ticks.

use super::load::ResultsDir;
use super::model::{format_value, Report};
use super::text::NAME_COLUMNS;
use crate::record::EvidenceRow;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One workload x direction.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceBlock {
    pub workload: String,
    pub direction: String,
    pub rows: Vec<ConfigEvidence>,
}

/// What the kernel did under one config.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigEvidence {
    pub config: String,
    pub runs: usize,
    /// `trace` (mmc trace events) or `block stat` (no trace in some run).
    pub source: String,
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
    /// Block layer: I/Os per MiB and merges (from the stat deltas).
    pub stat_ios_per_mib: Option<f64>,
    pub stat_merges: Option<u64>,
    /// `wr_pack_stats` (vendor kernels): packed commands and the requests in them.
    pub pack_cmds: Option<u64>,
    pub pack_reqs: Option<u64>,
    /// Request size in bytes -> requests (trace only).
    pub sizes: BTreeMap<u64, u64>,
}

const MIB: f64 = 1024.0 * 1024.0;

/// The evidence blocks of a results dir, for the workloads x directions that have
/// performance blocks; empty without evidence.csv.
pub fn build(dir: &ResultsDir, configs: &[String], workloads: &[String]) -> Vec<EvidenceBlock> {
    if dir.evidence.is_empty() {
        return Vec::new();
    }
    let warm: HashSet<u32> = dir
        .runs
        .iter()
        .filter(|r| r.warmup)
        .map(|r| r.run)
        .collect();
    // Grouped once by (workload, config, direction): the evidence rows of measured runs,
    // the bytes the workload moved, the size histogram.
    type Key<'a> = (&'a str, &'a str, &'a str);
    let mut rows: HashMap<Key, Vec<&EvidenceRow>> = HashMap::new();
    for e in dir.evidence.iter().filter(|e| !warm.contains(&e.run)) {
        rows.entry((&e.workload, &e.config, &e.direction))
            .or_default()
            .push(e);
    }
    let mut moved: HashMap<Key, u64> = HashMap::new();
    for r in super::results::measured(dir) {
        *moved
            .entry((&r.workload, &r.config, r.direction.as_str()))
            .or_default() += r.bytes;
    }
    let mut sizes: HashMap<Key, BTreeMap<u64, u64>> = HashMap::new();
    for s in dir.request_sizes.iter().filter(|s| !warm.contains(&s.run)) {
        *sizes
            .entry((&s.workload, &s.config, &s.direction))
            .or_default()
            .entry(s.bytes)
            .or_insert(0) += s.requests;
    }
    let mut out = Vec::new();
    for workload in workloads {
        for direction in ["write", "read"] {
            let block: Vec<ConfigEvidence> = configs
                .iter()
                .filter_map(|config| {
                    let key = (workload.as_str(), config.as_str(), direction);
                    let ev = rows.get(&key)?;
                    let bytes = *moved.get(&key)?;
                    let sizes = sizes.remove(&key).unwrap_or_default();
                    Some(summarize(config, ev, bytes, sizes))
                })
                .collect();
            if !block.is_empty() {
                out.push(EvidenceBlock {
                    workload: workload.clone(),
                    direction: direction.to_string(),
                    rows: block,
                });
            }
        }
    }
    out
}

/// Multi-block requests with CMD23. Results recorded before `sbc_multi_block` have
/// only `sbc`, which counts single-block requests with CMD23 too: there it is capped
/// at each row's multi-block requests, so the share never passes 100%.
fn cmd23_multi_block(ev: &[&EvidenceRow]) -> u64 {
    ev.iter()
        .map(|e| {
            let multi = e.multi_block.unwrap_or(0);
            e.sbc_multi_block
                .unwrap_or_else(|| e.sbc.unwrap_or(0).min(multi))
                .min(multi)
        })
        .sum()
}

fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// One config's rows of one workload x direction; `bytes` is what the workload moved,
/// `sizes` the size histogram of its traced runs.
fn summarize(
    config: &str,
    ev: &[&EvidenceRow],
    bytes: u64,
    sizes: BTreeMap<u64, u64>,
) -> ConfigEvidence {
    let runs: HashSet<u32> = ev.iter().map(|e| e.run).collect();
    let traced = ev.iter().all(|e| e.requests.is_some());
    let sum = |f: fn(&EvidenceRow) -> Option<u64>| -> Option<u64> {
        ev.iter().map(|e| f(e)).sum::<Option<u64>>()
    };
    let mib = bytes as f64 / MIB;
    let per_mib = |n: Option<u64>| n.filter(|_| mib > 0.0).map(|n| n as f64 / mib);
    let stat_ios = sum(|e| e.stat_ios);
    let stat_sectors = sum(|e| e.stat_sectors);
    let mut row = ConfigEvidence {
        config: config.to_string(),
        runs: runs.len(),
        source: if traced { "trace" } else { "block stat" }.to_string(),
        requests: 0,
        requests_per_mib: None,
        size_mean_bytes: None,
        size_p99_bytes: None,
        lat_mean_us: None,
        lat_p99_us: None,
        cmd23_share: None,
        packed_share: None,
        open_ended_share: None,
        cqe_share: None,
        errors: 0,
        lost_events: ev.iter().map(|e| lost_events(&e.trace)).sum(),
        stat_ios_per_mib: per_mib(stat_ios),
        stat_merges: sum(|e| e.stat_merges),
        pack_cmds: sum(|e| e.pack_cmds),
        pack_reqs: sum(|e| e.pack_reqs),
        sizes: BTreeMap::new(),
    };
    if traced {
        let requests = sum(|e| e.requests).unwrap_or(0);
        let multi = sum(|e| e.multi_block).unwrap_or(0);
        row.sizes = sizes;
        let sized: u64 = row.sizes.values().sum();
        let lat_weight: f64 = ev
            .iter()
            .filter_map(|e| Some(e.lat_mean_us? * e.requests? as f64))
            .sum();
        let lat_n: u64 = ev
            .iter()
            .filter(|e| e.lat_mean_us.is_some())
            .filter_map(|e| e.requests)
            .sum();
        let p99s: Vec<f64> = ev.iter().filter_map(|e| e.lat_p99_us).collect();
        row.requests = requests;
        row.requests_per_mib = per_mib(Some(requests));
        row.size_mean_bytes = share(sum(|e| e.bytes).unwrap_or(0), sized);
        row.size_p99_bytes = crate::evidence::requests::percentile_of_counts(&row.sizes, 99.0);
        row.lat_mean_us = (lat_n > 0).then(|| lat_weight / lat_n as f64);
        row.lat_p99_us = (!p99s.is_empty()).then(|| p99s.iter().sum::<f64>() / p99s.len() as f64);
        row.cmd23_share = share(cmd23_multi_block(ev), multi);
        row.packed_share = share(sum(|e| e.sbc_packed).unwrap_or(0), requests);
        row.open_ended_share = share(sum(|e| e.open_ended).unwrap_or(0), multi);
        row.cqe_share = share(sum(|e| e.cqe).unwrap_or(0), requests);
        row.errors = sum(|e| e.errors).unwrap_or(0);
    } else if let (Some(ios), Some(sectors)) = (stat_ios, stat_sectors) {
        row.requests = ios;
        row.requests_per_mib = per_mib(Some(ios));
        row.size_mean_bytes = share(sectors * 512, ios);
        row.lat_mean_us = share(sum(|e| e.stat_ticks_ms).unwrap_or(0) * 1000, ios);
    }
    row
}

/// `lost N events` in evidence.csv's trace column.
fn lost_events(status: &str) -> u64 {
    status
        .strip_prefix("lost ")
        .and_then(|r| r.strip_suffix(" events"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Three significant digits, no trailing zeros (`512`, `95.1`, `0.21`), `-` for none.
fn short(v: Option<f64>) -> String {
    let Some(v) = v.filter(|v| v.is_finite()) else {
        return "-".into();
    };
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else {
        2
    };
    let text = format!("{v:.digits$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))
}

/// The mail lines of one headline block: a header and one line per config, at most 72
/// columns: requests per MiB, request size mean/p99 (KiB), device latency mean/p99 (ms),
/// CMD23 and packed shares.
pub fn mail_lines(out: &mut String, report: &Report, workload: &str, direction: &str) {
    let Some(block) = report
        .evidence
        .iter()
        .find(|b| b.workload == workload && b.direction == direction)
    else {
        return;
    };
    let traced = block.rows.iter().all(|r| r.source == "trace");
    let what = if traced {
        "kernel (trace)"
    } else {
        "kernel (block stat)"
    };
    out.push_str(&format!(
        "  {what:<NAME_COLUMNS$} {:>7} {:>11} {:>11} {:>5} {:>6}\n",
        "req/MiB", "KiB avg/p99", "ms avg/p99", "CMD23", "packed"
    ));
    for r in &block.rows {
        let mut name = super::text::ascii(&r.config);
        if report.is_baseline(&r.config) {
            name.push_str(" (A)");
        }
        if name.len() > NAME_COLUMNS {
            name = format!("{}~", &name[..NAME_COLUMNS - 1]);
        }
        let kib = |b: Option<f64>| b.map(|b| b / 1024.0);
        let ms = |us: Option<f64>| us.map(|us| us / 1000.0);
        let line = format!(
            "  {name:<NAME_COLUMNS$} {:>7} {:>11} {:>11} {:>5} {:>6}",
            short(r.requests_per_mib),
            format!(
                "{}/{}",
                short(kib(r.size_mean_bytes)),
                short(kib(r.size_p99_bytes.map(|b| b as f64)))
            ),
            format!("{}/{}", short(ms(r.lat_mean_us)), short(ms(r.lat_p99_us))),
            pct(r.cmd23_share),
            pct(r.packed_share),
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    for r in block
        .rows
        .iter()
        .filter(|r| r.lost_events > 0 || r.errors > 0)
    {
        let mut what = Vec::new();
        if r.lost_events > 0 {
            what.push(format!(
                "trace lost {} events (counts too low)",
                r.lost_events
            ));
        }
        if r.errors > 0 {
            what.push(format!("{} requests failed", r.errors));
        }
        let line = format!("  ! {}: {}", super::text::ascii(&r.config), what.join(", "));
        out.push_str(&line[..line.len().min(super::text::MAX_COLUMNS)]);
        out.push('\n');
    }
}

/// The markdown section: one table per workload x direction with every column.
pub fn markdown(report: &Report) -> String {
    if report.evidence.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Kernel evidence\n\nPer config over its measured runs: requests the mmc host \
         driver got (trace) or the block layer completed (block stat), per MiB the \
         workload moved; request size; device latency (start to done event; p99: mean \
         of the runs' p99); CMD23 and open-ended (CMD12): share of multi-block requests; \
         packed and CQE: share of all requests.\n",
    );
    for b in &report.evidence {
        out.push_str(&format!("\n### {}, {}\n\n", b.workload, b.direction));
        out.push_str(
            "| config | runs | source | requests | req/MiB | size mean | size p99 | \
             latency mean | latency p99 | CMD23 | open-ended | packed | CQE | errors | \
             lost events | block ios/MiB | merges | wr_pack_stats |\n",
        );
        out.push_str("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for r in &b.rows {
            let size = |v: Option<f64>| {
                v.map_or("-".into(), |v| crate::units::format_size(v.round() as u64))
            };
            let us = |v: Option<f64>| v.map_or("-".into(), |v| format!("{} us", format_value(v)));
            let pack = match (r.pack_cmds, r.pack_reqs) {
                (Some(c), Some(q)) => format!("{c} packed writes of {q} requests"),
                _ => "-".into(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {pack} |\n",
                r.config,
                r.runs,
                r.source,
                r.requests,
                short(r.requests_per_mib),
                size(r.size_mean_bytes),
                size(r.size_p99_bytes.map(|b| b as f64)),
                us(r.lat_mean_us),
                us(r.lat_p99_us),
                pct(r.cmd23_share),
                pct(r.open_ended_share),
                pct(r.packed_share),
                pct(r.cqe_share),
                r.errors,
                r.lost_events,
                short(r.stat_ios_per_mib),
                r.stat_merges.map_or("-".into(), |m| m.to_string()),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cmd23_share_never_passes_all_multi_block_requests() {
        let row = |multi, sbc, sbc_multi_block| EvidenceRow {
            multi_block: Some(multi),
            sbc: Some(sbc),
            sbc_multi_block,
            ..Default::default()
        };
        // Counted: single-block requests with CMD23 are not in it.
        let new = row(4, 10, Some(3));
        assert_eq!(cmd23_multi_block(&[&new]), 3);
        // Recorded before the column: sbc capped per row.
        let (old, old_few) = (row(4, 10, None), row(8, 2, None));
        assert_eq!(cmd23_multi_block(&[&old, &old_few]), 4 + 2);
        let share = share(cmd23_multi_block(&[&old]), 4).unwrap();
        assert!(share <= 1.0, "{share}");
    }

    #[test]
    fn short_numbers() {
        assert_eq!(short(Some(512.0)), "512");
        assert_eq!(short(Some(95.14)), "95.1");
        assert_eq!(short(Some(4.0)), "4");
        assert_eq!(short(Some(0.2149)), "0.21");
        assert_eq!(short(None), "-");
        assert_eq!(lost_events("lost 12 events"), 12);
        assert_eq!(lost_events("ok"), 0);
    }
}
