//! The mmc_test engine's part that needs no driver: the checks of a workload with
//! `engine = "mmc_test"` against its target, the areas the test writes ([`area`]), the
//! test's output ([`output`]) and the result it becomes: one job row per transfer size
//! (`<job>:<size>`, every size the test timed), and the group row, the transfer size of
//! the job's `bs`, which stands for the run in the statistics. Moving the card between
//! mmc_block and mmc_test and running the test is the runner's (`runner::mmc_test`).
//!
//! mmc_test times `count` transfers together and prints their total time: the mean time
//! per transfer is known, its spread is not, so every latency but the mean is NaN.

pub mod area;
pub mod output;

use super::result::{Direction, DirectionResult, JobResult, LatencySummary, WorkloadResult};
use super::target::{Target, TargetKind};
use crate::plan::mmc_test::MmcTestCase;
use crate::plan::workload::{JobSpec, WorkloadSpec};
use crate::units::format_size;
use anyhow::{bail, Context, Result};
use output::{TestOutput, Transfer};

/// The one job of an mmc_test workload and its test (the plan's checks made sure of both).
pub fn job_of(spec: &WorkloadSpec) -> Result<(&JobSpec, MmcTestCase)> {
    let job = spec
        .job
        .first()
        .filter(|_| spec.job.len() == 1)
        .with_context(|| format!("workload '{}': mmc_test runs one job", spec.name))?;
    let case = job
        .mmc_test
        .with_context(|| format!("workload '{}': the job names no `mmc_test`", spec.name))?;
    Ok((job, case))
}

/// What can be checked before the card is touched: the target is a whole MMC disk (the
/// test addresses the card's user area), writes are allowed (every test of the test
/// area writes, the read tests too: they fill it first).
pub fn check(spec: &WorkloadSpec, target: &Target) -> Result<()> {
    let (_, case) = job_of(spec)?;
    let name = target
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if target.kind != TargetKind::BlockDevice || !is_whole_mmc_disk(&name) {
        bail!(
            "workload '{}': engine = \"mmc_test\" tests the card itself: give its whole disk \
             (/dev/mmcblkN) as --device, not {}",
            spec.name,
            target.path.display()
        );
    }
    if case.writes_card() {
        target
            .check_write(&format!(
                "workload '{}' (mmc_test = \"{}\" writes the card)",
                spec.name,
                case.as_str()
            ))
            .map_err(|e| e.context("docs/plans.md, \"mmc_test\", names the areas"))?;
    }
    Ok(())
}

