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

use super::dir::ResultsDir;
use crate::evidence::requests::{split_into_one_block, ONE_BLOCK};
use crate::record::EvidenceRow;
use crate::report::model::evidence::{
    ConfigEvidence, EvidenceBlock, EvidenceSource, OneBlockSplit,
};
use crate::workload::result::Direction;
use std::collections::{BTreeMap, HashMap, HashSet};

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
    for r in dir.measured() {
        *moved
            .entry((&r.workload, &r.config, r.direction.as_str()))
            .or_default() += r.bytes;
    }
    let mut sizes: HashMap<Key, BTreeMap<u64, u64>> = HashMap::new();
    // One-block requests per run, for the split check.
    let mut one_block: HashMap<Key, HashMap<u32, u64>> = HashMap::new();
    for s in dir.request_sizes.iter().filter(|s| !warm.contains(&s.run)) {
        let key = (s.workload.as_str(), s.config.as_str(), s.direction.as_str());
        *sizes.entry(key).or_default().entry(s.bytes).or_insert(0) += s.requests;
        if s.bytes == ONE_BLOCK {
            *one_block.entry(key).or_default().entry(s.run).or_insert(0) += s.requests;
        }
    }
    let mut out = Vec::new();
    for workload in workloads {
        for direction in [Direction::Write, Direction::Read] {
            let block: Vec<ConfigEvidence> = configs
                .iter()
                .filter_map(|config| {
                    let key = (workload.as_str(), config.as_str(), direction.as_str());
                    let ev = rows.get(&key)?;
                    let bytes = *moved.get(&key)?;
                    let sizes = sizes.remove(&key).unwrap_or_default();
                    let mut row = summarize(config, ev, bytes, sizes);
                    row.one_block_split = one_block
                        .get(&key)
                        .and_then(|per_run| one_block_split(ev, per_run));
                    Some(row)
                })
                .collect();
            if !block.is_empty() {
                out.push(EvidenceBlock {
                    workload: workload.clone(),
                    direction,
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
        source: if traced {
            EvidenceSource::Trace
        } else {
            EvidenceSource::BlockStat
        },
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
        lost_events: ev.iter().map(|e| lost_events(e)).sum(),
        one_block_split: None,
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

/// The traced runs whose one-block requests (`one_block`, per run) say the driver split
/// requests ([`split_into_one_block`], [`OneBlockSplit`]).
fn one_block_split(ev: &[&EvidenceRow], one_block: &HashMap<u32, u64>) -> Option<OneBlockSplit> {
    let mut split = OneBlockSplit {
        runs: Vec::new(),
        requests: 0,
        block_ios: 0,
    };
    for e in ev {
        let (Some(&single), Some(ios), Some(errors), Some(_)) =
            (one_block.get(&e.run), e.stat_ios, e.errors, e.requests)
        else {
            continue;
        };
        if split_into_one_block(single, ios, errors, lost_events(e)) {
            split.runs.push(e.run);
            split.requests += single;
            split.block_ios += ios;
        }
    }
    split.runs.sort_unstable();
    (!split.runs.is_empty()).then_some(split)
}

/// Trace events the ring buffer lost in a run: evidence.csv's `trace_lost_events`.
fn lost_events(e: &EvidenceRow) -> u64 {
    match e.trace_lost_events {
        Some(n) => n,
        // Results recorded before the `trace_lost_events` column (or a run without a
        // trace): the count is only in the `trace` status text.
        None => legacy_lost_events(&e.trace),
    }
}

/// `lost N events` in evidence.csv's trace column. Only for results recorded before
/// the `trace_lost_events` column; newer rows carry the number.
fn legacy_lost_events(status: &str) -> u64 {
    status
        .strip_prefix("lost ")
        .and_then(|r| r.strip_suffix(" events"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
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

    /// The write rows of a faults boot on the simulated card (Linux 7.2, a plan of 32
    /// writes of 64 KiB a run after earlier failed requests): runs 2 and 3 took 2 of
    /// their writes block by block with no error; run 1 had the one failed request and
    /// its retry; run 4 lost trace events; run 5 stands for a workload of 32 512-byte
    /// I/Os.
    #[test]
    fn a_split_is_more_one_block_requests_than_block_ios_with_nothing_failed_or_lost() {
        let row = |run, ios, errors, lost| EvidenceRow {
            run,
            stat_ios: Some(ios),
            requests: Some(0),
            errors: Some(errors),
            trace: "ok".into(),
            trace_lost_events: Some(lost),
            ..Default::default()
        };
        let rows = [
            row(1, 32, 1, 0),
            row(2, 32, 0, 0),
            row(3, 32, 0, 0),
            row(4, 32, 0, 5),
            row(5, 32, 0, 0),
        ];
        let ev: Vec<&EvidenceRow> = rows.iter().collect();
        let one_block = HashMap::from([(1, 385), (2, 256), (3, 256), (4, 256), (5, 38)]);
        assert_eq!(
            one_block_split(&ev, &one_block),
            Some(OneBlockSplit {
                runs: vec![2, 3],
                requests: 512,
                block_ios: 64,
            })
        );
        // 512-byte I/Os and a few stray ones: no split. One 4 KiB I/O split: 7 more.
        assert_eq!(one_block_split(&ev[4..], &one_block), None);
        let one_more = HashMap::from([(5, 39)]);
        assert_eq!(
            one_block_split(&ev[4..], &one_more).map(|s| s.runs),
            Some(vec![5])
        );
        // Untraced (block stat only): nothing to count.
        let untraced = EvidenceRow {
            requests: None,
            ..row(2, 32, 0, 0)
        };
        assert_eq!(one_block_split(&[&untraced], &one_block), None);
    }

    #[test]
    fn lost_events_of_the_trace_column() {
        assert_eq!(legacy_lost_events("lost 12 events"), 12);
        assert_eq!(legacy_lost_events("ok"), 0);
    }

    /// The number column when it is there; the status text only in rows without it
    /// (results recorded before the column).
    #[test]
    fn lost_events_come_from_their_column() {
        let row = |trace: &str, trace_lost_events| EvidenceRow {
            trace: trace.to_string(),
            trace_lost_events,
            ..Default::default()
        };
        assert_eq!(lost_events(&row("lost 12 events", Some(12))), 12);
        assert_eq!(lost_events(&row("ok", Some(0))), 0);
        assert_eq!(lost_events(&row("unavailable", None)), 0);
        assert_eq!(lost_events(&row("lost 7 events", None)), 7);
    }
}
