//! mmc_test beside the block layer ([`crate::report::model::mmc_test`]) from a results
//! directory: the plan (meta.json's text) says which workloads ran mmc_test and which
//! ran a block-layer engine; runs.csv has mmc_test's row of every transfer size
//! (`<job>:<size>`) and the block-layer workloads' I/O latency; evidence.csv has the
//! traced requests of the same runs.
//!
//! A block-layer workload stands beside an mmc_test test when it has one job, of the
//! same direction, sequential like the test (or random like it), with `bs` a size the
//! test timed. Its runs are measured runs (no warm-ups) of the same config.

use super::dir::ResultsDir;
use crate::plan::spec::Plan;
use crate::plan::workload::{Engine, JobSpec, WorkloadSpec};
use crate::record::{EvidenceRow, RunRow, GROUP_JOB};
use crate::report::model::mmc_test::BesideRow;
use crate::units::format_size;
use crate::workload::result::Direction;

/// The rows, configs in `configs`' order, then by direction, size and workload; empty
/// when no workload ran mmc_test (or the plan's text cannot be read back).
pub fn build(dir: &ResultsDir, configs: &[String]) -> Vec<BesideRow> {
    let Ok(plan) = dir.meta.plan_text.parse::<Plan>() else {
        return Vec::new();
    };
    // The one-job workloads: those that ran mmc_test, and the block-layer ones.
    let (tests, blocks): (Vec<(&WorkloadSpec, &JobSpec)>, Vec<_>) = plan
        .workload
        .iter()
        .filter(|w| w.job.len() == 1)
        .map(|w| (w, &w.job[0]))
        .partition(|(_, j)| j.engine == Engine::MmcTest);
    let mut rows = Vec::new();
    for config in configs {
        for (w, job) in &blocks {
            let Some(case) = tests.iter().find_map(|(_, t)| {
                t.mmc_test.filter(|c| {
                    c.writes() == job.rw.writes()
                        && !job.rw.is_iozone()
                        && c.is_random() == job.rw.is_random()
                        && (job.rw.reads() != job.rw.writes())
                })
            }) else {
                continue;
            };
            let direction = if case.writes() {
                Direction::Write
            } else {
                Direction::Read
            };
            // mmc_test's row of this size, in every workload that ran this test.
            let names: Vec<String> = tests
                .iter()
                .filter(|(_, t)| t.mmc_test == Some(case))
                .map(|(tw, t)| format!("{}\u{0}{}:{}", tw.name, t.name, format_size(job.bs)))
                .collect();
            let test_rows: Vec<&RunRow> = measured(dir, config, direction)
                .filter(|r| names.contains(&format!("{}\u{0}{}", r.workload, r.job)))
                .collect();
            let block_rows: Vec<&RunRow> = measured(dir, config, direction)
                .filter(|r| r.workload == w.name && r.job == GROUP_JOB)
                .collect();
            if test_rows.is_empty() || block_rows.is_empty() {
                continue;
            }
            let traced: Vec<&EvidenceRow> = block_rows
                .iter()
                .filter_map(|r| {
                    dir.evidence.iter().find(|e| {
                        e.run == r.run
                            && e.workload == w.name
                            && e.direction == direction.as_str()
                            && e.trace == "ok"
                    })
                })
                .collect();
            let all_traced = traced.len() == block_rows.len();
            let sum = |f: fn(&EvidenceRow) -> Option<u64>| -> u64 {
                traced.iter().filter_map(|e| f(e)).sum()
            };
            let share = |part: u64, whole: u64| {
                (all_traced && whole > 0).then(|| part as f64 / whole as f64)
            };
            rows.push(BesideRow {
                config: config.clone(),
                direction,
                bytes: job.bs,
                mmc_test: case.as_str().to_string(),
                mmc_test_runs: test_rows.len(),
                mmc_test_us: mean(test_rows.iter().map(|r| r.lat_mean_us)),
                workload: w.name.clone(),
                engine: job.engine.as_str().to_string(),
                runs: block_rows.len(),
                io_us: mean(block_rows.iter().map(|r| r.lat_mean_us)),
                request_us: all_traced
                    .then(|| mean(traced.iter().filter_map(|e| e.lat_mean_us)))
                    .filter(|v| v.is_finite()),
                cmd23_share: share(sum(|e| e.sbc_multi_block), sum(|e| e.multi_block)),
                cqe_share: share(sum(|e| e.cqe), sum(|e| e.requests)),
            });
        }
    }
    rows.sort_by(|a, b| {
        let place = |c: &str| configs.iter().position(|x| x == c);
        (place(&a.config), a.direction.as_str(), a.bytes, &a.workload).cmp(&(
            place(&b.config),
            b.direction.as_str(),
            b.bytes,
            &b.workload,
        ))
    });
    rows
}

fn measured<'a>(
    dir: &'a ResultsDir,
    config: &'a str,
    direction: Direction,
) -> impl Iterator<Item = &'a RunRow> + 'a {
    dir.runs
        .iter()
        .filter(move |r| !r.warmup && r.config == config && r.direction == direction)
}

/// Mean of the finite values ([`crate::stats::mean`]); NaN when there are none.
fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let finite: Vec<f64> = values.filter(|v| v.is_finite()).collect();
    crate::stats::mean(&finite)
}

#[cfg(test)]
#[path = "mmc_test_tests.rs"]
mod tests;