fn is_whole_mmc_disk(name: &str) -> bool {
    name.strip_prefix("mmcblk")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The card's preferred erase size, bytes (`/sys/block/<disk>/device/preferred_erase_size`;
/// 4 MiB, the driver's area, when it cannot be read).
pub fn pref_erase(target: &Target) -> u64 {
    let disk = target
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    std::fs::read_to_string(format!("/sys/block/{disk}/device/preferred_erase_size"))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(4 << 20)
}

/// The byte ranges the workload's test writes on `target` (the data guard's).
pub fn writes(spec: &WorkloadSpec, target: &Target) -> Result<Vec<(String, u64, u64)>> {
    let (job, case) = job_of(spec)?;
    Ok(area::writes(case, target.size_bytes, pref_erase(target))
        .with_context(|| format!("workload '{}'", spec.name))?
        .into_iter()
        .map(|(start, end)| (job.name.clone(), start, end))
        .collect())
}

/// The run's result from the test's output: one job per transfer size, the group row
/// the size of the job's `bs`. A test that did not pass is an error naming its result.
pub fn result(
    spec: &WorkloadSpec,
    out: &TestOutput,
    started_unix_s: f64,
    cpu_seconds: f64,
) -> Result<WorkloadResult> {
    let (job, case) = job_of(spec)?;
    if out.result != 0 {
        bail!(
            "workload '{}': mmc_test's test {} (mmc_test = \"{}\") ended {} (see dmesg)",
            spec.name,
            out.number,
            case.as_str(),
            out.result_words()
        );
    }
    let direction = if case.writes() {
        Direction::Write
    } else {
        Direction::Read
    };
    let jobs: Vec<JobResult> = out
        .transfers
        .iter()
        .map(|t| JobResult {
            job: format!("{}:{}", job.name, format_size(t.bytes)),
            directions: vec![direction_result(direction, t)],
            verify: None,
            in_group: t.bytes == job.bs,
        })
        .collect();
    let Some(chosen) = out.transfers.iter().find(|t| t.bytes == job.bs) else {
        let sizes: Vec<String> = out.transfers.iter().map(|t| format_size(t.bytes)).collect();
        bail!(
            "workload '{}': mmc_test = \"{}\" timed no transfer of bs = {} on this card (it \
             timed {}): set `bs` to one of them",
            spec.name,
            case.as_str(),
            format_size(job.bs),
            sizes.join(", ")
        );
    };
    Ok(WorkloadResult {
        workload: spec.name.clone(),
        started_unix_s,
        jobs,
        group: vec![direction_result(direction, chosen)],
        cpu_seconds,
        engine_fallbacks: Vec::new(),
    })
}

fn direction_result(direction: Direction, t: &Transfer) -> DirectionResult {
    let nan = f64::NAN;
    DirectionResult {
        direction,
        bytes: t.bytes * t.count,
        ops: t.count,
        seconds: t.seconds,
        latency: LatencySummary {
            min_us: nan,
            mean_us: t.mean_us(),
            p50_us: nan,
            p90_us: nan,
            p99_us: nan,
            p99_9_us: nan,
            max_us: nan,
        },
        bytes_per_second: Vec::new(),
        bytes_per_bin: Vec::new(),
        start_s: 0.0,
        latency_cdf: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(bs: &str) -> WorkloadSpec {
        let w: WorkloadSpec = toml::from_str(&format!(
            "name = \"w\"\n[[job]]\nname = \"seq\"\nrw = \"read\"\nengine = \"mmc_test\"\n\
             mmc_test = \"seq-read\"\nbs = \"{bs}\"\n"
        ))
        .unwrap();
        w.validate().unwrap();
        w
    }

    const OUT: &str = "Test 30: 0\n8192 1 0.512000000 8192000 16000.00\n\
                       1024 8 0.080000000 52428800 12800.00\n";

    #[test]
    fn every_size_is_a_job_row_and_bs_is_the_group_row() {
        let out = output::parse(OUT).unwrap();
        let r = result(&spec("4k"), &out, 1.0, 0.0).unwrap();
        assert_eq!(r.jobs.len(), 2);
        assert_eq!(r.jobs[1].job, "seq:4KiB");
        assert!(r.jobs[1].in_group && !r.jobs[0].in_group);
        let g = &r.group[0];
        assert_eq!((g.bytes, g.ops), (4096 * 1024, 1024));
        assert!((g.latency.mean_us - 78.125).abs() < 1e-9);
        assert!(g.latency.p99_us.is_nan());
        assert!((g.mb_per_s() - 52.4288).abs() < 1e-9);
    }

    #[test]
    fn a_size_the_test_did_not_time_and_a_failed_test_are_errors() {
        let out = output::parse(OUT).unwrap();
        let err = format!("{:#}", result(&spec("8k"), &out, 1.0, 0.0).unwrap_err());
        assert!(err.contains("512B, 4KiB") || err.contains("timed"), "{err}");
        let failed = output::parse("Test 30: 1\n").unwrap();
        let err = format!("{:#}", result(&spec("4k"), &failed, 1.0, 0.0).unwrap_err());
        assert!(err.contains("FAILED"), "{err}");
    }

    #[test]
    fn only_whole_mmc_disks() {
        assert!(is_whole_mmc_disk("mmcblk0"));
        assert!(is_whole_mmc_disk("mmcblk12"));
        assert!(!is_whole_mmc_disk("mmcblk0p1"));
        assert!(!is_whole_mmc_disk("mmcblk0boot0"));
        assert!(!is_whole_mmc_disk("loop0"));
    }
}
