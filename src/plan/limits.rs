//! Bounds on every number a plan file or the command line gives mmcab.
//!
//! A typo such as `repetitions = 100000000` or `numjobs = 10000` must end in one line that
//! names the key and the fix, not in an out-of-memory kill, a thread that cannot start or
//! an overflow. The bounds are generous for measuring an eMMC (and fit a 512 MB board);
//! sizes that must fit the target are checked against it when the target is opened.

use super::workload::{JobSpec, WorkloadSpec};
use crate::units::format_size;
use anyhow::{bail, Result};
use std::time::Duration;

/// Repetitions per config x workload (`repetitions`, `--repeat`).
pub const MAX_REPETITIONS: u32 = 10_000;
/// Warm-up rounds (`warmup`, `--warmup`).
pub const MAX_WARMUP: u32 = 1_000;
/// Runs in one results directory: configs x workloads x (repetitions + warm-up).
pub const MAX_RUNS: u32 = 1_000_000;
/// `--scale-down` divisor (sizes never go below one `bs`).
pub const MAX_SCALE_DOWN: u32 = 65_536;
/// Job threads of one workload (the sum of its jobs' `numjobs`).
pub const MAX_THREADS: u32 = 256;
/// `bs` of one I/O.
pub const MAX_BS: u64 = 64 << 20;
/// I/O buffers of one workload: up to 2 x `iodepth` x `bs` per job thread (reads and
/// writes each get their own).
pub const MAX_BUFFER_BYTES: u64 = 512 << 20;
/// `size`, `io_size`, `offset`, `offset_increment`.
pub const MAX_SIZE: u64 = 1 << 50;
/// `runtime`, `ramp_time`.
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);
/// Records of an `iozone` / `iozone-random` file (their permutation is held in memory).
pub const MAX_IOZONE_RECORDS: u64 = 1 << 24;

/// `what` (e.g. "--repeat 0" or "`repetitions` = 0") must lie in `min..=max`.
fn within(what: &str, value: u64, min: u64, max: u64, fix: &str) -> Result<()> {
    if value < min {
        bail!("{what} is too small: use at least {min}");
    }
    if value > max {
        bail!("{what} is more than {max} (a typo?): {fix}");
    }
    Ok(())
}

/// Repetitions per config x workload; `what` names where the number came from.
pub fn repetitions(what: &str, n: u32) -> Result<()> {
    within(
        what,
        n.into(),
        1,
        MAX_REPETITIONS.into(),
        "use fewer repetitions per results directory",
    )
}

/// Warm-up rounds; `what` names where the number came from.
pub fn warmup(what: &str, n: u32) -> Result<()> {
    within(
        what,
        n.into(),
        0,
        MAX_WARMUP.into(),
        "use fewer warm-up rounds",
    )
}

/// `--scale-down` divisor; `what` names where the number came from.
pub fn scale_down(what: &str, n: u32) -> Result<()> {
    within(
        what,
        n.into(),
        1,
        MAX_SCALE_DOWN.into(),
        "sizes never go below one `bs`, so a larger divisor changes nothing",
    )
}

/// The plan's own numbers (`repetitions`, `warmup`) and every job's (called by
/// `Plan::validate` after the jobs' own checks).
pub fn check_plan(
    repetitions_of_plan: Option<u32>,
    warmup_of_plan: Option<u32>,
    workloads: &[WorkloadSpec],
) -> Result<()> {
    if let Some(n) = repetitions_of_plan {
        repetitions(&format!("`repetitions` = {n}"), n)?;
    }
    if let Some(n) = warmup_of_plan {
        warmup(&format!("`warmup` = {n}"), n)?;
    }
    for w in workloads {
        check_workload(w)?;
    }
    Ok(())
}

fn check_workload(w: &WorkloadSpec) -> Result<()> {
    let mut threads = 0u64;
    let mut buffers = 0u64;
    for job in &w.job {
        check_job(job)
            .map_err(|e| anyhow::anyhow!("workload '{}', job '{}': {e}", w.name, job.name))?;
        threads += u64::from(job.numjobs);
        buffers += u64::from(job.numjobs) * 2 * u64::from(job.iodepth) * job.bs;
    }
    if threads > MAX_THREADS.into() {
        bail!(
            "workload '{}': `numjobs` of its jobs add up to {threads} job threads, more than \
             {MAX_THREADS}: lower `numjobs`",
            w.name
        );
    }
    if buffers > MAX_BUFFER_BYTES {
        bail!(
            "workload '{}': I/O buffers (2 x `iodepth` x `bs` per job thread) add up to {}, \
             more than {}: lower `bs`, `iodepth` or `numjobs`",
            w.name,
            format_size(buffers),
            format_size(MAX_BUFFER_BYTES)
        );
    }
    Ok(())
}

/// Bounds of one job; the caller names the workload and the job.
fn check_job(job: &JobSpec) -> Result<()> {
    within(
        &format!("`numjobs` = {}", job.numjobs),
        job.numjobs.into(),
        1,
        MAX_THREADS.into(),
        "lower `numjobs`",
    )?;
    if job.bs > MAX_BS {
        bail!(
            "`bs` = {} is more than {}: use a smaller block size",
            format_size(job.bs),
            format_size(MAX_BS)
        );
    }
    for (key, value) in [
        ("size", job.size),
        ("io_size", job.io_size),
        ("offset", Some(job.offset)),
        ("offset_increment", Some(job.offset_increment)),
    ] {
        if let Some(v) = value.filter(|&v| v > MAX_SIZE) {
            bail!(
                "`{key}` = {} is more than {} (a typo?): no device is that large",
                format_size(v),
                format_size(MAX_SIZE)
            );
        }
    }
    for (key, value) in [
        ("runtime", job.runtime),
        ("min_runtime", job.min_runtime),
        ("ramp_time", job.ramp_time),
    ] {
        if let Some(d) = value.filter(|&d| d > MAX_DURATION) {
            bail!(
                "`{key}` = {}s is more than 30 days (a typo?): use a shorter time",
                d.as_secs()
            );
        }
    }
    if job.rw.is_iozone() {
        let records = job.size.unwrap_or(0) / job.bs.max(1);
        if records > MAX_IOZONE_RECORDS {
            bail!(
                "rw = \"{}\": `size` / `bs` = {records} records, more than \
                 {MAX_IOZONE_RECORDS} (their order is held in memory): use a larger `bs` or a \
                 smaller `size`",
                job.rw.as_str()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::spec::Plan;

    const PLAN: &str =
        "name = \"p\"\n[[workload]]\nname = \"w\"\n[[workload.job]]\nname = \"j\"\nrw = \"read\"\n";

    fn refusal(head: &str, job: &str) -> String {
        let text = format!("{head}{PLAN}{job}");
        format!("{:#}", text.parse::<Plan>().unwrap_err())
    }

    #[test]
    fn plan_counts_are_bounded_with_the_key_and_the_fix() {
        let err = refusal("repetitions = 100000000\n", "");
        assert!(
            err.contains("`repetitions` = 100000000 is more than 10000"),
            "{err}"
        );
        assert!(err.contains("fewer repetitions"), "{err}");
        let err = refusal("repetitions = 0\n", "");
        assert!(err.contains("`repetitions` = 0 is too small"), "{err}");
        let err = refusal("warmup = 5000\n", "");
        assert!(err.contains("`warmup` = 5000 is more than 1000"), "{err}");
        assert!(format!("repetitions = 10000\nwarmup = 1000\n{PLAN}")
            .parse::<Plan>()
            .is_ok());
    }

    #[test]
    fn job_numbers_are_bounded_and_named() {
        for (job, want) in [
            ("numjobs = 100000\n", "`numjobs` = 100000 is more than 256"),
            ("bs = \"1G\"\n", "`bs` = 1GiB is more than 64MiB"),
            (
                "offset = 2251799813685248\n",
                "`offset` = 2048TiB is more than 1024TiB",
            ),
            ("size = 1152921504606846976\n", "`size`"),
            (
                "runtime = 100000000\ntime_based = true\n",
                "`runtime` = 100000000s is more than 30 days",
            ),
            ("direct = false\nramp_time = \"9999h\"\n", "`ramp_time`"),
        ] {
            let err = refusal("", job);
            assert!(
                err.contains("workload 'w', job 'j'") && err.contains(want),
                "{job}: {err}"
            );
        }
    }

    #[test]
    fn durations_too_long_to_hold_are_parse_errors_not_panics() {
        for job in [
            "runtime = \"99999999999999999999999h\"\ntime_based = true\n",
            "runtime = 1e300\ntime_based = true\n",
        ] {
            let err = refusal("", job);
            assert!(err.contains("too long a duration"), "{job}: {err}");
        }
    }

    #[test]
    fn threads_and_buffers_of_a_workload_add_up() {
        let two = "[[workload.job]]\nname = \"k\"\nrw = \"read\"\nnumjobs = 200\n";
        let err = refusal("", &format!("numjobs = 100\n{two}"));
        assert!(err.contains("add up to 300 job threads"), "{err}");
        let err = refusal(
            "",
            "engine = \"io_uring\"\niodepth = 64\nbs = \"8M\"\nnumjobs = 2\n",
        );
        assert!(
            err.contains("workload 'w'") && err.contains("2GiB, more than 512MiB"),
            "{err}"
        );
    }

    #[test]
    fn iozone_records_are_bounded() {
        let text = PLAN.replace(
            "rw = \"read\"",
            "rw = \"iozone-random\"\nbs = 512\nsize = \"16G\"",
        );
        let err = format!("{:#}", text.parse::<Plan>().unwrap_err());
        assert!(err.contains("33554432 records"), "{err}");
    }

    #[test]
    fn command_line_numbers_name_the_flag() {
        let err = repetitions("--repeat 100000000", 100_000_000).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--repeat 100000000 is more than 10000 (a typo?): use fewer repetitions per \
             results directory"
        );
        assert!(scale_down("--scale-down 0", 0)
            .unwrap_err()
            .to_string()
            .contains("--scale-down 0 is too small: use at least 1"));
        assert!(scale_down("--scale-down 65536", 65_536).is_ok());
        assert!(warmup("--warmup 1001", 1001).is_err());
    }
}
